"""The Training page's state machine: one TrainingSession per browser session, kept in st.session_state.

    (none) --start--> running --tick, tick, ...--> finished
                       |   ^
                  stop |   | resume                running --(loss NaN / inf)--> diverged
                       v   |
                      paused   (also after the page was left: fragments do not run off-page)

A run trains in ticks: each tick() runs Trainer.step until about TICK_BUDGET_S of wall time is spent, so one
student's run never holds the shared server for long. After every tick the model so far is copied, read-only,
into the session's `models` dict (st.session_state["session_models"]), so stopping, leaving the page or a
later divergence never loses what was trained. A run that diverges publishes nothing more: its last good
snapshot, and every earlier run's model, stay as they were.

Nothing here draws; the page reads the run and draws it. Shapes: L layers, H heads, T sequence length.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from core import data as core_data
from core.data import TASKS, CorpusUnavailable, SyntheticTask, TextCorpus
from core.model import ModelConfig, flatten, forward, unflatten
from core.train import TrainConfig, Trainer, TrainingDiverged, pattern_mass
from ui import charts
from ui.model_store import Model
from ui.text import escape_md

SESSION_KEY = "tr_session"
MODELS_KEY = "session_models"  # name -> ui.model_store.Model; the Full model page reads it
CORPORA = (*TASKS, "pydoc", "text")

# Limits, so that one student cannot hog a server shared by a class.
LIMITS = {"steps": 2000, "d_model": 64, "n_heads": 8, "n_layers": 2, "context": 64, "batch_size": 32,
          "task_length": 16}
MAX_LR = 1e3  # reachable on purpose: it shows what divergence looks like
UPLOAD_CAP_BYTES = 200_000  # own text: a file (or pasted text) up to 200 KB
N_SYMBOLS = 16  # letters the synthetic tasks draw from
TICK_BUDGET_S = 0.25  # training time per tick (the drawing adds ~20-60 ms)
PAUSE_AFTER_S = 10.0  # a running run not ticked for this long was left (another page, a closed tab)
MAX_MODELS = 5  # models kept per session; the oldest go first
MAX_DRAWN = 24  # attention maps of text runs show this many characters
EVAL_TOKENS = 2048  # the validation loss is measured on about this many scored tokens


@dataclass(frozen=True)
class Settings:
    """What a run is started with. Checked against LIMITS: URL tampering cannot get past them."""

    corpus: str = "copy"  # a synthetic task ("copy", "reverse", "induction"), "pydoc" or "text"
    d_model: int = 32  # D
    n_heads: int = 2  # H, a divisor of D
    n_layers: int = 2
    context: int = 32  # T for text corpora: characters per window
    task_length: int = 8  # L letters before the separator (synthetic tasks: T = 2L)
    pos_encoding: str = "learned"
    steps: int = 300
    batch_size: int = 16
    lr: float = 1e-2
    seed: int = 0

    def __post_init__(self):
        if self.corpus not in CORPORA:
            raise ValueError(f"Unknown corpus {self.corpus!r}; choose one of {', '.join(CORPORA)}.")
        for name, cap in LIMITS.items():
            value = getattr(self, name)
            if int(value) != value or not 1 <= value <= cap:
                raise ValueError(f"{name} must be a whole number from 1 to {cap} on this shared server, got {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"{self.n_heads} heads do not divide d_model = {self.d_model}.")
        if not (math.isfinite(self.lr) and 0 < self.lr <= MAX_LR):
            raise ValueError(f"The learning rate must be above 0 and at most {MAX_LR:g}, got {self.lr!r}.")

    @property
    def synthetic(self) -> bool:
        return self.corpus in TASKS


@dataclass
class Run:
    name: str
    settings: Settings
    data: TextCorpus | SyntheticTask
    trainer: Trainer
    bigram: float  # validation loss of the bigram baseline
    example: np.ndarray  # (T,) ids the attention maps are drawn for
    val_windows: int
    eval_every: int
    state: str = "running"  # running, paused, finished, diverged
    reason: str = ""  # why a run is paused: "stopped" or "left"
    next_eval: int = 0
    last_active: float = field(default_factory=time.monotonic)
    step_s: float = 0.0  # moving estimate of one step's wall time
    ticks: list = field(default_factory=list)  # (steps, seconds, end time) of the recent ticks
    view: dict = field(default_factory=dict)  # attention maps of the current step, computed once

    @property
    def steps(self) -> int:
        return self.trainer.steps

    @property
    def done(self) -> bool:
        return self.trainer.steps >= self.settings.steps

    def steps_per_s(self) -> float:
        """Steps per second of wall time over the recent ticks (the pauses between ticks included)."""
        if len(self.ticks) < 2:
            steps, seconds = sum(t[0] for t in self.ticks), sum(t[1] for t in self.ticks)
        else:
            steps, seconds = sum(t[0] for t in self.ticks[1:]), self.ticks[-1][2] - self.ticks[0][2]
        return steps / seconds if seconds > 0 else 0.0


# ---- data, shared by every session where it can be -------------------------------------------------------


@st.cache_data(show_spinner=False)
def bundled_problem() -> str | None:
    """None when Python's documentation corpus can be built here, else the sentence saying why not."""
    try:
        core_data.pydoc_text()
    except CorpusUnavailable as err:
        return str(err)
    return None


@st.cache_resource(show_spinner=False, max_entries=8)
def bundled_corpus(context: int) -> TextCorpus:
    """The documentation corpus in windows of `context`; read-only, shared by every session."""
    corpus = core_data.pydoc_corpus(context)
    corpus.train_ids.setflags(write=False)
    corpus.val_ids.setflags(write=False)
    return corpus


@st.cache_data(show_spinner=False, max_entries=64)
def _baseline(corpus: str, size: int) -> float:
    """The bigram baseline of the bundled corpus (size = context) or of a task (size = its length L)."""
    data = bundled_corpus(size) if corpus == "pydoc" else SyntheticTask(corpus, size, N_SYMBOLS)
    return data.bigram_baseline()


def read_text(raw: bytes | str | None, name: str = "") -> bytes | str:
    """The user's text as given (a file's bytes or a pasted string); ValueError over the size cap."""
    if raw is None:
        raise ValueError("The text is empty: paste or upload some text to train on.")
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    if size > UPLOAD_CAP_BYTES:
        what = f"“{escape_md(name)}”" if name else "The text"  # a file's name is the user's: never Markdown
        raise ValueError(f"{what} is {size / 1000:,.0f} KB; the limit here is {UPLOAD_CAP_BYTES // 1000} KB. "
                         "Use a shorter file, or paste a part of it.")
    return raw


def example_ids(data) -> np.ndarray:
    """(T,) the fixed input the attention maps show: a validation sequence, the same at every step.
    For text, from the first line of the validation split that starts with a capitalised word (else its start)."""
    if isinstance(data, SyntheticTask):
        return data.val_batches(1, 1)[0].ids[0]
    n = min(data.context, MAX_DRAWN)
    head = data.tokenizer.decode(data.val_ids[:5000])
    found = re.search(r"(?:^|\n)[ \t]*([A-Z][a-z]* )", head[: max(0, len(data.val_ids) - n)])
    start = found.start(1) if found else 0
    return data.val_ids[start : start + n]


# ---- the state machine -------------------------------------------------------------------------------


class TrainingSession:
    def __init__(self, models: dict | None = None):
        self.models = {} if models is None else models
        self.run: Run | None = None
        self.error = ""  # the last problem to show (a bad input, a divergence); cleared by a good start
        self.runs_started = 0
        self.train_requested = False  # set by the Train button's callback, taken by the page's script
        self._text_memo: tuple | None = None  # (key, corpus): the user's text is encoded once

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.state == "running"

    @property
    def resumable(self) -> bool:
        return self.run is not None and self.run.state == "paused" and not self.run.done

    # -- starting ------------------------------------------------------------------------------------

    def user_corpus(self, raw: bytes | str | None, context: int, name: str = "") -> TextCorpus:
        """The user's text as a corpus; ValueError with a sentence for the user when it cannot be one."""
        raw = read_text(raw, name)
        digest = hashlib.sha1(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")).hexdigest()
        key = (digest, int(context))
        if self._text_memo is None or self._text_memo[0] != key:
            self._text_memo = (key, core_data.user_text_corpus(raw, context, max_chars=UPLOAD_CAP_BYTES))
        return self._text_memo[1]

    def build_data(self, settings: Settings, text: bytes | str | None = None, text_name: str = ""):
        if settings.synthetic:
            return SyntheticTask(settings.corpus, settings.task_length, N_SYMBOLS), _baseline(
                settings.corpus, settings.task_length)
        if settings.corpus == "pydoc":
            return bundled_corpus(settings.context), _baseline("pydoc", settings.context)
        corpus = self.user_corpus(text, settings.context, text_name)
        return corpus, corpus.bigram_baseline()

    def start(self, settings: Settings, text: bytes | str | None = None, text_name: str = "") -> bool:
        """A new run. Ignored while one is running (a second press of Train); on bad input, sets `error`
        and leaves the current run and every stored model as they were. Returns True if a run started."""
        if self.running:
            return False
        try:
            data, bigram = self.build_data(settings, text, text_name)
            cfg = ModelConfig(vocab_size=data.vocab_size, d_model=settings.d_model, n_heads=settings.n_heads,
                              n_layers=settings.n_layers, max_len=data.seq_len, pos_encoding=settings.pos_encoding)
            train_cfg = TrainConfig(lr=settings.lr, batch_size=settings.batch_size, decay_steps=settings.steps,
                                    warmup_steps=min(100, settings.steps // 10))
            trainer = Trainer(cfg, data, train_cfg, seed=settings.seed)
        except (ValueError, CorpusUnavailable) as err:
            self.error = str(err)
            return False
        self.runs_started += 1
        label = {"pydoc": "Python docs", "text": "your text"}.get(settings.corpus, f"{settings.corpus} task")
        name = f"{label} · run {self.runs_started} · {secrets.token_hex(3)}"
        windows = 64 if settings.synthetic else max(8, EVAL_TOKENS // data.seq_len)
        self.run = Run(name, settings, data, trainer, bigram, example_ids(data), windows,
                       eval_every=max(10, settings.steps // 20))
        self.error = ""
        self._evaluate(self.run)  # the loss before any training: about log V
        return True

    # -- the transitions the buttons make ---------------------------------------------------------------

    def stop(self) -> None:
        """Stop at once; the model so far is kept (it was stored after the last tick)."""
        if self.running:
            self.run.state, self.run.reason = "paused", "stopped"
            self.publish()

    def resume(self) -> bool:
        if not self.resumable:
            return False
        self.run.state, self.run.reason, self.error = "running", "", ""
        self.run.last_active, self.run.ticks = time.monotonic(), []  # the speed is measured afresh
        return True

    def pause_if_left(self, now: float | None = None) -> bool:
        """Called on every full run of the page: a running run that has not ticked for PAUSE_AFTER_S was
        left (its fragment cannot run on another page), so it waits for Resume instead of going on alone."""
        now = time.monotonic() if now is None else now
        if self.running and now - self.run.last_active > PAUSE_AFTER_S:
            self.run.state, self.run.reason = "paused", "left"
            self.publish()
            return True
        return False

    # -- training ---------------------------------------------------------------------------------------

    def _evaluate(self, run: Run) -> None:
        run.trainer.evaluate(run.val_windows)
        run.next_eval = run.trainer.steps + run.eval_every

    def tick(self, budget_s: float | None = None) -> int:
        """Train for about budget_s (default TICK_BUDGET_S) of wall time, at least one step; return the steps."""
        if not self.running:
            return 0
        budget_s = TICK_BUDGET_S if budget_s is None else budget_s
        run, start, done = self.run, time.perf_counter(), 0
        try:
            while not run.done:
                t = time.perf_counter()
                run.trainer.step(1)
                done += 1
                took = time.perf_counter() - t
                run.step_s = took if not run.step_s else 0.8 * run.step_s + 0.2 * took
                if run.steps >= run.next_eval and not run.done:
                    self._evaluate(run)
                if time.perf_counter() - start + run.step_s > budget_s:
                    break
            if run.done:
                if not run.trainer.val_history or run.trainer.val_history[-1][0] != run.steps:
                    self._evaluate(run)
                run.state = "finished"
        except TrainingDiverged as err:
            run.state = "diverged"
            self.error = self._diverged_message(str(err))
            return done
        run.last_active = time.monotonic()
        run.ticks = [*run.ticks[-19:], (done, time.perf_counter() - start, run.last_active)]
        self.publish()
        return done

    def _diverged_message(self, message: str) -> str:
        run = self.run
        kept = run.name in self.models
        others = [n for n in self.models if n != run.name]
        parts = [message, "Pick a learning rate of 0.01 or lower and press Train again."]
        if kept:
            parts.append(f"This run's model from step {self.models[run.name].source[2]} (before it diverged) is kept.")
        if others:
            parts.append(f"Your other models are kept, unchanged: {', '.join(others)}.")
        elif not kept:
            parts.append("This run kept no model.")
        return " ".join(parts)

    # -- what the page draws ------------------------------------------------------------------------------

    def attention(self) -> dict:
        """The current model's attention on the run's example: weights (L, H, T, T), the example's
        characters, and for synthetic tasks the (L, H) weight each head puts on the answer's key."""
        run = self.run
        if run.view.get("step") != run.steps:
            _, trace = forward(run.trainer.params, run.trainer.cfg, run.example)
            view = {"step": run.steps, "weights": np.stack([layer["weights"] for layer in trace["layers"]]),
                    "chars": list(run.data.tokenizer.decode(run.example))}
            if isinstance(run.data, SyntheticTask):
                view["mass"] = pattern_mass(run.trainer.params, run.trainer.cfg, run.data, n=32)
            run.view = view
        return run.view

    def loss_frame(self, max_points: int = 120) -> pd.DataFrame:
        """Tidy (x, y, series) frame: training loss averaged in at most max_points bins, the validation
        points, and the bigram and uniform-guess baselines drawn across the whole run."""
        run = self.run
        history = np.asarray(run.trainer.history, dtype=np.float64)
        frames = []
        if len(history):
            size = math.ceil(len(history) / max_points)
            n = len(history) // size * size
            ys = list(history[:n].reshape(-1, size).mean(axis=1)) + ([history[n:].mean()] if n < len(history) else [])
            xs = [min(len(history), (i + 1) * size) for i in range(len(ys))]
            frames.append(charts.line_frame(xs, {"training (batch)": ys}))
        val = run.trainer.val_history
        frames.append(charts.line_frame([s for s, _ in val], {"validation": [v for _, v in val]}))
        ends = [0, run.settings.steps]
        frames.append(charts.line_frame(ends, {"bigram baseline": [run.bigram] * 2,
                                               "uniform guess (log V)": [math.log(run.trainer.cfg.vocab_size)] * 2}))
        return pd.concat(frames, ignore_index=True)

    def figures(self) -> dict:
        """The numbers the page shows and the stored model carries."""
        run = self.run
        history = run.trainer.history
        return {"steps": run.steps, "target_steps": run.settings.steps,
                "train_loss": float(np.mean(history[-20:])) if history else None,
                "val_loss": float(run.trainer.val_history[-1][1]) if run.trainer.val_history else None,
                "val_step": int(run.trainer.val_history[-1][0]) if run.trainer.val_history else None,
                "bigram_val_loss": float(run.bigram), "uniform_loss": math.log(run.trainer.cfg.vocab_size),
                "wall_time_s": round(run.trainer.seconds, 2), "steps_per_s": round(run.steps_per_s(), 1)}

    # -- storing models --------------------------------------------------------------------------------

    def snapshot(self) -> Model:
        """The run's model now, as the Full model page takes it: a read-only copy of the parameters."""
        run = self.run
        flat = {k: np.array(v, dtype=np.float32) for k, v in flatten(run.trainer.params).items()}
        for a in flat.values():
            a.setflags(write=False)
        status = {"running": "training", "paused": "stopped"}.get(run.state, run.state)
        meta = {"tokenizer": run.data.tokenizer.to_dict(), "data": run.data.name, "status": status,
                **self.figures(), "train_config": asdict(run.trainer.train_cfg), "seed": run.settings.seed,
                "settings": asdict(run.settings), "history": [float(x) for x in run.trainer.history],
                "val_history": [[int(s), float(v)] for s, v in run.trainer.val_history],
                "trained_in": "the Training page, this browser session"}
        if isinstance(run.data, SyntheticTask):
            meta["task"] = asdict(run.data)
            mass = self.attention()["mass"]
            layer, head = np.unravel_index(mass.argmax(), mass.shape)
            meta["pattern"] = {"layer": int(layer), "head": int(head), "mass": round(float(mass.max()), 4)}
        elif isinstance(run.data, TextCorpus):
            meta["truncated"] = run.data.truncated
        return Model(run.name, unflatten(flat), run.trainer.cfg, run.data.tokenizer, meta, True,
                     ("session", run.name, run.steps))

    def publish(self) -> None:
        """Store the run's model in `models` (replacing its older snapshot); keep at most MAX_MODELS."""
        if self.run is None or self.run.steps == 0 or self.run.state == "diverged":
            return
        self.models.pop(self.run.name, None)  # re-inserted last: the dict stays in order of recency
        self.models[self.run.name] = self.snapshot()
        for name in list(self.models)[: max(0, len(self.models) - MAX_MODELS)]:
            del self.models[name]


def get(state) -> TrainingSession:
    """This browser session's TrainingSession (created on first use), attached to its models dict."""
    session = state.get(SESSION_KEY)
    # By class name, not isinstance: a running server re-imports every module of the app when one of its
    # files changes, and the session made from the class before that must survive it (it holds the run).
    if type(session).__name__ != TrainingSession.__name__:
        session = state[SESSION_KEY] = TrainingSession()
    models = state.get(MODELS_KEY)
    if not isinstance(models, dict):
        models = state[MODELS_KEY] = {}
    session.models = models
    return session

"""The Training page's state machine: one TrainingSession per browser session, kept in st.session_state.

    (none) --start--> running --tick, tick, ...--> finished
                       |   ^
                  stop |   | resume                running --(loss NaN / inf)--> diverged
                       v   |
                      paused   (also after the page was left: fragments do not run off-page)

A run trains in ticks: each tick() runs Trainer.step until about TICK_BUDGET_S (ui.compute.training_share) of wall
time is spent, so one student's run never holds the shared server for long. When several students train on one server
process, they share a part of it between them (ui.compute.training_share: each tick gets less time): training slows
down, and the rest of the process stays for everyone's slider moves. After every tick the model so far is handed, as a
read-only copy, to this session's trained models (ui.compute.model_store owns them), so stopping, leaving the page
or a later divergence never loses what was trained. A run that diverges publishes nothing more: its last
good snapshot, and every earlier run's model, stay as they were.

What a run starts from is in lessons/training/setup.py, the run itself and its readouts in lessons/training/run.py.
Nothing here draws.
"""

from __future__ import annotations

import secrets
import time

from core.data import CorpusUnavailable
from core.model import ModelConfig
from core.train import TrainConfig, Trainer, TrainingDiverged
from lessons.training.cached import build_data
from lessons.training.run import Run
from lessons.training.setup import Settings, TextMemo, example_ids
from ui.compute import model_store, training_share
from ui.compute.training_share import fair_budget

SESSION_KEY = "tr_session"
TICK_EVERY_S = training_share.TICK_EVERY_S  # how often a running run's page ticks it (lessons.training.view's timer)
PAUSE_AFTER_S = 10.0  # a running run not ticked for this long was left (another page, a closed tab)
EVAL_TOKENS = 2048  # the validation loss is measured on about this many scored tokens


class TrainingSession:
    def __init__(self, models: dict | None = None):
        self.models = {} if models is None else models  # the session's trained models, from ui.compute.model_store
        self.run: Run | None = None
        self.error = ""  # the last problem to show (a bad input, a divergence); cleared by a good start
        self.runs_started = 0
        self.train_requested = False  # set by the Train button's callback, taken by the page's script
        self.own_text = TextMemo()  # the user's text is encoded once

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.state == "running"

    @property
    def resumable(self) -> bool:
        return self.run is not None and self.run.state == "paused" and not self.run.done

    # -- starting ------------------------------------------------------------------------------------

    def start(self, settings: Settings, text: bytes | str | None = None, text_name: str = "") -> bool:
        """A new run. Ignored while one is running (a second press of Train); on bad input, sets `error`
        and leaves the current run and every stored model as they were. Returns True if a run started."""
        if self.running:
            return False
        try:
            data, bigram = build_data(settings, self.own_text, text, text_name)
            cfg = ModelConfig(vocab_size=data.vocab_size, d_model=settings.d_model, n_heads=settings.n_heads,
                              n_layers=settings.n_layers, max_len=data.seq_len, pos_encoding=settings.pos_encoding)
            train_cfg = TrainConfig(lr=settings.lr, batch_size=settings.batch_size, decay_steps=settings.steps,
                                    warmup_steps=min(100, settings.steps // 10))
            trainer = Trainer(cfg, data, train_cfg, seed=settings.seed)
        except (ValueError, CorpusUnavailable) as err:
            self.error = str(err)
            return False
        self.runs_started += 1
        name = f"{settings.label} · run {self.runs_started} · {secrets.token_hex(3)}"
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
        """Train for about budget_s of wall time (default: this run's fair share, training_share.fair_budget), at
        least one step; return the steps."""
        if not self.running:
            return 0
        budget_s = fair_budget(id(self)) if budget_s is None else budget_s
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

    # -- handing the model over ----------------------------------------------------------------------------

    def publish(self) -> None:
        """Hand the run's model to the session's trained models (replacing its older snapshot there)."""
        if self.run is None or self.run.steps == 0 or self.run.state == "diverged":
            return
        model_store.add_session_model(self.models, self.run.snapshot())

    @property
    def kept(self) -> model_store.Model | None:
        """The stored model of the current run once it is no longer running (what the page announces)."""
        if self.run is None or self.run.state == "running":
            return None
        return self.models.get(self.run.name)


def get(state) -> TrainingSession:
    """This browser session's TrainingSession (created on first use), attached to its trained models."""
    session = state.get(SESSION_KEY)
    # By class name, not isinstance: a running server re-imports every module of the app when one of its
    # files changes, and the session made from the class before that must survive it (it holds the run).
    if type(session).__name__ != TrainingSession.__name__:
        session = state[SESSION_KEY] = TrainingSession()
    session.models = model_store.session_shelf(state)
    return session

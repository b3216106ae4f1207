"""One training run of the Training page: what it trains, how far it got, and what it shows and hands over.

A Run holds its settings, data, Trainer and bigram baseline, and a state the TrainingSession moves it
through (lessons/training/session.py). Its readouts are what the page draws (attention maps, the loss curve,
the figures) and the model it hands to ui.compute.model_store (snapshot). Nothing here draws or changes state.
Shapes: L layers, H heads, T sequence length, V vocabulary.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from core.data import TextCorpus
from core.model import forward
from core.model_file import flatten, unflatten
from core.tasks import SyntheticTask
from core.train import Trainer, pattern_mass
from lessons.training.setup import Settings
from ui.compute.model_store import Model
from ui.drawing import plots
from ui.drawing.chart_data import ChartData

MASS_SEQUENCES = 32  # synthetic tasks: the answer-key weight is averaged over this many sequences


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

    def seconds_left(self) -> float:
        """Wall time to the last step at the recent speed, as shown (0 before the speed is known)."""
        speed = round(self.steps_per_s(), 1)
        return (self.settings.steps - self.steps) / speed if speed else 0.0

    # -- what the page draws ------------------------------------------------------------------------------

    def attention(self) -> dict:
        """The current model's attention on the run's example: weights (L, H, T, T), the example's
        characters, and for synthetic tasks the (L, H) weight each head puts on the answer's key."""
        if self.view.get("step") != self.steps:
            _, trace = forward(self.trainer.params, self.trainer.cfg, self.example)
            view = {"step": self.steps, "weights": np.stack([layer.weights for layer in trace.layers]),
                    "chars": list(self.data.tokenizer.decode(self.example))}
            if isinstance(self.data, SyntheticTask):
                view["mass"] = pattern_mass(self.trainer.params, self.trainer.cfg, self.data, n=MASS_SEQUENCES)
            self.view = view
        return self.view

    def loss_frame(self, max_points: int = 120) -> ChartData:
        """Tidy (x, y, series) frame: training loss averaged in at most max_points bins, the validation
        points, and the bigram and uniform-guess baselines drawn across the whole run."""
        history = np.asarray(self.trainer.history, dtype=np.float64)
        frames = []
        if len(history):
            size = math.ceil(len(history) / max_points)
            n = len(history) // size * size
            ys = list(history[:n].reshape(-1, size).mean(axis=1)) + ([history[n:].mean()] if n < len(history) else [])
            xs = [min(len(history), (i + 1) * size) for i in range(len(ys))]
            frames.append(plots.line_frame(xs, {"training (batch)": ys}))
        val = self.trainer.val_history
        frames.append(plots.line_frame([s for s, _ in val], {"validation": [v for _, v in val]}))
        ends = [0, self.settings.steps]
        frames.append(plots.line_frame(ends, {"bigram baseline": [self.bigram] * 2,
                                               "uniform guess (log V)": [math.log(self.trainer.cfg.vocab_size)] * 2}))
        return ChartData.concat(frames)

    def figures(self) -> dict:
        """The numbers the page shows and the stored model carries."""
        history, val = self.trainer.history, self.trainer.val_history
        return {"steps": self.steps, "target_steps": self.settings.steps,
                "train_loss": float(np.mean(history[-20:])) if history else None,
                "val_loss": float(val[-1][1]) if val else None,
                "val_step": int(val[-1][0]) if val else None,
                "bigram_val_loss": float(self.bigram), "uniform_loss": math.log(self.trainer.cfg.vocab_size),
                "wall_time_s": round(self.trainer.seconds, 2), "steps_per_s": round(self.steps_per_s(), 1)}

    # -- what the model store keeps ------------------------------------------------------------------------

    def snapshot(self) -> Model:
        """The run's model now, as the Full model page takes it: a read-only copy of the parameters."""
        flat = {k: np.array(v, dtype=np.float32) for k, v in flatten(self.trainer.params).items()}
        for a in flat.values():
            a.setflags(write=False)
        status = {"running": "training", "paused": "stopped"}.get(self.state, self.state)
        meta = {"tokenizer": self.data.tokenizer.to_dict(), "data": self.data.name, "status": status,
                **self.figures(), "train_config": asdict(self.trainer.train_cfg), "seed": self.settings.seed,
                "settings": asdict(self.settings), "history": [float(x) for x in self.trainer.history],
                "val_history": [[int(s), float(v)] for s, v in self.trainer.val_history],
                "trained_in": "the Training page, this browser session"}
        if isinstance(self.data, SyntheticTask):
            meta["task"] = asdict(self.data)
            mass = self.attention()["mass"]
            layer, head = np.unravel_index(mass.argmax(), mass.shape)
            meta["pattern"] = {"layer": int(layer), "head": int(head), "mass": round(float(mass.max()), 4)}
        elif isinstance(self.data, TextCorpus):
            meta["truncated"] = self.data.truncated
        return Model(self.name, unflatten(flat), self.trainer.cfg, self.data.tokenizer, meta, True,
                     ("session", self.name, self.steps))


def uniform_guess_among(run: Run, tol: float = 5e-3) -> int | None:
    """k when the bigram baseline is (almost) ln k for the task's k letters or the V tokens: a uniform guess,
    because the symbols to predict are drawn uniformly and independently (the previous one says nothing)."""
    counts = ([run.data.n_symbols] if isinstance(run.data, SyntheticTask) else []) + [run.trainer.cfg.vocab_size]
    return next((k for k in counts if abs(run.bigram - math.log(k)) < tol), None)

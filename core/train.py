"""Training: AdamW with gradient clipping, and a Trainer that runs in small chunks.

    trainer = Trainer(cfg, data, TrainConfig(lr=3e-3), seed=0)
    losses = trainer.step(20)          # 20 optimiser steps; call again to go on (a UI trains in chunks)
    val = trainer.evaluate()           # validation loss on a fixed set of windows

The backward passes and loss_and_grads live in core/backward.py; they are re-exported here. The command
line that trains and ships a model, checkpoints and process tuning live outside core, in tools/
(`python -m tools.train --help`).

Shapes: B batch, T sequence length, V vocabulary.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from core.backward import loss_and_grads, loss_only
from core.bigram import BigramConfig, init_table, table_loss, table_loss_and_grads
from core.model import ModelConfig, forward, init_params
from core.model_file import flatten, unflatten
from core.tasks import SyntheticTask

__all__ = ["AdamW", "TrainConfig", "Trainer", "TrainingDiverged", "clip_grad_norm", "loss_and_grads"]

# Weight decay shrinks matrices and embedding tables (as nanoGPT does), never biases or layer-norm
# gains: pulling a gain towards 0 would switch the layer off rather than regularise it.
DECAYED = ("wte", "wpe", "w_qkv", "w_o", "w_fc", "w_proj")


def model_functions(cfg: ModelConfig | BigramConfig):
    """(init, loss_and_grads, loss_only) of the model a config describes: the transformer's (ModelConfig), or the
    learnt bigram table's (BigramConfig), which the Trainer trains with the same optimiser and data."""
    if isinstance(cfg, BigramConfig):
        return init_table, table_loss_and_grads, table_loss
    return init_params, loss_and_grads, loss_only


class TrainingDiverged(FloatingPointError):
    """The loss became NaN, infinite or absurdly large; the Trainer kept its last good parameters."""


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 3e-3  # peak learning rate
    batch_size: int = 32  # B: sequences per step
    weight_decay: float = 0.1  # AdamW's decoupled decay, on DECAYED tensors only
    beta1: float = 0.9  # Adam's running mean of gradients
    beta2: float = 0.99  # Adam's running mean of squared gradients
    eps: float = 1e-8
    grad_clip: float = 1.0  # rescale the gradient when its global L2 norm exceeds this; 0 = never
    warmup_steps: int = 100  # linear ramp of the learning rate from 0
    decay_steps: int | None = None  # cosine decay to min_lr_ratio * lr by this step; None = constant
    min_lr_ratio: float = 0.1

    def __post_init__(self):
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"The learning rate must be a positive number, got {self.lr!r}.")
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ValueError(f"The batch size must be a whole number >= 1, got {self.batch_size!r}.")
        if self.weight_decay < 0 or self.grad_clip < 0 or self.warmup_steps < 0:
            raise ValueError("weight_decay, grad_clip and warmup_steps must be >= 0.")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise ValueError("Adam's betas must lie in [0, 1).")

    def lr_at(self, step: int) -> float:
        """Learning rate for optimiser step `step` (counting from 0): warm-up, then constant or cosine."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        if self.decay_steps is None:
            return self.lr
        progress = min(1.0, (step - self.warmup_steps) / max(1, self.decay_steps - self.warmup_steps))
        floor = self.lr * self.min_lr_ratio
        return floor + 0.5 * (self.lr - floor) * (1 + math.cos(math.pi * progress))


def clip_grad_norm(grads: dict, max_norm: float) -> float:
    """Scale every gradient in place so that their global L2 norm is at most max_norm; return the norm
    before clipping. One norm over all tensors keeps the direction of the step."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if max_norm > 0 and norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


class AdamW:
    """Adam with decoupled weight decay (Loshchilov & Hutter): the decay shrinks the weight directly,
    p -= lr * wd * p, instead of being added to the gradient where Adam's scaling would distort it."""

    def __init__(self, flat_params: dict, cfg: TrainConfig):
        self.cfg = cfg
        self.m = {k: np.zeros_like(p) for k, p in flat_params.items()}
        self.v = {k: np.zeros_like(p) for k, p in flat_params.items()}
        self.t = 0  # steps taken, for the bias correction of m and v

    def update(self, flat_params: dict, flat_grads: dict, lr: float) -> None:
        """One step, in place on flat_params ({"blocks.0.attn.w_qkv": array, ...})."""
        c = self.cfg
        self.t += 1
        # Fold both bias corrections into the step size: lr * sqrt(1 - b2^t) / (1 - b1^t).
        step = lr * math.sqrt(1 - c.beta2**self.t) / (1 - c.beta1**self.t)
        eps = c.eps * math.sqrt(1 - c.beta2**self.t)
        for name, p in flat_params.items():
            g, m, v = flat_grads[name], self.m[name], self.v[name]
            m *= c.beta1
            m += (1 - c.beta1) * g
            v *= c.beta2
            v += (1 - c.beta2) * (g * g)
            if c.weight_decay and name.rsplit(".", 1)[-1] in DECAYED:
                p *= 1 - lr * c.weight_decay
            p -= step * m / (np.sqrt(v) + eps)


class Trainer:
    """Holds the parameters, the optimiser state and the history, and trains a few steps at a time.

    data: a text corpus (core.data) or a task (core.tasks) with train_batch, val_batches, vocab_size,
    seq_len. cfg: a transformer's ModelConfig, or a BigramConfig (the learnt bigram table).
    Parameters are float32. If a step's loss is not finite, or exceeds diverge_factor * log V,
    the parameters and optimiser go back to the last good step, status becomes "diverged" and
    TrainingDiverged is raised.
    """

    def __init__(self, cfg: ModelConfig | BigramConfig, data, train_cfg: TrainConfig | None = None, seed: int = 0,
                 params: dict | None = None, diverge_factor: float = 3.0):
        if data.vocab_size != cfg.vocab_size:
            raise ValueError(f"The data has {data.vocab_size} tokens but the model's vocabulary has {cfg.vocab_size}.")
        if data.seq_len > cfg.max_len:
            raise ValueError(f"The data's sequences ({data.seq_len} tokens) exceed the model's max_len {cfg.max_len}.")
        self.cfg, self.data, self.train_cfg = cfg, data, train_cfg or TrainConfig()
        self.rng = np.random.default_rng(seed)
        init, self._loss_and_grads, self._loss_only = model_functions(cfg)
        if params is None:
            params = init(cfg, self.rng, dtype=np.float32)
        self.params = unflatten({k: np.array(v, dtype=np.float32) for k, v in flatten(params).items()})
        self._flat = flatten(self.params)  # the same arrays, by name: updates reach self.params
        self.opt = AdamW(self._flat, self.train_cfg)
        self.steps = 0
        self.history: list[float] = []  # training loss of every step
        self.val_history: list[tuple[int, float]] = []  # (step, validation loss)
        self.status, self.message = "ready", ""
        self.seconds = 0.0  # time spent in step(), over every chunk and resumed session
        self._good = None  # copies of params, Adam's m and v from before the last update
        self.max_loss = diverge_factor * math.log(cfg.vocab_size)

    def step(self, n: int = 1) -> list[float]:
        """Run n optimiser steps; return their training losses. Raises TrainingDiverged (see the class)."""
        if self.status == "diverged":
            raise TrainingDiverged(self.message)
        losses, start = [], time.perf_counter()
        for _ in range(int(n)):
            ids, targets, mask = self.data.train_batch(self.rng, self.train_cfg.batch_size)
            loss, grads = self._loss_and_grads(self.params, self.cfg, ids, targets, mask)
            flat_grads = flatten(grads)
            norm = clip_grad_norm(flat_grads, self.train_cfg.grad_clip)
            if not (math.isfinite(loss) and math.isfinite(norm) and loss <= self.max_loss):
                self._diverge(loss)
            self._good = ({k: p.copy() for k, p in self._flat.items()},
                          {k: a.copy() for k, a in self.opt.m.items()}, {k: a.copy() for k, a in self.opt.v.items()})
            self.opt.update(self._flat, flat_grads, self.train_cfg.lr_at(self.steps))
            self.steps += 1
            self.history.append(loss)
            losses.append(loss)
            self.seconds += time.perf_counter() - start
            start = time.perf_counter()
        self.status = "training"
        return losses

    def _diverge(self, loss: float):
        at = self.steps + 1  # the step whose loss went bad
        if self._good is not None:  # undo the update that led here
            for target, saved in zip((self._flat, self.opt.m, self.opt.v), self._good):
                for k, a in saved.items():
                    target[k][...] = a
            self.opt.t -= 1
            self.steps -= 1
            self.history.pop()
        self.status = "diverged"
        self.message = (
            f"Training stopped: the loss became {loss:.4g} at step {at}. The learning rate {self.train_cfg.lr:g} "
            f"is probably too high; the model was put back as it was after step {self.steps}."
        )
        raise TrainingDiverged(self.message)

    def set_learning_rate(self, lr: float) -> None:
        """Change the peak learning rate from the next step on; after a divergence, this lets training
        go on from the restored parameters."""
        self.train_cfg = replace(self.train_cfg, lr=lr)  # validates lr
        self.opt.cfg = self.train_cfg
        if self.status == "diverged":
            self.status, self.message = "training", ""

    def evaluate(self, max_windows: int | None = 256, split: str = "val") -> float:
        """Mean loss over a fixed set of windows of the split (weighted by each batch's mask)."""
        total = weight = 0.0
        for ids, targets, mask in self.data.val_batches(64, max_windows, split=split):
            w = float(mask.sum()) if mask is not None else ids.size
            total += w * self._loss_only(self.params, self.cfg, ids, targets, mask)
            weight += w
        loss = total / weight
        if split == "val":
            self.val_history.append((self.steps, loss))
        return loss


def pattern_mass(params, cfg: ModelConfig, task, n: int = 256) -> np.ndarray:
    """(n_layers, H): mean attention weight that each head puts, at the task's counted queries, on the key
    holding the token to predict (task.expected_keys: the same (T,) for every sequence of a SyntheticTask,
    its own (B, T) per sequence for a RepeatTask). Near 1: that head solves the task."""
    batch = task.val_batches(n, n)[0]
    _, trace = forward(params, cfg, batch.ids)
    if isinstance(task, SyntheticTask):
        keys = np.broadcast_to(task.expected_keys(), batch.ids.shape)
    else:
        keys = task.expected_keys(batch)
    b, q = np.nonzero(keys >= 0)
    # weights (B, H, T, T)[b, :, q, key] -> (N, H): one row per counted query, averaged over them
    return np.array([layer.weights[b, :, q, keys[b, q]].mean(axis=0) for layer in trace.layers])

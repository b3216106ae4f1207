"""Training: AdamW with gradient clipping, a Trainer that runs in small chunks, checkpoints, the CLI.

    trainer = Trainer(cfg, data, TrainConfig(lr=3e-3), seed=0)
    losses = trainer.step(20)          # 20 optimiser steps; call again to go on (a UI trains in chunks)
    val = trainer.evaluate()           # validation loss on a fixed set of windows
    trainer.save_checkpoint("run.npz") # params + optimiser state + history; Trainer.load_checkpoint resumes

The backward passes and loss_and_grads live in core/backward.py; they are re-exported here.
Run `python -m core.train --help` for the command line that trains and ships a model.

Shapes: B batch, T sequence length, V vocabulary.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import shlex
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from core.backward import loss_and_grads, loss_only
from core.data import SyntheticTask, make_data
from core.model import ModelConfig, flatten, forward, init_params, save, unflatten

__all__ = ["AdamW", "TrainConfig", "Trainer", "TrainingDiverged", "clip_grad_norm", "loss_and_grads"]

# Weight decay shrinks matrices and embedding tables (as nanoGPT does), never biases or layer-norm
# gains: pulling a gain towards 0 would switch the layer off rather than regularise it.
DECAYED = ("wte", "wpe", "w_qkv", "w_o", "w_fc", "w_proj")


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


def keep_freed_memory() -> None:
    """Ask glibc to keep freed blocks instead of returning them to the system (Linux only, else a no-op).

    A training step allocates and frees dozens of 1-4 MB arrays; by default each one is handed back and
    page-faulted in again next time, which doubles the step time on small models.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: below 32 MB, allocate from the heap
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD: keep up to 256 MB of free heap
    except (OSError, AttributeError):
        pass


class Trainer:
    """Holds the parameters, the optimiser state and the history, and trains a few steps at a time.

    data: a core.data source (TextCorpus or SyntheticTask) with train_batch, val_batches, vocab_size,
    seq_len. Parameters are float32. If a step's loss is not finite, or exceeds diverge_factor * log V,
    the parameters and optimiser go back to the last good step, status becomes "diverged" and
    TrainingDiverged is raised.
    """

    def __init__(self, cfg: ModelConfig, data, train_cfg: TrainConfig | None = None, seed: int = 0,
                 params: dict | None = None, diverge_factor: float = 3.0):
        if data.vocab_size != cfg.vocab_size:
            raise ValueError(f"The data has {data.vocab_size} tokens but the model's vocabulary has {cfg.vocab_size}.")
        if data.seq_len > cfg.max_len:
            raise ValueError(f"The data's sequences ({data.seq_len} tokens) exceed the model's max_len {cfg.max_len}.")
        keep_freed_memory()
        self.cfg, self.data, self.train_cfg = cfg, data, train_cfg or TrainConfig()
        self.rng = np.random.default_rng(seed)
        if params is None:
            params = init_params(cfg, self.rng, dtype=np.float32)
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
            loss, grads = loss_and_grads(self.params, self.cfg, ids, targets, mask)
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
            total += w * loss_only(self.params, self.cfg, ids, targets, mask)
            weight += w
        loss = total / weight
        if split == "val":
            self.val_history.append((self.steps, loss))
        return loss

    # ---- checkpoints: one .npz, arrays plus a JSON string, no pickle ------------------------------

    def save_checkpoint(self, path) -> Path:
        path = Path(path).with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {"model": self.cfg.to_dict(), "train": asdict(self.train_cfg), "steps": self.steps,
                 "adam_t": self.opt.t, "history": self.history, "val_history": self.val_history,
                 "rng": self.rng.bit_generator.state, "data": self.data.name, "status": self.status,
                 "seconds": self.seconds}
        arrays = flatten({"params": self.params, "adam_m": unflatten(self.opt.m), "adam_v": unflatten(self.opt.v)})
        np.savez(path, state=np.array(json.dumps(state)), **arrays)
        return path

    @classmethod
    def load_checkpoint(cls, path, data) -> Trainer:
        """Resume from save_checkpoint's file; data must be the same source (same name and vocabulary)."""
        with np.load(Path(path).with_suffix(".npz"), allow_pickle=False) as f:
            state = json.loads(str(f["state"]))
            tree = unflatten({k: f[k] for k in f.files if k != "state"})
        if state["data"] != data.name:
            raise ValueError(f"This checkpoint was trained on {state['data']!r}, not {data.name!r}.")
        trainer = cls(ModelConfig(**state["model"]), data, TrainConfig(**state["train"]), params=tree["params"])
        for target, saved in ((trainer.opt.m, tree["adam_m"]), (trainer.opt.v, tree["adam_v"])):
            for k, a in flatten(saved).items():
                target[k][...] = a
        trainer.opt.t, trainer.steps = state["adam_t"], state["steps"]
        trainer.history, trainer.status, trainer.seconds = state["history"], state["status"], state["seconds"]
        trainer.val_history = [tuple(x) for x in state["val_history"]]
        trainer.rng.bit_generator.state = state["rng"]
        return trainer


def pattern_mass(params, cfg: ModelConfig, task: SyntheticTask, n: int = 256) -> np.ndarray:
    """(n_layers, H): mean attention weight that each head puts, at the task's second-half queries, on
    the key holding the token to predict (task.expected_keys). Near 1: that head solves the task."""
    ids = task.val_batches(n, n)[0].ids
    _, trace = forward(params, cfg, ids)
    keys = task.expected_keys()
    q = np.flatnonzero(keys >= 0)
    return np.array([layer["weights"][:, :, q, keys[q]].mean(axis=(0, 2)) for layer in trace["layers"]])


# ---- the command line: python -m core.train --data pydoc --steps 3000 --out core/weights/pydoc_char ---


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m core.train", description="Train a small transformer and save it.")
    ap.add_argument("--data", default="pydoc", help="pydoc, copy, reverse or induction")
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-ff", type=int, default=None, help="feed-forward width (default 4 * d_model)")
    ap.add_argument("--context", type=int, default=64, help="characters per window (text data)")
    ap.add_argument("--task-length", type=int, default=8, help="letters in a synthetic task's first half")
    ap.add_argument("--symbols", type=int, default=16, help="letters a synthetic task draws from")
    ap.add_argument("--pos-encoding", default="sinusoidal", choices=["sinusoidal", "learned"])
    ap.add_argument("--norm", default="pre", choices=["pre", "post"])
    ap.add_argument("--activation", default="gelu", choices=["gelu", "relu"])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--checkpoint", default=None, help="save training state here at every evaluation")
    ap.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    ap.add_argument("--out", required=True, help="path of the model to write (.npz and .json)")
    return ap


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    data = make_data(args.data, args.context, length=args.task_length, n_symbols=args.symbols)
    if args.resume and args.checkpoint and Path(args.checkpoint).with_suffix(".npz").exists():
        trainer = Trainer.load_checkpoint(args.checkpoint, data)
    else:
        cfg = ModelConfig(vocab_size=data.vocab_size, d_model=args.d_model, n_heads=args.heads,
                          n_layers=args.layers, max_len=data.seq_len, d_ff=args.d_ff,
                          pos_encoding=args.pos_encoding, norm=args.norm, activation=args.activation)
        tc = TrainConfig(lr=args.lr, batch_size=args.batch, weight_decay=args.weight_decay,
                         warmup_steps=args.warmup, decay_steps=args.steps)
        trainer = Trainer(cfg, data, tc, seed=args.seed)
    while trainer.steps < args.steps:
        losses = trainer.step(min(args.eval_every, args.steps - trainer.steps))
        val = trainer.evaluate()
        print(f"step {trainer.steps:6d}  train {np.mean(losses):.4f}  val {val:.4f}  {trainer.seconds:7.1f} s",
              flush=True)
        if args.checkpoint:
            trainer.save_checkpoint(args.checkpoint)
    meta = {
        "tokenizer": data.tokenizer.to_dict(), "data": data.name, "steps": trainer.steps,
        "train_loss": trainer.evaluate(1024, split="train"), "val_loss": trainer.evaluate(None),
        "bigram_val_loss": data.bigram_baseline(), "wall_time_s": round(trainer.seconds, 1),
        "train_config": asdict(trainer.train_cfg), "seed": args.seed,
        "command": "python -m core.train " + shlex.join(argv),
    }
    if isinstance(data, SyntheticTask):
        meta["task"] = asdict(data)
        mass = pattern_mass(trainer.params, trainer.cfg, data)
        layer, head = np.unravel_index(mass.argmax(), mass.shape)
        meta["pattern"] = {"layer": int(layer), "head": int(head), "mass": round(float(mass.max()), 4)}
    save(args.out, trainer.params, trainer.cfg, meta)
    print(json.dumps({k: meta[k] for k in ("train_loss", "val_loss", "bigram_val_loss", "wall_time_s")}))


if __name__ == "__main__":
    main()

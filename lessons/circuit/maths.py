"""The induction circuit of the `circuit` model: which head looks at the previous token, which one at the
token after the earlier copy, and how much better the model predicts a repeat than fresh letters.

Shapes: B batch, T sequence length, L layers, H heads per layer, n letters of an example.
"""

from __future__ import annotations

import numpy as np

from core.demos.knockout import mean_loss, position_losses
from core.model import Knockout, ModelConfig, forward
from core.tasks import RepeatTask, induction_keys


def previous_token_mass(weights: np.ndarray) -> np.ndarray:
    """(L, ..., H, T, T) attention maps -> (L, H): mean weight each head puts on key i - 1 (queries i >= 1)."""
    w = np.asarray(weights)
    T = w.shape[-1]
    diag = w[..., np.arange(1, T), np.arange(T - 1)]  # (L, ..., H, T - 1)
    return diag.reshape(w.shape[0], -1, w.shape[-3], T - 1).mean(axis=(1, 3))


def induction_mass(weights: np.ndarray, ids, counted=None) -> np.ndarray:
    """(L, ..., H, T, T) maps, ids (..., T) -> (L, H): mean weight each head puts on the key just after the
    previous occurrence of the current token, over the queries whose token occurred before (and counted
    (..., T) > 0, when given). NaN when no query qualifies."""
    w = np.asarray(weights)
    keys = induction_keys(ids)  # (..., T)
    if counted is not None:
        keys = np.where(np.asarray(counted) > 0, keys, -1)
    if not (keys >= 0).any():
        return np.full(w.shape[0:1] + w.shape[-3:-2], np.nan)
    w = w.reshape(w.shape[0], -1, *w.shape[-3:])  # (L, B, H, T, T)
    keys = keys.reshape(-1, keys.shape[-1])  # (B, T)
    b, q = np.nonzero(keys >= 0)
    return w[:, b, :, q, keys[b, q]].mean(axis=0)  # (N, L, H) -> (L, H)


def task_figures(params, cfg: ModelConfig, task: RepeatTask, n: int = 512, seed: int = 99) -> dict:
    """The circuit's figures on n fresh sequences of `task` (any stretch lengths, any T <= max_len):
    loss on the first copy and on the repeat, next-letter accuracy on the repeat, and each head's
    previous-token and induction mass (L, H) at the repeat's queries."""
    seq, start, length = task.sequences(np.random.default_rng(seed), n)
    ids, targets = seq[:, :-1], seq[:, 1:]
    first, repeat = task.halves(start, length, task.context)
    logits, trace = forward(params, cfg, ids)
    losses = position_losses(logits, targets)  # (B, T)
    weights = np.stack([layer.weights for layer in trace.layers])  # (L, B, H, T, T)
    hit = (logits.argmax(-1) == targets)
    return {"first_loss": mean_loss(losses, first), "repeat_loss": mean_loss(losses, repeat),
            "repeat_accuracy": float(hit[repeat > 0].mean()), "previous": previous_token_mass(weights),
            "induction": induction_mass(weights, ids, repeat)}


def copying_by_length(params, cfg: ModelConfig, n_symbols: int, lengths, n: int = 64, seed: int = 99,
                      off: tuple[int, int] | None = None) -> np.ndarray:
    """The repeat's mean loss (nats) on n fresh sequences per stretch length, drawn as in training
    (RepeatTask with that one length, T = cfg.max_len letters read): (len(lengths),). How far the circuit's
    copying reaches beyond the lengths it was trained on. off: a (layer, head) switched off while reading."""
    knockout = Knockout((off,)) if off is not None else None
    losses = []
    for length in lengths:
        task = RepeatTask(cfg.max_len, length, length, n_symbols)
        seq, start, stretch = task.sequences(np.random.default_rng([seed, length]), n)
        logits, _ = forward(params, cfg, seq[:, :-1], knockout=knockout)
        losses.append(mean_loss(position_losses(logits, seq[:, 1:]), task.halves(start, stretch, cfg.max_len)[1]))
    return np.array(losses)


def letter_dependence(params, cfg: ModelConfig, n_symbols: int, n: int = 64, seed: int = 99) -> np.ndarray:
    """How much each head's attention depends on the letters rather than on the positions: (L, H).

    Two batches of n sequences of cfg.max_len fresh random letters, the same positions, other letters; for each
    query row (queries 1 and on) the total variation distance between its two rows, half the sum of |a - b|:
    0 when the row is the same whatever the letters (a head that attends by position alone), 1 when the two rows
    have no weight in common. Averaged over the sequences and the queries."""
    rng = np.random.default_rng(seed)
    a, b = (rng.integers(1, n_symbols + 1, size=(n, cfg.max_len)) for _ in range(2))  # (n, T) each
    _, trace_a = forward(params, cfg, a)
    _, trace_b = forward(params, cfg, b)
    distance = [0.5 * np.abs(la.weights - lb.weights).sum(axis=-1)[..., 1:].mean(axis=(0, 2))  # (H,)
                for la, lb in zip(trace_a.layers, trace_b.layers)]
    return np.array(distance, dtype=np.float64)


def example(n_letters: int, length: int, seed: int, n_symbols: int) -> np.ndarray:
    """(n,) ids: random letters, then a stretch of `length` distinct letters and part of its repeat, so the
    sequence ends inside the repeat and its next letter can be read off the first copy."""
    if not 2 <= length <= min(n_symbols, (n_letters + 1) // 2):
        raise ValueError(f"The stretch must have 2..{min(n_symbols, (n_letters + 1) // 2)} letters to repeat "
                         f"inside {n_letters} letters; got {length}.")
    rng = np.random.default_rng(seed)
    shown = int(rng.integers(1, length))  # letters of the repeat already seen: 1..length - 1
    stretch = rng.permutation(n_symbols)[:length] + 1
    prefix = rng.integers(1, n_symbols + 1, size=n_letters - length - shown)
    return np.concatenate([prefix, stretch, stretch[:shown]])


def generated(length: int, seed: int, n_letters: int, n_symbols: int) -> np.ndarray:
    """(n_letters,) ids drawn as in training (RepeatTask): random letters in which a stretch of `length`
    distinct letters occurs twice in a row, at a place the seed picks."""
    task = RepeatTask(n_letters - 1, length, length, n_symbols)  # its sequences hold context + 1 letters
    return task.sequences(np.random.default_rng(seed), 1)[0][0]


def copy_halves(ids) -> tuple[np.ndarray, np.ndarray]:
    """ids (T,) -> (first, repeat), each (T - 1,) float, over the positions t that predict ids[t + 1]:
    repeat where the letter after the latest earlier occurrence of ids[t] is ids[t + 1] (copying gives it
    away), first where ids[t + 1] is a letter that such a copy later reads (the first copy), not repeat."""
    ids = np.asarray(ids)
    keys = induction_keys(ids)[:-1]  # (T - 1,)
    repeat = (keys >= 0) & (ids[np.maximum(keys, 0)] == ids[1:])
    first = np.zeros(len(ids) - 1, dtype=bool)
    first[keys[repeat] - 1] = True  # the position that predicts the letter the copy reads
    return (first & ~repeat).astype(np.float32), repeat.astype(np.float32)


def read_sequence(params, cfg: ModelConfig, ids) -> dict:
    """One sequence (T,) read by the model: weights (L, H, T, T), losses (T - 1,) of predicting each next
    letter and their mean `loss`, first and repeat (T - 1,) from copy_halves, their mean losses (NaN when
    a half is empty), and each head's previous-token share and induction share (L, H) (over the repeat's
    queries; NaN when nothing repeats)."""
    ids = np.asarray(ids, dtype=np.int64)
    logits, trace = forward(params, cfg, ids)
    weights = np.stack([layer.weights for layer in trace.layers])  # (L, H, T, T)
    losses = position_losses(logits[:-1], ids[1:])  # (T - 1,)
    first, repeat = copy_halves(ids)
    counted = np.append(repeat, 0.0)  # queries 0..T-1; the last has no next letter to check
    return {"weights": weights, "losses": losses, "loss": mean_loss(losses), "first": first, "repeat": repeat,
            "first_loss": mean_loss(losses, first) if first.any() else float("nan"),
            "repeat_loss": mean_loss(losses, repeat) if repeat.any() else float("nan"),
            "previous": previous_token_mass(weights), "induction": induction_mass(weights, ids, counted)}


def phase_change(log: dict, uniform: float, high: float = 0.8, low: float = 0.1) -> dict:
    """Where the validation loss of a training log fell (log as tools/train.py keeps it in a model's JSON:
    "step", "val_loss", equal lengths). uniform is the loss of a uniform guess (ln of the letters).

    Returns the last evaluation whose loss was still at least high x uniform ("stuck_step", "stuck_loss"),
    the first at or below low x uniform ("done_step", "done_loss"), the one interval between two evaluations
    with the largest fall ("fall": (step before, loss, step after, loss)), and the share of the training
    steps between stuck_step and done_step ("share"). Induction heads form in such a sudden fall after a
    long flat stretch (Olsson et al., 2022)."""
    steps, losses = np.asarray(log["step"], dtype=np.int64), np.asarray(log["val_loss"], dtype=np.float64)
    if steps.ndim != 1 or steps.shape != losses.shape or len(steps) < 2:
        raise ValueError("A training log needs at least two evaluations, each a step and a validation loss.")
    if not 0 < low < high:
        raise ValueError(f"Need 0 < low < high; got low {low}, high {high}.")
    stuck = np.flatnonzero(losses >= high * uniform)
    done = np.flatnonzero(losses <= low * uniform)
    if not len(stuck) or not len(done) or done[0] < stuck[-1]:
        raise ValueError("This log does not go from near the uniform guess to far below it.")
    s, d = int(stuck[-1]), int(done[0])
    i = int(np.argmax(losses[:-1] - losses[1:]))  # the largest fall from one evaluation to the next
    return {"stuck_step": int(steps[s]), "stuck_loss": float(losses[s]), "done_step": int(steps[d]),
            "done_loss": float(losses[d]), "fall": (int(steps[i]), float(losses[i]), int(steps[i + 1]),
                                                    float(losses[i + 1])),
            "share": float((steps[d] - steps[s]) / steps[-1]), "last_step": int(steps[-1])}

"""Knocking out heads: switch one head off and measure what the model loses, on the model's one forward.

    table = knockout_table(params, cfg, ids, targets)      # (L, H): loss change when each head is off
    seen = compare(params, cfg, ids, Knockout(((1, 0),)))  # the loss and next-token probabilities, both ways

Shapes: B batch, T sequence length, V vocabulary, L layers, H heads per layer.
"""

from __future__ import annotations

import numpy as np

from core.attention import softmax
from core.model import KNOCKOUT_MODES, Knockout, ModelConfig, check_ids, forward


def position_losses(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Cross-entropy in nats at every position: logits (..., T, V), targets (..., T) -> (..., T), float64."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)  # exp overflows above ~709 without the shift
    log_norm = np.log(np.exp(z).sum(axis=-1))
    return log_norm - np.take_along_axis(z, np.asarray(targets)[..., None], axis=-1)[..., 0]


def mean_loss(losses: np.ndarray, loss_mask: np.ndarray | None = None) -> float:
    """The mean of (..., T) per-position losses, weighted by loss_mask (..., T) when given."""
    if loss_mask is None:
        return float(np.mean(losses))
    w = np.broadcast_to(np.asarray(loss_mask, dtype=np.float64), losses.shape)
    if not w.sum() > 0:
        raise ValueError("The loss mask counts no position: there is nothing to measure.")
    return float((losses * w).sum() / w.sum())


def _check(cfg: ModelConfig, ids, targets, mode: str) -> tuple[np.ndarray, np.ndarray]:
    ids, targets = check_ids(cfg, ids), check_ids(cfg, targets)
    if ids.shape != targets.shape:
        raise ValueError(f"ids and targets must have the same shape, got {ids.shape} and {targets.shape}.")
    if mode not in KNOCKOUT_MODES:
        raise ValueError(f"The knockout mode must be one of {KNOCKOUT_MODES}, got {mode!r}.")
    return ids, targets


def knockout_table(params, cfg: ModelConfig, ids, targets, loss_mask=None, mode: str = "zero") -> np.ndarray:
    """(L, H): how much the loss rises when that one head is switched off (loss with it off - loss with all).

    ids, targets (T,) or (B, T); loss_mask like them or None (every position counts). A large entry: the
    model relies on that head; near 0: it could do without it. mode "zero" or "mean" (see core.model.Knockout).
    """
    ids, targets = _check(cfg, ids, targets, mode)
    logits, _ = forward(params, cfg, ids)
    base = mean_loss(position_losses(logits, targets), loss_mask)
    table = np.zeros((cfg.n_layers, cfg.n_heads))
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            off, _ = forward(params, cfg, ids, knockout=Knockout(((layer, head),), mode))
            table[layer, head] = mean_loss(position_losses(off, targets), loss_mask) - base
    return table


def compare(params, cfg: ModelConfig, ids, knockout: Knockout) -> dict:
    """One sequence read with every head, and again with knockout's heads off. ids (T,) ints.

    Returns probs, probs_off (V,): the next-token probabilities after the last position; weights,
    weights_off (L, H, T, T); losses, losses_off (T - 1,): the loss of predicting each next token of the
    sequence itself (position t predicts ids[t + 1]).
    """
    ids = check_ids(cfg, ids)
    if ids.ndim != 1:
        raise ValueError(f"compare reads one sequence, shape (T,); got {ids.shape}.")
    out = {}
    for suffix, ko in (("", None), ("_off", knockout)):
        logits, trace = forward(params, cfg, ids, knockout=ko)  # (T, V)
        out["probs" + suffix] = softmax(logits[-1].astype(np.float64))
        out["weights" + suffix] = np.stack([layer.weights for layer in trace.layers])  # (L, H, T, T)
        out["losses" + suffix] = position_losses(logits[:-1], ids[1:])
    return out

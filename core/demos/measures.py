"""Measures the lessons print: how spread out a row of weights is, and argument checks the set-ups share.

Shapes: Tq queries, Tk keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def check_whole(name: str, value, lo: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < lo:
        raise ValueError(f"{name} must be a whole number of at least {lo}, got {value!r}.")
    return int(value)


def check_matrix(matrix: np.ndarray, name: str = "The score matrix") -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"{name} must be 2-D (queries x keys), got shape {m.shape}.")
    return m


def check_tokens(tokens: Sequence[str], what: str = "sentence") -> list[str]:
    if not tokens:
        raise ValueError(f"The {what} has no tokens: type some text first.")
    return list(tokens)


def entropy(weights, axis: int = -1) -> np.ndarray:
    """Shannon entropy in bits of each distribution along `axis`: (..., T) -> (...).

    log2(T) when the weight is spread evenly over T keys, 0 when one key takes it all.
    0·log 0 counts as 0, so masked keys (weight exactly 0) add nothing.
    """
    p = np.asarray(weights, dtype=np.float64)
    if np.any(p < 0):
        raise ValueError("Entropy needs weights that are all >= 0 (a probability distribution).")
    log_p = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * log_p, axis=axis) + 0.0  # + 0.0 turns -0.0 into 0.0


def weight_summary(weights) -> dict:
    """Mean row entropy (bits) and mean largest weight of a (Tq, Tk) weight matrix."""
    w = check_matrix(weights, "The weight matrix")
    return {"entropy": float(entropy(w).mean()), "max": float(w.max(axis=-1).mean()),
            "uniform_entropy": float(np.log2(w.shape[-1]))}


def spread(matrix) -> float:
    """Standard deviation of a matrix's finite entries: how wide the scores are spread."""
    m = np.asarray(matrix, dtype=np.float64)
    finite = m[np.isfinite(m)]
    return float(finite.std()) if finite.size else 0.0

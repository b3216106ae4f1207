"""Small seeded set-ups of one attention head, laid out for the lessons to draw.

Shapes: T sequence length, D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

import numpy as np

from core.attention import scaled_dot_product_attention
from core.tokenize import word_embeddings


def projections(D: int, d_k: int, rng: np.random.Generator, d_v: int | None = None) -> dict:
    """Random W_Q, W_K (D, d_k) and W_V (D, d_v) with entries ~ N(0, 1/D).

    The 1/D variance keeps each entry of Q = X W_Q at unit variance when X has unit-variance entries,
    so the raw scores have variance d_k: exactly the growth that the scaling page is about.
    """
    if D < 1 or d_k < 1:
        raise ValueError(f"Need d_model >= 1 and d_k >= 1, got d_model={D}, d_k={d_k}.")
    d_v = d_k if d_v is None else d_v
    std = 1.0 / np.sqrt(D)
    return {
        "W_Q": rng.standard_normal((D, d_k)) * std,
        "W_K": rng.standard_normal((D, d_k)) * std,
        "W_V": rng.standard_normal((D, d_v)) * std,
    }


def single_head(tokens: list[str], D: int, d_k: int, seed: int, mask=None, scale: float | None = None) -> dict:
    """Every array of one attention head on a sentence, for drawing.

    tokens (T,) -> X (T, D), W_Q/W_K/W_V (D, d_k), Q/K/V (T, d_k), scores = Q K^T (T, T) unscaled,
    weights (T, T), out (T, d_k). The embeddings depend on the words and seed; the projections on the seed.
    """
    if not tokens:
        raise ValueError("There are no tokens: type some text first.")
    X = word_embeddings(tokens, D, seed)  # (T, D)
    W = projections(D, d_k, np.random.default_rng([seed, D, d_k]))
    Q, K, V = X @ W["W_Q"], X @ W["W_K"], X @ W["W_V"]  # (T, D) @ (D, d_k) -> (T, d_k)
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale)
    return {"X": X, **W, "Q": Q, "K": K, "V": V, "scores": Q @ K.T, "weights": weights, "out": out}


def weighted_sum_terms(weights_row: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The terms a_ij v_j of z_i = sum_j a_ij v_j: (Tk,), (Tk, d_v) -> (Tk, d_v). Their column sums are z_i."""
    return weights_row[:, None] * V

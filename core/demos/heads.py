"""Small seeded set-ups of one attention head and one multi-head layer, laid out for the lessons to draw.

Shapes: T sequence length, D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

import numpy as np

from core.attention import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_einsum,
    multi_head_attention_loop,
    qkv_heads,
    scaled_dot_product_attention,
)
from core.demos.measures import entropy
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


def mha_weights(D: int, seed: int) -> dict:
    """Seeded W_qkv (D, 3D) laid out [Q | K | V], W_O (D, D), entries ~ N(0, 1/D), and zero biases.

    They depend on d_model and the seed only, not on the number of heads: splitting into heads is a
    reshape of the same matrices, so 1 head and H heads can be compared on identical weights.
    """
    if D < 1:
        raise ValueError(f"Need d_model >= 1, got {D}.")
    rng = np.random.default_rng([seed, D, 4])
    std = 1.0 / np.sqrt(D)
    return {"w_qkv": rng.standard_normal((D, 3 * D)) * std, "b_qkv": np.zeros(3 * D),
            "w_o": rng.standard_normal((D, D)) * std, "b_o": np.zeros(D)}


def multi_head(tokens: list[str], D: int, n_heads: int, seed: int, causal: bool = False) -> dict:
    """Every array of one multi-head attention layer on a sentence, and the three forms compared.

    tokens (T,) -> X (T, D); Q, K, V per head (H, T, d_k); weights (H, T, T); heads (H, T, d_k);
    concat (T, D); w_o (D, D); out = concat W_O + b_O (T, D). "forms" maps each implementation's name
    to (out, weights); "max_diff" to max |difference| from the vectorised form (outputs and weights).
    """
    if not tokens:
        raise ValueError("There are no tokens: type some text first.")
    if n_heads < 1 or D % n_heads:
        raise ValueError(f"d_model = {D} cannot be split into {n_heads} equal heads; choose a divisor of {D}.")
    X = word_embeddings(tokens, D, seed)  # (T, D)
    W = mha_weights(D, seed)
    mask = causal_mask(len(tokens)) if causal else None
    Q, K, V = qkv_heads(X, W["w_qkv"], W["b_qkv"], n_heads)  # each (H, T, d_k)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)  # (H, T, d_k), (H, T, T)
    concat = merge_heads(heads)  # (H, T, d_k) -> (T, D)
    args = (X, W["w_qkv"], W["b_qkv"], W["w_o"], W["b_o"], n_heads, mask)
    forms = {"vectorised (reshape)": multi_head_attention(*args),
             "per-head loop": multi_head_attention_loop(*args),
             "einsum": multi_head_attention_einsum(*args)}
    ref_out, ref_w = forms["vectorised (reshape)"]
    max_diff = {name: (float(np.max(np.abs(o - ref_out))), float(np.max(np.abs(w - ref_w))))
                for name, (o, w) in forms.items()}
    return {"X": X, **W, "Q": Q, "K": K, "V": V, "weights": weights, "heads": heads, "concat": concat,
            "out": concat @ W["w_o"] + W["b_o"], "forms": forms, "max_diff": max_diff}


def head_entropies(weights: np.ndarray) -> dict:
    """How spread out each head's attention is: (H, Tq, Tk) weights -> "per_head" (H,), the mean row
    entropy of each head in bits; "mean", their mean; "uniform", log2(Tk), the entropy of an even row."""
    per_head = entropy(weights).mean(axis=-1)  # (H, Tq) -> (H,)
    return {"per_head": per_head, "mean": float(per_head.mean()), "uniform": float(np.log2(weights.shape[-1]))}

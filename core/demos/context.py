"""Set-ups of the causal mask and of one query, shared by the Masking and QKV lessons and by the worked rows
of ui.sections.walkthrough_views: the two boolean mask conventions (and the additive one), and one query row
worked through by hand.

walk_through uses the same seeded head as core.demos.heads.single_head (same embeddings, same W_Q, W_K, W_V
for a given seed, d_model and d_k), so its numbers agree with the other lessons'.

Shapes: T sequence length, D d_model, d_k query/key/value size.
"""

from __future__ import annotations

import numpy as np

from core.attention import causal_mask, softmax
from core.demos.heads import single_head
from core.demos.measures import check_matrix, check_tokens, check_whole


def boolean_masks(T: int) -> dict:
    """The three ways people write the causal mask, each (T, T).

    allowed: this project's convention (and PyTorch's boolean attn_mask), True where query i may look at
    key j. blocked: the opposite convention some tutorials use, np.triu(ones, k=1), True where the key is
    hidden; blocked == ~allowed. additive: 0 where allowed and -inf where blocked, added to the scores.
    """
    T = check_whole("The sequence length", T)
    allowed = causal_mask(T)
    return {"allowed": allowed, "blocked": np.triu(np.ones((T, T), dtype=bool), k=1),
            "additive": np.where(allowed, 0.0, -np.inf)}


def mask_conventions(scores) -> dict:
    """The same scaled scores (T, T) masked in each of boolean_masks' three conventions, then softmaxed.

    Returns the masks (allowed, blocked, additive) and weights: {convention: (T, T)} for
    np.where(allowed, s, -inf), np.where(~blocked, s, -inf) (a blocked mask must be flipped first) and
    s + additive; diff: {convention: float}, each one's largest difference from the first, and max_diff,
    the largest of those (exactly 0: the three are one mask written three ways).
    """
    scores = check_matrix(scores)
    if scores.shape[0] != scores.shape[1]:
        raise ValueError(f"A causal mask needs square scores (T, T), got shape {scores.shape}.")
    m = boolean_masks(scores.shape[0])
    weights = {"allowed": softmax(np.where(m["allowed"], scores, -np.inf)),
               "blocked": softmax(np.where(~m["blocked"], scores, -np.inf)),
               "additive": softmax(scores + m["additive"])}
    diff = {name: float(np.max(np.abs(w - weights["allowed"]))) for name, w in weights.items()}
    return {**m, "weights": weights, "diff": diff, "max_diff": max(diff.values())}


def walk_through(tokens, D: int, d_k: int, seed: int, query: int) -> dict:
    """Query row i of single_head worked through one key at a time.

    tokens (T,), query i -> q (d_k,), K (T, d_k), products q * k_j (T, d_k), dots (T,) their row sums
    = (Q Kᵀ)[i], scale 1/√d_k, scaled (T,), row_max, exps = exp(scaled - row_max) (T,), exp_sum, and
    weights = exps / exp_sum (T,), single_head's weights[i].
    """
    head = single_head(check_tokens(tokens), D, d_k, seed)
    i = check_whole("The query position", query, lo=0)
    if i >= len(tokens):
        raise ValueError(f"The query position must be below the number of tokens ({len(tokens)}), got {i}.")
    q, K = head["Q"][i], head["K"]
    products = q[None, :] * K  # (T, d_k): term by term, before summing into a dot product
    scale = 1.0 / np.sqrt(d_k)
    scaled = products.sum(axis=1) * scale  # (T,)
    exps = np.exp(scaled - scaled.max())  # subtract the max: exp overflows above ~709
    return {"token": tokens[i], "q": q, "K": K, "products": products, "dots": products.sum(axis=1),
            "scale": scale, "scaled": scaled, "row_max": float(scaled.max()), "exps": exps,
            "exp_sum": float(exps.sum()), "weights": exps / exps.sum()}

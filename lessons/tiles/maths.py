"""Attention one tile of keys at a time, with the online softmax (the idea behind FlashAttention).

The full way builds every score q_i·k_j at once, a (Tq, Tk) matrix, before the softmax. The tiled way
walks the keys in blocks and never holds more than one (Tq, block) tile of scores. For each query it
keeps three running quantities:

    m    the largest score seen so far            (Tq,)
    l    the sum of exp(score - m) seen so far     (Tq,)
    acc  the sum of exp(score - m) * v_j so far    (Tq, d_v)

When a block raises the maximum from m_old to m_new, everything summed so far was measured against the
wrong maximum; multiplying l and acc by exp(m_old - m_new) puts it right. After the last block,
acc / l is exactly softmax(scores) @ V, up to rounding.

Shapes: T sequence length (Tq queries, Tk keys), d_k query/key size, d_v value size, b block size.
"""

from __future__ import annotations

import numpy as np

from core.attention import causal_mask
from core.costs import DTYPE_BYTES, attention_memory, check_length
from core.demos.heads import single_head
from core.demos.measures import check_whole


def _check_inputs(q, k, v, mask) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """float64 q (Tq, d_k), k (Tk, d_k), v (Tk, d_v) and a bool mask broadcast to (Tq, Tk)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError("Queries, keys and values must each be 2-D: (sequence, features).")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"Queries and keys must have the same size d_k: got {q.shape[1]} and {k.shape[1]}.")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"Every key needs one value: got {k.shape[0]} keys and {v.shape[0]} values.")
    if min(q.shape[0], k.shape[0], q.shape[1]) < 1:
        raise ValueError("Attention needs at least one query, one key and d_k >= 1.")
    shape = (q.shape[0], k.shape[0])
    if mask is None:
        return q, k, v, np.ones(shape, dtype=bool)
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError("The mask must be boolean: True where a query may look at a key.")
    try:
        return q, k, v, np.broadcast_to(mask, shape)
    except ValueError:
        raise ValueError(f"The mask of shape {mask.shape} does not fit the scores of shape {shape}.") from None


def online_softmax_step(m, l, acc, scores, v_block) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fold one block into the running state: m (Tq,), l (Tq,), acc (Tq, d_v), scores (Tq, b) with -inf
    where masked, v_block (b, d_v) -> new m, l, acc and the rescale factor exp(m_old - m_new) (Tq,).
    """
    m_new = np.maximum(m, scores.max(axis=1))
    # A row with no visible key yet has m_new = -inf; measuring against 0 instead keeps
    # exp(-inf - 0) = 0 and avoids (-inf) - (-inf) = NaN.
    shift = np.where(np.isfinite(m_new), m_new, 0.0)
    rescale = np.exp(m - shift)  # (Tq,): 0 while nothing was seen, so the empty past stays empty
    p = np.exp(scores - shift[:, None])  # (Tq, b): masked scores give exactly 0
    return m_new, rescale * l + p.sum(axis=1), rescale[:, None] * acc + p @ v_block, rescale


def normalise(acc, l) -> np.ndarray:
    """acc / l per row: (Tq, d_v), (Tq,) -> (Tq, d_v); a row that has seen no key yet stays 0."""
    return np.divide(acc, l[:, None], out=np.zeros_like(acc), where=l[:, None] > 0)


def tiled_attention(q, k, v, block_size: int, mask=None, scale: float | None = None) -> dict:
    """softmax(q kᵀ · scale, masked) v computed one block of keys at a time.

    q (Tq, d_k), k (Tk, d_k), v (Tk, d_v), mask bool broadcastable to (Tq, Tk), True = may look
    (as core.attention.causal_mask). Returns out (Tq, d_v); steps, one dict per key block with
    block (its index), keys (start, stop), scores (Tq, b) scaled with -inf where masked, rescale (Tq,),
    m (Tq,), l (Tq,), out (Tq, d_v) normalised so far and held (scores held at that step);
    peak_scores = Tq * block_size at most, against full_scores = Tq * Tk for the full way.
    """
    q, k, v, mask = _check_inputs(q, k, v, mask)
    (Tq, d_k), Tk = q.shape, k.shape[0]
    block_size = check_whole("The block size", block_size)
    if block_size > Tk:
        raise ValueError(f"The block size can be at most the number of keys ({Tk}), got {block_size}.")
    scale = 1.0 / np.sqrt(d_k) if scale is None else float(scale)
    m, l, acc = np.full(Tq, -np.inf), np.zeros(Tq), np.zeros((Tq, v.shape[1]))
    steps = []
    for start in range(0, Tk, block_size):
        stop = min(start + block_size, Tk)  # the last block is shorter when block_size does not divide Tk
        scores = (q @ k[start:stop].T) * scale  # (Tq, b): the only scores alive at this step
        scores = np.where(mask[:, start:stop], scores, -np.inf)
        m, l, acc, rescale = online_softmax_step(m, l, acc, scores, v[start:stop])
        steps.append({"block": len(steps), "keys": (start, stop), "scores": scores, "rescale": rescale,
                      "m": m.copy(), "l": l.copy(), "out": normalise(acc, l), "held": scores.size})
    return {"out": normalise(acc, l), "steps": steps, "block_size": block_size,
            "peak_scores": max(s["held"] for s in steps), "full_scores": Tq * Tk}


def attention_memory_both_ways(T: int, block_size: int, d_k: int, dtype: str = "float32") -> dict:
    """Bytes of attention's working memory for T queries and T keys, the full way and the tiled way.

    full_scores: the whole (T, T) score matrix. The tiled way, as this lesson draws it, holds one (T, b) tile
    of scores (every query against one block of keys), the running m and l (2 T numbers) and the accumulator
    (T, d_k, taking d_v = d_k); tiled_total is their sum and ratio = full_scores / tiled_total. The full way
    grows like T², the tiled way like T.

    FlashAttention cuts the queries into blocks too, so that one piece of work fits in a GPU's on-chip memory:
    block_scores is one (b, b) block of scores, b queries against b keys; block_total adds what that piece
    holds beside it, the b query, key, value and accumulator rows (4 b d_k) and the b queries' m and l.
    Neither depends on T.
    """
    T = check_length(T)
    block_size = check_whole("The block size", block_size)
    d_k = check_whole("d_k", d_k)
    if block_size > T:
        raise ValueError(f"The block size can be at most the sequence length ({T}), got {block_size}.")
    full = attention_memory(T, dtype=dtype)["per_head"]  # also checks the dtype name
    size = DTYPE_BYTES[dtype]
    parts = {"tile_scores": T * block_size * size, "running_stats": 2 * T * size, "accumulator": T * d_k * size}
    tiled = sum(parts.values())
    b = block_size
    block = {"block_scores": b * b * size, "block_total": (b * b + 4 * b * d_k + 2 * b) * size}
    return {"full_scores": full, **parts, "tiled_total": tiled, "ratio": full / tiled, **block}


def tiles_view(tokens: list[str], D: int, d_k: int, seed: int, block_size: int, causal: bool) -> dict:
    """One head of core.demos.heads.single_head on a sentence, computed tile by tile and the full way.

    tokens (T,) -> Q, K, V (T, d_k); full_out (T, d_k) and full_scores (T, T), scaled, -inf where masked;
    tiled: tiled_attention's result; m, l, rescale (T, n_blocks), one column per block as it was folded
    in; diffs (n_blocks,) the largest |partial output - full output| after each block; held_maps
    (n_blocks, T, T): the full scores where that step's tile is, NaN elsewhere (nothing held there).
    """
    T = len(tokens)
    mask = causal_mask(T) if causal else None
    head = single_head(tokens, D, d_k, seed, mask=mask)
    full = np.where(causal_mask(T) if causal else True, head["scores"] / np.sqrt(d_k), -np.inf)  # (T, T)
    tiled = tiled_attention(head["Q"], head["K"], head["V"], min(block_size, T), mask=mask)
    steps = tiled["steps"]
    held = np.full((len(steps), T, T), np.nan)
    for i, s in enumerate(steps):
        start, stop = s["keys"]
        held[i, :, start:stop] = s["scores"]
    return {"Q": head["Q"], "K": head["K"], "V": head["V"], "full_out": head["out"], "full_scores": full,
            "tiled": tiled, "held_maps": held,
            **{name: np.stack([s[name] for s in steps], axis=1) for name in ("m", "l", "rescale")},
            "diffs": np.array([np.abs(s["out"] - head["out"]).max() for s in steps])}

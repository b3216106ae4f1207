"""Softmax, masks and attention: the heart of the transformer.

Shapes: B batch, T sequence length (Tq queries, Tk keys), D d_model, H heads,
d_k = D / H per-head size, d_v value size.
"""

from __future__ import annotations

import numpy as np

from core.layers import linear


def softmax(x: np.ndarray, axis: int = -1, *, out: np.ndarray | None = None) -> np.ndarray:
    """Numerically stable softmax along `axis`.

    Subtracts the row max first: exp overflows above ~709 in float64 (~88 in float32).
    A row that is entirely -inf (every key masked) gives zeros, never NaN and never a warning.
    `out` (optional, may be x itself) receives the result instead of a new array.
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    row_max = np.max(x, axis=axis, keepdims=True)
    # A fully masked row has max -inf; shifting by 0 instead keeps exp(-inf) = 0 without inf - inf = NaN.
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    # exp in place on one array: at long lengths each extra (..., T, T) array costs about as much as the maths.
    e = np.subtract(x, row_max, out=out)
    np.exp(e, out=e)
    total = np.sum(e, axis=axis, keepdims=True)
    # A fully masked row sums to 0: divide it by 1 instead, so that it stays exactly 0.
    e /= np.where(total > 0, total, 1)
    return e


def causal_mask(T: int, start: int = 0) -> np.ndarray:
    """(T, start + T) bool: True where query i may attend to key j, i.e. j <= start + i (PyTorch's bool attn_mask).

    start = 0 gives the square (T, T) mask. With `start` keys already cached, query i sits at position start + i:
    the rows start..start + T of the square mask, built without the rows above them.
    """
    if int(T) != T or T < 1:
        raise ValueError(f"The sequence length must be a positive whole number, got {T!r}.")
    if int(start) != start or start < 0:
        raise ValueError(f"The first query's position must be a whole number >= 0, got {start!r}.")
    return np.tri(int(T), int(start) + int(T), int(start), dtype=bool)  # ones on and below diagonal `start`


def check_attention_inputs(q, k, v, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raise a ValueError that says what to change unless q, k, v (and the mask) fit attention; return q, k, v
    as float arrays.

    q (..., Tq, d_k), k (..., Tk, d_k), v (..., Tk, d_v), mask bool broadcastable to (..., Tq, Tk).
    """
    # Integer inputs become float64: otherwise the scale 1/sqrt(d_k) would be cast to an integer (0).
    q, k, v = (a if np.issubdtype(a.dtype, np.floating) else a.astype(np.float64)
               for a in (np.asarray(q), np.asarray(k), np.asarray(v)))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError("Queries, keys and values need at least two axes: (sequence, features).")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"Queries and keys must have the same size d_k to be compared: got {q.shape[-1]} and {k.shape[-1]}."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"Every key needs one value: got {k.shape[-2]} keys and {v.shape[-2]} values."
        )
    if q.shape[-1] == 0 or q.shape[-2] == 0 or k.shape[-2] == 0:
        raise ValueError("Attention needs at least one query, one key and d_k >= 1.")
    if mask is not None:
        _check_mask(np.asarray(mask), q, k)
    return q, k, v


def _check_mask(mask: np.ndarray, q: np.ndarray, k: np.ndarray) -> None:
    if mask.dtype != bool:
        raise ValueError("The mask must be boolean: True where a query may look at a key.")
    # The shape q @ k^T will have, worked out before computing it.
    scores_shape = (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
    try:
        np.broadcast_shapes(mask.shape, scores_shape)
    except ValueError:
        raise ValueError(
            f"The mask of shape {mask.shape} does not fit the scores of shape {scores_shape}."
        ) from None


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q k^T * scale, masked) v.

    q (..., Tq, d_k), k (..., Tk, d_k), v (..., Tk, d_v), mask bool broadcastable to (..., Tq, Tk), True where
    a query may look at a key. scale defaults to 1/sqrt(d_k). Returns out (..., Tq, d_v) and weights
    (..., Tq, Tk), whose rows sum to 1 (0 for a row whose every key is masked).
    """
    # a ValueError saying what to change unless d_k, the key/value counts and the mask fit; non-float inputs -> float64
    q, k, v = check_attention_inputs(q, k, v, mask)
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])  # 1/sqrt(d_k)
    # (q * scale) k^T = (q k^T) * scale: scaling q, (..., Tq, d_k), is a pass over fewer numbers than the scores.
    q = q * np.asarray(scale, dtype=q.dtype)  # in q's precision: a float32 model stays float32
    scores = q @ np.swapaxes(k, -1, -2)  # (..., Tq, d_k) @ (..., d_k, Tk) -> (..., Tq, Tk)
    if mask is not None:
        # Hidden scores become -inf, so exp gives them weight exactly 0. A row whose every key is hidden is then all
        # -inf, and softmax above returns zeros for it (a plain max-shifted softmax would give NaN: -inf minus -inf).
        # A finite fill such as -1e9 would instead spread that row evenly over its hidden keys.
        scores = np.where(mask, scores, -np.inf)  # a batch of masks gives a batch of scores
    weights = softmax(scores, axis=-1, out=scores)  # (..., Tq, Tk), over the scores: no other array needs them
    return weights @ v, weights  # (..., Tq, d_v), (..., Tq, Tk)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., T, D) -> (..., H, T, d_k): head h is the contiguous slice [h*d_k, (h+1)*d_k)."""
    *lead, T, D = x.shape
    return np.swapaxes(x.reshape(*lead, T, n_heads, D // n_heads), -2, -3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., H, T, d_k) -> (..., T, D): the concatenation of the heads, in order."""
    *lead, H, T, d_k = x.shape
    return np.swapaxes(x, -2, -3).reshape(*lead, T, H * d_k)


def _check_mha(x, w_qkv, w_o, n_heads) -> None:
    if x.ndim < 2:
        raise ValueError("The input must have at least two axes: (sequence, d_model).")
    D = x.shape[-1]
    if int(n_heads) != n_heads or n_heads < 1:
        raise ValueError(f"The number of heads must be a positive whole number, got {n_heads!r}.")
    if D % n_heads:
        raise ValueError(
            f"d_model = {D} cannot be split evenly into {n_heads} heads; pick a number of heads that divides {D}."
        )
    if w_qkv.shape != (D, 3 * D):
        raise ValueError(f"w_qkv must have shape (D, 3D) = ({D}, {3 * D}), got {w_qkv.shape}.")
    if w_o.shape != (D, D):
        raise ValueError(f"w_o must have shape (D, D) = ({D}, {D}), got {w_o.shape}.")


def _per_head(mask):
    """A batched mask (..., T, T) gains a head axis, (..., 1, T, T); a shared (T, T) mask broadcasts as is."""
    if mask is None or np.ndim(mask) <= 2:
        return mask
    return np.asarray(mask)[..., None, :, :]


def qkv_heads(x, w_qkv, b_qkv, n_heads):
    """Project x and split into heads. x (..., T, D) -> q, k, v each (..., H, T, d_k)."""
    qkv = linear(x, w_qkv, b_qkv)  # (..., T, 3D) laid out [Q | K | V]
    D = x.shape[-1]
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]  # each (..., T, D), views (np.split costs more)
    return split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)


def multi_head_attention(x, w_qkv, b_qkv, w_o, b_o, n_heads, mask=None):
    """Multi-head self-attention, all heads at once with reshapes (the main form).

    x (..., T, D), w_qkv (D, 3D) laid out [Q | K | V], b_qkv (3D,), w_o (D, D), b_o (D,).
    Heads are contiguous d_k = D/H slices of each of Q, K, V.
    Returns out (..., T, D) and weights (..., H, T, T).
    """
    x = np.asarray(x)
    _check_mha(x, w_qkv, w_o, n_heads)
    q, k, v = qkv_heads(x, w_qkv, b_qkv, n_heads)  # (..., H, T, d_k)
    heads, weights = scaled_dot_product_attention(q, k, v, _per_head(mask))  # (..., H, T, d_k), (..., H, T, T)
    return linear(merge_heads(heads), w_o, b_o), weights


def multi_head_attention_loop(x, w_qkv, b_qkv, w_o, b_o, n_heads, mask=None):
    """The same computation written the way the paper draws it: one head at a time, then concat.

    Slow but plain; used to check the vectorised form. Same shapes as multi_head_attention.
    """
    x = np.asarray(x)
    _check_mha(x, w_qkv, w_o, n_heads)
    D = x.shape[-1]
    d_k = D // n_heads
    w_q, w_k, w_v = w_qkv[:, :D], w_qkv[:, D : 2 * D], w_qkv[:, 2 * D :]
    b_q, b_k, b_v = b_qkv[:D], b_qkv[D : 2 * D], b_qkv[2 * D :]
    outs, all_weights = [], []
    for h in range(n_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q = x @ w_q[:, cols] + b_q[cols]  # (..., T, d_k)
        k = x @ w_k[:, cols] + b_k[cols]
        v = x @ w_v[:, cols] + b_v[cols]
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        outs.append(out)
        all_weights.append(weights)
    concat = np.concatenate(outs, axis=-1)  # (..., T, D)
    return concat @ w_o + b_o, np.stack(all_weights, axis=-3)


def multi_head_attention_einsum(x, w_qkv, b_qkv, w_o, b_o, n_heads, mask=None):
    """The same computation with the head axis folded into the weights and einsum doing the sums.

    W_Q is viewed as (D, H, d_k) so one einsum projects every head, and W_O as (H, d_k, D) so one einsum
    merges them; softmax(Q K^T / sqrt(d_k)) V in between is scaled_dot_product_attention, as in the other
    forms. Same shapes as multi_head_attention.
    """
    x = np.asarray(x)
    _check_mha(x, w_qkv, w_o, n_heads)
    D = x.shape[-1]
    d_k = D // n_heads
    w = w_qkv.reshape(D, 3, n_heads, d_k)  # (D, [q|k|v], H, d_k)
    b = b_qkv.reshape(3, n_heads, d_k)
    q = np.einsum("...td,dhk->...htk", x, w[:, 0]) + b[0][:, None, :]  # (..., H, T, d_k)
    k = np.einsum("...td,dhk->...htk", x, w[:, 1]) + b[1][:, None, :]
    v = np.einsum("...td,dhk->...htk", x, w[:, 2]) + b[2][:, None, :]
    heads, weights = scaled_dot_product_attention(q, k, v, _per_head(mask))  # (..., H, T, d_k), (..., H, T, T)
    # Concatenating the heads and multiplying by W_O is one sum over (head, d_k): W_O viewed as (H, d_k, D).
    out = np.einsum("...hqk,hkd->...qd", heads, w_o.reshape(n_heads, d_k, D)) + b_o
    return out, weights

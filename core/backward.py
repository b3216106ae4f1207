"""Backward passes: every layer of core.model, forward and backward side by side, and loss_and_grads.

Each `xxx_forward(...)` returns `(out, cache)`, where the cache keeps what the backward pass needs, and
each `xxx_backward(dout, cache)` returns `(dx, grads)`: the gradient of the loss with respect to the
layer's input and to its parameters. Gradient names carry a `d` prefix: `dx` is dLoss/dx.

The forward computes exactly what core.model.forward computes (tests/test_train_gradcheck.py checks
the logits), but keeps its intermediate arrays. The arithmetic follows the parameters' dtype: float32
for training speed, float64 for the finite-difference checks.

Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

from core.layers import sinusoidal_encoding
from core.model import ModelConfig, check_ids

_GELU_C = float(np.sqrt(2.0 / np.pi))


def _sum_rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (n,): the gradient of a bias that was broadcast over every leading axis."""
    return a.reshape(-1, a.shape[-1]).sum(axis=0)


def _weight_grad(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """dW of y = x @ W: x (..., n), dy (..., m) -> (n, m), as one matrix product over all rows."""
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


# ---- linear layer: y = x @ w + b ----------------------------------------------------------------


def linear_forward(x, w, b):
    """x (..., n), w (n, m), b (m,) -> y (..., m). One 2-D matrix product: faster than a stacked one."""
    y = x.reshape(-1, x.shape[-1]) @ w  # (N, n) @ (n, m) -> (N, m)
    y += b
    return y.reshape(*x.shape[:-1], w.shape[1]), (x, w)


def linear_backward(dy, cache):
    x, w = cache
    dx = (dy.reshape(-1, dy.shape[-1]) @ w.T).reshape(x.shape)
    return dx, {"dw": _weight_grad(x, dy), "db": _sum_rows(dy)}


# ---- layer norm: y = (x - mean) / sqrt(var + eps) * g + b, biased variance -----------------------


def layer_norm_forward(x, g, b, eps=1e-5):
    """x (..., D), g (D,), b (D,) -> y (..., D). Same formula, same order of operations as core.layers."""
    xhat = x - x.mean(axis=-1, keepdims=True)
    var = np.add.reduce(xhat * xhat, axis=-1, keepdims=True) / x.shape[-1]  # biased: divides by D (= x.var)
    std = np.sqrt(var + eps)
    xhat /= std
    y = xhat * g
    y += b
    return y, (xhat, std, g)


def layer_norm_backward(dy, cache):
    """Every x_i moves the mean and the variance, hence the two averaged correction terms."""
    xhat, std, g = cache
    dxhat = dy * g
    dx = (dxhat - dxhat.mean(axis=-1, keepdims=True)
          - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)) / std
    return dx, {"dg": _sum_rows(dy * xhat), "db": _sum_rows(dy)}


# ---- activations ------------------------------------------------------------------------------


def gelu_forward(x):
    """GELU, tanh form: 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2/pi).

    In-place steps in the same order as core.layers.gelu, so the result is bit-for-bit the same.
    """
    t = x * x
    t *= x  # x^3 as two multiplies: float32 pow is far slower
    t *= 0.044715
    t += x
    t *= _GELU_C
    np.tanh(t, out=t)
    y = 0.5 * x
    y *= 1.0 + t
    return y, (x, t)


def gelu_backward(dy, cache):
    x, t = cache
    # d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2)
    slope = x * x
    slope *= 3 * 0.044715 * _GELU_C
    slope += _GELU_C
    slope *= 1.0 - t * t
    slope *= 0.5 * x
    slope += 0.5 * (1.0 + t)
    slope *= dy
    return slope, {}


def relu_forward(x):
    """max(0, x)."""
    return np.maximum(x, 0), x > 0


def relu_backward(dy, cache):
    return dy * cache, {}


_ACT = {"gelu": (gelu_forward, gelu_backward), "relu": (relu_forward, relu_backward)}


# ---- feed-forward: act(x W_fc + b_fc) W_proj + b_proj ------------------------------------------


def ffn_forward(x, p, activation="gelu"):
    """x (B, T, D) -> (B, T, D); p holds w_fc (D, F), b_fc (F,), w_proj (F, D), b_proj (D,)."""
    h, c_fc = linear_forward(x, p["w_fc"], p["b_fc"])  # (B, T, F)
    a, c_act = _ACT[activation][0](h)
    y, c_proj = linear_forward(a, p["w_proj"], p["b_proj"])  # (B, T, D)
    return y, (c_fc, c_act, c_proj, activation)


def ffn_backward(dy, cache):
    c_fc, c_act, c_proj, activation = cache
    da, g_proj = linear_backward(dy, c_proj)
    dh, _ = _ACT[activation][1](da, c_act)
    dx, g_fc = linear_backward(dh, c_fc)
    return dx, {"w_fc": g_fc["dw"], "b_fc": g_fc["db"], "w_proj": g_proj["dw"], "b_proj": g_proj["db"]}


# ---- causal multi-head self-attention ---------------------------------------------------------


def attention_forward(x, p, n_heads):
    """softmax(Q K^T / sqrt(d_k), causal) V per head, heads concatenated, then W_o.

    x (B, T, D); p holds w_qkv (D, 3D) laid out [Q | K | V], b_qkv, w_o (D, D), b_o.
    Returns out (B, T, D) and a cache whose "weights" (B, H, T, T) are the attention maps.
    The (B, H, T, T) arrays are the largest of the model, so the softmax works on them in place.
    """
    B, T, D = x.shape
    d_k = D // n_heads
    qkv, c_qkv = linear_forward(x, p["w_qkv"], p["b_qkv"])  # (B, T, 3D)
    q, k, v = qkv.reshape(B, T, 3, n_heads, d_k).transpose(2, 0, 3, 1, 4)  # each (B, H, T, d_k)
    scale = np.asarray(1.0 / np.sqrt(d_k), dtype=x.dtype)
    w = q @ k.swapaxes(-1, -2)  # scores (B, H, T, T)
    w *= scale
    np.copyto(w, -np.inf, where=~np.tri(T, dtype=bool))  # causal: query i sees keys j <= i
    # A query always sees itself, so no row is fully masked and the row max is finite.
    w -= w.max(axis=-1, keepdims=True)  # subtract the row max: exp overflows above ~88 in float32
    np.exp(w, out=w)
    w /= w.sum(axis=-1, keepdims=True)  # weights: rows sum to 1
    heads = w @ v  # (B, H, T, d_k)
    merged = heads.transpose(0, 2, 1, 3).reshape(B, T, D)  # concatenate the heads
    out, c_o = linear_forward(merged, p["w_o"], p["b_o"])  # (B, T, D)
    return out, (c_qkv, q, k, v, w, heads, c_o)


def attention_backward(dout, cache):
    c_qkv, q, k, v, weights, heads, c_o = cache
    B, H, T, d_k = q.shape
    dmerged, g_o = linear_backward(dout, c_o)
    dheads = dmerged.reshape(B, T, H, d_k).transpose(0, 2, 1, 3)  # (B, H, T, d_k)
    dv = weights.swapaxes(-1, -2) @ dheads  # (B, H, T, d_k)
    ds = dheads @ v.swapaxes(-1, -2)  # d weights (B, H, T, T)
    # softmax backward: ds_ij = w_ij (dw_ij - sum_k dw_ik w_ik), and sum_k dw_ik w_ik = dheads_i . heads_i
    # (a (T, d_k) product instead of a (T, T) one). Masked entries have w = 0, so their ds is 0.
    ds -= (dheads * heads).sum(axis=-1, keepdims=True)
    ds *= weights
    ds *= np.asarray(1.0 / np.sqrt(d_k), dtype=ds.dtype)  # d scores
    dq = ds @ k  # (B, H, T, d_k)
    dk = ds.swapaxes(-1, -2) @ q
    dqkv = np.stack([dq, dk, dv], axis=2).transpose(0, 3, 2, 1, 4).reshape(B, T, 3 * H * d_k)  # [Q | K | V]
    dx, g_qkv = linear_backward(dqkv, c_qkv)
    return dx, {"w_qkv": g_qkv["dw"], "b_qkv": g_qkv["db"], "w_o": g_o["dw"], "b_o": g_o["db"]}


# ---- a transformer block: pre-norm x + f(ln(x)), or post-norm ln(x + f(x)) ----------------------


def block_forward(x, p, cfg: ModelConfig):
    """x (B, T, D) -> (B, T, D). Pre-norm (GPT-2): x + attn(ln_1(x)), then x + mlp(ln_2(x)).
    Post-norm (2017 paper): ln_1(x + attn(x)), then ln_2(x + mlp(x))."""
    eps = cfg.ln_eps
    if cfg.norm == "pre":
        n1, c_ln1 = layer_norm_forward(x, **p["ln_1"], eps=eps)
        a, c_attn = attention_forward(n1, p["attn"], cfg.n_heads)
        x1 = x + a
        n2, c_ln2 = layer_norm_forward(x1, **p["ln_2"], eps=eps)
        m, c_mlp = ffn_forward(n2, p["mlp"], cfg.activation)
        return x1 + m, (c_ln1, c_attn, c_ln2, c_mlp, "pre")
    a, c_attn = attention_forward(x, p["attn"], cfg.n_heads)
    x1, c_ln1 = layer_norm_forward(x + a, **p["ln_1"], eps=eps)
    m, c_mlp = ffn_forward(x1, p["mlp"], cfg.activation)
    x2, c_ln2 = layer_norm_forward(x1 + m, **p["ln_2"], eps=eps)
    return x2, (c_ln1, c_attn, c_ln2, c_mlp, "post")


def block_backward(dy, cache):
    """A residual sends its gradient down both paths: through the sublayer and straight through."""
    c_ln1, c_attn, c_ln2, c_mlp, norm = cache
    if norm == "pre":
        dn2, g_mlp = ffn_backward(dy, c_mlp)
        dn2, g_ln2 = layer_norm_backward(dn2, c_ln2)
        dx1 = dy + dn2
        dn1, g_attn = attention_backward(dx1, c_attn)
        dn1, g_ln1 = layer_norm_backward(dn1, c_ln1)
        dx = dx1 + dn1
    else:
        dr2, g_ln2 = layer_norm_backward(dy, c_ln2)
        dm, g_mlp = ffn_backward(dr2, c_mlp)
        dx1 = dr2 + dm
        dr1, g_ln1 = layer_norm_backward(dx1, c_ln1)
        da, g_attn = attention_backward(dr1, c_attn)
        dx = dr1 + da
    ln = [{"g": g["dg"], "b": g["db"]} for g in (g_ln1, g_ln2)]
    return dx, {"ln_1": ln[0], "attn": g_attn, "ln_2": ln[1], "mlp": g_mlp}


# ---- embedding (tied with the output head) and the loss -----------------------------------------


def embedding_forward(params, cfg: ModelConfig, ids):
    """wte[ids] + PE[:T]: ids (B, T) -> (B, T, D). Sinusoidal PE has no parameters; learned PE is wpe."""
    T = ids.shape[-1]
    wte = params["wte"]
    if cfg.pos_encoding == "learned":
        pe = params["wpe"][:T]
    else:
        pe = sinusoidal_encoding(T, cfg.d_model).astype(wte.dtype)
    return wte[ids] + pe, ids


def embedding_backward(dx, ids, cfg: ModelConfig, V: int):
    """Each row wte[i] collects the gradient of every position holding token i. -> dwte, dwpe or None."""
    D = dx.shape[-1]
    onehot = np.zeros((ids.size, V), dtype=dx.dtype)  # (B*T, V); a matmul beats np.add.at here
    onehot[np.arange(ids.size), ids.ravel()] = 1
    dwte = onehot.T @ dx.reshape(-1, D)  # (V, D)
    dwpe = dx.sum(axis=0) if cfg.pos_encoding == "learned" else None  # (T, D)
    return dwte, dwpe


def cross_entropy_forward(logits, targets, loss_mask=None):
    """Mean of -log softmax(logits)[target] over the positions, weighted by loss_mask if given.

    logits (B, T, V), targets (B, T) ints, loss_mask (B, T) weights >= 0 or None (every position counts).
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)  # exp overflows above ~88 in float32
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    logp = np.take_along_axis(shifted, targets[..., None], axis=-1)[..., 0] - np.log(total[..., 0])
    w = np.ones(targets.shape, logits.dtype) if loss_mask is None else loss_mask.astype(logits.dtype)
    w = w / w.sum()
    loss = -float((logp * w).sum(dtype=np.float64))
    return loss, (e / total, targets, w)


def cross_entropy_backward(cache):
    """d loss / d logits = (softmax - one_hot(target)) * weight of the position."""
    probs, targets, w = cache
    dlogits = probs  # reuse the buffer: probs is not needed after this
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(probs, targets[..., None], -1) - 1, -1)
    dlogits *= w[..., None]
    return dlogits


# ---- the whole model -------------------------------------------------------------------------------


def model_forward(params, cfg: ModelConfig, ids):
    """ids (B, T) -> logits (B, T, V) and the caches for model_backward."""
    x, _ = embedding_forward(params, cfg, ids)  # (B, T, D)
    caches = []
    for p in params["blocks"]:
        x, c = block_forward(x, p, cfg)
        caches.append(c)
    h, c_lnf = layer_norm_forward(x, **params["ln_f"], eps=cfg.ln_eps)  # (B, T, D)
    logits = h @ params["wte"].T  # tied output head: (B, T, V)
    return logits, (ids, caches, c_lnf, h)


def model_backward(dlogits, cache, params, cfg: ModelConfig) -> dict:
    """dlogits (B, T, V) -> grads, a dict shaped like params. wte gets gradient from both of its uses."""
    ids, caches, c_lnf, h = cache
    wte = params["wte"]
    dwte_head = _weight_grad(dlogits, h)  # (V, D): logits = h @ wte.T
    dx, g_lnf = layer_norm_backward(dlogits @ wte, c_lnf)
    blocks = [None] * len(caches)
    for i in reversed(range(len(caches))):
        dx, blocks[i] = block_backward(dx, caches[i])
    dwte, dwpe = embedding_backward(dx, ids, cfg, wte.shape[0])
    grads = {"wte": dwte + dwte_head}
    if dwpe is not None:
        grads["wpe"] = np.zeros_like(params["wpe"])
        grads["wpe"][: dwpe.shape[0]] = dwpe
    grads["blocks"] = blocks
    grads["ln_f"] = {"g": g_lnf["dg"], "b": g_lnf["db"]}
    return grads


def check_batch(cfg: ModelConfig, ids, targets, loss_mask=None):
    """Validate a training batch: ids and targets (B, T) ints in the vocabulary, an optional mask (B, T)."""
    ids = check_ids(cfg, ids)
    targets = check_ids(cfg, targets)
    if ids.ndim != 2 or targets.shape != ids.shape:
        raise ValueError(
            f"ids and targets must both have shape (B, T); got {ids.shape} and {targets.shape}."
        )
    if loss_mask is not None:
        loss_mask = np.asarray(loss_mask)
        if loss_mask.shape != ids.shape:
            raise ValueError(f"The loss mask must have the shape of the ids {ids.shape}, got {loss_mask.shape}.")
        if (loss_mask < 0).any() or not loss_mask.sum() > 0:
            raise ValueError("The loss mask must be >= 0 everywhere and count at least one position.")
    return ids, targets, loss_mask


def loss_and_grads(params, cfg: ModelConfig, ids, targets, loss_mask=None):
    """Cross-entropy of next-token predictions and its gradient with respect to every parameter.

    ids, targets (B, T) ints; loss_mask (B, T) or None. Returns (loss: float, grads), where grads has
    the nested structure of params. The loss is the mean over all positions, or the loss_mask-weighted
    mean (a synthetic task counts only the positions that can be predicted).
    """
    ids, targets, loss_mask = check_batch(cfg, ids, targets, loss_mask)
    logits, cache = model_forward(params, cfg, ids)
    loss, c_ce = cross_entropy_forward(logits, targets, loss_mask)
    return loss, model_backward(cross_entropy_backward(c_ce), cache, params, cfg)


def loss_only(params, cfg: ModelConfig, ids, targets, loss_mask=None) -> float:
    """The loss alone, for validation: no backward pass."""
    ids, targets, loss_mask = check_batch(cfg, ids, targets, loss_mask)
    logits, _ = model_forward(params, cfg, ids)
    return cross_entropy_forward(logits, targets, loss_mask)[0]

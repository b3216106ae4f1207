"""Backward passes of core.model.forward, the cross-entropy loss, and loss_and_grads.

There is one forward pass, core.model.forward; its trace keeps the input of every sublayer. Each
`xxx_backward(dout, <the forward's inputs>, params)` returns `(dx, grads)`: the gradient of the loss with
respect to the sublayer's input and to its parameters, `grads` named as the parameters are. Cheap
quantities (a layer norm's mean and std, GELU's tanh) are recomputed from the input rather than kept.
Gradient arrays carry a `d` prefix: `dx` is dLoss/dx. The arithmetic follows the parameters' dtype:
float32 for training speed, float64 for the finite-difference checks (tests/test_train_gradcheck.py).

Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

from core.attention import merge_heads
from core.layers import _GELU_C, gelu_tanh_term
from core.model import ModelConfig, check_ids, forward


def _sum_rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (n,): the gradient of a bias that was broadcast over every leading axis."""
    return a.reshape(-1, a.shape[-1]).sum(axis=0)


def _rows(a: np.ndarray) -> np.ndarray:
    """(..., n) -> (N, n): one 2-D matrix product is faster than a stack of small ones."""
    return a.reshape(-1, a.shape[-1])


def linear_backward(dy, x, w):
    """Forward: y = x @ w + b, x (..., n), w (n, m). -> dx (..., n), {"w": (n, m), "b": (m,)}."""
    dx = (_rows(dy) @ w.T).reshape(x.shape)
    return dx, {"w": _rows(x).T @ _rows(dy), "b": _sum_rows(dy)}


def layer_norm_backward(dy, x, g, eps):
    """Forward (core.layers.layer_norm): y = xhat * g + b, xhat = (x - mean) / sqrt(var + eps).

    x (..., D) is the forward's input; its mean and std are recomputed. Every x_i moves the mean and the
    variance, hence the two averaged correction terms:
    dx = (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / std, with dxhat = dy * g.
    """
    xhat = x - x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt((xhat * xhat).mean(axis=-1, keepdims=True) + eps)  # biased variance, as the forward
    xhat *= rstd
    dxhat = dy * g
    dx = dxhat - dxhat.mean(axis=-1, keepdims=True)
    dxhat *= xhat
    dx -= xhat * dxhat.mean(axis=-1, keepdims=True)
    dx *= rstd
    return dx, {"g": _sum_rows(dy * xhat), "b": _sum_rows(dy)}


def gelu_backward(dy, x):
    """Forward (core.layers.gelu): 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)), c = sqrt(2/pi).

    d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2), with t recomputed from x.
    The (B, T, F) arrays are the model's largest after the attention maps: the steps work in place.
    """
    t = gelu_tanh_term(x)
    slope = x * x
    slope *= 3 * 0.044715 * _GELU_C
    slope += _GELU_C
    slope *= x
    sech2 = t * t
    np.subtract(1.0, sech2, out=sech2)  # 1 - t^2
    slope *= sech2
    slope *= 0.5
    t += 1.0
    t *= 0.5
    slope += t
    slope *= dy
    return slope


def relu_backward(dy, x):
    """Forward (core.layers.relu): max(0, x). The gradient passes where x > 0."""
    return dy * (x > 0)


_ACTIVATION_BACKWARD = {"gelu": gelu_backward, "relu": relu_backward}


def ffn_backward(dout, tr, p, activation):
    """Forward (core.layers.ffn_with_hidden): ffn_pre = ffn_in W_fc + b_fc, ffn_act = act(ffn_pre),
    out = ffn_act W_proj + b_proj. tr: the block's trace. -> d ffn_in (B, T, D), grads of p."""
    dact, g_proj = linear_backward(dout, tr["ffn_act"], p["w_proj"])  # (B, T, F)
    dpre = _ACTIVATION_BACKWARD[activation](dact, tr["ffn_pre"])
    dx, g_fc = linear_backward(dpre, tr["ffn_in"], p["w_fc"])
    return dx, {"w_fc": g_fc["w"], "b_fc": g_fc["b"], "w_proj": g_proj["w"], "b_proj": g_proj["b"]}


def attention_backward(dout, tr, p):
    """Forward (core.model.attention_layer): q, k, v = heads of attn_in W_qkv + b_qkv, weights =
    softmax(q k^T / sqrt(d_k), causal), heads = weights v, out = concat(heads) W_o + b_o.

    tr: the block's trace (attn_in (B, T, D); q, k, v, heads (B, H, T, d_k); weights (B, H, T, T)).
    -> d attn_in (B, T, D), grads of p.
    """
    q, k, v, weights, heads = tr["q"], tr["k"], tr["v"], tr["weights"], tr["heads"]
    B, H, T, d_k = q.shape
    dmerged, g_o = linear_backward(dout, merge_heads(heads), p["w_o"])
    dheads = dmerged.reshape(B, T, H, d_k).transpose(0, 2, 1, 3)  # (B, T, D) -> (B, H, T, d_k)
    dv = weights.swapaxes(-1, -2) @ dheads  # (B, H, T, d_k)
    ds = dheads @ v.swapaxes(-1, -2)  # d weights (B, H, T, T)
    # softmax backward: ds_ij = w_ij (dw_ij - sum_k dw_ik w_ik), and sum_k dw_ik w_ik = dheads_i . heads_i
    # (a (T, d_k) product instead of a (T, T) one). Masked entries have w = 0, so their ds is 0.
    ds -= (dheads * heads).sum(axis=-1, keepdims=True)
    ds *= weights
    ds *= np.asarray(1.0 / np.sqrt(d_k), dtype=ds.dtype)  # d scores
    dq = ds @ k  # (B, H, T, d_k)
    dk = ds.swapaxes(-1, -2) @ q
    dqkv = np.concatenate([merge_heads(dq), merge_heads(dk), merge_heads(dv)], axis=-1)  # (B, T, 3D): [Q | K | V]
    dx, g_qkv = linear_backward(dqkv, tr["attn_in"], p["w_qkv"])
    return dx, {"w_qkv": g_qkv["w"], "b_qkv": g_qkv["b"], "w_o": g_o["w"], "b_o": g_o["b"]}


def block_backward(dout, tr, p, cfg: ModelConfig):
    """Forward (core.model.block). Pre-norm: res_1 = x + attn(ln_1(x)), out = res_1 + mlp(ln_2(res_1)).
    Post-norm: res_1 = x + attn(x), ffn_in = ln_1(res_1), out = ln_2(ffn_in + mlp(ffn_in)).
    Attention-only (d_ff = 0): out = res_1 (pre) or ln_1(res_1) (post).
    A residual sends its gradient down both paths: through the sublayer and straight through."""
    eps, grads, ffn = cfg.ln_eps, {}, not cfg.attention_only
    if cfg.norm == "pre":
        dres_1 = dout
        if ffn:
            dffn_in, grads["mlp"] = ffn_backward(dout, tr, p["mlp"], cfg.activation)
            dres_1, grads["ln_2"] = layer_norm_backward(dffn_in, tr["res_1"], p["ln_2"]["g"], eps)
            dres_1 += dout
        dattn_in, grads["attn"] = attention_backward(dres_1, tr, p["attn"])
        dx, grads["ln_1"] = layer_norm_backward(dattn_in, tr["in"], p["ln_1"]["g"], eps)
        dx += dres_1
    else:
        dffn_in = dout
        if ffn:
            dres_2, grads["ln_2"] = layer_norm_backward(dout, tr["res_2"], p["ln_2"]["g"], eps)
            dffn_in, grads["mlp"] = ffn_backward(dres_2, tr, p["mlp"], cfg.activation)
            dffn_in += dres_2
        dres_1, grads["ln_1"] = layer_norm_backward(dffn_in, tr["res_1"], p["ln_1"]["g"], eps)
        dx, grads["attn"] = attention_backward(dres_1, tr, p["attn"])
        dx += dres_1
    return dx, {name: grads[name] for name in ("ln_1", "attn", "ln_2", "mlp") if name in grads}


def embedding_backward(dx, ids, cfg: ModelConfig, V: int):
    """Forward (core.model.embed): wte[ids] + PE[:T]. Each row wte[i] collects the gradient of every
    position holding token i. dx (B, T, D), ids (B, T) -> dwte (V, D), dwpe (T, D) or None (sinusoidal)."""
    D = dx.shape[-1]
    onehot = np.zeros((ids.size, V), dtype=dx.dtype)  # (B*T, V); a matmul beats np.add.at here
    onehot[np.arange(ids.size), ids.ravel()] = 1
    dwte = onehot.T @ dx.reshape(-1, D)  # (V, D)
    dwpe = dx.sum(axis=0) if cfg.pos_encoding == "learned" else None  # (T, D)
    return dwte, dwpe


def model_backward(dlogits, trace, params, cfg: ModelConfig, ids) -> dict:
    """Forward (core.model.forward): x = embed(ids), blocks, h = ln_f(x), logits = h @ wte.T.
    dlogits (B, T, V), trace of that forward -> grads, a dict shaped like params. wte gets gradient from
    both of its uses: the embedding and the tied output head."""
    wte, layers = params["wte"], trace["layers"]
    dwte_head = _rows(dlogits).T @ _rows(trace["h"])  # (V, D): logits = h @ wte.T
    dh = (_rows(dlogits) @ wte).reshape(trace["h"].shape)  # (B, T, D)
    dx, g_lnf = layer_norm_backward(dh, layers[-1]["out"], params["ln_f"]["g"], cfg.ln_eps)  # ln_f's input
    blocks = [None] * len(layers)
    for i in reversed(range(len(layers))):
        dx, blocks[i] = block_backward(dx, layers[i], params["blocks"][i], cfg)
    dwte, dwpe = embedding_backward(dx, ids, cfg, wte.shape[0])
    grads = {"wte": dwte + dwte_head}
    if dwpe is not None:
        grads["wpe"] = np.zeros_like(params["wpe"])
        grads["wpe"][: dwpe.shape[0]] = dwpe
    grads["blocks"] = blocks
    grads["ln_f"] = g_lnf
    return grads


# ---- the loss: the mean cross-entropy of the next-token predictions ---------------------------------


def cross_entropy(logits, targets, loss_mask=None):
    """Mean of -log softmax(logits)[target] over the positions, weighted by loss_mask if given.

    logits (B, T, V), targets (B, T) ints, loss_mask (B, T) weights >= 0 or None (every position counts).
    Returns the loss (a float) and what cross_entropy_backward needs.
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)  # exp overflows above ~88 in float32
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    logp = np.take_along_axis(shifted, targets[..., None], axis=-1)[..., 0] - np.log(total[..., 0])
    w = np.ones(targets.shape, logits.dtype) if loss_mask is None else loss_mask.astype(logits.dtype)
    w = w / w.sum()
    loss = -float((logp * w).sum(dtype=np.float64))
    e /= total  # the probabilities
    return loss, (e, targets, w)


def cross_entropy_backward(cache):
    """d loss / d logits = (softmax - one_hot(target)) * weight of the position."""
    probs, targets, w = cache
    dlogits = probs  # reuse the buffer: probs is not needed after this
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(probs, targets[..., None], -1) - 1, -1)
    dlogits *= w[..., None]
    return dlogits


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
    logits, trace = forward(params, cfg, ids)
    loss, cache = cross_entropy(logits, targets, loss_mask)
    return loss, model_backward(cross_entropy_backward(cache), trace, params, cfg, ids)


def loss_only(params, cfg: ModelConfig, ids, targets, loss_mask=None) -> float:
    """The loss alone, for validation: no backward pass."""
    ids, targets, loss_mask = check_batch(cfg, ids, targets, loss_mask)
    logits, _ = forward(params, cfg, ids)
    return cross_entropy(logits, targets, loss_mask)[0]

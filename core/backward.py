"""Backward passes of core.model.forward, the cross-entropy loss, and loss_and_grads.

There is one forward pass, core.model.forward; its trace (a ForwardTrace, one BlockTrace per block) keeps
the input of every sublayer. Each `xxx_backward(dout, <the arrays the forward read>, params)` returns
`(dx, grads)`: the gradient of the loss with respect to the sublayer's input and to its parameters, `grads`
named as the parameters are. Cheap quantities (a layer norm's mean and rstd, GELU's tanh) are recomputed
from the input rather than kept. Gradient arrays carry a `d` prefix: `dx` is dLoss/dx, and every
intermediate has a name of its own (`dffn_act`, `dffn_pre`, `dffn_in`), so each line reads as one formula.
The arithmetic follows the parameters' dtype: float32 for training speed, float64 for the finite-difference
checks (tests/core/test_train_gradcheck.py).

Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

from core.attention import merge_heads, split_heads
from core.layers import _GELU_C, gelu_tanh_term
from core.model import BlockTrace, ForwardTrace, ModelConfig, check_ids, forward


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
    """Forward (core.layers.layer_norm): y = xhat * g + b, xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps).

    x (..., D) is the forward's input; its mean and variance are recomputed. Every x_i moves the mean and
    the variance, hence the two averaged correction terms:
    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), with dxhat = dy * g.
    """
    xmu = x - x.mean(axis=-1, keepdims=True)  # x - mean
    var = (xmu * xmu).mean(axis=-1, keepdims=True)  # biased, as the forward
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = xmu * rstd
    dxhat = dy * g
    mean_dxhat = dxhat.mean(axis=-1, keepdims=True)  # (..., 1): the mean's share
    mean_dxhat_xhat = (dxhat * xhat).mean(axis=-1, keepdims=True)  # (..., 1): the variance's share
    dx = (dxhat - mean_dxhat - xhat * mean_dxhat_xhat) * rstd
    return dx, {"g": _sum_rows(dy * xhat), "b": _sum_rows(dy)}


def gelu_backward(dy, x):
    """Forward (core.layers.gelu): gelu(x) = 0.5 x (1 + t), t = tanh(u), u = c (x + 0.044715 x^3), c = sqrt(2/pi).

    gelu'(x) = 0.5 (1 + t + x t'), with t' = (1 - t^2) u' and u' = c (1 + 3 * 0.044715 x^2); t is
    recomputed from x. dy, x (..., F) -> dx = dy * gelu'(x) (..., F).
    """
    t = gelu_tanh_term(x)
    u_slope = _GELU_C + (3 * 0.044715 * _GELU_C) * (x * x)  # u'(x)
    t_slope = (1.0 - t * t) * u_slope  # t'(x): tanh' = 1 - tanh^2
    slope = 0.5 * (1.0 + t + x * t_slope)  # gelu'(x)
    return dy * slope


def relu_backward(dy, x):
    """Forward (core.layers.relu): max(0, x). The gradient passes where x > 0."""
    return dy * (x > 0)


_ACTIVATION_BACKWARD = {"gelu": gelu_backward, "relu": relu_backward}


def ffn_backward(dout, ffn_in, ffn_pre, ffn_act, p, activation):
    """Forward (core.layers.ffn_with_hidden): ffn_pre = ffn_in W_fc + b_fc, ffn_act = act(ffn_pre),
    out = ffn_act W_proj + b_proj. ffn_in (B, T, D), ffn_pre and ffn_act (B, T, F), dout (B, T, D)
    -> d ffn_in (B, T, D), grads of p."""
    dffn_act, g_proj = linear_backward(dout, ffn_act, p["w_proj"])  # (B, T, F)
    dffn_pre = _ACTIVATION_BACKWARD[activation](dffn_act, ffn_pre)  # (B, T, F)
    dffn_in, g_fc = linear_backward(dffn_pre, ffn_in, p["w_fc"])  # (B, T, D)
    return dffn_in, {"w_fc": g_fc["w"], "b_fc": g_fc["b"], "w_proj": g_proj["w"], "b_proj": g_proj["b"]}


def attention_backward(dout, attn_in, q, k, v, weights, heads, p):
    """Forward (core.model.attention_layer): q, k, v = heads of attn_in W_qkv + b_qkv,
    scores = q k^T / sqrt(d_k), weights = softmax(scores, causal), heads = weights v,
    out = concat(heads) W_o + b_o.

    attn_in (B, T, D); q, k, v, heads (B, H, T, d_k); weights (B, H, T, T); dout (B, T, D)
    -> d attn_in (B, T, D), grads of p.
    """
    H, d_k = q.shape[-3], q.shape[-1]
    dconcat, g_o = linear_backward(dout, merge_heads(heads), p["w_o"])  # (B, T, D)
    dheads = split_heads(dconcat, H)  # (B, T, D) -> (B, H, T, d_k)
    dv = weights.swapaxes(-1, -2) @ dheads  # (B, H, T, d_k)
    dweights = dheads @ v.swapaxes(-1, -2)  # (B, H, T, T)
    # softmax backward: dscores_ij = w_ij (dw_ij - sum_k dw_ik w_ik), and sum_k dw_ik w_ik = dheads_i . heads_i
    # (a (T, d_k) product instead of a (T, T) one). Masked entries have w = 0, so their dscores is 0.
    dw_dot_w = (dheads * heads).sum(axis=-1, keepdims=True)  # (B, H, T, 1)
    dscores = (dweights - dw_dot_w) * weights  # (B, H, T, T)
    scale = np.asarray(1.0 / np.sqrt(d_k), dtype=dscores.dtype)  # a float64 scalar would promote float32
    dq = (dscores @ k) * scale  # (B, H, T, d_k): scores = q k^T * scale
    dk = (dscores.swapaxes(-1, -2) @ q) * scale
    dqkv = np.concatenate([merge_heads(dq), merge_heads(dk), merge_heads(dv)], axis=-1)  # (B, T, 3D): [Q | K | V]
    dattn_in, g_qkv = linear_backward(dqkv, attn_in, p["w_qkv"])
    return dattn_in, {"w_qkv": g_qkv["w"], "b_qkv": g_qkv["b"], "w_o": g_o["w"], "b_o": g_o["b"]}


def block_backward(dout, tr: BlockTrace, p, cfg: ModelConfig):
    """Forward (core.model.block). dout (B, T, D), tr: that block's trace -> dx (B, T, D), grads of p.

    With mid the stream between the two sublayers (ln_1(res_1) post-norm, res_1 otherwise):
    res_1 = x + attn(attn_in), attn_in = ln_1(x) pre-norm (x otherwise);
    res_2 = mid + mlp(ffn_in), ffn_in = ln_2(mid) pre-norm (mid otherwise); out = ln_2(res_2) post-norm (res_2
    otherwise). Attention-only (d_ff = 0): out = mid. Without residuals, each "x +" and "mid +" is gone.
    A residual sends its gradient down both paths: through the sublayer and straight through."""
    eps, pre, post, grads = cfg.ln_eps, cfg.norm == "pre", cfg.norm == "post", {}
    if cfg.attention_only:
        dmid = dout
    else:
        dres_2 = dout
        if post:
            dres_2, grads["ln_2"] = layer_norm_backward(dout, tr.res_2, p["ln_2"]["g"], eps)
        dffn_in, grads["mlp"] = ffn_backward(dres_2, tr.ffn_in, tr.ffn_pre, tr.ffn_act, p["mlp"], cfg.activation)
        dmid = dffn_in
        if pre:  # ffn_in = ln_2(mid)
            dmid, grads["ln_2"] = layer_norm_backward(dffn_in, tr.res_1, p["ln_2"]["g"], eps)
        if cfg.residual:  # res_2 = mid + ffn_out
            dmid = dmid + dres_2
    dres_1 = dmid
    if post:  # mid = ln_1(res_1)
        dres_1, grads["ln_1"] = layer_norm_backward(dmid, tr.res_1, p["ln_1"]["g"], eps)
    dattn_in, grads["attn"] = attention_backward(dres_1, tr.attn_in, tr.q, tr.k, tr.v, tr.weights, tr.heads,
                                                 p["attn"])
    dx = dattn_in  # attn_in = x, post-norm and without layer norm
    if pre:  # attn_in = ln_1(x)
        dx, grads["ln_1"] = layer_norm_backward(dattn_in, tr.x, p["ln_1"]["g"], eps)
    if cfg.residual:  # res_1 = x + attn_out
        dx = dx + dres_1
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


def model_backward(dlogits, trace: ForwardTrace, params, cfg: ModelConfig, ids) -> dict:
    """Forward (core.model.forward): x = embed(ids), blocks, h = ln_f(last block's out) (the out itself without
    layer norm), logits = h @ wte.T.
    dlogits (B, T, V), trace of that forward -> grads, a dict shaped like params. wte gets gradient from
    both of its uses: the embedding and the tied output head."""
    wte, layers = params["wte"], trace.layers
    dwte_head = _rows(dlogits).T @ _rows(trace.h)  # (V, D): logits = h @ wte.T
    dh = (_rows(dlogits) @ wte).reshape(trace.h.shape)  # (B, T, D)
    dlast_out, g_lnf = (layer_norm_backward(dh, layers[-1].out, params["ln_f"]["g"], cfg.ln_eps) if cfg.layer_norm
                        else (dh, None))  # no ln_f without layer norm: h is the last block's out
    # dresidual[i] (B, T, D): d the residual stream entering block i; the last entry: d the last block's out
    dresidual = [None] * len(layers) + [dlast_out]
    blocks = [None] * len(layers)
    for i in reversed(range(len(layers))):
        dresidual[i], blocks[i] = block_backward(dresidual[i + 1], layers[i], params["blocks"][i], cfg)
    dwte_embed, dwpe = embedding_backward(dresidual[0], ids, cfg, wte.shape[0])  # x = wte[ids] + PE
    grads = {"wte": dwte_embed + dwte_head}
    if dwpe is not None:
        grads["wpe"] = np.zeros_like(params["wpe"])
        grads["wpe"][: dwpe.shape[0]] = dwpe
    grads["blocks"] = blocks
    if g_lnf is not None:
        grads["ln_f"] = g_lnf
    return grads


# ---- the loss: the mean cross-entropy of the next-token predictions ---------------------------------


def cross_entropy(logits, targets, loss_mask=None):
    """Mean of -log softmax(logits)[target] over the positions, weighted by loss_mask if given.

    logits (B, T, V), targets (B, T) ints, loss_mask (B, T) weights >= 0 or None (every position counts).
    Returns the loss (a float) and what cross_entropy_backward needs: (probs (B, T, V), targets, w (B, T)).
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)  # exp overflows above ~88 in float32
    exps = np.exp(shifted)
    total = exps.sum(axis=-1, keepdims=True)  # (B, T, 1)
    logp = np.take_along_axis(shifted, targets[..., None], axis=-1)[..., 0] - np.log(total[..., 0])  # (B, T)
    mask = np.ones(targets.shape, logits.dtype) if loss_mask is None else loss_mask.astype(logits.dtype)
    w = mask / mask.sum()  # each position's weight in the mean
    loss = -float((logp * w).sum(dtype=np.float64))
    probs = exps / total
    return loss, (probs, targets, w)


def cross_entropy_backward(cache):
    """d loss / d logits = (softmax - one_hot(target)) * weight of the position."""
    probs, targets, w = cache
    onehot = np.zeros_like(probs)
    np.put_along_axis(onehot, targets[..., None], 1.0, axis=-1)
    return (probs - onehot) * w[..., None]


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

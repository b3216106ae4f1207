"""Every backward pass against central finite differences in float64.

There is one forward pass, core.model.forward (and the layer functions it calls); each backward is checked
against finite differences of that forward.

A check passes when ||analytic - numeric|| / (||analytic|| + ||numeric||) < 1e-6 over the sampled entries
of each tensor. Parameters are drawn larger than init_params' (std 0.3, gains near 1, non-zero biases) so
that every path carries a gradient well above the finite-difference noise.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core import backward as bw
from core.layers import ffn_with_hidden, layer_norm
from core.model import ModelConfig, attention_layer, block, embed, forward, init_params
from core.model_file import flatten, unflatten

TOL = 1e-6
STEP = 1e-5
OPTIONS = list(itertools.product(["pre", "post"], ["gelu", "relu"], ["sinusoidal", "learned"]))
# d_ff = 0: attention-only blocks (no ln_2, no mlp); the activation is unused there.
ATTENTION_ONLY = [(norm, "gelu", pos) for norm in ("pre", "post") for pos in ("sinusoidal", "learned")]


def rel_error(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a) + np.linalg.norm(b), 1e-30))


def numeric_grad(f, arr: np.ndarray, indices) -> np.ndarray:
    """Central differences (f(x + h) - f(x - h)) / 2h at the given flat indices of arr (changed in place)."""
    flat = arr.reshape(-1)
    out = []
    for i in indices:
        old = flat[i]
        flat[i] = old + STEP
        up = f()
        flat[i] = old - STEP
        down = f()
        flat[i] = old
        out.append((up - down) / (2 * STEP))
    return np.array(out)


def sample_indices(arr: np.ndarray, rng: np.random.Generator, n: int = 6) -> np.ndarray:
    return rng.choice(arr.size, size=min(n, arr.size), replace=False)


def check_grad(f, arr, analytic, rng, n=6) -> float:
    idx = sample_indices(arr, rng, n)
    err = rel_error(analytic.reshape(-1)[idx], numeric_grad(f, arr, idx))
    assert err < TOL, f"relative error {err:.2e} >= {TOL:.0e}"
    return err


def random_params(cfg: ModelConfig, rng: np.random.Generator) -> dict:
    params = init_params(cfg, rng, dtype=np.float64)
    for name, arr in flatten(params).items():
        if name.endswith(".g"):
            arr[...] = 1.0 + 0.2 * rng.standard_normal(arr.shape)
        else:
            arr[...] = 0.3 * rng.standard_normal(arr.shape)
    return params


def small_cfg(norm, activation, pos_encoding, d_ff=12) -> ModelConfig:
    return ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=6, d_ff=d_ff,
                       norm=norm, activation=activation, pos_encoding=pos_encoding)


# ---- the whole model --------------------------------------------------------------------------------


@pytest.mark.parametrize(("norm", "activation", "pos_encoding", "d_ff"),
                         [(*o, 12) for o in OPTIONS] + [(*o, 0) for o in ATTENTION_ONLY])
@pytest.mark.parametrize("masked", [False, True])
def test_loss_and_grads_every_parameter(norm, activation, pos_encoding, d_ff, masked):
    cfg = small_cfg(norm, activation, pos_encoding, d_ff)
    rng = np.random.default_rng(1)
    params = random_params(cfg, rng)
    ids = rng.integers(0, cfg.vocab_size, (2, 5))
    targets = rng.integers(0, cfg.vocab_size, (2, 5))
    mask = (rng.random((2, 5)) < 0.6).astype(float) if masked else None
    if mask is not None:
        mask[0, 0] = 1.0

    loss, grads = bw.loss_and_grads(params, cfg, ids, targets, mask)
    assert np.isfinite(loss)
    flat_p, flat_g = flatten(params), flatten(grads)
    assert flat_p.keys() == flat_g.keys()
    for name, arr in flat_p.items():
        assert flat_g[name].shape == arr.shape, name
        check_grad(lambda: bw.loss_only(params, cfg, ids, targets, mask), arr, flat_g[name], rng, n=4)


def test_loss_is_mean_cross_entropy():
    cfg = small_cfg("pre", "gelu", "sinusoidal")
    rng = np.random.default_rng(2)
    params = init_params(cfg, rng, dtype=np.float64)
    ids, targets = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    logits, _ = forward(params, cfg, ids)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -np.take_along_axis(logp, targets[..., None], -1).mean()
    assert bw.loss_and_grads(params, cfg, ids, targets)[0] == pytest.approx(expected, rel=1e-12)
    # At initialisation the model is close to a uniform guess: loss ~ log V.
    assert abs(expected - np.log(7)) < 0.1


def test_bad_batches_raise_readable_errors():
    cfg = small_cfg("pre", "gelu", "sinusoidal")
    params = init_params(cfg, np.random.default_rng(0), dtype=np.float64)
    ids = np.zeros((2, 4), dtype=int)
    with pytest.raises(ValueError, match="shape"):
        bw.loss_and_grads(params, cfg, ids, np.zeros((2, 3), dtype=int))
    with pytest.raises(ValueError, match="vocabulary"):
        bw.loss_and_grads(params, cfg, ids, ids + 7)
    with pytest.raises(ValueError, match="at most"):
        bw.loss_and_grads(params, cfg, np.zeros((1, 9), dtype=int), np.zeros((1, 9), dtype=int))
    with pytest.raises(ValueError, match="mask"):
        bw.loss_and_grads(params, cfg, ids, ids, np.zeros((2, 4)))


# ---- the layers one by one: objective = sum(out * R) for a fixed random R --------------------------


def test_layer_norm_backward():
    rng = np.random.default_rng(3)
    x, g, b = rng.standard_normal((2, 3, 6)), rng.standard_normal(6), rng.standard_normal(6)
    R = rng.standard_normal(x.shape)
    dx, grads = bw.layer_norm_backward(R, x, g, 1e-5)

    def objective():
        return float((layer_norm(x, g, b, 1e-5) * R).sum())

    for arr, analytic in ((x, dx), (g, grads["g"]), (b, grads["b"])):
        check_grad(objective, arr, analytic, rng, n=8)


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_ffn_backward(activation):
    rng = np.random.default_rng(4)
    p = {"w_fc": rng.standard_normal((4, 10)), "b_fc": rng.standard_normal(10),
         "w_proj": rng.standard_normal((10, 4)), "b_proj": rng.standard_normal(4)}
    x = rng.standard_normal((2, 3, 4))
    out, pre, act = ffn_with_hidden(x, **p, activation=activation)
    R = rng.standard_normal(out.shape)
    dx, grads = bw.ffn_backward(R, x, pre, act, p, activation)

    def objective():
        return float((ffn_with_hidden(x, **p, activation=activation)[0] * R).sum())

    check_grad(objective, x, dx, rng, n=8)
    for name, arr in p.items():
        check_grad(objective, arr, grads[name], rng, n=8)


def test_attention_backward():
    rng = np.random.default_rng(5)
    D, H = 8, 4
    p = {"w_qkv": rng.standard_normal((D, 3 * D)) * 0.5, "b_qkv": rng.standard_normal(3 * D) * 0.5,
         "w_o": rng.standard_normal((D, D)), "b_o": rng.standard_normal(D)}
    x = rng.standard_normal((2, 5, D))
    out, q, k, v, weights, heads = attention_layer(p, x, H)
    R = rng.standard_normal(out.shape)
    dx, grads = bw.attention_backward(R, x, q, k, v, weights, heads, p)

    def objective():
        return float((attention_layer(p, x, H)[0] * R).sum())

    check_grad(objective, x, dx, rng, n=10)
    for name, arr in p.items():
        check_grad(objective, arr, grads[name], rng, n=10)


@pytest.mark.parametrize(("norm", "activation", "d_ff"),
                         [("pre", "gelu", 12), ("post", "relu", 12), ("pre", "gelu", 0), ("post", "gelu", 0)])
def test_block_backward(norm, activation, d_ff):
    cfg = small_cfg(norm, activation, "sinusoidal", d_ff)
    rng = np.random.default_rng(9)
    p = random_params(cfg, rng)["blocks"][0]
    x = rng.standard_normal((2, 5, cfg.d_model))
    out, tr = block(p, x, cfg)
    R = rng.standard_normal(out.shape)
    dx, grads = bw.block_backward(R, tr, p, cfg)

    def objective():
        return float((block(p, x, cfg)[0] * R).sum())

    check_grad(objective, x, dx, rng, n=10)
    flat_g = flatten(grads)
    assert flat_g.keys() == flatten(p).keys()  # attention-only: no ln_2 or mlp gradients either
    for name, arr in flatten(p).items():
        check_grad(objective, arr, flat_g[name], rng, n=4)


@pytest.mark.parametrize("masked", [False, True])
def test_softmax_cross_entropy_backward(masked):
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((2, 4, 6)) * 3
    targets = rng.integers(0, 6, (2, 4))
    mask = rng.random((2, 4)) if masked else None
    _, cache = bw.cross_entropy(logits, targets, mask)
    dlogits = bw.cross_entropy_backward(cache)
    check_grad(lambda: bw.cross_entropy(logits, targets, mask)[0], logits, dlogits, rng, n=12)


@pytest.mark.parametrize("pos_encoding", ["sinusoidal", "learned"])
def test_embedding_backward(pos_encoding):
    cfg = ModelConfig(vocab_size=5, d_model=4, n_heads=1, n_layers=1, max_len=6, pos_encoding=pos_encoding)
    rng = np.random.default_rng(8)
    params = random_params(cfg, rng)
    ids = rng.integers(0, 5, (3, 4))
    out = embed(params, cfg, ids)
    R = rng.standard_normal(out.shape)
    dwte, dwpe = bw.embedding_backward(R, ids, cfg, 5)

    def objective():
        return float((embed(params, cfg, ids) * R).sum())

    check_grad(objective, params["wte"], dwte, rng, n=20)
    if pos_encoding == "learned":
        full = np.zeros_like(params["wpe"])
        full[:4] = dwpe
        check_grad(objective, params["wpe"], full, rng, n=24)


@pytest.mark.parametrize("d_ff", [12, 0])
def test_float32_gradients_close_to_float64(d_ff):
    """Training runs in float32: its gradients follow the float64 ones to float32 precision."""
    cfg = small_cfg("pre", "gelu", "sinusoidal", d_ff)
    rng = np.random.default_rng(10)
    p64 = random_params(cfg, rng)
    ids, targets = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    p32 = unflatten({k: v.astype(np.float32) for k, v in flatten(p64).items()})
    loss64, g64 = bw.loss_and_grads(p64, cfg, ids, targets)
    loss32, g32 = bw.loss_and_grads(p32, cfg, ids, targets)
    assert loss32 == pytest.approx(loss64, rel=1e-5)
    for name, g in flatten(g32).items():
        assert g.dtype == np.float32, name
        assert rel_error(g, flatten(g64)[name]) < 1e-4, name

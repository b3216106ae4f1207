"""Tests for core/layers.py: layer norm, activations, the feed-forward block, positional encodings.

Shapes: T sequence length, D d_model, F feed-forward width.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.layers import (
    ffn,
    ffn_with_hidden,
    gelu,
    gelu_tanh_term,
    layer_norm,
    linear,
    positional_encoding,
    relu,
    sinusoidal_encoding,
)

# ---- layer norm ---------------------------------------------------------------------------------


def layer_norm_loop(row, g, b, eps):
    """One row by hand, with the biased variance (divide by D)."""
    D = len(row)
    mean = sum(row) / D
    var = sum((v - mean) ** 2 for v in row) / D
    return [(row[i] - mean) / math.sqrt(var + eps) * g[i] + b[i] for i in range(D)]


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_layer_norm_centres_and_scales_each_row(dtype, tol):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 5, 32)) * 4 + 7).astype(dtype)
    D = x.shape[-1]
    y = layer_norm(x, np.ones(D, dtype), np.zeros(D, dtype))
    assert y.shape == x.shape and y.dtype == dtype
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=10 * tol)
    # Biased variance of the output is var / (var + eps): 1 up to eps / var.
    np.testing.assert_allclose(y.var(axis=-1), 1.0, atol=1e-5 if dtype == np.float32 else 1e-6)


def test_layer_norm_matches_loop_with_gain_and_bias():
    rng = np.random.default_rng(1)
    x, g, b = rng.standard_normal((6, 7)), rng.standard_normal(7), rng.standard_normal(7)
    for eps in (1e-5, 0.1):
        expected = np.array([layer_norm_loop(list(row), g, b, eps) for row in x])
        np.testing.assert_allclose(layer_norm(x, g, b, eps=eps), expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_is_the_textbook_expression_to_the_bit(dtype):
    """layer_norm reuses x - mean for the variance: the same numbers as (x - mean) / sqrt(x.var() + eps) * g + b."""
    rng = np.random.default_rng(5)
    x, g, b = (rng.standard_normal(shape).astype(dtype) for shape in ((3, 7, 24), (24,), (24,)))
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    np.testing.assert_array_equal(layer_norm(x, g, b), (x - mean) / np.sqrt(var + 1e-5) * g + b)


def test_layer_norm_uses_biased_variance():
    # mean 2.5, biased variance 1.25 (the unbiased one would be 5/3)
    y = layer_norm(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4), np.zeros(4), eps=0.0)
    np.testing.assert_allclose(y, (np.array([1, 2, 3, 4]) - 2.5) / math.sqrt(1.25), rtol=1e-14)


def test_layer_norm_constant_row_is_finite():
    y = layer_norm(np.full((2, 4), 3.0), np.ones(4), np.full(4, 0.5))
    np.testing.assert_array_equal(y, 0.5)  # (x - mean) = 0 everywhere; eps keeps the division finite


# ---- activations and the feed-forward block -----------------------------------------------------


def gelu_scalar(x: float) -> float:
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def test_gelu_matches_tanh_formula():
    xs = np.linspace(-6, 6, 121)
    np.testing.assert_allclose(gelu(xs), [gelu_scalar(float(v)) for v in xs], rtol=1e-12, atol=1e-15)


def test_gelu_known_values():
    assert gelu(np.array(0.0)) == 0.0
    assert abs(float(gelu(np.array(1.0))) - 0.841192) < 1e-6  # tanh form; the exact erf form gives 0.841345
    assert abs(float(gelu(np.array(-1.0))) - (-0.158808)) < 1e-6
    np.testing.assert_allclose(gelu(np.array([10.0, -10.0])), [10.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_keep_dtype(dtype):
    x = np.linspace(-3, 3, 7).astype(dtype)
    assert gelu(x).dtype == dtype
    assert relu(x).dtype == dtype


def test_relu():
    np.testing.assert_array_equal(relu(np.array([-2.0, -0.0, 0.5, 3.0])), [0.0, 0.0, 0.5, 3.0])


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_ffn_matches_per_position_loop(activation):
    rng = np.random.default_rng(2)
    D, F, T = 4, 8, 5
    x = rng.standard_normal((2, T, D))
    w_fc, b_fc, w_proj, b_proj = (rng.standard_normal(s) for s in [(D, F), (F,), (F, D), (D,)])
    act = gelu_scalar if activation == "gelu" else (lambda v: max(v, 0.0))
    out = ffn(x, w_fc, b_fc, w_proj, b_proj, activation)
    assert out.shape == x.shape
    for b in range(2):
        for t in range(T):
            hidden = [act(float(x[b, t] @ w_fc[:, f] + b_fc[f])) for f in range(F)]
            expected = [sum(hidden[f] * w_proj[f, d] for f in range(F)) + b_proj[d] for d in range(D)]
            np.testing.assert_allclose(out[b, t], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
def test_linear_matches_per_row_loop(shape):
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal(shape), rng.standard_normal((5, 4)), rng.standard_normal(4)
    out = linear(x, w, b)
    assert out.shape == (*shape[:-1], 4)
    rows, expected = x.reshape(-1, 5), out.reshape(-1, 4)
    for r in range(len(rows)):
        np.testing.assert_allclose(expected[r], [sum(rows[r, i] * w[i, j] for i in range(5)) + b[j] for j in range(4)],
                                   rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(linear(x, w), out - b, rtol=1e-12, atol=1e-12)
    assert linear(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_ffn_with_hidden_returns_its_hidden_layer(activation):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4))
    p = {"w_fc": rng.standard_normal((4, 8)), "b_fc": rng.standard_normal(8),
         "w_proj": rng.standard_normal((8, 4)), "b_proj": rng.standard_normal(4)}
    out, pre, act = ffn_with_hidden(x, **p, activation=activation)
    assert pre.shape == act.shape == (2, 5, 8)
    np.testing.assert_allclose(pre, x @ p["w_fc"] + p["b_fc"], rtol=1e-12)
    np.testing.assert_allclose(act, {"gelu": gelu, "relu": relu}[activation](pre), rtol=1e-12)
    np.testing.assert_allclose(out, act @ p["w_proj"] + p["b_proj"], rtol=1e-12)
    np.testing.assert_array_equal(out, ffn(x, **p, activation=activation))


def test_gelu_tanh_term_is_the_inner_tanh():
    xs = np.linspace(-5, 5, 41)
    expected = [math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)) for v in xs]
    np.testing.assert_allclose(gelu_tanh_term(xs), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gelu(xs), 0.5 * xs * (1 + gelu_tanh_term(xs)), rtol=1e-12, atol=1e-15)


def test_ffn_unknown_activation():
    z = np.zeros((2, 2))
    with pytest.raises(ValueError, match="activation"):
        ffn(z, z, np.zeros(2), z, np.zeros(2), "swish")
    with pytest.raises(ValueError, match="activation"):
        ffn_with_hidden(z, z, np.zeros(2), z, np.zeros(2), "swish")


# ---- positional encodings -----------------------------------------------------------------------


@pytest.mark.parametrize("T, D", [(10, 8), (7, 5), (3, 1), (50, 16), (4, 3)])
def test_sinusoidal_matches_formula(T, D):
    pe = sinusoidal_encoding(T, D)
    assert pe.shape == (T, D)
    for p in range(T):
        for dim in range(D):
            i2 = dim - dim % 2  # 2i for both members of the pair
            angle = p / 10000 ** (i2 / D)
            expected = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
            assert abs(pe[p, dim] - expected) < 1e-12, (p, dim)


def test_sinusoidal_known_rows():
    pe = sinusoidal_encoding(4, 6)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1], atol=1e-15)  # sin 0 = 0, cos 0 = 1
    np.testing.assert_allclose(pe[1, :2], [math.sin(1), math.cos(1)], rtol=1e-14)
    assert np.all(np.abs(pe) <= 1)
    # Every position gets its own pattern.
    assert len({tuple(np.round(row, 12)) for row in sinusoidal_encoding(64, 8)}) == 64


@pytest.mark.parametrize("T, D", [(0, 4), (4, 0), (-1, 4)])
def test_sinusoidal_rejects_empty(T, D):
    with pytest.raises(ValueError):
        sinusoidal_encoding(T, D)


def test_positional_encoding_kinds():
    wpe = np.arange(12.0).reshape(6, 2)
    np.testing.assert_array_equal(positional_encoding(4, 2, "learned", wpe), wpe[:4])
    np.testing.assert_array_equal(positional_encoding(5, 3, "sinusoidal"), sinusoidal_encoding(5, 3))


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_encoding_from_a_start_position_is_rows_of_the_full_one(kind):
    """The KV cache encodes only its new positions: the very numbers the full table has at those rows."""
    wpe = np.random.default_rng(0).standard_normal((9, 6))
    full = positional_encoding(9, 6, kind, wpe)
    for start, T in [(0, 9), (4, 1), (5, 4)]:
        np.testing.assert_array_equal(positional_encoding(T, 6, kind, wpe, start), full[start : start + T])
    with pytest.raises(ValueError, match="9 positions"):
        positional_encoding(2, 6, "learned", wpe, start=8)


def test_learned_encoding_errors():
    with pytest.raises(ValueError, match="wpe"):
        positional_encoding(4, 2, "learned")
    with pytest.raises(ValueError, match="6 positions"):
        positional_encoding(7, 2, "learned", np.zeros((6, 2)))
    with pytest.raises(ValueError, match="Unknown positional encoding"):
        positional_encoding(4, 2, "rotary")

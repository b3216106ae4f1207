"""Tests for core/attention.py: softmax, the causal mask, scaled dot-product and multi-head attention.

Every vectorised function is checked against a plain-Python loop on small inputs, and against numbers
worked out by hand. Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from core.attention import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_einsum,
    multi_head_attention_loop,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

MHA_FORMS = [multi_head_attention, multi_head_attention_loop, multi_head_attention_einsum]


@contextlib.contextmanager
def strict_fp():
    """Every warning is an error; overflow, invalid (NaN) and divide-by-zero raise.

    Underflow stays quiet, as in NumPy's default: exp(-20000) rounding to 0 is the right answer.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            yield


# ---- plain-loop references ----------------------------------------------------------------------


def softmax_loop(row: list[float]) -> list[float]:
    """Softmax of one row of Python floats, by hand."""
    top = max(row)
    if top == -math.inf:
        return [0.0] * len(row)
    e = [math.exp(v - top) for v in row]
    total = sum(e)
    return [v / total for v in e]


def attention_loop(q, k, v, mask=None, scale=None):
    """softmax(q k^T * scale) v with explicit loops over queries i and keys j. q (Tq, d_k), k (Tk, d_k)."""
    Tq, d_k = q.shape
    Tk, d_v = v.shape
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    weights = np.zeros((Tq, Tk))
    out = np.zeros((Tq, d_v))
    for i in range(Tq):
        scores = []
        for j in range(Tk):
            if mask is not None and not mask[i][j]:
                scores.append(-math.inf)
            else:
                scores.append(sum(float(q[i, c]) * float(k[j, c]) for c in range(d_k)) * scale)
        row = softmax_loop(scores)
        for j in range(Tk):
            weights[i, j] = row[j]
            for c in range(d_v):
                out[i, c] += row[j] * float(v[j, c])
    return out, weights


def mha_reference(x, w_qkv, b_qkv, w_o, b_o, n_heads, mask=None):
    """Multi-head attention for one sequence x (T, D), built from attention_loop head by head."""
    D = x.shape[-1]
    d_k = D // n_heads
    heads = []
    for h in range(n_heads):
        cols = [h * d_k + c for c in range(d_k)]
        q = x @ w_qkv[:, cols] + b_qkv[cols]
        k = x @ w_qkv[:, [D + c for c in cols]] + b_qkv[[D + c for c in cols]]
        v = x @ w_qkv[:, [2 * D + c for c in cols]] + b_qkv[[2 * D + c for c in cols]]
        heads.append(attention_loop(q, k, v, mask)[0])
    return np.concatenate(heads, axis=-1) @ w_o + b_o


def mha_inputs(rng, D, dtype=np.float64, lead=(5,)):
    """x (*lead, D) and random weights *and biases* (non-zero biases catch a dropped bias)."""
    def r(*shape):
        return rng.standard_normal(shape).astype(dtype)

    return r(*lead, D), r(D, 3 * D) * 0.5, r(3 * D) * 0.1, r(D, D) * 0.5, r(D) * 0.1


# ---- softmax ------------------------------------------------------------------------------------


def test_softmax_rows_sum_to_one():
    x = np.random.default_rng(0).standard_normal((4, 7, 5))
    for axis in (-1, 0, 1):
        p = softmax(x, axis=axis)
        assert p.shape == x.shape
        np.testing.assert_allclose(p.sum(axis=axis), 1.0, atol=1e-12)
        assert np.all(p > 0)


def test_softmax_matches_plain_loop():
    x = np.random.default_rng(1).standard_normal((6, 5)) * 3
    x[2, 1] = -np.inf
    expected = np.array([softmax_loop(list(row)) for row in x])
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-13, atol=1e-15)


def test_softmax_known_values():
    np.testing.assert_allclose(softmax(np.array([0.0, 0.0])), [0.5, 0.5])
    e = math.e
    np.testing.assert_allclose(softmax(np.array([1.0, 0.0])), [e / (e + 1), 1 / (e + 1)], rtol=1e-14)
    # Adding a constant to a row changes nothing.
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(softmax(x + 1000.0), softmax(x), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("magnitude", [1.0, 100.0, 1e3, 1e4])
def test_softmax_is_stable_for_huge_scores(dtype, magnitude):
    x = (np.random.default_rng(2).standard_normal((8, 9)) * magnitude).astype(dtype)
    x[0] = magnitude  # a row of ties at the largest value
    x[1, 0] = -magnitude
    with strict_fp():
        p = softmax(x)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(p[0], 1 / 9, rtol=1e-5)


def test_softmax_extreme_row_is_one_hot():
    with strict_fp():
        p = softmax(np.array([1e4, -1e4, 0.0]))
    assert p.tolist() == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_fully_masked_row_is_exactly_zero(dtype):
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]], dtype=dtype)
    with strict_fp():
        p = softmax(x)
    assert np.all(p[0] == 0.0)
    np.testing.assert_array_equal(p[1], [0.5, 0.0, 0.5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_keeps_dtype(dtype):
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(dtype)
    p = softmax(x)
    assert p.dtype == dtype
    np.testing.assert_allclose(p, softmax(x.astype(np.float64)), rtol=1e-6 if dtype == np.float32 else 0)


def test_softmax_accepts_integers():
    np.testing.assert_allclose(softmax([0, 0, 0, 0]), [0.25] * 4)


# ---- causal mask --------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 5, 33])
def test_causal_mask_shape_and_pattern(T):
    m = causal_mask(T)
    assert m.shape == (T, T)
    assert m.dtype == bool
    for i in range(T):
        for j in range(T):
            assert m[i, j] == (j <= i)


def test_causal_mask_small_example():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]


@pytest.mark.parametrize("T", [0, -1, 2.5])
def test_causal_mask_rejects_bad_lengths(T):
    with pytest.raises(ValueError, match="sequence length"):
        causal_mask(T)


@pytest.mark.parametrize("T, start", [(1, 0), (1, 7), (3, 4), (5, 0)])
def test_causal_mask_after_cached_keys_is_rows_of_the_square_mask(T, start):
    """With `start` keys cached, the T new queries see what rows start..start + T of the full mask see."""
    np.testing.assert_array_equal(causal_mask(T, start), causal_mask(start + T)[start:])


@pytest.mark.parametrize("start", [-1, 1.5])
def test_causal_mask_rejects_bad_starts(start):
    with pytest.raises(ValueError, match="position"):
        causal_mask(3, start)


# ---- scaled dot-product attention ---------------------------------------------------------------

# The worked example: Q, K and the scale 1/sqrt(2). Checked by hand: row 0's scaled scores are
# (0.7071, 0, 0.3536) -> exp (2.028, 1, 1.424) / 4.452 = (0.456, 0.225, 0.320).
Q_EX = [[1, 0], [0, 1], [1, 1]]
K_EX = [[1, 0], [0, 1], [0.5, 0.5]]


def test_hand_checked_example():
    v = np.eye(3)
    out, w = scaled_dot_product_attention(Q_EX, K_EX, v, scale=1 / math.sqrt(2))
    np.testing.assert_allclose(w[0], [0.456, 0.225, 0.320], atol=5e-4)
    np.testing.assert_allclose(w[1], [0.225, 0.456, 0.320], atol=5e-4)
    # Three equal dot products (1, 1, 1): the row is uniform.
    np.testing.assert_allclose(w[2], [1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    # A tutorial prints these for rows 0 and 2; the formula does not give them.
    assert not np.allclose(w[0], [0.432, 0.211, 0.357], atol=5e-3)
    assert not np.allclose(w[2], [0.304, 0.304, 0.392], atol=5e-3)
    np.testing.assert_allclose(out, w)  # V = I: the output is the weights themselves


def test_hand_checked_example_with_integer_inputs():
    """Integer arrays (a student's first try) must still be scaled by 1/sqrt(d_k), not by int(0.707) = 0."""
    _, w = scaled_dot_product_attention(np.array(Q_EX), np.array(Q_EX), np.eye(3, dtype=int))
    # default scale 1/sqrt(2); scores row 0: (1, 0, 1) / sqrt(2)
    a = math.exp(1 / math.sqrt(2))
    np.testing.assert_allclose(w[0], [a / (2 * a + 1), 1 / (2 * a + 1), a / (2 * a + 1)], rtol=1e-12)


def test_hand_example_causal():
    _, w = scaled_dot_product_attention(Q_EX, K_EX, np.eye(3), mask=causal_mask(3))
    assert w[0].tolist() == [1.0, 0.0, 0.0]
    assert np.all(w[np.triu_indices(3, 1)] == 0.0)
    # Row 1 sees keys 0 and 1 only: scores (0, 0.7071) -> softmax.
    np.testing.assert_allclose(w[1, :2], softmax_loop([0.0, 1 / math.sqrt(2)]), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("masked", [False, True])
def test_attention_matches_plain_loop(seed, masked):
    rng = np.random.default_rng(seed)
    Tq, Tk, d_k, d_v = rng.integers(1, 6, size=4)
    q, k, v = rng.standard_normal((Tq, d_k)), rng.standard_normal((Tk, d_k)), rng.standard_normal((Tk, d_v))
    mask = rng.random((Tq, Tk)) < 0.6 if masked else None
    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref_out, ref_w = attention_loop(q, k, v, mask)
    assert out.shape == (Tq, d_v) and w.shape == (Tq, Tk)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-13)


def test_default_scale_is_one_over_sqrt_dk():
    rng = np.random.default_rng(7)
    q, k, v = rng.standard_normal((4, 16)), rng.standard_normal((5, 16)), rng.standard_normal((5, 3))
    _, w_default = scaled_dot_product_attention(q, k, v)
    _, w_quarter = scaled_dot_product_attention(q, k, v, scale=0.25)
    _, w_one = scaled_dot_product_attention(q, k, v, scale=1.0)
    np.testing.assert_allclose(w_default, w_quarter, rtol=1e-14)
    np.testing.assert_allclose(w_default, softmax(q @ k.T / 4.0), rtol=1e-14)
    assert not np.allclose(w_default, w_one)


def test_causal_attention_never_looks_ahead():
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((6, 4)) for _ in range(3))
    out, w = scaled_dot_product_attention(q, k, v, causal_mask(6))
    assert w[0].tolist() == [1.0, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(out[0], v[0])
    assert np.all(np.triu(w, 1) == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


def test_fully_masked_rows_are_exactly_zero():
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((4, 3)) for _ in range(3))
    mask = np.ones((4, 4), dtype=bool)
    mask[2] = False
    with strict_fp():
        out, w = scaled_dot_product_attention(q, k, v, mask)
    assert np.all(w[2] == 0.0) and np.all(out[2] == 0.0)
    np.testing.assert_allclose(np.delete(w, 2, axis=0).sum(-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d_k", [1, 64, 256, 1024])
def test_large_dk_gives_no_warnings(dtype, d_k):
    rng = np.random.default_rng(d_k)
    q = (rng.standard_normal((8, d_k)) * 3).astype(dtype)
    k = (rng.standard_normal((8, d_k)) * 3).astype(dtype)
    v = rng.standard_normal((8, 4)).astype(dtype)
    with strict_fp():
        out, w = scaled_dot_product_attention(q, k, v, causal_mask(8))
    assert out.dtype == dtype and w.dtype == dtype
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)


def test_mismatched_shapes_raise():
    q, k, v = np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((5, 2))
    with pytest.raises(ValueError, match="d_k"):
        scaled_dot_product_attention(q, np.zeros((5, 3)), v)
    with pytest.raises(ValueError, match="keys"):
        scaled_dot_product_attention(q, k, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="mask"):
        scaled_dot_product_attention(q, k, v, mask=np.ones((3, 4), dtype=bool))
    with pytest.raises(ValueError):
        scaled_dot_product_attention(np.zeros(4), k, v)


def test_the_listing_a_student_reads_is_the_formula():
    """The lessons show scaled_dot_product_attention's source: the formula and its mask, with the checks on its
    inputs in a function of their own."""
    source = inspect.getsource(scaled_dot_product_attention)
    assert "check_attention_inputs(q, k, v, mask)" in source
    assert "raise" not in source and "np.where(mask, scores, -np.inf)" in source
    body = ast.parse(source).body[0].body[1:]  # its statements after the docstring
    code = [line for line in ast.unparse(body).splitlines() if line.strip()]
    assert len(code) <= 10, code  # softmax(q kᵀ / √d_k, masked) v and its checks' call: no more


@pytest.mark.parametrize("mask", [np.ones((3, 3)), np.ones((3, 3), dtype=int), np.zeros((3, 3), dtype=np.float32)])
def test_non_bool_mask_raises(mask):
    x = np.zeros((3, 2))
    with pytest.raises(ValueError, match="boolean"):
        scaled_dot_product_attention(x, x, x, mask=mask)


def test_batched_attention_broadcasts_a_shared_mask():
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    out, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
    assert out.shape == (2, 3, 5, 4) and w.shape == (2, 3, 5, 5)
    for b in range(2):
        for h in range(3):
            ref_out, ref_w = attention_loop(q[b, h], k[b, h], v[b, h], causal_mask(5))
            np.testing.assert_allclose(w[b, h], ref_w, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(out[b, h], ref_out, rtol=1e-12, atol=1e-13)


# ---- property-based ----------------------------------------------------------------------------

finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
score = st.one_of(finite, st.just(-np.inf))
PROPS = settings(max_examples=60, deadline=None)


@PROPS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=score))
def test_prop_softmax_rows(x):
    with strict_fp():
        p = softmax(x)
    assert p.shape == x.shape
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    sums = p.sum(axis=-1)
    dead = np.all(np.isneginf(x), axis=-1)
    np.testing.assert_allclose(sums[~dead], 1.0, atol=1e-12)
    assert np.all(sums[dead] == 0.0)
    assert np.all(p[np.isneginf(x)] == 0.0)


@PROPS
@given(st.integers(1, 40))
def test_prop_causal_mask(T):
    m = causal_mask(T)
    assert m.shape == (T, T) and m.dtype == bool
    i, j = np.indices((T, T))
    np.testing.assert_array_equal(m, j <= i)
    assert m.sum() == T * (T + 1) // 2


@st.composite
def attention_case(draw):
    B, Tq, Tk = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    values = st.floats(-30, 30, allow_nan=False)
    q = draw(hnp.arrays(np.float64, (B, Tq, d_k), elements=values))
    k = draw(hnp.arrays(np.float64, (B, Tk, d_k), elements=values))
    v = draw(hnp.arrays(np.float64, (B, Tk, d_v), elements=values))
    mask = draw(hnp.arrays(np.bool_, (B, Tq, Tk)))
    return q, k, v, mask


@PROPS
@given(attention_case())
def test_prop_attention(case):
    q, k, v, mask = case
    with strict_fp():
        out, w = scaled_dot_product_attention(q, k, v, mask)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    assert np.all((w >= 0) & (w <= 1))
    assert np.all(w[~mask] == 0.0)
    live = mask.any(axis=-1)
    np.testing.assert_allclose(w.sum(-1)[live], 1.0, atol=1e-12)
    assert np.all(w.sum(-1)[~live] == 0.0)
    # Each live output is a weighted average of the values: it stays inside their range.
    lo, hi = v.min(axis=-2, keepdims=True), v.max(axis=-2, keepdims=True)
    assert np.all(out[live] >= np.broadcast_to(lo, out.shape)[live] - 1e-9)
    assert np.all(out[live] <= np.broadcast_to(hi, out.shape)[live] + 1e-9)
    # Batched == one item at a time.
    for b in range(q.shape[0]):
        out_b, w_b = scaled_dot_product_attention(q[b], k[b], v[b], mask[b])
        np.testing.assert_allclose(out[b], out_b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w[b], w_b, rtol=1e-12, atol=1e-15)


@PROPS
@given(st.integers(1, 3), st.integers(1, 6), st.sampled_from([(4, 1), (4, 2), (6, 3), (8, 4), (6, 6)]),
       st.integers(0, 2**31), st.booleans())
def test_prop_mha_forms_agree_and_batch(B, T, DH, seed, causal):
    D, H = DH
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(seed), D, lead=(B, T))
    mask = causal_mask(T) if causal else None
    out, w = multi_head_attention(x, w_qkv, b_qkv, w_o, b_o, H, mask)
    assert out.shape == (B, T, D) and w.shape == (B, H, T, T)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    for form in MHA_FORMS[1:]:
        o2, w2 = form(x, w_qkv, b_qkv, w_o, b_o, H, mask)
        np.testing.assert_allclose(o2, out, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(w2, w, rtol=1e-10, atol=1e-12)
    for b in range(B):
        o_b, w_b = multi_head_attention(x[b], w_qkv, b_qkv, w_o, b_o, H, mask)
        np.testing.assert_allclose(out[b], o_b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w[b], w_b, rtol=1e-12, atol=1e-14)


# ---- multi-head attention -----------------------------------------------------------------------


def test_split_and_merge_heads_are_contiguous_slices():
    x = np.arange(2 * 3 * 8).reshape(2, 3, 8)
    s = split_heads(x, 4)
    assert s.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(s[1, 2], x[1, :, 4:6])  # head 2 is columns 4 and 5
    np.testing.assert_array_equal(merge_heads(s), x)


@pytest.mark.parametrize("H", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
def test_mha_matches_head_by_head_loop_reference(H, causal):
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(11), 4)
    mask = causal_mask(5) if causal else None
    expected = mha_reference(x, w_qkv, b_qkv, w_o, b_o, H, mask)
    for form in MHA_FORMS:
        out, w = form(x, w_qkv, b_qkv, w_o, b_o, H, mask)
        assert out.shape == (5, 4) and w.shape == (H, 5, 5)
        np.testing.assert_allclose(out, expected, rtol=1e-11, atol=1e-12, err_msg=form.__name__)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("mask_kind", [None, "shared", "per_batch"])
@pytest.mark.parametrize("lead", [(7,), (3, 7)])
def test_three_mha_forms_agree(dtype, tol, mask_kind, lead):
    D, H, T = 16, 4, lead[-1]
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(12), D, dtype, lead)
    if mask_kind is None:
        mask = None
    elif mask_kind == "shared" or len(lead) == 1:
        mask = causal_mask(T)
    else:  # a different mask per sequence (B, T, T), e.g. padding; keep the diagonal so no row is empty
        rng = np.random.default_rng(13)
        mask = (rng.random((lead[0], T, T)) < 0.5) | np.eye(T, dtype=bool)
    results = [form(x, w_qkv, b_qkv, w_o, b_o, H, mask) for form in MHA_FORMS]
    out, w = results[0]
    assert out.shape == (*lead, D) and w.shape == (*lead[:-1], H, T, T)
    for o2, w2 in results[1:]:
        assert o2.dtype == dtype and w2.dtype == dtype
        np.testing.assert_allclose(o2, out, rtol=tol, atol=tol)
        np.testing.assert_allclose(w2, w, rtol=tol, atol=tol)
    if mask is not None:
        full = np.broadcast_to(mask[..., None, :, :] if mask.ndim == 3 else mask, w.shape)
        assert np.all(w[~full] == 0)


@pytest.mark.parametrize("causal", [False, True])
def test_batched_mha_equals_stacked_unbatched(causal):
    D, H, B, T = 12, 3, 4, 6
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(14), D, lead=(B, T))
    mask = causal_mask(T) if causal else None
    for form in MHA_FORMS:
        out, w = form(x, w_qkv, b_qkv, w_o, b_o, H, mask)
        singles = [form(x[b], w_qkv, b_qkv, w_o, b_o, H, mask) for b in range(B)]
        np.testing.assert_allclose(out, np.stack([s[0] for s in singles]), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(w, np.stack([s[1] for s in singles]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("form", MHA_FORMS)
def test_mha_heads_must_divide_d_model(form):
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(15), 6)
    with pytest.raises(ValueError, match=r"d_model = 6 cannot be split evenly into 4 heads"):
        form(x, w_qkv, b_qkv, w_o, b_o, 4)
    with pytest.raises(ValueError, match="heads"):
        form(x, w_qkv, b_qkv, w_o, b_o, 0)


@pytest.mark.parametrize("form", MHA_FORMS)
def test_mha_checks_weight_shapes(form):
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(16), 6)
    with pytest.raises(ValueError, match="w_qkv"):
        form(x, w_qkv[:, :12], b_qkv, w_o, b_o, 2)
    with pytest.raises(ValueError, match="w_o"):
        form(x, w_qkv, b_qkv, w_o[:4], b_o, 2)


@pytest.mark.parametrize("form", MHA_FORMS)
def test_every_mha_form_uses_scaled_dot_product_attention(form, monkeypatch):
    """softmax(Q K^T / sqrt(d_k)) V is written once in core; the three forms differ in how they project."""
    import core.attention

    calls = []

    def spy(q, k, v, mask=None, scale=None):
        calls.append(q.shape)
        return scaled_dot_product_attention(q, k, v, mask, scale)

    monkeypatch.setattr(core.attention, "scaled_dot_product_attention", spy)
    x, w_qkv, b_qkv, w_o, b_o = mha_inputs(np.random.default_rng(17), 8, lead=(2, 5))
    form(x, w_qkv, b_qkv, w_o, b_o, 2, causal_mask(5))
    assert calls, f"{form.__name__} does not call scaled_dot_product_attention"

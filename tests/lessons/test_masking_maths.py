"""The masking lesson's set-ups (lessons/masking/maths.py): each against a plain loop, and the facts it shows.

Shapes: T sequence length, D d_model, d_k query/key size.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from core.attention import causal_mask, softmax
from core.demos import measures
from core.demos.heads import single_head
from lessons.masking import maths
from tests.core.test_core_attention import softmax_loop  # the plain-loop softmax, written once

TOKENS = ["The", "cat", "sat", "on", "the", "warm", "mat"]


# ---- masking ----------------------------------------------------------------------------------------


def test_strict_mask_and_fill():
    m = maths.strict_causal_mask(4)
    assert m.tolist() == [[j < i for j in range(4)] for i in range(4)]
    assert not m[0].any()
    filled = maths.fill_masked(np.ones((4, 4)), m)
    assert np.isneginf(filled[~m]).all() and (filled[m] == 1).all()
    assert (maths.fill_masked(np.ones((4, 4)), m, -1e9)[~m] == -1e9).all()
    with pytest.raises(ValueError, match="boolean"):
        maths.fill_masked(np.ones((4, 4)), m.astype(int))
    with pytest.raises(ValueError, match="shape"):
        maths.fill_masked(np.ones((3, 4)), m)


def test_naive_softmax_nan_row_without_warnings():
    x = maths.fill_masked(np.random.default_rng(0).standard_normal((4, 4)), maths.strict_causal_mask(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        naive = maths.naive_softmax(x)
    assert np.isnan(naive[0]).all()
    np.testing.assert_allclose(naive[1:], softmax(x)[1:], rtol=1e-12)
    assert softmax(x)[0].tolist() == [0.0] * 4


def test_mask_after_softmax():
    scores = np.random.default_rng(6).standard_normal((5, 5))
    r = maths.mask_after_softmax(scores, causal_mask(5))
    expected = [[w if j <= i else 0.0 for j, w in enumerate(softmax_loop(row))] for i, row in enumerate(scores)]
    np.testing.assert_allclose(r["wrong"], expected, rtol=1e-12)
    assert (r["row_sums"][:-1] < 1).all()
    assert r["row_sums"][-1] == pytest.approx(1.0)
    np.testing.assert_allclose(r["right_row_sums"], 1.0)
    # renormalising the late-masked rows gives the right answer: the order only loses the scale
    np.testing.assert_allclose(r["wrong"] / r["row_sums"][:, None], r["right"], rtol=1e-12)


def test_fully_masked_row_four_ways():
    T = 5
    scores = np.random.default_rng(7).standard_normal((T, T))
    r = maths.fully_masked_row(scores, maths.strict_causal_mask(T))
    assert r["empty_rows"].tolist() == [0]
    assert np.isnan(r["naive"][0]).all()
    assert r["ours"][0].tolist() == [0.0] * T
    np.testing.assert_allclose(r["big_negative"][0], 1 / T)  # uniform over every key: a leak
    assert np.isnan(r["big_negative_f16"][0]).all()  # -1e9 is -inf in float16
    for name in ("naive", "big_negative"):  # every row with an allowed key agrees
        np.testing.assert_allclose(r[name][1:], r["ours"][1:], rtol=1e-12)
    np.testing.assert_allclose(r["big_negative_f16"][1:], r["ours"][1:], atol=2e-3)  # float16 rounding


def test_a_finite_fill_equals_minus_infinity_under_the_causal_mask():
    """-1e9 (or float32's own minimum) and -inf give the same causal weights, bit for bit: every row keeps a key."""
    scores = np.random.default_rng(3).standard_normal((6, 6)) * 5
    assert maths.causal_fill_difference(scores) == 0.0
    assert maths.causal_fill_difference(scores, float(np.finfo(np.float32).min)) == 0.0
    assert maths.masking_view(TOKENS, 16, 8, 0)["causal_fill_difference"] == 0.0


def test_fill_values_in_float16():
    r = maths.fill_in_float16()
    as_16 = dict(zip(r["value"].tolist(), r["float16"].tolist()))
    assert as_16[-1e4] == -1e4 and as_16[-65504.0] == -65504.0
    assert all(math.isinf(as_16[v]) for v in (-1e5, -1e9, -1e10))
    assert np.isfinite(r["float32"]).all()


def test_running_mean_is_uniform_causal_attention():
    T = 6
    W = maths.running_mean_weights(T)
    assert W.tolist() == [[1 / (i + 1) if j <= i else 0.0 for j in range(T)] for i in range(T)]
    V = np.random.default_rng(8).standard_normal((T, 3))
    loop = np.array([V[: i + 1].mean(axis=0) for i in range(T)])
    np.testing.assert_allclose(maths.running_mean(V), loop, rtol=1e-12)
    np.testing.assert_allclose(W @ V, loop, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError):
        maths.running_mean(np.zeros((0, 3)))


def test_masking_view():
    v = maths.masking_view(TOKENS, 16, 8, 0)
    T = len(TOKENS)
    w = v["weights_masked"]
    assert w[0].tolist() == [1.0] + [0.0] * (T - 1)  # exactly, not approximately
    assert (w[np.triu_indices(T, 1)] == 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_array_equal(v["out_masked"][0], v["V"][0])
    np.testing.assert_allclose(v["out_masked"][-1], v["out_free"][-1], atol=1e-15)
    assert np.isneginf(v["masked_scores"][np.triu_indices(T, 1)]).all()
    assert v["running_mean_error"] < 1e-14


# ---- no peeking -------------------------------------------------------------------------------------


@pytest.mark.parametrize("position", [1, 3, 6])
def test_no_peeking_is_exact(position):
    p = maths.no_peeking(TOKENS, position, "dog", 16, 8, 0)
    assert p["changed_tokens"][position] == "dog"
    assert p["diff_masked"][:position].tolist() == [0.0] * position  # bit for bit
    assert (p["diff_masked"][position:] > 0).all()
    assert (p["diff_unmasked"] > 0).all()  # without the mask every output reads the changed token
    np.testing.assert_array_equal(p["diffs"][:, 0], p["diff_masked"])
    # the loop form: recompute with single_head and compare row by row
    after = single_head(p["changed_tokens"], 16, 8, 0, mask=causal_mask(len(TOKENS)))["out"]
    for i in range(position):
        assert (after[i] == p["before_masked"][i]).all()


def test_no_peeking_same_embedding_and_errors():
    p = maths.no_peeking(TOKENS, 4, "THE", 16, 8, 0)  # embeddings ignore case: nothing changes anywhere
    assert p["diff_unmasked"].max() == 0 and p["diff_masked"].max() == 0
    for position in (-1, 7, 1.5, True):
        with pytest.raises(ValueError, match="position"):
            maths.no_peeking(TOKENS, position, "dog", 16, 8, 0)
    with pytest.raises(ValueError, match="empty"):
        maths.no_peeking(TOKENS, 2, "", 16, 8, 0)
    with pytest.raises(ValueError, match="no tokens"):
        maths.no_peeking([], 0, "dog", 16, 8, 0)


def test_averaging_rows():
    v = maths.masking_view(TOKENS, 16, 8, 0)
    names, rows = maths.averaging_rows(v, TOKENS, 2)
    assert names == ["out[2] of the uniform weights", "mean of V[0..2]", "V[0] (The)", "V[1] (cat)", "V[2] (sat)"]
    assert rows.shape == (5, 8)
    np.testing.assert_allclose(rows[0], rows[1], atol=1e-15)  # W V is the running mean
    np.testing.assert_allclose(rows[1], v["V"][:3].mean(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(rows[2:], v["V"][:3])


def test_peek_outcome():
    held = maths.peek_outcome(maths.no_peeking(TOKENS, 4, "dog", 16, 8, 0), 4)
    assert held == {"kind": "held", "position": 4, "last": 3, "largest": 0.0, "moved": 4}
    assert maths.peek_outcome(maths.no_peeking(TOKENS, 0, "dog", 16, 8, 0), 0)["kind"] == "first"
    assert maths.peek_outcome(maths.no_peeking(TOKENS, 4, "THE", 16, 8, 0), 4)["kind"] == "same"
    leaky = {"diff_masked": np.array([0.0, 0.5, 1.0]), "diff_unmasked": np.array([0.1, 0.5, 1.0])}
    assert maths.peek_outcome(leaky, 2) == {"kind": "leaked", "position": 2, "last": 1, "largest": 0.5,
                                            "moved": 2}
    # held, and without the mask no earlier output moved either: the page does not say they read the future
    still = maths.peek_outcome({"diff_masked": np.array([0.0, 0.0, 1.0]), "diff_unmasked": np.array([0.0, 0.0, 1.0])},
                               2)
    assert still == {"kind": "held", "position": 2, "last": 1, "largest": 0.0, "moved": 0}
    from ui.frame import prose
    said = prose.parts("masking")["peek_held_none"].format(new="`dog`", old="`cat`", **still)
    assert "Without the mask they did not move either" in said and "reading the future" not in said


# ---- properties -------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=8).map(
    lambda s: (s[0], s[0])), elements=st.floats(-50, 50)))
def test_masking_invariants(scores):
    T = scores.shape[0]
    r = maths.mask_after_softmax(scores, causal_mask(T))
    assert (r["row_sums"] <= 1 + 1e-12).all()
    np.testing.assert_allclose(r["right_row_sums"], 1.0)
    e = measures.entropy(r["right"])
    assert (e >= 0).all() and (e <= np.log2(np.arange(1, T + 1)) + 1e-9).all()  # row i has i + 1 keys
    fm = maths.fully_masked_row(scores, maths.strict_causal_mask(T))
    assert fm["ours"][0].tolist() == [0.0] * T
    assert np.isfinite(fm["ours"]).all()

"""Tests for core/demos/ (the lessons' set-ups): each experiment against a plain loop, and the facts it shows.

Shapes: N trials, T sequence length, D d_model, d_k query/key size, d_v value size.
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
from core.demos import circuit, masking, measures, scaling
from core.demos.heads import single_head
from ui.compute import model_store

TOKENS = ["The", "cat", "sat", "on", "the", "warm", "mat"]


def softmax_loop(row) -> list[float]:
    top = max(row)
    if top == -math.inf:
        return [0.0] * len(row)
    e = [math.exp(v - top) for v in row]
    return [v / sum(e) for v in e]


def entropy_loop(row) -> float:
    return -sum(p * math.log2(p) for p in row if p > 0)


# ---- entropy ----------------------------------------------------------------------------------------


def test_entropy_of_uniform_and_one_hot():
    assert measures.entropy(np.full(8, 1 / 8)) == pytest.approx(3.0)
    assert measures.entropy(np.eye(4)).tolist() == [0.0, 0.0, 0.0, 0.0]
    assert measures.entropy([0.5, 0.5, 0.0]) == pytest.approx(1.0)  # a masked key adds nothing


def test_entropy_matches_loop_and_axis():
    w = softmax(np.random.default_rng(0).standard_normal((3, 4, 5)))
    expected = [[entropy_loop(row) for row in block] for block in w]
    np.testing.assert_allclose(measures.entropy(w), expected, rtol=1e-12)
    np.testing.assert_allclose(measures.entropy(np.swapaxes(w, -1, -2), axis=-2), expected, rtol=1e-12)


def test_entropy_rejects_negative_weights():
    with pytest.raises(ValueError, match=">= 0"):
        measures.entropy([0.5, -0.1, 0.6])


# ---- the saturation experiment ----------------------------------------------------------------------


def saturation_loop(d_ks, T, trials, seed):
    """The experiment written out: same draws, one trial, one row, one d_k at a time."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((trials, T, max(d_ks)))
    k = rng.standard_normal((trials, T, max(d_ks)))
    out = {name: [] for name in ("max_unscaled", "max_scaled", "entropy_unscaled", "entropy_scaled", "score_var")}
    for d in d_ks:
        maxes = {"unscaled": [], "scaled": []}
        ents = {"unscaled": [], "scaled": []}
        scores = []
        for n in range(trials):
            for i in range(T):
                row = [sum(q[n, i, c] * k[n, j, c] for c in range(d)) for j in range(T)]
                scores += row
                for label, div in (("unscaled", 1.0), ("scaled", math.sqrt(d))):
                    w = softmax_loop([s / div for s in row])
                    maxes[label].append(max(w))
                    ents[label].append(entropy_loop(w))
        for label in ("unscaled", "scaled"):
            out[f"max_{label}"].append(np.mean(maxes[label]))
            out[f"entropy_{label}"].append(np.mean(ents[label]))
        out["score_var"].append(np.var(scores))
    return out


def test_saturation_matches_plain_loop():
    d_ks, T, trials = (1, 2, 4, 8), 3, 2
    result = scaling.saturation_experiment(d_ks, T, trials, np.random.default_rng(5))
    expected = saturation_loop(d_ks, T, trials, 5)
    for name, values in expected.items():
        np.testing.assert_allclose(result[name], values, rtol=1e-10, err_msg=name)
    assert result["d_k"].tolist() == list(d_ks)
    assert result["uniform_entropy"] == pytest.approx(math.log2(3))
    assert result["uniform_max"] == pytest.approx(1 / 3)


def test_saturation_shows_the_effect():
    r = scaling.saturation_experiment(scaling.D_K_SWEEP, T=16, trials=50, rng=np.random.default_rng(0))
    # at d_k = 1 dividing by sqrt(1) changes nothing
    assert r["max_unscaled"][0] == r["max_scaled"][0]
    assert r["entropy_unscaled"][0] == r["entropy_scaled"][0]
    # unscaled saturates: near one-hot at d_k = 512, entropy near 0; scaled stays spread out
    assert r["max_unscaled"][-1] > 0.85 > 0.4 > r["max_scaled"][-1]
    assert r["entropy_unscaled"][-1] < 0.5 < 3.0 < r["entropy_scaled"][-1] <= r["uniform_entropy"]
    assert np.all(np.diff(r["max_unscaled"]) > 0)  # climbs with every doubling of d_k
    # the raw scores' variance is d_k (within sampling error)
    np.testing.assert_allclose(r["score_var"], r["d_k"], rtol=0.15)


def test_saturation_is_reproducible_and_checks_its_arguments():
    a = scaling.saturation_experiment((1, 64), 4, 3, np.random.default_rng(1))
    b = scaling.saturation_experiment((1, 64), 4, 3, np.random.default_rng(1))
    for key in ("max_unscaled", "entropy_scaled", "score_var"):
        np.testing.assert_array_equal(a[key], b[key])
    with pytest.raises(ValueError, match="Generator"):
        scaling.saturation_experiment((1, 2), 4, 3, None)
    for bad in (dict(d_ks=(0, 2)), dict(d_ks=(1.5,)), dict(T=0), dict(trials=-1), dict(d_ks=())):
        args = {"d_ks": (1, 2), "T": 4, "trials": 3, "rng": np.random.default_rng(0), **bad}
        with pytest.raises(ValueError):
            scaling.saturation_experiment(**args)


# ---- why sqrt(d_k) ----------------------------------------------------------------------------------


def test_dot_product_variance_matches_loop():
    d_ks, n = (1, 3, 5), 6
    r = scaling.dot_product_variance(d_ks, n, np.random.default_rng(2))
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((n, 5)), rng.standard_normal((n, 5))
    for i, d in enumerate(d_ks):
        dots = [sum(q[p, c] * k[p, c] for c in range(d)) for p in range(n)]
        assert r["raw"][i] == pytest.approx(np.var(dots), rel=1e-10)
        assert r["scaled"][i] == pytest.approx(np.var(dots) / d, rel=1e-10)
    assert r["formula"].tolist() == [1.0, 3.0, 5.0]


def test_dot_product_variance_is_d_k():
    r = scaling.dot_product_variance(scaling.D_K_SWEEP, 4000, np.random.default_rng(0))
    np.testing.assert_allclose(r["raw"], r["formula"], rtol=0.12)
    np.testing.assert_allclose(r["scaled"], 1.0, rtol=0.12)
    with pytest.raises(ValueError):
        scaling.dot_product_variance((4,), 1, np.random.default_rng(0))


# ---- scaling a sentence -----------------------------------------------------------------------------


def test_scaled_weights_forms():
    scores = np.random.default_rng(3).standard_normal((4, 4)) * 8
    logits, w = scaling.scaled_weights(scores, 64)
    np.testing.assert_allclose(logits, scores / 8)
    np.testing.assert_allclose(w, [softmax_loop(r) for r in scores / 8], rtol=1e-12)
    logits, w = scaling.scaled_weights(scores, 64, scaled=False, temperature=2.0)
    np.testing.assert_allclose(logits, scores)
    np.testing.assert_allclose(w, [softmax_loop(r) for r in scores / 2], rtol=1e-12)
    _, cold = scaling.scaled_weights(scores, 64, temperature=0.0)  # argmax, no division by zero
    assert cold.sum(axis=1).tolist() == [1.0] * 4
    assert (cold.argmax(axis=1) == scores.argmax(axis=1)).all() and set(np.unique(cold)) == {0.0, 1.0}
    with pytest.raises(ValueError):
        scaling.scaled_weights(scores, 0)
    with pytest.raises(ValueError):
        scaling.scaled_weights(scores, 4, temperature=-1)


def test_scale_mistake():
    """The mistake divides by √d_v: invisible exactly when d_v = d_k, flatter above it, sharper below."""
    scores = np.random.default_rng(4).standard_normal((5, 5)) * 8
    m = scaling.scale_mistake(scores, d_k=64, d_v=256)
    np.testing.assert_allclose(m["wrong"], [softmax_loop(r) for r in scores / 16], rtol=1e-12)
    np.testing.assert_allclose(m["right"], [softmax_loop(r) for r in scores / 8], rtol=1e-12)
    assert (m["wrong_divisor"], m["right_divisor"]) == (16.0, 8.0)
    assert m["wrong_entropy"] > m["right_entropy"]  # divided 2x too much: flatter
    assert m["wrong_max"] < m["right_max"] and m["largest_difference"] > 0
    same = scaling.scale_mistake(scores, d_k=64, d_v=64)  # d_v = d_k: the bug cannot be seen
    np.testing.assert_array_equal(same["wrong"], same["right"])
    assert same["largest_difference"] == 0.0
    sharp = scaling.scale_mistake(scores, d_k=64, d_v=4)
    assert sharp["wrong_entropy"] < sharp["right_entropy"]


def test_scaling_view_matches_single_head():
    v = scaling.scaling_view(TOKENS, 16, 64, 0, scaled=True, temperature=1.0, d_v=64)
    head = single_head(TOKENS, 16, 64, 0)
    raw = single_head(TOKENS, 16, 64, 0, scale=1.0)
    np.testing.assert_array_equal(v["scores"], head["scores"])
    np.testing.assert_allclose(v["weights"], head["weights"], atol=1e-15)
    np.testing.assert_array_equal(v["weights_unscaled"], raw["weights"])
    assert v["summary_unscaled"]["max"] > v["summary_scaled"]["max"]
    assert v["spread_raw"] == pytest.approx(8 * v["spread_scaled"])
    off = scaling.scaling_view(TOKENS, 16, 64, 0, scaled=False)
    np.testing.assert_allclose(off["weights"], raw["weights"], atol=1e-15)
    assert "mistake" not in off


def test_seeded_experiments_are_the_page_draws():
    """The seeded forms are the experiments with generators seeded by their settings: one link, one picture."""
    a = scaling.seeded_saturation(4, 3, 7)
    b = scaling.saturation_experiment(scaling.D_K_SWEEP, 4, 3, np.random.default_rng([7, 4, 3]))
    for key in ("max_unscaled", "max_scaled", "entropy_unscaled", "entropy_scaled"):
        np.testing.assert_array_equal(a[key], b[key])
    v = scaling.seeded_variance(7, 50)
    np.testing.assert_array_equal(v["raw"], scaling.dot_product_variance(scaling.D_K_SWEEP, 50,
                                                                         np.random.default_rng([7, 50]))["raw"])
    assert scaling.VARIANCE_PAIRS == 2000


def test_divisor_error():
    assert scaling.divisor_error(64, 256) == ("too_much", pytest.approx(2.0))  # √256 / √64
    assert scaling.divisor_error(64, 4) == ("too_little", pytest.approx(4.0))  # √64 / √4
    assert scaling.divisor_error(64, 64) == ("equal", 1.0)  # d_v = d_k: the mistake cannot be seen
    assert scaling.divisor_error(64, 8)[0] == "too_little"
    with pytest.raises(ValueError):
        scaling.divisor_error(64, 0)


# ---- masking ----------------------------------------------------------------------------------------


def test_strict_mask_and_fill():
    m = masking.strict_causal_mask(4)
    assert m.tolist() == [[j < i for j in range(4)] for i in range(4)]
    assert not m[0].any()
    filled = masking.fill_masked(np.ones((4, 4)), m)
    assert np.isneginf(filled[~m]).all() and (filled[m] == 1).all()
    assert (masking.fill_masked(np.ones((4, 4)), m, -1e9)[~m] == -1e9).all()
    with pytest.raises(ValueError, match="boolean"):
        masking.fill_masked(np.ones((4, 4)), m.astype(int))
    with pytest.raises(ValueError, match="shape"):
        masking.fill_masked(np.ones((3, 4)), m)


def test_naive_softmax_nan_row_without_warnings():
    x = masking.fill_masked(np.random.default_rng(0).standard_normal((4, 4)), masking.strict_causal_mask(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        naive = masking.naive_softmax(x)
    assert np.isnan(naive[0]).all()
    np.testing.assert_allclose(naive[1:], softmax(x)[1:], rtol=1e-12)
    assert softmax(x)[0].tolist() == [0.0] * 4


def test_mask_after_softmax():
    scores = np.random.default_rng(6).standard_normal((5, 5))
    r = masking.mask_after_softmax(scores, causal_mask(5))
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
    r = masking.fully_masked_row(scores, masking.strict_causal_mask(T))
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
    assert masking.causal_fill_difference(scores) == 0.0
    assert masking.causal_fill_difference(scores, float(np.finfo(np.float32).min)) == 0.0
    assert masking.masking_view(TOKENS, 16, 8, 0)["causal_fill_difference"] == 0.0


def test_fill_values_in_float16():
    r = masking.fill_in_float16()
    as_16 = dict(zip(r["value"].tolist(), r["float16"].tolist()))
    assert as_16[-1e4] == -1e4 and as_16[-65504.0] == -65504.0
    assert all(math.isinf(as_16[v]) for v in (-1e5, -1e9, -1e10))
    assert np.isfinite(r["float32"]).all()


def test_running_mean_is_uniform_causal_attention():
    T = 6
    W = masking.running_mean_weights(T)
    assert W.tolist() == [[1 / (i + 1) if j <= i else 0.0 for j in range(T)] for i in range(T)]
    V = np.random.default_rng(8).standard_normal((T, 3))
    loop = np.array([V[: i + 1].mean(axis=0) for i in range(T)])
    np.testing.assert_allclose(masking.running_mean(V), loop, rtol=1e-12)
    np.testing.assert_allclose(W @ V, loop, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError):
        masking.running_mean(np.zeros((0, 3)))


def test_masking_view():
    v = masking.masking_view(TOKENS, 16, 8, 0)
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
    p = masking.no_peeking(TOKENS, position, "dog", 16, 8, 0)
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
    p = masking.no_peeking(TOKENS, 4, "THE", 16, 8, 0)  # embeddings ignore case: nothing changes anywhere
    assert p["diff_unmasked"].max() == 0 and p["diff_masked"].max() == 0
    for position in (-1, 7, 1.5, True):
        with pytest.raises(ValueError, match="position"):
            masking.no_peeking(TOKENS, position, "dog", 16, 8, 0)
    with pytest.raises(ValueError, match="empty"):
        masking.no_peeking(TOKENS, 2, "", 16, 8, 0)
    with pytest.raises(ValueError, match="no tokens"):
        masking.no_peeking([], 0, "dog", 16, 8, 0)


def test_averaging_rows():
    v = masking.masking_view(TOKENS, 16, 8, 0)
    names, rows = masking.averaging_rows(v, TOKENS, 2)
    assert names == ["out[2] of the uniform weights", "mean of V[0..2]", "V[0] (The)", "V[1] (cat)", "V[2] (sat)"]
    assert rows.shape == (5, 8)
    np.testing.assert_allclose(rows[0], rows[1], atol=1e-15)  # W V is the running mean
    np.testing.assert_allclose(rows[1], v["V"][:3].mean(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(rows[2:], v["V"][:3])


def test_peek_outcome():
    held = masking.peek_outcome(masking.no_peeking(TOKENS, 4, "dog", 16, 8, 0), 4)
    assert held == {"kind": "held", "position": 4, "last": 3, "largest": 0.0, "moved": 4}
    assert masking.peek_outcome(masking.no_peeking(TOKENS, 0, "dog", 16, 8, 0), 0)["kind"] == "first"
    assert masking.peek_outcome(masking.no_peeking(TOKENS, 4, "THE", 16, 8, 0), 4)["kind"] == "same"
    leaky = {"diff_masked": np.array([0.0, 0.5, 1.0]), "diff_unmasked": np.array([0.1, 0.5, 1.0])}
    assert masking.peek_outcome(leaky, 2) == {"kind": "leaked", "position": 2, "last": 1, "largest": 0.5,
                                              "moved": 2}


# ---- properties -------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=8).map(
    lambda s: (s[0], s[0])), elements=st.floats(-50, 50)))
def test_masking_invariants(scores):
    T = scores.shape[0]
    r = masking.mask_after_softmax(scores, causal_mask(T))
    assert (r["row_sums"] <= 1 + 1e-12).all()
    np.testing.assert_allclose(r["right_row_sums"], 1.0)
    e = measures.entropy(r["right"])
    assert (e >= 0).all() and (e <= np.log2(np.arange(1, T + 1)) + 1e-9).all()  # row i has i + 1 keys
    fm = masking.fully_masked_row(scores, masking.strict_causal_mask(T))
    assert fm["ours"][0].tolist() == [0.0] * T
    assert np.isfinite(fm["ours"]).all()


# ---- the induction circuit's reach --------------------------------------------------------------------


def test_copying_by_length_is_what_the_circuit_lesson_says():
    """The figures under the circuit lesson's loss chart: near 0 at the trained lengths (4 to 16), worse at 2,
    failing at 20 and 24, and at 24 right again without layer 1 · head 1 (counted from 1, as on screen)."""
    model = model_store.load_model("circuit")
    n_symbols = len(model.meta["tokenizer"]["chars"])
    at_2, at_4, at_16, at_20, at_24 = circuit.copying_by_length(model.params, model.cfg, n_symbols,
                                                                (2, 4, 16, 20, 24), n=128)
    assert at_4 < 0.05 and at_16 < 0.05
    assert at_2 > 0.1 and at_20 > 0.4 and at_24 > 3
    assert circuit.copying_by_length(model.params, model.cfg, n_symbols, (24,), n=128, off=(0, 0))[0] < 0.1


def test_a_naive_softmax_overflows_and_the_max_subtraction_saves_it():
    """exp(1000) is inf in float64, inf / inf NaN; minus the row's max, the same weights as core's softmax."""
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float64(1000))) and np.isfinite(np.exp(np.float64(709)))
    o = scaling.overflow()
    assert np.isinf(o["naive_exp"]).all() and np.isnan(o["naive"]).all()
    np.testing.assert_array_equal(o["shifted"], [0.0, -1.0, -2.0])
    np.testing.assert_allclose(o["weights"], np.exp([0, -1, -2]) / np.exp([0, -1, -2]).sum())
    np.testing.assert_allclose(o["weights"], softmax(np.array([1000.0, 999.0, 998.0])))
    assert o["limits"]["float64"] == pytest.approx(709.78, abs=0.01)
    assert o["limits"]["float32"] == pytest.approx(88.72, abs=0.01) and o["limits"]["float16"] == pytest.approx(11.09,
                                                                                                            abs=0.01)
    with pytest.raises(ValueError):
        scaling.overflow([np.inf])

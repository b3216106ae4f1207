"""The scaling lesson's set-ups (lessons/scaling/maths.py): each experiment against a plain loop, and the facts
it shows.

Shapes: N trials, T sequence length, D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.attention import softmax
from core.demos.heads import single_head
from lessons.scaling import maths
from tests.core.test_core_attention import softmax_loop  # the plain-loop softmax, written once

TOKENS = ["The", "cat", "sat", "on", "the", "warm", "mat"]


def entropy_loop(row) -> float:
    return -sum(p * math.log2(p) for p in row if p > 0)


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
    result = maths.saturation_experiment(d_ks, T, trials, np.random.default_rng(5))
    expected = saturation_loop(d_ks, T, trials, 5)
    for name, values in expected.items():
        np.testing.assert_allclose(result[name], values, rtol=1e-10, err_msg=name)
    assert result["d_k"].tolist() == list(d_ks)
    assert result["uniform_entropy"] == pytest.approx(math.log2(3))
    assert result["uniform_max"] == pytest.approx(1 / 3)


def test_saturation_shows_the_effect():
    r = maths.saturation_experiment(maths.D_K_SWEEP, T=16, trials=50, rng=np.random.default_rng(0))
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
    a = maths.saturation_experiment((1, 64), 4, 3, np.random.default_rng(1))
    b = maths.saturation_experiment((1, 64), 4, 3, np.random.default_rng(1))
    for key in ("max_unscaled", "entropy_scaled", "score_var"):
        np.testing.assert_array_equal(a[key], b[key])
    with pytest.raises(ValueError, match="Generator"):
        maths.saturation_experiment((1, 2), 4, 3, None)
    for bad in (dict(d_ks=(0, 2)), dict(d_ks=(1.5,)), dict(T=0), dict(trials=-1), dict(d_ks=())):
        args = {"d_ks": (1, 2), "T": 4, "trials": 3, "rng": np.random.default_rng(0), **bad}
        with pytest.raises(ValueError):
            maths.saturation_experiment(**args)


# ---- why sqrt(d_k) ----------------------------------------------------------------------------------


def test_dot_product_variance_matches_loop():
    d_ks, n = (1, 3, 5), 6
    r = maths.dot_product_variance(d_ks, n, np.random.default_rng(2))
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((n, 5)), rng.standard_normal((n, 5))
    for i, d in enumerate(d_ks):
        dots = [sum(q[p, c] * k[p, c] for c in range(d)) for p in range(n)]
        assert r["raw"][i] == pytest.approx(np.var(dots), rel=1e-10)
        assert r["scaled"][i] == pytest.approx(np.var(dots) / d, rel=1e-10)
    assert r["formula"].tolist() == [1.0, 3.0, 5.0]


def test_dot_product_variance_is_d_k():
    r = maths.dot_product_variance(maths.D_K_SWEEP, 4000, np.random.default_rng(0))
    np.testing.assert_allclose(r["raw"], r["formula"], rtol=0.12)
    np.testing.assert_allclose(r["scaled"], 1.0, rtol=0.12)
    with pytest.raises(ValueError):
        maths.dot_product_variance((4,), 1, np.random.default_rng(0))


# ---- scaling a sentence -----------------------------------------------------------------------------


def test_scaled_weights_forms():
    scores = np.random.default_rng(3).standard_normal((4, 4)) * 8
    logits, w = maths.scaled_weights(scores, 64)
    np.testing.assert_allclose(logits, scores / 8)
    np.testing.assert_allclose(w, [softmax_loop(r) for r in scores / 8], rtol=1e-12)
    logits, w = maths.scaled_weights(scores, 64, scaled=False, temperature=2.0)
    np.testing.assert_allclose(logits, scores)
    np.testing.assert_allclose(w, [softmax_loop(r) for r in scores / 2], rtol=1e-12)
    _, cold = maths.scaled_weights(scores, 64, temperature=0.0)  # argmax, no division by zero
    assert cold.sum(axis=1).tolist() == [1.0] * 4
    assert (cold.argmax(axis=1) == scores.argmax(axis=1)).all() and set(np.unique(cold)) == {0.0, 1.0}
    with pytest.raises(ValueError):
        maths.scaled_weights(scores, 0)
    with pytest.raises(ValueError):
        maths.scaled_weights(scores, 4, temperature=-1)


def test_scale_mistake():
    """The mistake divides by √d_v: invisible exactly when d_v = d_k, flatter above it, sharper below."""
    scores = np.random.default_rng(4).standard_normal((5, 5)) * 8
    m = maths.scale_mistake(scores, d_k=64, d_v=256)
    np.testing.assert_allclose(m["wrong"], [softmax_loop(r) for r in scores / 16], rtol=1e-12)
    np.testing.assert_allclose(m["right"], [softmax_loop(r) for r in scores / 8], rtol=1e-12)
    assert (m["wrong_divisor"], m["right_divisor"]) == (16.0, 8.0)
    assert m["wrong_entropy"] > m["right_entropy"]  # divided 2x too much: flatter
    assert m["wrong_max"] < m["right_max"] and m["largest_difference"] > 0
    same = maths.scale_mistake(scores, d_k=64, d_v=64)  # d_v = d_k: the bug cannot be seen
    np.testing.assert_array_equal(same["wrong"], same["right"])
    assert same["largest_difference"] == 0.0
    sharp = maths.scale_mistake(scores, d_k=64, d_v=4)
    assert sharp["wrong_entropy"] < sharp["right_entropy"]


def test_scaling_view_matches_single_head():
    v = maths.scaling_view(TOKENS, 16, 64, 0, scaled=True, temperature=1.0, d_v=64)
    head = single_head(TOKENS, 16, 64, 0)
    raw = single_head(TOKENS, 16, 64, 0, scale=1.0)
    np.testing.assert_array_equal(v["scores"], head["scores"])
    np.testing.assert_allclose(v["weights"], head["weights"], atol=1e-15)
    np.testing.assert_array_equal(v["weights_unscaled"], raw["weights"])
    assert v["summary_unscaled"]["max"] > v["summary_scaled"]["max"]
    assert v["spread_raw"] == pytest.approx(8 * v["spread_scaled"])
    off = maths.scaling_view(TOKENS, 16, 64, 0, scaled=False)
    np.testing.assert_allclose(off["weights"], raw["weights"], atol=1e-15)
    assert "mistake" not in off


def test_seeded_experiments_are_the_page_draws():
    """The seeded forms are the experiments with generators seeded by their settings: one link, one picture."""
    a = maths.seeded_saturation(4, 3, 7)
    b = maths.saturation_experiment(maths.D_K_SWEEP, 4, 3, np.random.default_rng([7, 4, 3]))
    for key in ("max_unscaled", "max_scaled", "entropy_unscaled", "entropy_scaled"):
        np.testing.assert_array_equal(a[key], b[key])
    v = maths.seeded_variance(7, 50)
    np.testing.assert_array_equal(v["raw"], maths.dot_product_variance(maths.D_K_SWEEP, 50,
                                                                       np.random.default_rng([7, 50]))["raw"])
    assert maths.VARIANCE_PAIRS == 2000


def test_divisor_error():
    assert maths.divisor_error(64, 256) == ("too_much", pytest.approx(2.0))  # √256 / √64
    assert maths.divisor_error(64, 4) == ("too_little", pytest.approx(4.0))  # √64 / √4
    assert maths.divisor_error(64, 64) == ("equal", 1.0)  # d_v = d_k: the mistake cannot be seen
    assert maths.divisor_error(64, 8)[0] == "too_little"
    with pytest.raises(ValueError):
        maths.divisor_error(64, 0)


# ---- a softmax that overflows ------------------------------------------------------------------------


def test_a_naive_softmax_overflows_and_the_max_subtraction_saves_it():
    """exp(1000) is inf in float64, inf / inf NaN; minus the row's max, the same weights as core's softmax."""
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.float64(1000))) and np.isfinite(np.exp(np.float64(709)))
    o = maths.overflow()
    assert np.isinf(o["naive_exp"]).all() and np.isnan(o["naive"]).all()
    np.testing.assert_array_equal(o["shifted"], [0.0, -1.0, -2.0])
    np.testing.assert_allclose(o["weights"], np.exp([0, -1, -2]) / np.exp([0, -1, -2]).sum())
    np.testing.assert_allclose(o["weights"], softmax(np.array([1000.0, 999.0, 998.0])))
    assert o["limits"]["float64"] == pytest.approx(709.78, abs=0.01)
    assert o["limits"]["float32"] == pytest.approx(88.72, abs=0.01) and o["limits"]["float16"] == pytest.approx(11.09,
                                                                                                            abs=0.01)
    with pytest.raises(ValueError):
        maths.overflow([np.inf])


def test_the_scaled_spread_does_not_grow_with_d_k_and_wanders_most_at_small_d_k():
    """What the page says under the scaled scores, on its sentence over seeds 0 to 9: the raw spread grows with d_k
    (like √d_k), the scaled one does not, its median stays near 1, and it wanders from seed to seed most at small
    d_k (at d_k = 1 and 2 it ran from 0.28 to 3.24)."""
    def spreads(d_k, key):
        return np.array([maths.scaling_view(TOKENS, 16, d_k, seed)[key] for seed in range(10)])

    small = np.concatenate([spreads(1, "spread_scaled"), spreads(2, "spread_scaled")])
    large = spreads(64, "spread_scaled")
    assert np.median(spreads(64, "spread_raw")) > 4 * np.median(spreads(1, "spread_raw"))
    assert 0.7 < np.median(small) < 1.3 and 0.7 < np.median(large) < 1.3
    assert np.ptp(small) > 2 * np.ptp(large)

"""The causal mask's conventions and one query row worked by hand (core/demos/context.py)."""

from __future__ import annotations

import numpy as np
import pytest

from core.attention import causal_mask, softmax
from core.demos.context import boolean_masks, mask_conventions, walk_through
from core.demos.heads import single_head

SENTENCE = ["the", "cat", "sat", "on", "a", "warm", "mat"]
D, D_K = 16, 8


def test_mask_conventions_agree():
    rng = np.random.default_rng(5)
    for T in (1, 2, 6):
        m = boolean_masks(T)
        np.testing.assert_array_equal(m["blocked"], ~causal_mask(T))
        np.testing.assert_array_equal(m["allowed"], causal_mask(T))
        scores = rng.standard_normal((T, T))
        np.testing.assert_array_equal(softmax(scores + m["additive"]),
                                      softmax(np.where(causal_mask(T), scores, -np.inf)))


def test_boolean_masks_bad_length():
    with pytest.raises(ValueError, match="sequence length"):
        boolean_masks(0)


def test_walk_through_matches_single_head():
    head = single_head(SENTENCE, D, D_K, seed=6)
    for i in range(len(SENTENCE)):
        res = walk_through(SENTENCE, D, D_K, 6, i)
        assert res["token"] == SENTENCE[i]
        assert res["products"].shape == (len(SENTENCE), D_K)
        np.testing.assert_allclose(res["dots"], head["scores"][i], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res["scaled"], head["scores"][i] / np.sqrt(D_K), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res["weights"], head["weights"][i], rtol=1e-12, atol=1e-15)
        assert res["exps"].max() == 1.0
        assert res["exp_sum"] == pytest.approx(res["exps"].sum())


@pytest.mark.parametrize("bad", [-1, 7, 1.5])
def test_walk_through_bad_query(bad):
    with pytest.raises(ValueError, match="query position"):
        walk_through(SENTENCE, D, D_K, 0, bad)


@pytest.mark.parametrize("T", [1, 2, 7])
def test_mask_conventions_give_the_same_weights(T):
    scores = np.random.default_rng(T).standard_normal((T, T))
    res = mask_conventions(scores)
    np.testing.assert_array_equal(res["blocked"], np.triu(np.ones((T, T), dtype=bool), k=1))
    np.testing.assert_array_equal(res["allowed"], ~res["blocked"])
    assert res["max_diff"] == 0.0
    for w in res["weights"].values():
        np.testing.assert_allclose(w.sum(axis=1), 1.0)
        assert (w[np.triu_indices(T, 1)] == 0).all()
    with pytest.raises(ValueError, match="square"):
        mask_conventions(np.ones((2, 3)))

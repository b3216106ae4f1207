"""Context set-ups: word order and positions, one word in two sentences, cross-attention, mask conventions,
and one query row worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from core.attention import causal_mask, softmax
from core.demos.context import (
    boolean_masks,
    cosine,
    cross_attention,
    same_word_two_contexts,
    walk_through,
    word_order,
)
from core.demos.heads import single_head

SENTENCE = ["the", "cat", "sat", "on", "a", "warm", "mat"]
D, D_K = 16, 8


def test_without_positions_attention_is_permutation_equivariant():
    rng = np.random.default_rng(0)
    for seed in range(5):
        perm = rng.permutation(len(SENTENCE))
        res = word_order(SENTENCE, D, D_K, seed, perm, positions=False)
        assert res["max_diff_without"] < 1e-12
        assert res["max_diff"] == res["max_diff_without"]
        np.testing.assert_allclose(res["out_permuted"], res["out"][perm], atol=1e-12)
        np.testing.assert_allclose(res["weights_permuted"], res["weights"][np.ix_(perm, perm)], atol=1e-12)


def test_with_positions_order_matters():
    rng = np.random.default_rng(1)
    for seed in range(5):
        perm = rng.permutation(len(SENTENCE))
        if np.array_equal(perm, np.arange(len(SENTENCE))):
            continue
        res = word_order(SENTENCE, D, D_K, seed, perm, positions=True)
        assert res["max_diff_with"] > 1e-3
        assert res["max_diff"] == res["max_diff_with"]
        assert res["tokens_permuted"] == [SENTENCE[p] for p in perm]


def test_identity_permutation_changes_nothing_even_with_positions():
    res = word_order(SENTENCE, D, D_K, 0, range(len(SENTENCE)), positions=True)
    assert res["max_diff_with"] == 0.0 and res["max_diff_without"] == 0.0


@pytest.mark.parametrize("perm", [[0, 1, 2], [0, 0, 1, 2, 3, 4, 5], [7, 1, 2, 3, 4, 5, 6]])
def test_bad_permutation_raises(perm):
    with pytest.raises(ValueError, match="exactly once"):
        word_order(SENTENCE, D, D_K, 0, perm)


def test_same_word_in_two_contexts():
    a = ["the", "bank", "of", "the", "river"]
    b = ["the", "bank", "approved", "my", "loan"]
    res = same_word_two_contexts(a, b, "bank", D, D_K, seed=3)
    assert res["index_a"] == 1 and res["index_b"] == 1
    assert res["cosine"] < 1 - 1e-6
    assert not np.allclose(res["weights_a"], res["weights_b"])
    np.testing.assert_allclose(res["out_a"], single_head(a, D, D_K, 3)["out"][1])
    same = same_word_two_contexts(a, list(a), "Bank", D, D_K, seed=3)
    assert same["cosine"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(same["weights_a"], same["weights_b"])


def test_same_word_missing_raises():
    with pytest.raises(ValueError, match="does not appear"):
        same_word_two_contexts(["a", "cat"], ["a", "dog"], "cat", D, D_K, 0)
    with pytest.raises(ValueError, match="no tokens"):
        same_word_two_contexts([], ["a", "dog"], "a", D, D_K, 0)


def test_cosine_edge_cases():
    assert cosine(np.zeros(3), np.ones(3)) == 0.0
    assert cosine(np.array([1.0, 0.0]), np.array([-2.0, 0.0])) == -1.0


def test_cross_attention_shapes_and_rows():
    q_tokens, kv_tokens = ["le", "chat", "dort"], ["the", "cat", "is", "asleep", "now"]
    res = cross_attention(q_tokens, kv_tokens, D, D_K, seed=2)
    assert res["weights"].shape == (3, 5)
    assert res["scores"].shape == (3, 5)
    assert res["out"].shape == (3, D_K)
    np.testing.assert_allclose(res["weights"].sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(res["out"], res["weights"] @ res["V"], rtol=1e-12)


def test_self_attention_is_cross_attention_on_one_sentence():
    res = cross_attention(SENTENCE, SENTENCE, D, D_K, seed=4)
    head = single_head(SENTENCE, D, D_K, seed=4)
    for name in ("Q", "K", "V", "scores", "weights", "out"):
        np.testing.assert_allclose(res[name], head[name], rtol=1e-12, atol=1e-15, err_msg=name)


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

"""The communication set-ups: one word in two sentences, cross-attention, word order with and without positions,
shuffled and typed word orders, encoder against decoder, a recurrence's reach against one attention step, and
"bank" in two sentences read by the shipped word model."""

from __future__ import annotations

import numpy as np
import pytest

from core.attention import causal_mask, softmax
from core.demos.heads import single_head
from core.demos.word_heads import untrained
from lessons.communication.maths import (
    bank_similarity,
    cosine,
    cross_attention,
    encoder_decoder,
    order_view,
    parse_order,
    reach_of_first_token,
    recurrence,
    same_word_two_contexts,
    shuffled_order,
    word_order,
)

SENTENCE = ["the", "cat", "sat", "on", "a", "warm", "mat"]
D, D_K = 16, 8


@pytest.mark.parametrize("T", [1, 2, 3, 7, 32])
def test_shuffled_order_is_a_permutation_that_moves_something(T):
    for seed in range(30):
        perm = shuffled_order(T, seed)
        assert sorted(perm.tolist()) == list(range(T))
        assert T == 1 or perm.tolist() != list(range(T))
    np.testing.assert_array_equal(shuffled_order(7, 3), shuffled_order(7, 3))  # seeded: the same every time


@pytest.mark.parametrize(("text", "want"), [("2 0 1", [2, 0, 1]), (" 2, 0 ,1 ", [2, 0, 1]), ("0;1;2", [0, 1, 2])])
def test_parse_order(text, want):
    assert parse_order(text, 3).tolist() == want


@pytest.mark.parametrize(("text", "match"), [("2 0", "exactly once"), ("0 0 1", "exactly once"),
                                             ("0 1 3", "exactly once"), ("a b c", "whole numbers"),
                                             ("-1 0 1", "whole numbers"),
                                             ("1.0 0 2", "whole numbers"), ("٢ ٠ ١", "whole numbers"),
                                             ("", "exactly once")])
def test_parse_order_refuses(text, match):
    with pytest.raises(ValueError, match=match):
        parse_order(text, 3)


def test_dog_bites_man():
    """Without positions, 'man bites dog' gives the same output rows as 'dog bites man', moved; with them not."""
    words = ["dog", "bites", "man"]
    off = order_view(words, D, D_K, 0, [2, 1, 0], positions=False)
    assert off["tokens_permuted"] == ["man", "bites", "dog"]
    np.testing.assert_allclose(off["out_permuted"], off["out"][[2, 1, 0]], atol=1e-14)
    np.testing.assert_allclose(off["difference"], 0, atol=1e-14)
    assert off["max_diff"] == off["max_diff_without"] < 1e-14
    on = order_view(words, D, D_K, 0, [2, 1, 0], positions=True)
    assert on["max_diff"] == on["max_diff_with"] == pytest.approx(np.abs(on["difference"]).max())
    assert on["max_diff_with"] > 1e-3
    np.testing.assert_array_equal(on["out_moved"], on["out"][[2, 1, 0]])
    # a causal mask breaks order-blindness even without positions: the shuffle changes what each word sees
    assert off["max_diff_causal"] == on["max_diff_causal"] > 1e-3
    same = order_view(words, D, D_K, 0, [0, 1, 2], positions=False)
    assert same["max_diff_causal"] == 0.0


def test_encoder_and_decoder():
    res = encoder_decoder(SENTENCE, D, D_K, seed=2)
    T = len(SENTENCE)
    enc, dec = res["weights_encoder"], res["weights_decoder"]
    np.testing.assert_allclose(enc.sum(axis=1), 1.0)
    np.testing.assert_allclose(dec.sum(axis=1), 1.0)
    assert (enc > 0).all()  # every token talks to every other
    assert (dec[np.triu_indices(T, 1)] == 0).all()
    np.testing.assert_array_equal(enc, single_head(SENTENCE, D, D_K, 2)["weights"])
    assert res["listens_encoder"].tolist() == [T] * T
    assert res["listens_decoder"].tolist() == list(range(1, T + 1))
    assert (res["messages_encoder"], res["messages_decoder"]) == (49, 28)
    np.testing.assert_allclose(res["out_decoder"][-1], res["out_encoder"][-1])  # the last token hears everyone


def test_recurrence_is_a_running_blend():
    X = np.arange(12, dtype=float).reshape(4, 3)
    H = recurrence(X, 0.5)
    np.testing.assert_array_equal(H[0], X[0])
    for t in range(1, 4):
        np.testing.assert_allclose(H[t], 0.5 * H[t - 1] + 0.5 * X[t])
    np.testing.assert_array_equal(recurrence(X, 1.0), np.repeat(X[:1], 4, axis=0))  # keeps only token 0
    np.testing.assert_array_equal(recurrence(X, 0.0), X)  # remembers nothing


@pytest.mark.parametrize("keep", [0.0, 0.5, 0.9, 1.0])
def test_reach_fades_through_the_recurrence_but_not_through_attention(keep):
    rng = np.random.default_rng(0)
    T = 12
    V = rng.standard_normal((T, 4))
    weights = softmax(np.where(causal_mask(T), rng.standard_normal((T, T)), -np.inf))
    res = reach_of_first_token(V, weights, keep)
    np.testing.assert_allclose(res["recurrence"], keep ** np.arange(T), atol=1e-12)
    np.testing.assert_allclose(res["attention"], weights[:, 0], atol=1e-12)
    assert res["steps_recurrence"].tolist() == list(range(T))
    assert res["steps_attention"].tolist() == [1] * T
    assert res["newest"] == pytest.approx(1 - keep, abs=1e-12)  # what a keep large enough to hold token 0 costs


def test_reach_bad_input():
    with pytest.raises(ValueError, match="between 0 and 1"):
        recurrence(np.ones((3, 2)), 1.5)
    with pytest.raises(ValueError, match="must be"):
        reach_of_first_token(np.ones((3, 2)), np.ones((2, 2)), 0.5)
    with pytest.raises(ValueError, match="T >= 1"):
        recurrence(np.ones((0, 2)), 0.5)


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


def test_the_two_banks_start_equal_and_drift_apart():
    sim = bank_similarity()
    assert sim["stages"] == ["input", "layer 1", "layer 2"]
    assert sim["cosine"][0] == pytest.approx(1.0)  # same word, same position: the same input vector
    assert sim["cosine"][1] < 0.8 and sim["cosine"][2] < 0.3  # measured 0.59, 0.07: the sense is read in
    with pytest.raises(ValueError, match="not among"):
        bank_similarity("she saw the river", "she saw the money")


def test_before_training_the_two_banks_stay_alike():
    """Like for like: the same architecture with random initial weights keeps the two vectors of "bank" close;
    the trained model pulls them apart (docs/MODELS.md: cosine 0.07 after layer 2)."""
    start = bank_similarity(model=untrained())
    trained = bank_similarity()
    assert start["cosine"][0] == pytest.approx(1.0) and start["cosine"][-1] > 0.95
    assert trained["cosine"][-1] < 0.2

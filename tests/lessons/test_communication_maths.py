"""The communication set-ups: shuffled and typed word orders, encoder against decoder, a recurrence's reach
against one attention step, and the three mask conventions."""

from __future__ import annotations

import numpy as np
import pytest

from core.attention import causal_mask, softmax
from core.demos.context import mask_conventions
from core.demos.heads import single_head
from lessons.communication.maths import (
    encoder_decoder,
    order_view,
    parse_order,
    reach_of_first_token,
    recurrence,
    shuffled_order,
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

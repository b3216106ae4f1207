"""The Bigram lesson's set-ups (lessons/bigram/maths.py): sampling and the loss, the held-out split, the most
frequent characters, the drawn view and a transformer's loss on the same pairs. The table itself is
tests/core/test_bigram.py's."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from core.bigram import bigram_counts, bigram_probs
from core.model import ModelConfig, forward, init_params
from core.tokenize import CharTokenizer
from lessons.bigram.maths import bigram_loss, bigram_sample, bigram_view, held_out_split, model_loss, most_frequent

TEXT = "the cat sat on the mat. the rat ate the hat, and that was that."
TOK = CharTokenizer.fit(TEXT)
IDS = TOK.encode(TEXT)
V = TOK.vocab_size


def test_loss_equals_a_plain_loop():
    for alpha in (0.0, 1.0):
        probs = bigram_probs(bigram_counts(IDS, V), alpha=alpha)
        plain = sum(-math.log(probs[IDS[t], IDS[t + 1]]) for t in range(len(IDS) - 1)) / (len(IDS) - 1)
        assert bigram_loss(probs, IDS) == pytest.approx(plain, rel=1e-12)


def test_own_probabilities_beat_uniform_and_smoothing_costs_a_little():
    counts = bigram_counts(IDS, V)
    uniform = np.full((V, V), 1.0 / V)
    assert bigram_loss(uniform, IDS) == pytest.approx(math.log(V))
    assert bigram_loss(bigram_probs(counts, 0.0), IDS) < bigram_loss(bigram_probs(counts, 1.0), IDS) < math.log(V)


def test_impossible_pair_costs_infinity():
    probs = bigram_probs(bigram_counts(IDS, V), alpha=0.0)
    unseen = TOK.encode("zq")  # 'z' and 'q' are not in the text: both map to id 0, whose row is uniform
    assert np.isfinite(bigram_loss(probs, unseen))
    assert bigram_loss(probs, TOK.encode("tt")) == math.inf


def test_sampling_is_reproducible():
    probs = bigram_probs(bigram_counts(IDS, V), alpha=1.0)
    start = int(TOK.encode("t")[0])
    a = bigram_sample(probs, start, 50, np.random.default_rng(7))
    b = bigram_sample(probs, start, 50, np.random.default_rng(7))
    c = bigram_sample(probs, start, 50, np.random.default_rng(8))
    assert a.shape == (51,) and a[0] == start
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert bigram_sample(probs, start, 0, np.random.default_rng(0)).tolist() == [start]


def test_sampling_without_smoothing_only_uses_seen_pairs():
    cyclic = "abcab cabba c"  # every character is followed by something somewhere, so no row is unseen
    tok = CharTokenizer.fit(cyclic)
    ids = tok.encode(cyclic + cyclic[0])  # wrap around: the last character has a successor too
    counts = bigram_counts(ids, tok.vocab_size)
    probs = bigram_probs(counts, alpha=0.0)
    for seed in range(5):
        out = bigram_sample(probs, int(ids[0]), 200, np.random.default_rng(seed))
        assert all(counts[a, b] > 0 for a, b in itertools.pairwise(out))


@pytest.mark.parametrize(("call", "word"), [
    (lambda: bigram_sample(np.ones((2, 2)), 0, 3, np.random.default_rng(0)), "summing to 1"),
    (lambda: bigram_sample(np.eye(2), 2, 3, np.random.default_rng(0)), "start id"),
    (lambda: bigram_sample(np.eye(2), 0, -1, np.random.default_rng(0)), "number of ids"),
    (lambda: bigram_loss(np.eye(2), [0]), "at least 2"),
])
def test_bad_arguments_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# ---- the lesson's pieces: held-out split, most frequent characters, the drawn view, a model's loss --------


def test_held_out_split_keeps_the_last_tenth():
    fit, held = held_out_split(np.arange(100))
    assert fit.tolist() == list(range(90)) and held.tolist() == list(range(90, 100))
    fit, held = held_out_split(np.arange(4))  # at least one pair on each side
    assert fit.tolist() == [0, 1] and held.tolist() == [2, 3]
    with pytest.raises(ValueError, match="at least 4"):
        held_out_split(np.arange(3))


def test_most_frequent_orders_by_count_then_id():
    ids = TOK.encode("sattta")
    top = most_frequent(ids, V, 10)
    assert TOK.decode(top) == "tas"  # t three times, a twice, s once; ids never seen are left out
    assert TOK.decode(most_frequent(TOK.encode("ta"), V, 10)) == "at"  # a tie: the smaller id first


def test_view_rows_with_the_rest_sum_to_one():
    fit, held = held_out_split(IDS)
    v = bigram_view(fit, held, V, 0.5, 5)
    assert v["counts_top"].shape == (5, 5) and v["probs_top"].shape == (5, 6)
    np.testing.assert_allclose(v["probs_top"].sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(v["row_sums"], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(v["counts_top"], v["counts"][np.ix_(v["top"], v["top"])])
    assert v["loss"] == pytest.approx(bigram_loss(bigram_probs(bigram_counts(fit, V), 0.5), held))
    assert v["pairs"] == len(held) - 1 and v["uniform"] == pytest.approx(math.log(V))


def test_model_loss_equals_a_window_by_window_loop():
    cfg = ModelConfig(vocab_size=V, d_model=8, n_heads=2, n_layers=1, max_len=4)
    params = init_params(cfg, np.random.default_rng(0), dtype=np.float64)
    ids = IDS[:11]  # 10 pairs: windows of 4, 4 and 2 predictions
    nll = []
    for start in range(0, 10, 4):
        window = ids[start : start + 5]
        logits, _ = forward(params, cfg, window[:-1])
        logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        nll += [-logp[t, window[t + 1]] for t in range(len(window) - 1)]
    assert len(nll) == 10
    assert model_loss(params, cfg, ids) == pytest.approx(np.mean(nll), rel=1e-10)
    assert model_loss(params, cfg, ids, batch_size=1) == pytest.approx(np.mean(nll), rel=1e-10)
    with pytest.raises(ValueError):
        model_loss(params, cfg, ids[:1])

"""The bigram table (core/bigram.py): counts against a plain loop, probabilities, and the same numbers as the
training baseline in core.data."""

from __future__ import annotations

import numpy as np
import pytest

from core.bigram import bigram_counts, bigram_probs
from core.data import bigram_log_probs
from core.tokenize import CharTokenizer

TEXT = "the cat sat on the mat. the rat ate the hat, and that was that."
TOK = CharTokenizer.fit(TEXT)
IDS = TOK.encode(TEXT)
V = TOK.vocab_size


def test_counts_equal_a_double_loop():
    counts = bigram_counts(IDS, V)
    plain = np.zeros((V, V), dtype=np.int64)
    for a in range(V):
        for b in range(V):
            plain[a, b] = sum(1 for t in range(len(IDS) - 1) if IDS[t] == a and IDS[t + 1] == b)
    np.testing.assert_array_equal(counts, plain)
    assert counts.sum() == len(IDS) - 1


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0, 5.0])
def test_rows_sum_to_one(alpha):
    probs = bigram_probs(bigram_counts(IDS, V), alpha=alpha)
    assert probs.shape == (V, V)
    assert np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("alpha", [0.5, 1.0])
def test_probs_agree_with_the_baseline_in_core_data(alpha):
    probs = bigram_probs(bigram_counts(IDS, V), alpha=alpha)
    np.testing.assert_allclose(np.log(probs), bigram_log_probs(IDS[:-1], IDS[1:], V, alpha=alpha), rtol=1e-12)


def test_unseen_row_is_uniform_without_smoothing():
    probs = bigram_probs(bigram_counts(IDS, V), alpha=0.0)
    np.testing.assert_array_equal(probs[0], 1.0 / V)  # id 0 (unknown) never occurs in the text


@pytest.mark.parametrize(("call", "word"), [
    (lambda: bigram_counts([0, 1, 9], 5), "from 0 to 4"),
    (lambda: bigram_counts([[0, 1]], 5), "flat list"),
    (lambda: bigram_counts([0.5, 1.0], 5), "whole numbers"),
    (lambda: bigram_counts([0, 1], 0), "vocabulary size"),
    (lambda: bigram_probs(np.ones((2, 3))), "square"),
    (lambda: bigram_probs(np.ones((2, 2)), alpha=-1), "alpha"),
])
def test_bad_arguments_raise(call, word):
    with pytest.raises(ValueError, match=word):
        call()

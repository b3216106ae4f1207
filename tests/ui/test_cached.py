"""ui.compute.cached and ui.compute.memo: the lessons' computations, computed once per argument list and shared
read-only."""

from __future__ import annotations

import numpy as np
import pytest

from core.demos import word_heads
from ui.compute import cached, memo


def test_a_result_is_computed_once_and_its_arrays_cannot_be_changed():
    calls = []

    def compute(tokens, D):
        calls.append(tuple(tokens))
        return {"X": np.ones((len(tokens), D)), "parts": [np.zeros(2)]}

    shared = memo.shared(4)(compute)
    first = shared(["a", "b"], 3)
    second = shared(("a", "b"), 3)  # a tuple of the same tokens is the same question
    assert calls == [("a", "b")]
    assert second["X"] is first["X"]
    with pytest.raises(ValueError):
        first["X"][0, 0] = 5.0
    with pytest.raises(ValueError):
        first["parts"][0][0] = 1.0
    first["added"] = 1  # each caller has its own dictionary
    assert "added" not in shared(["a", "b"], 3)


def test_only_the_last_entries_are_kept_and_errors_are_not():
    calls = []

    def compute(n):
        calls.append(n)
        if n < 0:
            raise ValueError("negative")
        return {"n": n}

    shared = memo.shared(2)(compute)
    for n in (1, 2, 3, 1):  # 1 was pushed out by 3
        shared(n)
    assert calls == [1, 2, 3, 1]
    for _ in range(2):
        with pytest.raises(ValueError):
            shared(-1)
    assert calls[-2:] == [-1, -1]


def test_the_cached_lesson_computation_matches_the_core():
    sentence = "the dogs near the cat run"
    got = cached.trained_attention(sentence)
    want = word_heads.trained_attention(sentence)
    assert set(got) == set(want)
    for name in ("weights", "next"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12)


def test_a_tuple_result_is_shared_with_its_own_dictionaries_and_read_only_arrays():
    @memo.shared(4)
    def experiment(T):
        return {"curve": np.arange(T, dtype=float)}, "a caption"

    numbers, caption = experiment(3)
    again, _ = experiment(3)
    assert caption == "a caption" and again["curve"] is numbers["curve"]
    with pytest.raises(ValueError):
        numbers["curve"][0] = 1.0
    numbers["extra"] = 1
    assert "extra" not in experiment(3)[0]

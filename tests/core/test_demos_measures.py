"""The measures the lessons print (core/demos/measures.py): a row's entropy against a plain loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.attention import softmax
from core.demos import measures


def entropy_loop(row) -> float:
    return -sum(p * math.log2(p) for p in row if p > 0)


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

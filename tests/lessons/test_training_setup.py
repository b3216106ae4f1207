"""What a Training-page run starts from (lessons/training/setup.py): settings within the limits, the user's text
encoded once, and the fixed example the attention maps are drawn for."""

from __future__ import annotations

import numpy as np
import pytest

from core.tasks import SyntheticTask
from lessons.training import setup as setup

FAST = dict(corpus="copy", d_model=32, n_heads=2, n_layers=1, task_length=8, batch_size=16, lr=1e-2)
TEXT = "The quick brown fox jumps over the lazy dog. A stitch in time saves nine. " * 40  # ~3,000 characters


def settings(**changes) -> setup.Settings:
    return setup.Settings(**{**FAST, "steps": 50, **changes})


def test_the_users_text_is_encoded_once_per_text_and_context():
    memo = setup.TextMemo()
    a = memo.corpus(TEXT, 16)
    assert memo.corpus(TEXT, 16) is a
    assert memo.corpus(TEXT, 32) is not a and memo.corpus(TEXT.encode(), 32).context == 32


@pytest.mark.parametrize("changes", [
    dict(steps=2001), dict(d_model=128, n_heads=2), dict(n_layers=3), dict(context=65), dict(batch_size=64),
    dict(n_heads=3), dict(lr=0.0), dict(lr=1001.0), dict(lr=float("nan")), dict(corpus="wiki"), dict(steps=0),
])
def test_settings_beyond_the_limits_are_refused(changes):
    with pytest.raises(ValueError):
        settings(**changes)


def test_example_ids_are_fixed_and_text_examples_start_at_a_sentence():
    task = SyntheticTask("reverse", 5)
    np.testing.assert_array_equal(setup.example_ids(task), setup.example_ids(task))
    assert setup.example_ids(task).shape == (task.seq_len,)
    corpus = setup.TextMemo().corpus("x = [1, 2]\n    Hello there, friend. " * 100, 16)
    assert corpus.tokenizer.decode(setup.example_ids(corpus)) == "Hello there, fri"

"""The synthetic tasks (core/tasks.py): copy, reverse and induction sequences, their masks, validation sets
and baselines, and make_data."""

from __future__ import annotations

import numpy as np
import pytest

from core import tasks
from core.tokenize import CharTokenizer


@pytest.mark.parametrize("kind", tasks.TASKS)
def test_synthetic_task_sequences(kind):
    task = tasks.SyntheticTask(kind, length=6, n_symbols=10)
    batch = task.train_batch(np.random.default_rng(0), 50)
    T = task.seq_len
    assert batch.ids.shape == batch.targets.shape == batch.mask.shape == (50, T)
    assert batch.ids.max() < task.vocab_size and batch.ids.min() >= 1
    np.testing.assert_array_equal(batch.ids[:, 1:], batch.targets[:, :-1])
    np.testing.assert_array_equal(batch.mask[0], (np.arange(T) >= 6).astype(np.float32))
    # The expected key of each counted query holds exactly the token to predict: the pattern solves the task.
    keys = task.expected_keys()
    q = np.flatnonzero(keys >= 0)
    np.testing.assert_array_equal(batch.ids[:, keys[q]], batch.targets[:, q])
    first = batch.ids[:, :6]
    seq = np.concatenate([batch.ids, batch.targets[:, -1:]], axis=1)
    if kind == "copy":
        np.testing.assert_array_equal(seq[:, 7:], first)
    elif kind == "reverse":
        np.testing.assert_array_equal(seq[:, 7:], first[:, ::-1])
    else:
        np.testing.assert_array_equal(seq[:, 6:], first)
        assert all(len(set(row)) == 6 for row in first)  # distinct letters: the look-up is unambiguous
    assert task.tokenizer.decode(seq[0]).replace("|", "").isalpha()


def test_synthetic_task_validation_set_is_fixed_and_baseline_near_chance():
    task = tasks.SyntheticTask("copy")
    a, b = task.val_batches(64, 128), task.val_batches(64, 128)
    assert len(a) == 2 and all(np.array_equal(x.ids, y.ids) for x, y in zip(a, b))
    assert task.bigram_baseline() == pytest.approx(np.log(16), abs=0.05)  # a bigram cannot copy
    assert isinstance(task.tokenizer, CharTokenizer) and task.tokenizer.vocab_size == task.vocab_size


@pytest.mark.parametrize(("options", "match"), [
    ({"kind": "sort"}, "Unknown task"),
    ({"kind": "copy", "n_symbols": 30}, "n_symbols"),
    ({"kind": "induction", "length": 20, "n_symbols": 10}, "length"),
])
def test_synthetic_task_rejects_bad_options(options, match):
    with pytest.raises(ValueError, match=match):
        tasks.SyntheticTask(**options)


def test_make_data():
    assert isinstance(tasks.make_data("reverse", length=5), tasks.SyntheticTask)
    assert tasks.make_data("repeat", 32, 10, 16) == tasks.RepeatTask(32, 4, 10, 16)
    with pytest.raises(ValueError, match="Unknown data"):
        tasks.make_data("shakespeare")

"""The corpora: Python's documentation text, the user's own text, synthetic tasks, the bigram baseline."""

from __future__ import annotations

import string
import sys

import numpy as np
import pytest

from core import data as D
from core.tokenize import CharTokenizer


@pytest.fixture(scope="module")
def pydoc():
    try:
        return D.pydoc_text()
    except D.CorpusUnavailable:
        pytest.skip("this Python has no pydoc_data")


def test_pydoc_text_is_clean_ascii_prose(pydoc):
    assert 100_000 < len(pydoc) <= 400_000
    assert set(pydoc) <= set(string.printable) - set("\t\r\x0b\x0c")
    assert "\n\n\n" not in pydoc
    assert not any(set(line) <= set("*=-~^") and len(line) >= 3 for line in pydoc.split("\n"))  # no underlines
    assert 'The "if" statement' in pydoc
    paragraphs = [p for p in pydoc.split("\n\n") if p.strip()]
    assert len(paragraphs) == len(set(paragraphs)), "a paragraph repeated across topics would leak into validation"
    assert D.pydoc_text() == pydoc  # fixed: no randomness in the corpus


def test_pydoc_missing_raises_corpus_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # makes the import fail
    with pytest.raises(D.CorpusUnavailable, match="pydoc_data"):
        D.pydoc_text()


def test_pydoc_corpus_split_and_windows(pydoc):
    corpus = D.pydoc_corpus(context=32)
    n = len(corpus.train_ids) + len(corpus.val_ids)
    assert n == len(pydoc)
    assert len(corpus.val_ids) == int(n * D.VAL_FRACTION)
    assert corpus.tokenizer.decode(corpus.val_ids) == pydoc[len(corpus.train_ids):]
    batch = corpus.train_batch(np.random.default_rng(0), 5)
    assert batch.ids.shape == batch.targets.shape == (5, 32) and batch.mask is None
    np.testing.assert_array_equal(batch.ids[:, 1:], batch.targets[:, :-1])  # targets are the next characters
    again = corpus.train_batch(np.random.default_rng(0), 5)
    np.testing.assert_array_equal(batch.ids, again.ids)


def test_val_batches_cover_every_pair_once():
    text = "".join(string.ascii_lowercase[i % 7] for i in range(3000))
    corpus = D.text_corpus(text, context=10)
    batches = corpus.val_batches(batch_size=8)
    pairs = sum(b.ids.size for b in batches)
    assert pairs == (len(corpus.val_ids) - 1) // 10 * 10
    first = batches[0]
    np.testing.assert_array_equal(first.ids[0], corpus.val_ids[:10])
    np.testing.assert_array_equal(first.targets[0], corpus.val_ids[1:11])
    np.testing.assert_array_equal(first.ids[1], corpus.val_ids[10:20])
    assert sum(len(b.ids) for b in corpus.val_batches(max_windows=5)) == 5
    assert sum(len(b.ids) for b in corpus.val_batches(split="train", max_windows=7)) == 7
    with pytest.raises(ValueError, match="split"):
        corpus.val_batches(split="test")


def test_user_text_accepts_utf8_bytes_and_strings():
    text = "Il était une fois un petit chat.\r\n" * 100
    corpus = D.user_text_corpus(text.encode("utf-8"), context=16)
    assert corpus.name == "your text" and not corpus.truncated
    assert "é" in corpus.tokenizer.itos and "\r" not in corpus.tokenizer.itos
    assert D.user_text_corpus(text, context=16).vocab_size == corpus.vocab_size


@pytest.mark.parametrize(("data", "match"), [
    (b"", "empty"),
    ("   \n\t ", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("caf\u00e9 ".encode("latin-1") * 500, "UTF-8"),
    ("short text", "too short"),
    (12345, "string"),
])
def test_user_text_rejections_are_readable(data, match):
    with pytest.raises(ValueError, match=match):
        D.user_text_corpus(data, context=16)


def test_user_text_is_capped():
    corpus = D.user_text_corpus("abcdefghij" * 1000, context=8, max_chars=2000)
    assert corpus.truncated
    assert len(corpus.train_ids) + len(corpus.val_ids) == 2000


def test_bad_context():
    with pytest.raises(ValueError, match="context"):
        D.text_corpus("x" * 1000, context=0)


def test_bigram_baseline_matches_a_hand_count():
    # "abab...": after "a" always "b"; with add-one smoothing over V = 3 (unknown, a, b), P(b|a) = (n+1)/(n+3).
    corpus = D.text_corpus("ab" * 500, context=4)
    n_ab = np.sum((corpus.train_ids[:-1] == 1) & (corpus.train_ids[1:] == 2))
    n_ba = np.sum((corpus.train_ids[:-1] == 2) & (corpus.train_ids[1:] == 1))
    p_ab, p_ba = (n_ab + 1) / (n_ab + 3), (n_ba + 1) / (n_ba + 3)
    val = corpus.val_ids
    expected = -np.mean([np.log(p_ab if a == 1 else p_ba) for a in val[:-1]])
    assert corpus.bigram_baseline() == pytest.approx(expected)


def test_pydoc_bigram_baseline_beats_uniform(pydoc):
    corpus = D.pydoc_corpus(64)
    assert 2.0 < corpus.bigram_baseline() < 0.7 * np.log(corpus.vocab_size)


@pytest.mark.parametrize("kind", D.TASKS)
def test_synthetic_task_sequences(kind):
    task = D.SyntheticTask(kind, length=6, n_symbols=10)
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
    task = D.SyntheticTask("copy")
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
        D.SyntheticTask(**options)


def test_make_data():
    assert isinstance(D.make_data("reverse", length=5), D.SyntheticTask)
    with pytest.raises(ValueError, match="Unknown data"):
        D.make_data("shakespeare")

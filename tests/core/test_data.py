"""The text corpora: Python's documentation text, any string in windows, the bigram baseline."""

from __future__ import annotations

import string
import sys

import numpy as np
import pytest

from core import data as D


@pytest.fixture(scope="module")
def pydoc():
    return D.pydoc_text()  # shipped with the app (tests/core/test_same_numbers_everywhere.py checks the file)


def test_pydoc_text_is_clean_ascii_prose(pydoc):
    assert 100_000 < len(pydoc) <= 400_000
    assert set(pydoc) <= set(string.printable) - set("\t\r\x0b\x0c")
    assert "\n\n\n" not in pydoc
    assert not any(set(line) <= set("*=-~^") and len(line) >= 3 for line in pydoc.split("\n"))  # no underlines
    assert 'The "if" statement' in pydoc
    paragraphs = [p for p in pydoc.split("\n\n") if p.strip()]
    assert len(paragraphs) == len(set(paragraphs)), "a paragraph repeated across topics would leak into validation"
    assert D.pydoc_text() == pydoc  # fixed: no randomness in the corpus


def test_build_pydoc_text_cleans_and_dedupes_topics():
    topics = {
        "b-topic": "The \u201cif\u201d statement\n***************\n\nShared paragraph.\n\n\n\n"
                   "Tabs\there \u2014 ok\u2026",
        "a-topic": "Shared paragraph.\n\nRelated help topics: b-topic\n\nFirst.\r",
        "operator-summary": "+ - * / a table, left out",
    }
    text = D.build_pydoc_text(topics)
    # sorted by name, the repeated paragraph kept once (where it first appears), underline and cross-links gone
    assert text == 'Shared paragraph.\n\nFirst.\n\nThe "if" statement\n\nTabs    here -- ok...'
    assert D.build_pydoc_text(topics, max_chars=10) == text[:10]


def test_the_corpus_does_not_depend_on_this_pythons_pydoc_data(monkeypatch, pydoc):
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)  # makes the import fail
    assert D.pydoc_text() == pydoc


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


def test_bad_context():
    with pytest.raises(ValueError, match="context"):
        D.text_corpus("x" * 1000, context=0)


def test_too_short_states_the_numbers_and_nothing_for_a_user_to_click():
    """The validation split (the last 10%) must hold 2 windows of context + 1: 2 * 17 / 0.1 = 340 characters."""
    D.text_corpus("x" * 340, context=16)
    with pytest.raises(D.TextTooShort) as caught:
        D.text_corpus("x" * 339, context=16)
    err = caught.value
    assert isinstance(err, ValueError) and (err.length, err.needed, err.context) == (339, 340, 16)
    assert "at least 340 characters" in str(err) and "has 339" in str(err)
    assert not any(word in str(err).lower() for word in ("paste", "upload", "choose"))


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


def test_moved_names_live_only_in_their_new_modules():
    """No re-exports: the tasks are imported from core.tasks, the upload policy from lessons/training/upload.py."""
    moved = ("TASKS", "SyntheticTask", "RepeatTask", "induction_keys", "make_data", "task_bigram_baseline",
             "fixed_batches", "user_text_corpus", "MAX_USER_CHARS")
    assert [name for name in moved if hasattr(D, name)] == []

"""The next-token task as (context -> target) pairs: y is x shifted by one, in the core and on the bigram page,
and the page's control for how many pairs it lists, bound to the link."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import pydoc_text
from core.tokenize import CharTokenizer
from lessons.bigram.maths import context_target_pairs, held_out_split, same_last_other_target
from tests.apptest_helpers import captions, ok, run_page, shown_tables, texts

PAGE = "lessons/bigram/page.py"
OWN = "Your own text"
COLUMNS = ["t", "context x[0..t]", "bigram reads x[t]", "target y[t]"]
VISIBLE = {" ": "␣", "\n": "⏎"}


def visible(text: str) -> str:
    return "".join(VISIBLE.get(c, c) for c in text)


# ---- the core ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 9, 50])
def test_targets_are_x_shifted_by_one(n):
    ids = np.array([5, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    p = context_target_pairs(ids, n)
    m = min(n, ids.size - 1)
    np.testing.assert_array_equal(p["x"], ids[:m])
    np.testing.assert_array_equal(p["y"], ids[1:m + 1])
    np.testing.assert_array_equal(p["y"][:-1], p["x"][1:])  # each target is the next position's last character
    for t, context in enumerate(p["contexts"]):  # against a plain loop
        assert context.tolist() == ids[: t + 1].tolist() and context[-1] == p["x"][t]


def test_a_text_of_n_characters_holds_n_minus_1_pairs():
    assert len(context_target_pairs(np.arange(4), 100)["y"]) == 3


@pytest.mark.parametrize("ids", [np.array([3]), np.zeros((2, 2), dtype=int)])
def test_too_short_text_is_refused(ids):
    with pytest.raises(ValueError, match="at least 2 tokens"):
        context_target_pairs(ids, 4)


@pytest.mark.parametrize("n", [0, -1, 2.5])
def test_bad_count_is_refused(n):
    with pytest.raises(ValueError, match="number of pairs"):
        context_target_pairs(np.arange(5), n)


def test_clash_finds_same_last_character_other_target():
    ids = np.array(["abn".index(c) for c in "banana"])  # b->a, a->n, n->a, a->n, n->a: no clash
    assert same_last_other_target(ids[:-1], ids[1:]) is None
    ids = np.array(["ehlo".index(c) for c in "hello"])  # l->l at 2, l->o at 3
    assert same_last_other_target(ids[:-1], ids[1:]) == (2, 3)
    assert context_target_pairs(ids, 4)["clash"] == (2, 3)


# ---- the page ------------------------------------------------------------------------------------------------


def pairs_table(at):
    return next(table for table in shown_tables(at) if list(table.columns) == COLUMNS)


def assert_pairs_of(at, text: str, n: int):
    """The table lists the first n pairs of text (the fitted part), drawn as the page draws characters."""
    table = pairs_table(at)
    assert len(table) == n
    assert table["t"].tolist() == list(range(n))
    assert table["context x[0..t]"].tolist() == [visible(text[: t + 1]) for t in range(n)]
    assert table["bigram reads x[t]"].tolist() == [visible(text[t]) for t in range(n)]
    assert table["target y[t]"].tolist() == [visible(text[t + 1]) for t in range(n)]


@pytest.fixture(scope="module")
def default_page():
    return ok(run_page(PAGE))


def test_default_pairs_are_the_documentation(default_page):
    at = default_page
    assert at.slider(key="bigram_pairs").value == 12
    assert_pairs_of(at, pydoc_text(), 12)
    shown = texts(at)
    assert "The task: (context → target) pairs" in shown and "The first 12 of this text" in shown
    # the documentation opens 'The "assert" ...': after "as", s is followed by s and then by e
    assert "At positions 6 and 7 that character is the same, `s`, but the targets differ: `s`, then `e`" in captions(at)
    assert "up to 64 characters" in captions(at)


def test_slider_sets_how_many(default_page):
    at = default_page
    at.slider(key="bigram_pairs").set_value(3).run()
    ok(at)
    assert_pairs_of(at, pydoc_text(), 3)
    assert "A bigram model answers each question from the third column alone" in captions(at)
    assert "At positions" not in captions(at)  # no two of "The" share a last character


def test_own_text_pairs():
    text = "hello there"
    at = ok(run_page(PAGE, {"bg_source": OWN, "bg_text": text, "bigram_pairs": "32"}))
    tok = CharTokenizer.fit(text)
    fit, _ = held_out_split(tok.encode(text))
    assert_pairs_of(at, text, len(fit) - 1)  # only as many pairs as the fitted text holds
    assert "At positions 2 and 3 that character is the same, `l`" in captions(at)


@pytest.mark.parametrize(("raw", "used", "says"), [("abc", 12, "not a number"), ("9999", 32, "1 to 32"),
                                                   ("-4", 1, "1 to 32"), ("inf", 32, "1 to 32"), ("2.7", 2, "")])
def test_hostile_link_values(raw, used, says):
    at = ok(run_page(PAGE, {"bigram_pairs": raw}))
    assert at.slider(key="bigram_pairs").value == used
    notes = "\n".join(str(i.value) for i in at.info)
    if says:
        assert "bigram_pairs" in notes and says in notes
    assert_pairs_of(at, pydoc_text(), used)

"""Tables of numbers as Markdown (ui/drawing/tables.py): each heading and cell where it belongs, whatever a student
typed into it, numbers right-aligned, and read back as written."""

from __future__ import annotations

import re

import numpy as np
import pytest
from markdown_it import MarkdownIt

from tests.apptest_helpers import markdown_tables, shown_table
from ui.drawing import tables

GFM = MarkdownIt("commonmark").enable("table")  # a parser of the Markdown Streamlit draws: GitHub's tables
TYPED = ["a|b", "<script>alert(1)</script>", "*x* $y$ :red[z]", "back\\", "[l](javascript:x)", "- item", ""]


def cells(html: str, tag: str) -> list[str]:
    return re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", html, re.S)


def test_every_cell_stays_in_its_column_and_shows_what_was_typed():
    """A browser's parse has one row per row and one cell per column, with the typed text shown as typed: a "|"
    starts no new cell, "<script>" is text, "*x*" no emphasis, "$y$" no formula, a trailing backslash escapes
    nothing after it."""
    values = np.linspace(-1, 1, len(TYPED))
    html = GFM.render(tables.markdown({"token": TYPED, "weight": values}, {"weight": "%.3f"}))
    assert cells(html, "th") == ["token", "weight"]
    body = cells(html, "td")
    assert len(body) == 2 * len(TYPED)
    shown = [re.sub("&lt;", "<", re.sub("&gt;", ">", cell)) for cell in body[::2]]
    assert shown == TYPED
    assert body[1::2] == [f"{v:.3f}" for v in values]
    assert "<script" not in html and "<em>" not in html and "<a " not in html


def test_the_first_column_names_the_rows_and_the_numbers_are_right_aligned():
    html = GFM.render(tables.markdown({"row": ["a", "b"], "x": [1.5, 2.25], "y": [3, 4]}, {"x": "%.2f"}))
    aligned = re.findall(r'<t[hd] style="text-align:(\w+)"', html)
    assert aligned == ["left", "right", "right"] * 3


@pytest.mark.parametrize("number_format, value, printed", [("%.3f", -0.1234, "-0.123"), ("localized", 12345, "12,345"),
                                                          ("percent", 0.25, "25%"), ("%.3g", float("-inf"), "-inf")])
def test_numbers_are_printed_as_their_column_says(number_format, value, printed):
    frame = tables.read(tables.markdown({"name": ["a"], "n": [value]}, {"n": number_format}))
    assert frame.to_dict("list") == {"name": ["a"], "n": [printed]}


def test_read_gives_back_what_markdown_wrote_and_nothing_else():
    written = tables.markdown({"token": TYPED, "n": list(range(len(TYPED)))}, {})
    frame = tables.read(written)
    assert list(frame.columns) == ["token", "n"]
    assert [re.sub(r"\\(.)", r"\1", t) for t in frame["token"]] == TYPED
    assert frame["n"].tolist() == [str(i) for i in range(len(TYPED))]
    for prose in ("| not a table", "A line\n| with a bar |", "**Tokens:** `a` · `b`", ""):
        assert tables.read(prose) is None
    assert tables.markdown({}, {}) == ""


def test_a_page_draws_its_tables_as_markdown():
    """QKV's worked example (the picked query's weights and values) is a Markdown table on the page, read back as
    numbers whose weights sum to 1."""
    from tests.apptest_helpers import ok, run_page

    at = ok(run_page("lessons/qkv/page.py"))
    assert markdown_tables(at) and not at.table
    weights = shown_table(at, "value row")["weight"]
    assert weights.iloc[-1] == pytest.approx(weights.iloc[:-1].sum(), abs=0.01)

"""A count of one reads as one: "After its one block", "1 head vs 1 head", never "1 blocks" or "all 1 rows".

Each page of the sentence lessons is run on a one-token sentence (and one head, one block of keys), where every
count in its prose that follows the sentence is 1."""

from __future__ import annotations

import re

import pytest

from tests.apptest_helpers import ok, run_page, texts
from ui.text import counted, every

ONE_TOKEN = "Hello"
# "1 heads", "all 1 rows", "1 value rows": a 1 (not part of a larger number or a decimal) before a plural
PLURAL_AFTER_ONE = re.compile(r"(?<![\d.,])\b1 (?:value )?(blocks|heads|layers|keys|rows|tokens|queries|messages|"
                              r"characters|letters|steps)\b")

PAGES = {
    "lessons/qkv/page.py": {},
    "lessons/scaling/page.py": {},
    "lessons/masking/page.py": {},
    "lessons/multi_head/page.py": {"heads": "1"},
    "lessons/communication/page.py": {},
    "lessons/tiles/page.py": {"tl_block": "1"},
}


def test_counted_and_every_say_one_in_the_singular():
    assert counted(1, "head") == "1 head" and counted(3, "head") == "3 heads"
    assert counted(1, "query", "queries") == "1 query" and counted(2, "query", "queries") == "2 queries"
    assert every(1, "row") == "the one row" and every(7, "row") == "all 7 rows"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_plural_after_a_count_of_one(page):
    at = ok(run_page(page, {"text": ONE_TOKEN, **PAGES[page]}))
    shown = texts(at) + "\n" + "\n".join(str(m.label) for m in at.metric)
    assert "Tokens:** `Hello`" in shown  # the page did run on the one-token sentence
    assert not PLURAL_AFTER_ONE.findall(shown), [m.group(0) for m in PLURAL_AFTER_ONE.finditer(shown)]


def test_tiles_one_block_says_so():
    at = ok(run_page("lessons/tiles/page.py", {"text": ONE_TOKEN, "tl_block": "1"}))
    success = "\n".join(str(s.value) for s in at.success)
    assert "After its one block the tiled output equals the full softmax" in success, success
    assert "one tile of 1 query by 1 key" in texts(at)

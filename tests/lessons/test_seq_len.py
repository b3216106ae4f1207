"""The first sidebar slider, seq_len, on the six sentence lessons: it runs to the text's length, so at the
defaults any move of it changes what is drawn (a range of 1 to 32 over the 7-token default sentence left 25 of
its places doing nothing); a link's seq_len above the text's length still means all of it; a slider left at the
end of a text follows a longer one."""

from __future__ import annotations

import pytest

from core.tokenize import word_tokens
from tests.apptest_helpers import chart_subtitles, ok, run_page, texts
from ui.state.controls import DEFAULT_TEXT

PAGES = ["lessons/qkv/page.py", "lessons/scaling/page.py", "lessons/masking/page.py", "lessons/multi_head/page.py",
         "lessons/communication/page.py", "lessons/tiles/page.py"]
T = len(word_tokens(DEFAULT_TEXT))  # 7
LONG = " ".join(f"w{i}" for i in range(20))  # 20 tokens


def slider(at):
    return at.sidebar.slider(key="seq_len")


def drawn(at) -> tuple:
    """What the page shows that follows the tokens: the tokens line and every chart's shape line."""
    tokens = next(str(m.value) for m in at.markdown if str(m.value).startswith("**Tokens:**"))
    return tokens, tuple(chart_subtitles(at))


@pytest.mark.parametrize("page", PAGES)
def test_at_the_defaults_a_move_of_seq_len_changes_what_is_drawn(page):
    at = ok(run_page(page))
    assert (slider(at).min, slider(at).max, slider(at).value) == (1, T, T)  # every place of it is a sentence
    before = drawn(at)
    assert before[0].count("`") == 2 * T
    ok(slider(at).set_value(T - 1).run())
    after = drawn(at)
    assert after[0].count("`") == 2 * (T - 1)  # one token fewer on the tokens line
    assert after[1] != before[1]  # and in the charts' shapes
    assert f"({T - 1}, " in " ".join(after[1]) and f"Showing the first {T - 1} of {T} tokens" in texts(at)


def test_a_link_above_the_text_length_means_all_of_it_without_a_note():
    linked, plain = ok(run_page(PAGES[0], {"seq_len": "16"})), ok(run_page(PAGES[0]))
    assert slider(linked).value == T and drawn(linked) == drawn(plain)
    assert not [i.value for i in linked.info if "seq_len" in str(i.value)]
    assert "seq_len" not in linked.query_params  # the address bar reads as what is drawn: the default


def test_a_link_outside_the_range_is_clamped_with_a_note():
    at = ok(run_page(PAGES[0], {"seq_len": "0"}))
    assert slider(at).value == 1
    assert any("seq_len" in str(i.value) for i in at.info)


def test_a_slider_at_the_end_follows_a_longer_text_and_a_moved_one_stays():
    at = ok(run_page(PAGES[0]))
    ok(at.sidebar.text_area(key="text").set_value(LONG).run())
    assert (slider(at).max, slider(at).value) == (20, 16)  # at the end of 7: the default on a longer text
    ok(slider(at).set_value(5).run())
    ok(at.sidebar.text_area(key="text").set_value(DEFAULT_TEXT).run())
    assert (slider(at).max, slider(at).value) == (T, 5)  # moved by the student: kept
    ok(at.sidebar.text_area(key="text").set_value("a b c").run())
    assert (slider(at).max, slider(at).value) == (3, 3)  # cut to the shorter text


def test_a_one_token_text_has_no_slider():
    at = ok(run_page(PAGES[0], {"text": "Hello"}))
    assert not [s for s in at.sidebar.slider if s.key == "seq_len"]
    assert "**Tokens:** `Hello`" in texts(at)

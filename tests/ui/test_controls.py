"""ui/state/controls.py through AppTest: a tiny script that draws every shared control, driven by URL values."""

from __future__ import annotations

import re
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import ROOT
from ui.state import controls

SCRIPT = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(ROOT)!r})
    import streamlit as st
    from ui.state import controls, seq_len

    text = controls.input_text()
    n = seq_len.seq_len(40)  # a text of 40 tokens: the slider runs from 1 to 32
    D = controls.d_model()
    h = controls.heads(D)
    dk = controls.d_k()
    s = controls.seed()
    u = controls.sampling_temperature()
    controls.show_url_notes()
    st.session_state["result"] = dict(text=text, seq_len=n, d_model=D, heads=h, d_k=dk, seed=s, sample_temp=u)
""")

DEFAULTS = {"text": controls.DEFAULT_TEXT, "seq_len": 16, "d_model": 16, "heads": 2, "d_k": 8, "seed": 0,
            "sample_temp": 1.0}
# (lo, hi) of each numeric control as the script above draws it
RANGES = {"seq_len": (1, 32), "d_k": (1, 64), "seed": (0, 999), "sample_temp": (0.0, 3.0)}


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "controls_app.py"
    path.write_text(SCRIPT)
    return path


def run(script, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(script), default_timeout=30)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def result(at: AppTest) -> dict:
    return at.session_state["result"]


def notes(at: AppTest) -> list[str]:
    return [str(el.value) for el in at.info]


def test_defaults_without_a_link(script):
    at = run(script)
    assert result(at) == DEFAULTS
    assert notes(at) == []


def test_url_values_in_range_are_used(script):
    query = {"seq_len": "5", "d_model": "32", "heads": "4", "d_k": "20", "seed": "7", "sample_temp": "0.25",
             "text": "hello world"}
    at = run(script, query)
    assert result(at) == {"text": "hello world", "seq_len": 5, "d_model": 32, "heads": 4, "d_k": 20, "seed": 7,
                          "sample_temp": 0.25}
    assert notes(at) == []
    # the widgets show the same values the script got
    assert at.sidebar.slider(key="d_k").value == 20
    assert at.sidebar.select_slider(key="heads").value == 4


@pytest.mark.parametrize("key", list(RANGES))
@pytest.mark.parametrize("side", ["low", "high"])
def test_out_of_range_numbers_clamp_with_a_message(script, key, side):
    lo, hi = RANGES[key]
    raw = "-5" if side == "low" else "100000"
    at = run(script, {key: raw})
    expected = lo if side == "low" else hi
    assert result(at)[key] == expected
    [note] = notes(at)
    assert key in note
    assert f"{lo} to {hi}" in note
    assert f"{expected} is used" in note


@pytest.mark.parametrize("key", ["seq_len", "d_k", "seed", "sample_temp", "d_model", "heads"])
@pytest.mark.parametrize("raw", ["abc", "nan", "", "1,5"])
def test_non_numbers_fall_back_to_default(script, key, raw):
    at = run(script, {key: raw})
    assert result(at)[key] == DEFAULTS[key]
    [note] = notes(at)
    assert key in note and "not a number" in note and str(DEFAULTS[key]) in note


def test_the_two_temperatures_are_separate_settings(script):
    """Attention's τ (Scaling's weights map, attn_temp) and sampling's temperature (Full model) have a key each: a
    link that sets τ leaves sampling as it was, so τ = 0 on Scaling never turns generation greedy."""
    at = run(script, {"attn_temp": "0"})
    assert result(at)["sample_temp"] == 1.0
    at.slider(key="sample_temp").set_value(2.0).run()
    assert result(at)["sample_temp"] == 2.0


def test_inf_clamps_to_the_top(script):
    at = run(script, {"seq_len": "inf", "seed": "-inf"})
    assert result(at)["seq_len"] == 32 and result(at)["seed"] == 0
    assert len(notes(at)) == 2


def test_fraction_for_an_integer_slider_says_what_is_used(script):
    """The message names the value the slider really shows."""
    at = run(script, {"d_k": "2.6"})
    used = result(at)["d_k"]
    assert isinstance(used, int) and 2 <= used <= 3
    assert at.sidebar.slider(key="d_k").value == used
    [note] = notes(at)
    assert f"so {used} is used" in note


@pytest.mark.parametrize(("d_model", "heads", "snapped"), [("16", "7", 8), ("12", "5", 4), ("16", "3", 2),
                                                           ("128", "100", 128), ("4", "0", 1)])
def test_heads_that_do_not_divide_snap_to_a_divisor(script, d_model, heads, snapped):
    at = run(script, {"d_model": d_model, "heads": heads})
    r = result(at)
    assert r["d_model"] == int(d_model)
    assert r["heads"] == snapped
    assert r["d_model"] % r["heads"] == 0
    [note] = notes(at)
    assert "heads" in note and f"using {snapped}" in note


def test_d_model_not_offered_snaps_to_the_nearest(script):
    at = run(script, {"d_model": "13"})
    assert result(at)["d_model"] == 12
    assert result(at)["d_model"] % result(at)["heads"] == 0
    [note] = notes(at)
    assert "d_model" in note and "using 12" in note


def test_repeated_and_unknown_keys_are_harmless(script):
    at = run(script, {"seq_len": ["3", "4"], "foo": "bar", "utm_source": "x", "embed": "true"})
    r = result(at)
    assert r["seq_len"] in (3, 4)
    assert {k: v for k, v in r.items() if k != "seq_len"} == {k: v for k, v in DEFAULTS.items() if k != "seq_len"}
    assert notes(at) == []


def test_long_text_is_cut_with_a_message(script):
    raw = "word " * 1000  # 5000 characters
    at = run(script, {"text": raw})
    assert result(at)["text"] == raw[: controls.MAX_TEXT_CHARS]
    [note] = notes(at)
    assert str(len(raw)) in note and str(controls.MAX_TEXT_CHARS) in note


def test_text_at_the_limit_has_no_message(script):
    raw = "a" * controls.MAX_TEXT_CHARS
    at = run(script, {"text": raw})
    assert result(at)["text"] == raw
    assert notes(at) == []


UNESCAPED_LINK = re.compile(r"(?<!\\)[\[\]<>]")


@pytest.mark.parametrize("key", ["seq_len", "d_model", "heads"])
@pytest.mark.parametrize("raw", ["[click](http://evil.example)", "<img src=x onerror=alert(1)>",
                                 "**bold** _it_ `code`", ":red[alarm]"])
def test_markup_in_url_values_is_escaped(script, key, raw):
    at = run(script, {key: raw})
    [note] = notes(at)
    # the rendered markdown keeps its backslash escapes: no link, no tag, no directive can form
    assert not UNESCAPED_LINK.search(note), note
    assert "](" not in note.replace("\\](", "")
    if "[" in raw:
        assert "\\[" in note
    if "<" in raw:
        assert "\\<" in note
    assert result(at)[key] == DEFAULTS[key]


def test_escaped_value_in_an_out_of_range_message(script):
    at = run(script, {"seed": "1e9"})
    [note] = notes(at)
    assert "999 is used" in note
    at = run(script, {"d_k": "-3"})
    [note] = notes(at)
    assert "\\-3" in note  # a leading '-' would start a markdown list item


def test_messages_are_shown_once(script):
    at = run(script, {"seq_len": "abc"})
    assert len(notes(at)) == 1
    at.sidebar.slider(key="seed").set_value(3).run()
    assert notes(at) == []
    assert result(at)["seed"] == 3 and result(at)["seq_len"] == 16


def test_changing_d_model_snaps_heads(script):
    at = run(script)
    at.sidebar.select_slider(key="heads").set_value(16).run()
    assert result(at)["heads"] == 16
    at.sidebar.select_slider(key="d_model").set_value(12).run()  # 16 does not divide 12
    assert not at.exception
    r = result(at)
    assert r["d_model"] == 12 and 12 % r["heads"] == 0
    assert at.sidebar.select_slider(key="heads").options == ["1", "2", "3", "4", "6", "12"]
    at.sidebar.select_slider(key="d_model").set_value(128).run()  # 12 does not divide 128
    assert not at.exception
    r = result(at)
    assert r["d_model"] == 128 and 128 % r["heads"] == 0
    at.sidebar.select_slider(key="d_model").set_value(4).run()
    assert not at.exception
    assert result(at)["heads"] in (1, 2, 4)


def test_every_d_model_offers_only_divisors(script):
    at = run(script)
    for width in controls.d_model.__defaults__[0]:
        at.sidebar.select_slider(key="d_model").set_value(width).run()
        assert not at.exception
        options = [int(o) for o in at.sidebar.select_slider(key="heads").options]
        assert options and all(width % h == 0 for h in options)
        assert result(at)["heads"] in options


def test_widgets_move_freely_after_a_link(script):
    at = run(script, {"d_k": "99999", "heads": "7"})
    at.sidebar.slider(key="d_k").set_value(33).run()
    assert result(at)["d_k"] == 33
    at.sidebar.text_area(key="text").set_value("new words").run()
    assert result(at)["text"] == "new words"
    assert not at.exception


# ---- the other controls: a switch, a choice of names, a short text, a number box ----------------------------

OTHERS = textwrap.dedent(f"""
    import sys
    sys.path.insert(0, {str(ROOT)!r})
    import streamlit as st
    from ui.state import controls

    hi = st.session_state.get("_hi", 512)  # a test sets 64 to play another page with a narrower range
    result = dict(d_k=controls.d_k(hi=hi, default=64), on=controls.toggle("on", "On", default=True),
                  pick=controls.option("pick", "Pick", ["a", "b", "c"], default="b"),
                  word=controls.text("word", "Word", "dog", max_chars=5),
                  length=controls.number_box("length", "Length", 1, 1000, 100, step=10))
    controls.show_url_notes()
    st.session_state["result"] = result
""")
OTHER_DEFAULTS = {"d_k": 64, "on": True, "pick": "b", "word": "dog", "length": 100}


@pytest.fixture
def others(tmp_path):
    path = tmp_path / "others_app.py"
    path.write_text(OTHERS)
    return path


def test_other_controls_at_their_defaults(others):
    at = run(others)
    assert result(at) == OTHER_DEFAULTS
    assert notes(at) == []
    # the widgets' own defaults are the controls' defaults, so the binding drops exactly these from the URL
    assert list(at.sidebar.slider(key="d_k").proto.default) == [64]
    assert at.sidebar.toggle(key="on").proto.default is True
    assert at.sidebar.radio(key="pick").proto.default == 1
    assert at.sidebar.text_input(key="word").proto.default == "dog"
    assert at.sidebar.number_input(key="length").proto.default == 100


@pytest.mark.parametrize(("raw", "on"), [("yes", True), (" ON ", True), ("1", True), ("TRUE", True),
                                         ("no", False), ("off", False), ("0", False), ("False", False)])
def test_switch_words(others, raw, on):
    at = run(others, {"on": raw})
    assert result(at)["on"] is on
    assert at.sidebar.toggle(key="on").value is on
    assert notes(at) == []


def test_switch_word_not_understood_means_the_default(others):
    at = run(others, {"on": "maybe"})
    assert result(at)["on"] is True
    assert notes(at) == ["The link set on to “maybe”; use true or false. Using True."]


def test_name_not_offered_means_the_default(others):
    at = run(others, {"pick": "z"})
    assert result(at)["pick"] == "b"
    [note] = notes(at)
    assert "pick" in note and "not available here" in note and "using b" in note
    at = run(others, {"pick": "c"})
    assert result(at)["pick"] == "c" and notes(at) == []


def test_long_word_is_cut_with_a_message(others):
    at = run(others, {"word": "abcdefgh"})
    assert result(at)["word"] == "abcde"
    assert notes(at) == ["The link's word was 8 characters long; only the first 5 are kept."]


@pytest.mark.parametrize(("raw", "used", "says"), [
    ("250", 250, None), ("inf", 1000, "so 1000 is used"), ("-1e400", 1, "so 1 is used"),
    ("9" * 400, 1000, "so 1000 is used"), ("abc", 100, "not a number; using 100"), ("nan", 100, "not a number")])
def test_number_box_clamps_like_a_slider(others, raw, used, says):
    at = run(others, {"length": raw})
    assert result(at)["length"] == used and isinstance(result(at)["length"], int)
    assert [says in note for note in notes(at)] == ([] if says is None else [True])


def test_a_value_from_a_page_with_a_wider_range_is_clamped(others):
    """The same setting on two pages with different ranges: the value carried over is made to fit, silently."""
    at = run(others)
    at.sidebar.slider(key="d_k").set_value(300).run()
    assert result(at)["d_k"] == 300
    at.session_state["_hi"] = 64
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert result(at)["d_k"] == 64 and at.sidebar.slider(key="d_k").value == 64
    assert notes(at) == []


def test_every_bad_link_value_at_once_shows_no_traceback(others):
    at = run(others, {"d_k": "1e309", "on": "<b>", "pick": "[x](y)", "word": "", "length": "-inf"})
    assert result(at) == {"d_k": 512, "on": True, "pick": "b", "word": "", "length": 1}
    assert len(notes(at)) == 4

"""Sharing a view: the link and the settings file reproduce it exactly; bad files change nothing.

On every lesson a few widgets are moved by hand, then the link in the share panel is opened as a new
session (its query string as the URL) and the settings file is loaded into another: both must draw
the same numbers in every chart as the original view.

The share panel is filled only while open: these tests open it (run_page(..., opened=[share.OPEN_KEY]),
as a click on "Share this view" would); test_closed_share_panel_draws_nothing checks the closed one.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from lessons import COURSE
from tests.apptest_helpers import (
    asides,
    chart_control_widgets,
    chart_data,
    chart_title,
    charts,
    numbered_title,
    ok,
    run_app,
    run_page,
)
from ui.frame import share

LESSONS = {lesson.url_path: lesson for lesson in COURSE}
SETTINGS_FILE = "attention-lab-view.json"
# Widgets that are no view setting: the share panel's own, the export pick, and a guess being typed (an answer;
# the puzzle it answers is in the link as fm_puzzle)
NOT_SETTINGS = {"share_upload", "share_download", "export_pick", "fm_guess_text"}

# Widgets moved by hand on each lesson, step by step (a later step's options can depend on an earlier one).
MOVES = {
    "block": [{"block_prompt": "def f(x): return x", "block_layer": 2, "block_pos": 5, "block_depth": 24, "seed": 3}],
    "qkv": [{"text": "I saw the saw", "seq_len": 3, "d_model": 8, "d_k": 5, "seed": 11}],
    "scaling": [{"scaling_d_v_open": True},  # the √d_v mistake opened, then its slider moved
                {"text": "a cat", "d_k": 128, "scaling_on": False, "seed": 5, "attn_temp": 0.5, "scaling_d_v": 8,
                 "scaling_T": 8, "scaling_trials": 10}],
    "masking": [{"text": "one two three four five six", "seq_len": 5, "d_k": 4, "masking_pos": 2,
                 "masking_word": "bird", "seed": 3}],
    "multi-head": [{"d_model": 24}, {"heads": 4, "mh_causal": True, "seed": 2, "text": "the dog saw the cat"},
                   {"mh_head": 3}],
    "model": [{"fm_prompt": "To be or not", "sample_temp": 0.5, "seed": 7, "fm_compare": True, "fm_top_k": 5,
               "fm_n_chars": 20, "fm_length": 100_000, "fm_bytes": 4}],
    "training": [{"tr_d_model": 16}, {"tr_heads": 4, "tr_steps": 100, "tr_batch": 8, "seed": 3}],
    "communication": [{"comm_one": "the river bank was wet", "comm_two": "the bank lent money", "comm_word": "bank",
                       "comm_shuffle": 7, "comm_positions": True, "comm_keep": 0.8, "seed": 4}],
    "tiles": [{"tl_block": 3, "tl_step": 2, "tl_causal": False, "tl_length": 8192, "tl_mem_block": 64,
               "tl_bytes": 2, "seed": 6}],
    "bigram": [{"bg_top": 20, "bg_alpha": 0.5, "bg_length": 50, "seed": 9}],
    "circuit": [{"ci_length": 12, "seed": 5, "ci_off": "layer 2 · head 2", "ci_off_mode": "mean"},
                {"ci_source": "typed", "ci_text": "BQMNOPWBQMNOPW"}],
    "ladder": [{"ld_unit": "bits", "ld_gap_rung": "+ residuals", "ld_rung": "more blocks",
                "ld_prompt": "def f(x): return x", "ld_train_rung": "several heads", "ld_train_steps": 500,
                "seed": 4}],
}
WIDGET_KINDS = ("slider", "select_slider", "toggle", "text_area", "text_input", "selectbox", "number_input", "radio")



def widget(at: AppTest, key: str):
    """The control with this key: a widget, an aside (open or shut), or a control a chart draws itself."""
    for kind in WIDGET_KINDS:
        for w in getattr(at, kind):
            if w.key == key:
                return w
    if key in (found := asides(at)):
        return found[key]
    if key in (own := chart_control_widgets(at)):
        return own[key]
    raise AssertionError(f"no widget with key {key!r}")


def move(at: AppTest, lesson: str) -> AppTest:
    for step in MOVES[lesson]:
        for key, value in step.items():
            widget(at, key).set_value(value)
        ok(at.run())
    for step in MOVES[lesson]:
        for key, value in step.items():
            assert widget(at, key).value == value, (key, widget(at, key).value, value)
    return at


def run_shared(page: str, query: dict | None = None) -> AppTest:
    """The page with its share panel open."""
    return ok(run_page(page, query, opened=[share.OPEN_KEY]))


def link(at: AppTest) -> str:
    codes = [str(c.value) for c in at.sidebar.code]
    assert len(codes) == 1, codes
    return codes[0]


def query(link_text: str) -> dict:
    return parse_qs(urlsplit(link_text).query, keep_blank_values=True)


def view(at: AppTest) -> dict:
    """What the user sees: every chart's data (by position and title) and every keyed setting's value."""
    drawn = [(chart_title(c), chart_data(c)) for c in charts(at)]
    settings = {}
    for kind in WIDGET_KINDS:
        for w in getattr(at, kind):
            if w.key and w.key not in NOT_SETTINGS and not w.key.startswith(("ex_", "FormSubmitter")):
                settings[w.key] = w.value
    settings.update({key: c.value for key, c in chart_control_widgets(at).items()})
    return {"charts": drawn, "settings": settings}


def assert_same_view(got: AppTest, want: AppTest) -> None:
    a, b = view(got), view(want)
    assert a["settings"] == b["settings"]
    assert [t for t, _ in a["charts"]] == [t for t, _ in b["charts"]]
    for (title, x), (_, y) in zip(a["charts"], b["charts"]):
        pd.testing.assert_frame_equal(x, y, obj=title)


@pytest.fixture
def downloads(monkeypatch):
    """The files the page's download buttons would hand out, by file name (static data only)."""
    files = {}
    real = MediaFileManager.add

    def add(self, data, mimetype, coordinates, file_name=None, is_for_static_download=False):
        if file_name:
            files[file_name] = data
        return real(self, data, mimetype, coordinates, file_name=file_name,
                    is_for_static_download=is_for_static_download)

    monkeypatch.setattr(MediaFileManager, "add", add)
    return files


def upload(at: AppTest, raw: bytes, name: str = SETTINGS_FILE) -> AppTest:
    at.sidebar.file_uploader(key="share_upload").set_value((name, raw, "application/json"))
    return ok(at.run())


# ---- the link -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", list(LESSONS), ids=list(LESSONS))
def test_link_reproduces_the_view(lesson, downloads):
    page = LESSONS[lesson].path
    at = move(run_shared(page), lesson)
    shared = link(at)
    q = query(shared)
    # every setting the page drew is in the link, once, with its value as now shown
    drawn = at.session_state["_view"]
    assert set(q) == set(drawn), set(q) ^ set(drawn)
    assert all(len(v) == 1 for v in q.values()), q
    assert {k: v[0] for k, v in q.items()} == {k: share._fmt(v) for k, v in drawn.items()}
    keyed = set(view(at)["settings"])
    assert keyed <= set(q), f"settings on screen missing from the link: {keyed - set(q)}"
    for step in MOVES[lesson]:
        for key, value in step.items():
            assert q[key] == [share._fmt(value)], (key, q[key])

    # the settings file carries exactly the same settings
    doc = json.loads(downloads[SETTINGS_FILE])
    assert doc["settings"] == {k: v[0] for k, v in q.items()}

    # opened by someone else: the same numbers in every chart, the same settings, the same link
    other = run_shared(page, q)
    assert_same_view(other, at)
    # the same settings (in the order this page draws them: a page run alone, as here, keeps the order the first
    # runs recorded, and the √d_v slider came later, once its aside was opened)
    assert urlsplit(link(other))._replace(query="") == urlsplit(shared)._replace(query="") and query(link(other)) == q
    assert not other.info or not any("The link set" in i.value for i in other.info)


@pytest.mark.parametrize("lesson", list(LESSONS), ids=list(LESSONS))
def test_settings_file_reproduces_the_view(lesson, downloads):
    """Download the settings, load them into a fresh session at the defaults: the same view."""
    page = LESSONS[lesson].path
    at = move(run_shared(page), lesson)
    raw = downloads[SETTINGS_FILE]
    assert share.parse_settings(raw) == {k: v[0] for k, v in query(link(at)).items()}

    fresh = run_shared(page)
    if lesson == "multi-head":  # heads and mh_head only exist once d_model has room for them
        assert view(fresh)["settings"] != view(at)["settings"]
    upload(fresh, raw)
    assert not fresh.warning, [w.value for w in fresh.warning]
    assert_same_view(fresh, at)
    assert query(link(fresh)) == query(link(at))  # the same settings (see test_link_reproduces_the_view)
    ok(fresh.run())  # and it stays: the file is read once, not on every run
    assert_same_view(fresh, at)


def test_link_of_an_untouched_page_is_complete():
    at = run_shared(LESSONS["qkv"].path)
    q = query(link(at))
    assert {k: v[0] for k, v in q.items()} == {
        "present": "false", "level": "technical", "weights": "random", "text": "The cat sat on the warm mat",
        "seq_len": "7", "d_model": "16", "d_k": "8", "seed": "0", "query": "mat", "qkv_angle_a": "30",
        "qkv_angle_b": "60", "qkv_len_a": "1", "qkv_len_b": "1"}


def test_link_in_the_whole_app_follows_the_widgets():
    """In the app (entry script + navigation) the link is made after the page's controls, not before."""
    at = ok(run_app(LESSONS["scaling"].path, opened=[share.OPEN_KEY]))
    assert query(link(at))["d_k"] == ["64"]
    widget(at, "d_k").set_value(300)
    ok(at.run())
    q = query(link(at))
    assert q["d_k"] == ["300"] and q["text"] == ["The cat sat on the warm mat"] and q["scaling_on"] == ["true"]


def share_popover(at: AppTest):
    found = [p for p in at.sidebar.get("popover") if p.proto.popover.label == "Share this view"]
    assert len(found) == 1, "no share popover in the sidebar"
    return found[0]


def test_closed_share_panel_draws_nothing(downloads):
    """Closed (as every page opens), the popover is there but empty: no link, no file made, no uploader.
    Opened, all of it is drawn, with the settings moved while it was closed."""
    at = ok(run_page(LESSONS["scaling"].path))
    assert share_popover(at).proto.popover.open is False
    assert not at.sidebar.code and not at.sidebar.get("file_uploader")
    assert "share_download" not in [b.key for b in at.get("download_button")]
    assert SETTINGS_FILE not in downloads  # the settings file is not even made
    widget(at, "d_k").set_value(300)
    ok(at.run())
    assert not at.sidebar.code and not at.sidebar.get("file_uploader") and SETTINGS_FILE not in downloads
    at.session_state[share.OPEN_KEY] = True  # a click on "Share this view"
    ok(at.run())
    assert share_popover(at).proto.popover.open is True
    assert query(link(at))["d_k"] == ["300"]
    assert [u.key for u in at.sidebar.get("file_uploader")] == ["share_upload"]
    assert "share_download" in [b.key for b in at.get("download_button")]
    assert json.loads(downloads[SETTINGS_FILE])["settings"]["d_k"] == "300"
    at.session_state[share.OPEN_KEY] = False  # and closed again: empty again
    ok(at.run())
    assert not at.sidebar.code and not at.sidebar.get("file_uploader")


def test_text_with_url_characters_survives_the_link():
    text = "a&b=c #d ?e %20 + ü “quoted”"
    at = run_shared(LESSONS["qkv"].path, {"text": text})
    assert query(link(at))["text"] == [text]
    other = run_shared(LESSONS["qkv"].path, query(link(at)))
    assert widget(other, "text").value == text
    assert_same_view(other, at)


def test_moving_along_the_lesson_path_keeps_the_settings():
    """Scaling -> Masking (the Next link) in one session: the shared text, seq_len and d_k carry over."""
    at = ok(run_app(LESSONS["scaling"].path, opened=[share.OPEN_KEY]))
    for key, value in {"text": "red green blue", "seq_len": 2, "d_k": 40, "seed": 9}.items():
        widget(at, key).set_value(value)
    ok(at.run())
    ok(at.switch_page(LESSONS["masking"].path).run())
    assert [str(t.value) for t in at.title] == [numbered_title("masking")]
    assert not at.warning, [w.value for w in at.warning]
    assert {k: widget(at, k).value for k in ("text", "seq_len", "d_k", "seed")} == {
        "text": "red green blue", "seq_len": 2, "d_k": 40, "seed": 9}
    assert query(link(at))["d_k"] == ["40"]
    assert charts(at), "the masking page drew nothing"
    ok(at.switch_page(LESSONS["qkv"].path).run())  # and back along the path
    assert widget(at, "text").value == "red green blue" and widget(at, "d_k").value == 40


# ---- settings files -------------------------------------------------------------------------------------


def test_settings_round_trip_in_functions():
    settings = {"present": "false", "text": "x y", "d_k": "12", "attn_temp": "0.35", "scaling_on": "false"}
    raw = json.dumps({"page": "/scaling", "settings": settings}).encode()
    assert share.parse_settings(raw) == settings
    # numbers and booleans written by hand read as the link would carry them
    typed = json.dumps({"settings": {"d_k": 12, "attn_temp": 0.35, "scaling_on": False, "seed": 3.0}}).encode()
    assert share.parse_settings(typed) == {"d_k": "12", "attn_temp": "0.35", "scaling_on": "false", "seed": "3"}
    # saved by Windows Notepad (a byte-order mark first)
    assert share.parse_settings(b"\xef\xbb\xbf" + raw) == settings


BAD_FILES = {
    "not JSON": (b"d_k=512&seed=3", "it is not JSON text"),
    "binary": (bytes(range(256)) * 4, "it is not JSON text"),
    "empty": (b"", "it is not JSON text"),
    "huge": (b'{"settings": {"text": "' + b"a" * 50_000 + b'"}}', "a settings file is a few hundred"),
    "deeply nested": (b"[" * 9_000 + b"]" * 9_000, "it is not JSON text"),
    "huge integer": (b'{"settings": {"d_k": 1' + b"0" * 5_000 + b"}}", "it is not JSON text"),
    "a list": (b"[1, 2, 3]", "no 'settings' object"),
    "settings a list": (b'{"settings": ["d_k", 512]}', "no 'settings' object"),
    "nested values": (b'{"settings": {"d_k": {"value": 512}}}', "no 'settings' object"),
    "null value": (b'{"settings": {"d_k": null}}', "no 'settings' object"),
}


@pytest.mark.parametrize("case", list(BAD_FILES), ids=list(BAD_FILES))
def test_bad_settings_file_changes_nothing(case):
    raw, says = BAD_FILES[case]
    at = run_shared(LESSONS["scaling"].path)
    widget(at, "d_k").set_value(100)
    ok(at.run())
    before = view(at)
    upload(at, raw, name="settings.json")
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and says in warnings[0] and "Nothing was changed." in warnings[0], warnings
    after = view(at)
    assert after["settings"] == before["settings"]
    assert [t for t, _ in after["charts"]] == [t for t, _ in before["charts"]]
    for (title, x), (_, y) in zip(after["charts"], before["charts"]):
        pd.testing.assert_frame_equal(x, y, obj=title)
    ok(at.run())  # the message is said once
    assert not at.warning


def test_out_of_range_values_are_clamped_with_the_link_message():
    at = run_shared(LESSONS["scaling"].path)
    raw = json.dumps({"settings": {"d_k": 99_999, "seed": "abc", "attn_temp": -4, "scaling_trials": 7,
                                   "scaling_on": "maybe", "seq_len": "nan"}}).encode()
    upload(at, raw)
    keys = ("d_k", "seed", "attn_temp", "scaling_trials", "scaling_on", "seq_len")
    got = {k: widget(at, k).value for k in keys}
    assert got == {"d_k": 512, "seed": 0, "attn_temp": 0.0, "scaling_trials": 10, "scaling_on": True,
                   "seq_len": 7}  # the default: all of the default sentence
    notes = "\n".join(i.value for i in at.info)
    assert "The link set d_k to 99999; the allowed range here is 1 to 512, so 512 is used." in notes
    assert "The link set seed to “abc”, which is not a number; using 0." in notes
    assert "The link set attn_temp to \\-4" in notes or "The link set attn_temp to -4" in notes
    assert "which is not one of [1, 10, 50, 100]; using 10." in notes
    assert "The link set scaling_on to “maybe”; use true or false. Using True." in notes
    assert not at.warning


def test_settings_of_another_page_are_ignored_and_named():
    at = run_shared(LESSONS["qkv"].path)
    raw = json.dumps({"page": "/scaling", "settings": {"d_k": 30, "scaling_on": False, "scaling_T": 4}}).encode()
    upload(at, raw)
    assert widget(at, "d_k").value == 30
    assert [w.value for w in at.warning] == [
        "Loaded. These settings do not belong on this page and were ignored: scaling\\_T, scaling\\_on."]


def test_ignored_names_are_shown_as_text():
    """A name in a settings file is the sender's text: a link or markup in it is shown, not followed."""
    at = run_shared(LESSONS["qkv"].path)
    raw = json.dumps({"settings": {"seed": 7, "[click](javascript:alert(1))": 1, "<b>x</b>": 2}}).encode()
    upload(at, raw)
    assert widget(at, "seed").value == 7
    (message,) = [w.value for w in at.warning]
    assert "[click](" not in message and "<b>" not in message  # no link, no tag left for Markdown to read
    assert "\\[click\\]" in message and "\\<b\\>x\\</b\\>" in message


def test_loading_a_file_overrides_the_link_the_page_was_opened_with():
    at = run_shared(LESSONS["scaling"].path, {"d_k": "512", "seed": "4"})
    assert widget(at, "d_k").value == 512
    upload(at, json.dumps({"settings": {"d_k": 16}}).encode())
    assert widget(at, "d_k").value == 16 and widget(at, "seed").value == 4
    assert query(link(at))["d_k"] == ["16"]

"""Presenter mode: a link with present=true (or the sidebar switch) gives large type and cells, hides the
secondary material (the code, the export panel), and leaves everything else working.

Every lazy panel (share, export, code, exercises) is opened in these runs, so that what presenter mode hides
is hidden even when open, and what it keeps is filled."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from lessons import COURSE
from tests.apptest_helpers import chart_data, chart_design, chart_title, charts, ok, panel_keys, run_page
from ui.drawing import export
from ui.drawing.charts import _CELL_SIZES as CELL_SIZES
from ui.frame import exercises, share
from ui.state import presenter

LESSONS = {lesson.url_path: lesson for lesson in COURSE}
IDS = list(LESSONS)



def expanders(at: AppTest) -> list[str]:
    return [e.label for e in at.expander]


def step(chart) -> int | None:
    """The cell size of a heatmap (or of each small multiple), from the spec's width step."""
    spec = chart_design(chart)
    width = spec.get("width", spec.get("spec", {}).get("width"))
    return width.get("step") if isinstance(width, dict) else None


def presenter_css(at: AppTest) -> bool:
    return any("Presenter mode" in str(h.proto.body) for h in at.get("html"))


def assert_normal(at: AppTest) -> None:
    assert at.sidebar.toggle(key="present").value is False
    assert not presenter_css(at)
    if "Show the code" not in expanders(at):
        raise AssertionError(f"no code expander: {expanders(at)}")


def assert_presenting(at: AppTest, normal: AppTest) -> None:
    assert at.sidebar.toggle(key="present").value is True
    assert presenter_css(at)
    labels = expanders(at)
    assert "Show the code" not in labels
    assert not [label for label in labels if label.startswith("Export")]
    assert not [s for s in at.selectbox if s.key.startswith(export.PICK_KEY)], "the export picker is drawn"
    # the rest of the page is all there: the same charts with the same numbers, the exercises, the path
    # the same titles, but for a layers x heads grid's note of its layout: a projector's column holds fewer maps
    # to a row than the same maps at their normal size (ui.sections.views.grid_layout)
    def titles(page: AppTest) -> list[str]:
        return [chart_title(c).replace(" (one row per layer)", "") for c in charts(page)]

    assert titles(at) == titles(normal)
    for big, small in zip(charts(at), charts(normal)):
        pd.testing.assert_frame_equal(chart_data(big), chart_data(small), obj=chart_title(big))
    if "Check yourself" in expanders(normal):
        assert "Check yourself" in labels
        assert [t.key for t in at.text_input if t.key.startswith("ex_")] == [
            t.key for t in normal.text_input if t.key.startswith("ex_")], "the exercises are not all there"
    assert [str(t.value) for t in at.title] == [str(t.value) for t in normal.title]
    assert at.sidebar.code, "the share panel is gone"


def assert_bigger_cells(at: AppTest, normal: AppTest) -> int:
    pairs = [(step(big), step(small), chart_title(big)) for big, small in zip(charts(at), charts(normal))
             if step(small)]
    for big, small, title in pairs:
        assert big >= small, (title, small, big)
        if small > min(CELL_SIZES):
            # 1.5x, snapped to the chart module's size grid (46 for 34, 30 for 22, 34 for 26; 34 for a
            # grid's 22, which its panel width had capped). A matrix already shrunk to the smallest cell
            # to fill its column (the 64-column positional encoding) fills it in both modes.
            assert small * 1.3 <= big <= small * 1.6, (title, small, big)
    return len(pairs)


def run_open(lesson: str, query: dict | None = None) -> AppTest:
    """The lesson with every lazy panel open (share, export, code, exercises)."""
    return ok(run_page(LESSONS[lesson].path, query, opened=panel_keys(lesson)))


@pytest.fixture(scope="module")
def normal_views():
    return {url: run_open(url) for url in LESSONS}


@pytest.mark.parametrize("lesson", IDS)
def test_presenter_link(lesson, normal_views):
    normal = normal_views[lesson]
    assert_normal(normal)
    at = run_open(lesson, {"present": "true"})
    assert_presenting(at, normal)
    # every lesson draws sized charts at its defaults, except training before its first run
    assert assert_bigger_cells(at, normal) or lesson == "training"


@pytest.mark.parametrize("lesson", IDS)
def test_switching_presenter_mode_on_and_off(lesson, normal_views):
    normal = normal_views[lesson]
    at = run_open(lesson)
    at.sidebar.toggle(key="present").set_value(True)
    ok(at.run())
    assert_presenting(at, normal)
    assert_bigger_cells(at, normal)
    at.sidebar.toggle(key="present").set_value(False)
    ok(at.run())
    assert_normal(at)
    assert [step(c) for c in charts(at)] == [step(c) for c in charts(normal)]
    # the same expanders again, still open: the code and the export picker are back
    assert expanders(at) == expanders(normal)
    assert len(at.main.code) == len(normal.main.code)
    assert [s.key for s in at.selectbox] == [s.key for s in normal.selectbox]


def test_presenter_mode_is_in_the_share_link():
    at = ok(run_page(LESSONS["scaling"].path, {"present": "true", "d_k": "512", "scaling_on": "false"},
                     opened=[share.OPEN_KEY]))
    link = at.sidebar.code[0].value
    assert "present=true" in link and "d_k=512" in link and "scaling_on=false" in link


@pytest.mark.parametrize("value", ["true", "TRUE", "1"])
def test_presenter_link_spellings(value):
    at = ok(run_page(LESSONS["qkv"].path, {"present": value}))
    assert at.sidebar.toggle(key="present").value is True
    assert not at.info  # no "use true or false" note


def test_presenter_link_with_a_bad_value_says_so():
    at = ok(run_page(LESSONS["qkv"].path, {"present": "projector"}))
    assert at.sidebar.toggle(key="present").value is False
    assert any("present" in i.value and "use true or false" in i.value for i in at.info)


def test_exercises_work_in_presenter_mode():
    at = ok(run_page(LESSONS["scaling"].path, {"present": "true"}, opened=[exercises.open_key("scaling")]))
    at.text_input(key="ex_scaling_factor_64_answer").set_value("8")
    next(b for b in at.button if b.form_id == "ex_scaling_factor_64_form").click()
    ok(at.run())
    box = next(e for e in at.expander if e.label == "Check yourself")
    assert [s.value for s in box.success] == ["Right: 8."]


def test_chart_scale():
    assert presenter.chart_scale() == 1.0  # outside a presenter session


def test_presenter_cells_are_exactly_one_and_a_half_times_bigger(normal_views):
    normal = normal_views["qkv"]
    at = run_open("qkv", {"present": "true"})
    for big, small in zip(charts(at), charts(normal)):
        if step(small):
            assert step(big) == pytest.approx(1.5 * step(small), abs=1), chart_title(big)

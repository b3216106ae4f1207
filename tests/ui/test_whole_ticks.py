"""Whole numbers on an axis (positions, steps, units, counts) are ticked at whole numbers only: a short axis of
three positions reads 0, 1, 2, never 0, 0.5, 1, 1.5, 2. Checked where Vega draws the ticks (its scene graph),
and on the pages: every line chart whose x values are all whole numbers asks for whole ticks."""

from __future__ import annotations

import re

import pytest

from tests.apptest_helpers import chart_spec, charts, ok, run_page
from ui.drawing import plots
from ui.drawing.chart_data import ChartData


def walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def tick_labels(spec: dict, axis_title: str) -> list[str]:
    """The labels Vega draws on the axis titled axis_title, read from its scene graph (an empty one draws nothing)."""
    import vl_convert

    scene = vl_convert.vegalite_to_scenegraph(spec)
    for group in walk(scene):
        if group.get("role") != "axis":
            continue
        texts = [item["text"] for mark in walk(group) if mark.get("role") in ("axis-label", "axis-title")
                 for item in mark.get("items", [])]
        if axis_title in texts:
            return [t for t in texts if t and t != axis_title]
    raise AssertionError(f"no axis titled {axis_title!r}")


def is_whole(label: str) -> bool:
    return re.fullmatch(r"−?-?[\d,]+", label) is not None


@pytest.mark.parametrize("whole", [False, True])
def test_a_short_axis_of_positions_ticks_whole_numbers(whole):
    """Three positions: with whole_x the ticks are 0, 1, 2; without it Vega puts ticks between them (which is
    why the pages ask for it). A format "d" alone printed 0, 1, 1, 2, 2."""
    df = plots.line_frame([0, 1, 2], {"share": [0.2, 0.5, 0.9]}).frame()
    spec = {**plots.line_chart("position t", "share", whole_x=whole, data=df).to_dict(), "width": 400}
    labels = tick_labels(spec, "position t")
    assert labels
    assert all(map(is_whole, labels)) == whole, labels
    if whole:
        assert [int(t) for t in labels] == [0, 1, 2]


def test_bars_of_counts_tick_whole_numbers():
    """Answers counted on the class's bars (number_format "d"): 0, 1, 2, 3, not 0.5 steps; probabilities keep
    their decimals."""
    df = plots.bar_frame(["a", "b", "c"], [3, 1, 0]).frame()
    counts = tick_labels({**plots.bar_chart(x_title="answers", number_format="d", data=df).to_dict(),
                          "width": 400}, "answers")
    assert counts and all(map(is_whole, counts)), counts
    assert len(set(counts)) == len(counts)
    df = plots.bar_frame(["a", "b", "c"], [0.3, 0.2, 0.1]).frame()
    probs = tick_labels({**plots.bar_chart(data=df).to_dict(), "width": 400}, "probability")
    assert not all(map(is_whole, probs)), probs


def whole_x_values(spec: dict) -> bool:
    xs = ChartData.from_spec(spec).columns.get("x") or []
    return len(xs) > 1 and all(x is not None and float(x).is_integer() for x in xs)


def x_axes(spec: dict) -> list[dict]:
    """The axis settings of every quantitative x encoding of field x in a chart."""
    return [node["x"].get("axis") or {} for node in walk(spec)
            if isinstance(node.get("x"), dict) and node["x"].get("field") == "x" and node["x"].get("type") ==
            "quantitative"]


PAGES = ["lessons/block/page.py", "lessons/communication/page.py", "lessons/circuit/page.py"]


@pytest.mark.parametrize("page", PAGES)
def test_every_line_chart_of_whole_numbers_asks_for_whole_ticks(page):
    at = ok(run_page(page))
    checked = 0
    for chart in charts(at):
        spec = chart_spec(chart)
        if not whole_x_values(spec):
            continue
        for axis in x_axes(spec):
            title = spec.get("title")
            assert axis == {**axis, **plots.WHOLE_TICKS} or axis.get("format") == ",d", (title, axis)
            checked += 1
    assert checked, "no line chart of whole numbers on the page"

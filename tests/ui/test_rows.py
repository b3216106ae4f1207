"""Fewer elements per move. Things drawn side by side: heatmaps that fit share one horizontal container (the
browser wraps it on a narrow screen), the rest get columns; in_a_row puts metrics in one row in the order
they are written. A section's heading and its opening text are one Markdown element."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import chart_title
from ui.frame import prose


def rows(at: AppTest) -> list:
    """The flex containers of the page (columns rows and horizontal containers), top to bottom."""
    return [block for block in at.main.children.values() if getattr(block, "type", None) == "flex_container"]


def two_maps(wide: bool):
    import numpy as np

    from ui.sections.views import Heatmap, heatmaps

    tokens = ["a", "b", "c"]
    right = np.full((3, 40), -0.123) if wide else np.ones((3, 3))
    heatmaps(Heatmap(np.eye(3), tokens, tokens, "left map", "k_left"),
             Heatmap(right, tokens, [f"c{j}" for j in range(right.shape[1])], "right map", "k_right"))


def test_maps_that_fit_go_in_one_horizontal_container():
    at = AppTest.from_function(two_maps, kwargs={"wide": False}).run()
    assert not at.exception
    [row] = rows(at)
    kinds = [getattr(child, "type", None) for child in row.children.values()]
    assert kinds == ["vega_lite_chart", "vega_lite_chart"]  # the charts themselves, no column blocks
    assert [chart_title(c) for c in row.children.values()] == ["left map", "right map"]


def test_a_map_too_wide_for_its_size_gets_columns():
    at = AppTest.from_function(two_maps, kwargs={"wide": True}).run()
    assert not at.exception
    [row] = rows(at)
    columns = list(row.children.values())
    assert [getattr(c, "type", None) for c in columns] == ["column", "column"]
    assert [chart_title(col.get("vega_lite_chart")[0]) for col in columns] == ["left map", "right map"]


def metrics_in_a_row():
    from ui.sections.views import in_a_row

    first, second, third = in_a_row(3)
    first.metric("one", 1)
    second.metric("two", 2)
    third.metric("three", 3)


def test_in_a_row_keeps_the_order_in_one_container():
    at = AppTest.from_function(metrics_in_a_row).run()
    assert not at.exception
    [row] = rows(at)
    assert [(m.label, m.value) for m in row.children.values()] == [("one", "1"), ("two", "2"), ("three", "3")]


def averaging_section():
    from ui.frame import prose

    prose.section("The averaging trick", "masking", "averaging")


def test_a_section_heading_and_its_opening_text_are_one_element():
    at = AppTest.from_function(averaging_section).run()
    assert not at.exception and not at.header
    [element] = at.main.children.values()
    body = element.value
    assert body.startswith("## The averaging trick\n\n")
    assert body.endswith(prose.text("masking", "averaging"))

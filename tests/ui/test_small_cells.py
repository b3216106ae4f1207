"""Panels whose cells are too small for any number leave their layer of numbers out of the page's design
(ui.drawing.panels.numbers_drawn); a file of a panel still prints its numbers (test_panels.py)."""

from __future__ import annotations

import json

from tests.ui.test_panels import QKV, TOKENS, frame
from ui.drawing import chart_files, charts, panels, render


def _text_layers(spec: dict) -> int:
    return sum(mark.get("type") == "text" for mark in chart_files._marks(spec))


def test_the_rule_is_the_charts_own_test_of_the_shortest_number():
    shortest = charts.number_width(panels.SHORTEST_PRINTED)  # "NaN", "inf", "0.5"
    assert not panels.numbers_drawn(True, shortest - 1, 1.0)
    assert panels.numbers_drawn(True, shortest, 1.0)
    assert not panels.numbers_drawn(True, shortest, 1.5)  # presenter mode's larger type needs larger cells
    assert not panels.numbers_drawn(False, 100, 1.0)


def test_panels_of_small_cells_are_designed_without_numbers():
    _, data = frame(3, TOKENS, 8)
    for cell, layers in ((22, 0), (40, 1)):
        drawn = panels.numbers_drawn(True, cell, 1.0)
        look = dict(x_title="dimension", y_title="token", diverging=True, annotate=drawn)
        text, _ = render.chart_text(panels.panels_design, data, step=cell, columns=3, title=", ".join(QKV),
                                    subtitle="", shape_line_read=True, cell_px=charts.design_cell(cell, 1.0),
                                    font_scale=1.0, shared=False, **look)
        assert _text_layers(json.loads(text)) == layers

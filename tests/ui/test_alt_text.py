"""What a screen reader hears for a chart (ui/drawing/alt_text.py): what the chart is, never its values or its
labels, since Streamlit's frontend rebuilds a drawn chart whose alt changed (tests/ui/test_moves_in_place.py)."""

from __future__ import annotations

import numpy as np

from ui.drawing import alt_text
from ui.drawing.chart_data import ChartData


def test_a_heatmap_says_its_title_shape_and_what_rows_and_columns_are_but_not_their_labels():
    said = alt_text.heatmap(np.zeros((3, 4)), ["Q1", "Z2", "K3"], ["a", "b", "c", "d"], "weights",
                            "query", "key", "(T, T), rows sum to 1")
    assert said.startswith("Heatmap weights ((T, T), rows sum to 1): 3 rows, one per query, by 4 columns, "
                           "one per key.")
    assert said.endswith(alt_text.CELLS)
    assert not any(label in said for label in ("Q1", "Z2", "K3"))
    other_letters = alt_text.heatmap(np.ones((3, 4)), ["A1", "B2", "C3"], list("wxyz"), "weights", "query", "key",
                                     "(T, T), rows sum to 1")
    assert other_letters == said  # a seed that draws new letters leaves the drawn chart in place


def test_bars_of_the_likeliest_say_they_are_the_likeliest_and_not_the_whole_vocabulary():
    data = ChartData({"label": ["e", "t", "a"], "value": [0.5, 0.3, 0.2], "group": ["in", "in", "cut"]})
    said = alt_text.likeliest(data, "P(next)")
    assert said.startswith("Bar chart P(next): the 3 most likely next characters, most likely first; bar length: "
                           "probability. Each bar is coloured by its group: in; cut.")


def test_a_line_chart_names_its_series_in_one_order_whatever_order_the_data_has():
    one = ChartData({"x": [0, 1, 2], "y": [1.0, 2.0, 3.0], "series": ["repeat", "first copy", "other letters"]})
    two = ChartData({"x": [0, 1, 2], "y": [1.0, 2.0, 3.0], "series": ["other letters", "repeat", "first copy"]})
    assert alt_text.lines(one, "loss", "t", "nats") == alt_text.lines(two, "loss", "t", "nats")
    assert "(first copy; other letters; repeat)" in alt_text.lines(one, "loss", "t", "nats")


def test_up_to_ten_series_are_named_one_by_one():
    rungs = [f"{i} · rung" for i in range(1, 11)]
    data = ChartData({"x": list(range(10)), "y": [0.0] * 10, "series": rungs})
    said = alt_text.lines(data, "loss", "step", "nats")
    assert all(rung in said for rung in rungs) and "more" not in said

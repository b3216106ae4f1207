"""What a screen reader hears for a chart (ui/drawing/alt_text.py): what the chart is, never its values or its
labels, since Streamlit's frontend rebuilds a drawn chart whose alt changed (tests/ui/test_moves_in_place.py)."""

from __future__ import annotations

import json

import numpy as np

from ui.drawing import alt_text, heatmap, render
from ui.drawing.chart_data import SHAPE_LINE, ChartData


def test_a_heatmap_says_its_title_its_shape_in_symbols_and_what_rows_and_columns_are():
    said = alt_text.heatmap("Q: what each token asks", "token", "dimension", shape_line=True, said_shape="(T, d_k)")
    assert said == ("Heatmap Q: what each token asks. The matrix is (T, d_k). One row per token and one column per "
                    "dimension." + alt_text.CELLS_AND_SHAPE)
    assert alt_text.heatmap("weights", "query", "key") == ("Heatmap weights. One row per query and one column per "
                                                           "key." + alt_text.CELLS)
    # an axis without a title says nothing of it; a title's call to the mouse is not read (a keyboard picks the
    # query in the page's box)
    assert alt_text.heatmap("change", "position", "") == "Heatmap change. One row per position." + alt_text.CELLS
    assert alt_text.heatmap("weights" + alt_text.CLICK, "", "") == "Heatmap weights." + alt_text.CELLS


def test_sizes_a_slider_sets_are_left_out_of_a_heatmaps_shape():
    """Multi-head's concatenated heads: the grey line spells H and d_k out, the text for a screen reader does not
    (the heads control would rebuild the chart)."""
    said = alt_text.heatmap("concat", "token", "dimension", said_shape="(T, H·d_k) = (T, 2·8) = (T, D)")
    assert "The matrix is (T, H·d_k) = (T, D)." in said


def test_a_drawn_heatmap_reads_its_shape_line_from_its_table_and_says_where_it_is():
    """The shape line travels in the first row of the table's column SHAPE_LINE, and the alt says so; a map with
    no shape line, or no cells, has neither."""
    lined = heatmap.made(np.eye(3), list("abc"), list("xyz"), "eye", "eye · shape (3, 3) = (T, T)",
                         said_shape="(T, T)")
    column = ChartData.from_arrow(lined.table).columns[SHAPE_LINE]
    assert column == ["eye · shape (3, 3) = (T, T)", "", "", "", "", "", "", "", ""]
    assert lined.alt.endswith(alt_text.CELLS_AND_SHAPE) and "The matrix is (T, T)." in lined.alt
    assert json.loads(lined.text)["title"]["subtitle"] == {"expr": render.READ_SHAPE_LINE}
    plain = heatmap.made(np.eye(3), list("abc"), list("xyz"), "eye")
    assert SHAPE_LINE not in ChartData.from_arrow(plain.table).columns and plain.alt.endswith(alt_text.CELLS)
    empty = heatmap.made(np.zeros((0, 3)), [], list("xyz"), "none", "none · shape (0, 3) = (T, T)")
    assert SHAPE_LINE not in ChartData.from_arrow(empty.table).columns and empty.alt.endswith(alt_text.CELLS)


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

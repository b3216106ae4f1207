"""What a screen reader hears for a chart (ui/drawing/alt_text.py): what the chart is, never its values or its
labels, since Streamlit's frontend rebuilds a drawn chart whose alt changed (tests/ui/test_moves_in_place.py)."""

from __future__ import annotations

import json

import numpy as np

from ui.drawing import alt_text, charts, heatmap, render
from ui.drawing.chart_data import SHAPE_LINE, TITLE, ChartData


def test_a_heatmap_says_its_title_its_shape_in_symbols_and_what_rows_and_columns_are():
    said = alt_text.heatmap("Q: what each token asks", "token", "dimension", shape_line=True, said_shape="(T, d_k)")
    assert said == ("Heatmap, Q: what each token asks. The matrix is (T, d_k). One row per token and one column per "
                    "dimension." + alt_text.CELLS_AND_SHAPE)
    assert alt_text.heatmap("weights", "query", "key") == ("Heatmap, weights. One row per query and one column per "
                                                           "key." + alt_text.CELLS)
    # an axis without a title says nothing of it; a title's call to the mouse is not read (a keyboard picks the
    # query in the page's box)
    assert alt_text.heatmap("change", "position", "") == "Heatmap, change. One row per position." + alt_text.CELLS
    assert alt_text.heatmap("weights" + alt_text.CLICK, "", "") == "Heatmap, weights." + alt_text.CELLS


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
    said = alt_text.likeliest(data, "P(next)", groups=("in", "cut"))
    assert said.startswith("Bar chart, P(next): the most likely next characters, most likely first; bar length: "
                           "probability. Each bar is coloured by its group: in; cut.")
    # every group the legend names, even one no bar is in now (a top-p move empties "cut" and keeps the chart)
    assert alt_text.likeliest(ChartData({"label": ["e"], "value": [1.0], "group": ["in"]}), "P(next)",
                              groups=("in", "cut")) == said
    # not how many: a temperature of 0, or a top-k, leaves fewer bars, and that move would rebuild the chart
    assert alt_text.likeliest(ChartData({"label": ["e"], "value": [1.0]}), "P(next)") == \
        alt_text.likeliest(ChartData({"label": ["e", "t"], "value": [0.6, 0.4]}), "P(next)")


def test_a_grid_counts_neither_its_maps_nor_their_rows_and_columns():
    """A heads or seq_len move changes a grid's maps and their sizes, and keeps its drawn chart."""
    two = charts.grid_frame(np.ones((2, 3, 3)) / 3, ["head 1", "head 2"], list("abc"), list("abc"))
    four = charts.grid_frame(np.ones((4, 5, 5)) / 5, [f"head {h}" for h in range(1, 5)], list("abcde"), list("abcde"))
    said = alt_text.for_chart(charts.grid_chart, two, {"title": "weights"})
    assert said == alt_text.for_chart(charts.grid_chart, four, {"title": "weights"})
    assert said == ("Grid of heatmaps, weights: maps on one colour scale from 0 to 1, each named in a header above "
                    "it; in each, one row per query and one column per key." + alt_text.PANELS)


def test_a_title_that_says_what_a_control_set_is_read_from_the_table_and_said_without_it():
    """The title goes in the first row of the table's column TITLE and the spec reads it there; the text for a
    screen reader names the chart by the words no control changes and says where the whole title is. An empty
    table holds nothing to read: its title stays in the spec."""
    row_7 = heatmap.made(np.eye(3), list("abc"), list("xyz"), "row 7 “t”", said_title="the row looked at")
    row_8 = heatmap.made(np.eye(3) * 2, list("abc"), list("xyz"), "row 8 “e”", said_title="the row looked at")
    assert ChartData.from_arrow(row_7.table).columns[TITLE][:2] == ["row 7 “t”", ""]
    assert json.loads(row_7.text)["title"]["text"] == {"expr": render.READ_TITLE}
    assert row_7.text == row_8.text and row_7.alt == row_8.alt
    assert row_7.alt.startswith("Heatmap, the row looked at.") and row_7.alt.endswith(alt_text.TITLE_IN_TABLE)
    assert "row 7" not in row_7.alt
    assert render.file_spec(row_7.text, row_7.data, title=row_7.title)["title"]["text"] == "row 7 “t”"
    empty = heatmap.made(np.zeros((0, 3)), [], list("xyz"), "row 0", said_title="the row looked at")
    assert TITLE not in ChartData.from_arrow(empty.table).columns
    assert json.loads(empty.text)["title"]["text"] == "row 0" and not empty.alt.endswith(alt_text.TITLE_IN_TABLE)


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

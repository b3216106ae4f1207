"""Maps of one shape as the panels of one chart (ui.drawing.panels): each keeps its own colour scale, legend and
axes; the row of panels fits a desktop's main column, or a phone's one panel a row, as Vega lays it out; a file of
one panel is that map as a heatmap of its own. In the pages: tests/lessons/test_page_qkv.py (the numbers are core's),
tests/ui/test_moves_in_place.py (a move keeps the chart), tests/browser/test_browser.py (drawn in Chromium)."""

from __future__ import annotations

import json
import re

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert

from tests.ui.test_phone_layout import ANDROID, DESKTOP, agent  # noqa: F401  (a fixture)
from ui.drawing import alt_text, charts, panels
from ui.drawing.chart_data import ChartData

QKV = ["Q: what each token asks", "K: what each token offers", "V: what each token hands over"]
TOKENS = "The cat sat on the warm mat".split()
LONG = "internationalisation of understanding requires patience and".split()


def frame(P: int, rows: list[str], d: int, seed: int = 0) -> tuple[np.ndarray, ChartData]:
    m = np.random.default_rng(seed).normal(size=(P, len(rows), d)) * np.arange(1, P + 1)[:, None, None]
    return m, charts.grid_frame(m, QKV[:P], rows, [f"d{j}" for j in range(d)], with_text=True)


def drawn(data: ChartData, cell: int, columns: int) -> tuple[float, str]:
    """The chart's width in Vega's layout, and its svg."""
    design = panels.panels_design(columns=columns, cell_px=cell, x_title="dimension", y_title="token", diverging=True)
    alt.FacetChart.from_dict({**design, "data": {"values": []}}, validate=True)  # a facet as Vega-Lite has it
    design["title"] = {"text": "Q, K, V", "subtitle": "each · shape (7, 8) = (T, d_k)", "anchor": "start"}
    spec = data.inline(design)  # as sent, its table inside (ui.drawing.chart_data): the facet in a vconcat
    svg = vl_convert.vegalite_to_svg(spec)
    return float(re.search(r'width="([\d.]+)"', svg).group(1)), svg


def altairs(columns: int, cell_px: int, font_scale: float, **look) -> dict:
    """The chart of panels as Altair builds it from charts.heatmap_chart: what panels_design writes by hand."""
    inner = charts.heatmap_chart(cell_px=cell_px, font_scale=font_scale, **look)
    header = alt.Header(title=None, labelFontSize=charts.px(charts.LABEL_PX, font_scale), labelFontWeight="bold",
                        labelAnchor="start", labelFont=charts.FONT)
    chart = alt.layer(*inner.layer, data=pd.DataFrame()).properties(
        width=alt.Step(cell_px), height=alt.Step(cell_px)
    ).facet(facet=alt.Facet("panel:N", sort=alt.EncodingSortField("panel_i"), title=None, header=header),
            columns=columns).resolve_scale(color="independent").resolve_axis(x="independent", y="independent")
    spec = charts.on_canvas(charts.themed(chart)).to_dict()
    spec.pop("data"), spec.pop("datasets")
    return spec


@pytest.mark.parametrize("scale", [1.0, 1.5])
@pytest.mark.parametrize("annotate", [True, False])
@pytest.mark.parametrize("cell", [charts.CELL_PX, 13, 6])
def test_the_design_is_the_facet_altair_builds(scale, annotate, cell):
    """Written by hand around the heatmap's design (render's own, resized for these cells), the facet is the one
    Altair builds from the heatmap's layers, for every cell size and type scale."""
    look = dict(x_title="dimension", y_title="token", diverging=True, annotate=annotate)
    altair = json.loads(panels.sent_names(json.dumps(altairs(2, cell, scale, **look))))
    assert panels.panels_design(columns=2, cell_px=cell, font_scale=scale, **look) == altair


@pytest.mark.parametrize("rows", [TOKENS, LONG])
@pytest.mark.parametrize("d", [2, 4, 8, 16, 64])
@pytest.mark.parametrize(("ua", "room"), [(DESKTOP, panels.ROW_PX), (ANDROID, 358)])
def test_the_panels_fit_their_row(agent, ua, room, rows, d):  # noqa: F811
    """Laid out as panels.layout decides, the chart is no wider than the room it has: a desktop's main column with
    the sidebar open, or a phone's, where each panel has a row of its own."""
    agent(ua)
    _, data = frame(3, rows, d)
    printed = max(map(len, data.columns["text"]))
    cell, columns = panels.layout(d, QKV, rows, 26, printed, 1.0)
    width, _ = drawn(data, cell, columns)
    assert width <= room, (cell, columns, width)
    if ua == ANDROID:
        assert columns == 1
    elif d <= 8 and rows is TOKENS:  # the lessons' default sentence and d_k: Q, K, V side by side, as before
        assert columns == 3


def test_numbers_are_printed_where_the_cells_have_room(agent):  # noqa: F811
    """Cells grow to hold a number when the panels still fit in a row (a d_k of 2), not otherwise (a d_k of 8)."""
    agent(DESKTOP)
    need = charts.number_width(5)  # "-0.12"
    assert panels.layout(2, QKV, TOKENS, 26, 5, 1.0)[0] >= need
    assert panels.layout(8, QKV, TOKENS, 26, 5, 1.0)[0] < need
    cell, columns = panels.layout(2, QKV, TOKENS, 26, 5, 1.0)
    m, data = frame(3, TOKENS, 2)
    _, svg = drawn(data, cell, columns)
    assert f">{m[0, 0, 0]:.2f}<" in svg and f">{m[2, -1, -1]:.2f}<" in svg


def test_each_panel_keeps_its_own_colour_scale_and_axes(agent):  # noqa: F811
    """Three legends, one under each panel, each spanning its own map's values (V's are three times Q's); and each
    panel has its own row and column labels, a panel on a second row included."""
    agent(DESKTOP)
    _, data = frame(3, TOKENS, 4)
    _, svg = drawn(data, 26, 2)
    assert svg.count('class="mark-group role-legend"') == 3
    assert svg.count(">warm<") == 3 and svg.count(">d3<") == 3
    for name in QKV:
        assert f">{name}<" in svg


def test_a_panel_as_a_file_is_its_map_alone():
    m, _ = frame(3, TOKENS, 8)
    look = dict(x_title="dimension", y_title="token", diverging=True, annotate=True)
    spec = panels.file_spec(m[1], TOKENS, [f"d{j}" for j in range(8)], QKV[1], "K · shape (7, 8) = (T, d_k)",
                            "(T, d_k)", 39, 1.0, look)
    assert spec["title"]["text"] == QKV[1] and spec["title"]["subtitle"] == "K · shape (7, 8) = (T, d_k)"
    assert spec["description"].startswith(f"Heatmap, {QKV[1]}. The matrix is (T, d_k).")
    table = ChartData.from_spec(spec).frame()
    np.testing.assert_allclose(table.sort_values(["row_i", "col_i"])["value"].to_numpy(), m[1].ravel(), atol=5e-5)
    svg = vl_convert.vegalite_to_svg(spec)
    assert f">{m[1, 0, 0]:.2f}<" in svg  # drawn from the file alone, its numbers printed in cells that hold them


@pytest.mark.parametrize("names", [tuple(QKV), ("W_Q", "W_K", "W_V"), ()])
def test_the_text_for_a_screen_reader_is_whole(names):
    """Said whole, never cut short (alt_text.MAX_CHARS): the title, the names when they are said, the shape in
    symbols, what rows and columns stand for, and where the numbers and the shape line are."""
    said = alt_text.panels("Q, K, V, each on its own colour scale", 3, "token", "dimension", "(T, d_k)", names)
    assert len(said) <= alt_text.MAX_CHARS
    assert said.startswith('Heatmaps titled "Q, K, V, each on its own colour scale": 3 maps in one chart')
    assert all(name in said for name in names) and "Each matrix is (T, d_k)." in said
    assert said.endswith(alt_text.PANELS + alt_text.SHAPE_LINE)


def test_a_shared_scale_is_one_legend_and_one_ink_for_every_panel():
    """shared: one quantity in two settings. One legend for both panels, and each number's ink chosen by where its
    cell sits on that one scale: 1 is pale on a scale that reaches 10 (black ink), dark on its own (white)."""
    m = np.zeros((2, 2, 2))
    m[0], m[1] = [[-1.0, 1.0], [0.0, 0.5]], [[-10.0, 10.0], [0.0, 5.0]]
    data = charts.grid_frame(m, ["A", "B"], ["r0", "r1"], ["c0", "c1"], with_text=True)
    inks = {}
    for shared in (False, True):
        design = panels.panels_design(columns=2, cell_px=50, x_title="x", y_title="y", diverging=True, shared=shared)
        svg = vl_convert.vegalite_to_svg(data.inline(design))
        inks[shared] = dict((number, fill) for fill, number in re.findall(r'<text[^>]*fill="([^"]+)"[^>]*>(-?1\.00)<',
                                                                            svg))
        assert svg.count('class="mark-group role-legend"') == (1 if shared else 2)
    assert inks[False] == {"-1.00": "#ffffff", "1.00": "#ffffff"}
    assert inks[True] == {"-1.00": "#000000", "1.00": "#000000"}


def test_a_shared_scale_is_said():
    said = alt_text.panels("Outputs, on one colour scale", 2, "token", "dimension",
                           "(T, d_k)", ("outputs without a mask", "outputs with the causal mask"), shared=True)
    assert "one colour scale and one legend for all" in said and "its own colour legend" not in said
    assert len(said) <= alt_text.MAX_CHARS


def test_a_fixed_scale_says_its_ends():
    """Weights on their fixed scale 0 to 1: the ends are said, so the palest colour is known to be exactly 0."""
    said = alt_text.panels("Weights, on one colour scale", 2, "query", "key", "(T, T), rows sum to 1",
                           ("encoder: no mask", "decoder: causal mask"), shared=True, domain=(0.0, 1.0))
    assert "one colour scale from 0 to 1 and one legend for all" in said
    assert len(said) <= alt_text.MAX_CHARS


def test_a_fixed_domain_is_the_colour_scale_of_every_panel():
    """A fixed domain (the weights' 0 to 1) is part of the design: every panel's colours run over it, not over
    the numbers' extent."""
    design = panels.panels_design(columns=2, x_title="key", y_title="query", shared=True, domain=(0.0, 1.0))
    scales = [layer["encoding"]["color"]["scale"] for layer in design["spec"]["layer"]
              if "scale" in layer.get("encoding", {}).get("color", {})]
    assert scales and all(scale["domain"] == [0.0, 1.0] for scale in scales)

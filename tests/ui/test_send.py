"""ui.drawing.send sends the chart element st.vega_lite_chart would send, for every kind of chart the app draws.

Each chart is drawn twice in one script run, once through the app's path (render.show / heatmap.draw,
which write a design's JSON once and fill in the parts) and once through st.vega_lite_chart with the same spec
as a dict and its numbers as the named dataset; the two messages must carry the same spec (as parsed JSON), the
same dataset, theme, alt text and width and height settings. A newer Streamlit that prepares specs differently,
or moves the private names ui.streamlit_internals wraps for it, fails here (and in
tests/ui/test_streamlit_internals.py, call by call), not in a browser.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

CASES = ("heatmap", "heatmap_wide", "heatmap_untitled", "diverging_nan", "grid", "bars", "lines", "arrows",
         "head_view")


def _script(case: str) -> None:
    import json

    import numpy as np
    import streamlit as st
    import streamlit.delta_generator as dg_module

    from lessons.full_model.head_view import frame as head_frame
    from lessons.full_model.head_view import head_view_chart
    from lessons.qkv.views import arrows_chart, arrows_frame
    from ui.drawing import charts, heatmap, plots, render
    from ui.drawing.chart_data import DATASET

    def with_data(spec, data):  # what st.vega_lite_chart is given: the spec and its numbers, by name
        return {**data.named(spec), "datasets": {DATASET: data.arrow()}}

    sent = []
    original = dg_module._enqueue_message

    def keep(msg):
        sent.append(msg.SerializeToString())
        original(msg)

    dg_module._enqueue_message = keep
    try:
        rng = np.random.default_rng(1)
        tokens = ["the", "cat", "sat", "on", "the", "mat"]
        if case.startswith("heatmap") or case == "diverging_nan":
            matrix = rng.random((6, 6)) if case != "heatmap_wide" else rng.standard_normal((6, 40))
            cols = tokens if case != "heatmap_wide" else [f"d{j}" for j in range(40)]
            settings = dict(domain=(0.0, 1.0)) if case != "diverging_nan" else dict(diverging=True)
            if case == "diverging_nan":
                matrix = rng.standard_normal((6, 6))
                matrix[0, 3:] = -np.inf
                matrix[1, 1] = np.nan
            title = "" if case == "heatmap_untitled" else "weights: a title"
            d = heatmap.made(matrix, tokens, cols, title=title, subtitle="weights · (6, 6)", **settings)
            heatmap.draw(d)
            st.vega_lite_chart({**json.loads(d.text), "datasets": {DATASET: d.table}},
                               width="content" if d.fits else "stretch", alt=d.alt)
        elif case == "grid":
            maps = rng.random((4, 5, 5))
            data = charts.grid_frame(maps, [f"head {h}" for h in range(4)], tokens[:5], tokens[:5])
            settings = dict(columns=2, cell_px=18, title="4 heads")
            render.show(charts.grid_chart, data, **settings)
            spec = with_data(render.spec_for(charts.grid_chart, **settings), data)
            st.vega_lite_chart(spec, alt=render.described(charts.grid_chart, data, **settings))
        elif case in ("bars", "lines"):
            if case == "bars":
                builder, data = plots.bar_chart, plots.bar_frame(tokens, rng.random(6))
                settings = dict(title="row sums", x_title="sum", y_title="query")
            else:
                builder = plots.line_chart
                data = plots.line_frame([1, 2, 4, 8], {"a": [1.0, 2.0, 3.0, 4.0], "b": [0.5, 0.4, 0.3, 0.2]})
                settings = dict(x_title="d_k", y_title="weight", title="saturation", log_x=True)
            render.show(builder, data, width="stretch", **settings)
            spec = with_data(render.spec_for(builder, **settings), data)
            st.vega_lite_chart(spec, width="stretch", alt=render.described(builder, data, **settings))
        elif case == "arrows":
            data = arrows_frame((1.0, 0.5), (-0.3, 0.9))
            render.show(arrows_chart, data, width="content", title="a · b = 0.15", description="two arrows")
            spec = with_data(render.spec_for(arrows_chart, title="a · b = 0.15"), data)
            st.vega_lite_chart(spec, width="content", alt="two arrows")
        elif case == "head_view":
            w = rng.random((2, 5, 5))
            w /= w.sum(-1, keepdims=True)
            labels = list("abcde")
            settings = dict(n_positions=5, shown=(True, False), title="Layer 1", subtitle="weights")
            render.show(head_view_chart, head_frame(w, labels), width="content", description="lines", **settings)
            spec = with_data(render.spec_for(head_view_chart, **settings), head_frame(w, labels))
            st.vega_lite_chart(spec, width="content", alt="lines")
    finally:
        dg_module._enqueue_message = original
    st.session_state["sent"] = sent


@pytest.mark.parametrize("case", CASES)
def test_a_chart_goes_out_as_streamlit_would_send_it(case):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    at = AppTest.from_function(_script, args=(case,), default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    msgs = [ForwardMsg.FromString(raw) for raw in at.session_state["sent"]]
    charts = [m.delta.new_element for m in msgs if m.delta.new_element.WhichOneof("type") == "vega_lite_chart"]
    assert len(charts) == 2
    ours, theirs = charts
    assert json.loads(ours.vega_lite_chart.spec) == json.loads(theirs.vega_lite_chart.spec)
    for field in ("theme", "alt", "use_container_width", "id"):
        assert getattr(ours.vega_lite_chart, field) == getattr(theirs.vega_lite_chart, field), field
    def tables(chart):
        return [(d.name, d.has_name, d.data.data) for d in chart.vega_lite_chart.datasets]

    assert tables(ours) == tables(theirs) and len(tables(ours)) == 1
    assert "\"values\":" not in ours.vega_lite_chart.spec  # the numbers travel beside the spec, never in it
    assert ours.width_config == theirs.width_config
    assert ours.height_config == theirs.height_config
    assert ours.vega_lite_chart.alt  # every chart is named for a screen reader, beside its spec
    assert "description" not in json.loads(ours.vega_lite_chart.spec)  # a new name does not make a new chart


def test_a_design_is_cut_at_its_holes_and_filled_again():
    """Design.fill with the parts a draw gives writes the whole spec: no hole is left in it."""
    from ui.drawing import charts, render, send

    data = charts.heatmap_frame(np.eye(3), list("abc"), list("abc"))
    text, design = render.chart_text(charts.heatmap_chart, data, "content", step=40, title="eye", cell_px=34,
                                     annotate=True)
    assert set(design.holes) == set(send.HOLES) - {"columns", "description"}  # columns: grids; the name: beside
    assert "\\u0000" not in text
    spec = json.loads(text)
    assert spec["title"]["text"] == "eye" and "description" not in spec
    assert spec["layer"][0]["data"] == {"name": "table"}  # the numbers go beside it (data.arrow())
    assert data.from_arrow(data.arrow()).column("value") == data.column("value")
    assert spec["width"] == spec["height"] == {"step": 40}


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_one_design_serves_every_cell_size_that_draws_alike(scale):
    """A heatmap's design is built for charts.design_cell(size) and each draw gives its own size: the spec is then
    the one heatmap_chart builds for that size itself, for every size a page can ask for."""
    from ui.drawing import charts, render

    for cell in range(4, 100):
        shared = charts.design_cell(cell, scale)
        assert shared <= cell
        for annotate in (True, False):
            own = render.spec_for(charts.heatmap_chart, cell_px=cell, annotate=annotate, font_scale=scale)
            built = render.spec_for(charts.heatmap_chart, cell_px=shared, annotate=annotate, font_scale=scale)
            assert {**built, "width": {"step": cell}, "height": {"step": cell}} == own, (cell, shared)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_a_grid_design_serves_every_cell_size_and_number_of_columns(scale):
    """A grid of maps drawn through one design (built for charts.design_cell of its size, columns given per draw)
    is the chart a design built for its own size and columns gives."""
    from ui.drawing import charts, render

    data = charts.grid_frame(np.random.default_rng(0).random((6, 5, 5)), [f"head {h}" for h in range(6)],
                             list("abcde"), list("abcde"))
    for cell in (4, 6, 9, 12, 17, 18, 26, 40):
        for columns in (1, 2, 3, 6):
            shared, _ = render.chart_text(charts.grid_chart, data, step=cell, columns=columns, title="heads",
                                          cell_px=charts.design_cell(cell, scale), font_scale=scale)
            own, _ = render.chart_text(charts.grid_chart, data, title="heads", cell_px=cell, columns=columns,
                                       font_scale=scale)
            assert json.loads(shared) == json.loads(own), (cell, columns)

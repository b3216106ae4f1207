"""A chart sent as the JSON Streamlit would send for it, its design written as JSON once per process.

st.vega_lite_chart(spec) writes a spec as JSON, reads it back to rename Altair's view names, and hashes it:
about 0.5 ms a chart of 5 KB before a byte leaves the server, and a page draws ten to twenty charts on
every slider move. Nearly all of a chart is its design (ui.drawing.render.spec_for), which is the same on
every move; only its title, its description, the values of its parameters and its data change. So each
design is turned into JSON once, by Streamlit's own functions (exactly as st.vega_lite_chart would turn it),
and cut around those parts; a draw writes only them as JSON, fills them in, and sends the chart element
Streamlit would have sent. tests/ui/test_send.py holds the two paths to the same element for every design.

A chart that reports clicks (on_select) still goes through st.vega_lite_chart: it is a widget, with state
and a callback that Streamlit keeps. There is one such chart on a page at most.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st
from streamlit.elements.lib.layout_utils import LayoutConfig
from streamlit.elements.vega_charts import _prepare_vega_lite_spec, _stabilize_vega_json_spec
from streamlit.proto.VegaLiteChart_pb2 import VegaLiteChart as VegaLiteChartProto

from ui.drawing.chart_data import ChartData, inner_kind, split

# The parts a draw fills in. Each stands in the design's JSON as a string no spec holds ("\u0000title"),
# and is replaced by its own JSON. (Parameters stay in the design: a selection names the view it listens to,
# and Streamlit renames views in the design's JSON, so the two must be written together.)
HOLES = ("title", "description", "data", "transform", "width", "height", "columns")


def _hole(name: str) -> str:
    return f"\u0000{name}"


@dataclass(frozen=True)
class Design:
    """A chart design as JSON, cut at its holes: pieces[0] hole[0] pieces[1] hole[1] ... pieces[-1].
    transforms: the design's own transforms of the inner view (after the data's unpacking), as JSON."""

    pieces: tuple[str, ...]
    holes: tuple[str, ...]
    transforms: str
    width: str

    def fill(self, data: ChartData, title=None, description: str | None = None, step: int | None = None,
             columns: int | None = None, row_step: int | None = None) -> str:
        """The chart's JSON with these parts in it (a part the design has no hole for is left out). step: the
        size in pixels of each cell of a design whose width and height are holes (row_step, when given, the
        height of each row instead); columns: how many panels a faceted grid puts in a row."""
        unpack = ",".join(json.dumps(step, ensure_ascii=False) for step in data.unpack())
        parts = {
            "title": json.dumps(title, ensure_ascii=False),
            "description": json.dumps(description or "", ensure_ascii=False),
            "data": json.dumps({"values": [data.datum()]}, ensure_ascii=False),
            "transform": "[" + ",".join(part for part in (unpack, self.transforms) if part) + "]",
            "width": json.dumps({"step": step}),
            "height": json.dumps({"step": row_step or step}),
            "columns": json.dumps(columns),
        }
        out = [self.pieces[0]]
        for hole, piece in zip(self.holes, self.pieces[1:]):
            out += [parts[hole], piece]
        return "".join(out)


def design(spec: dict, width: str | None = None, described: bool = True, stepped: bool = False,
           columned: bool = False) -> Design:
    """spec (a chart without data; its title, if it has one, is filled in by each draw) turned into JSON as
    st.vega_lite_chart(spec, width=width) would turn it, with holes where a draw puts its parts.
    width None: Streamlit's default for the spec (its own width for a facet, the column's otherwise).
    described: each draw gives the chart a description (the text a screen reader reads).
    stepped: the spec's width and height are steps that each draw gives (a heatmap's cells: one design then
    serves every cell size that draws the same), on the chart or on each panel of a facet; columned: so is
    the number of a facet's panels to a row."""
    outer, inner = split(spec)
    kind = inner_kind(inner)
    if width is None:
        width = "content" if kind == "vconcat" and any(k in inner for k in ("facet", "hconcat", "repeat")) \
            else "stretch"
    transforms = ",".join(json.dumps(step, ensure_ascii=False) for step in inner.pop("transform", []))
    inner["data"], inner["transform"] = _hole("data"), _hole("transform")
    skeleton = {**outer, kind: [inner]}
    if described:
        skeleton["description"] = _hole("description")
    if stepped:
        if "facet" in inner:  # a facet sizes each of its panels (a copy: the design's own dict is shared)
            inner["spec"] = sized = dict(inner["spec"])
        else:
            sized = skeleton
        sized["width"], sized["height"] = _hole("width"), _hole("height")
    if columned:
        inner["columns"] = _hole("columns")
    if "title" in outer:
        skeleton["title"] = _hole("title")
    text = _stabilize_vega_json_spec(json.dumps(_prepare_vega_lite_spec(skeleton, width == "stretch")))
    pieces, holes = [text], []
    while True:  # cut at the first hole left in the last piece
        found = [(pieces[-1].find(json.dumps(_hole(h))), h) for h in HOLES]
        found = [(at, h) for at, h in found if at >= 0]
        if not found:
            break
        at, hole = min(found)
        rest = pieces.pop()
        pieces += [rest[:at], rest[at + len(json.dumps(_hole(hole))):]]
        holes.append(hole)
    return Design(tuple(pieces), tuple(holes), transforms, width)


def chart(text: str, width: str, alt: str | None = None) -> None:
    """Send a chart's finished JSON (Design.fill) where the page is, as st.vega_lite_chart would."""
    proto = VegaLiteChartProto()
    proto.spec = text
    proto.theme = "streamlit"
    if alt:  # a spec without a description of its own is named by alt (Streamlit's own rule)
        proto.alt = alt
    # _enqueue writes to the container of the `with` block the page is in, as st.vega_lite_chart does
    st._main._enqueue("vega_lite_chart", proto, layout_config=LayoutConfig(width=width, height="content"))

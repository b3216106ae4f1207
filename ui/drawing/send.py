"""A chart sent as the element Streamlit would send for it: its design written as JSON once per process, its
numbers beside it as a named dataset: the path of every chart that reports no clicks.

st.vega_lite_chart(spec) writes a spec as JSON, reads it back to rename Altair's view names, and hashes it:
about 0.5 ms a chart of 5 KB before a byte leaves the server, and a page draws ten to twenty charts on
every slider move. Nearly all of a chart is its design (ui.drawing.render.spec_for), which is the same on
every move; only its title, its description and its size can change, and its numbers travel apart (as the
dataset ui.drawing.chart_data.DATASET, in Arrow). So each design is turned into JSON once, by Streamlit's own
functions (exactly as st.vega_lite_chart would turn it), and cut around those parts; a draw writes only them,
fills them in, and sends the chart element Streamlit would have sent with the dataset beside it.

The browser keeps a drawn chart whose spec is the same as before and swaps the new rows into it: so a slider
move that changes only numbers changes nothing in the spec (the title says what a chart is, not its values),
nor in the alt sent beside it, which the browser writes into the spec's description before it compares
(ui.drawing.alt_text).

What needs Streamlit's private names (the JSON st.vega_lite_chart writes, the element sent where the page is)
is done by ui.streamlit_internals; tests/ui/test_send.py checks, for every design, that the element sent is the
one st.vega_lite_chart sends.

A chart that reports clicks (on_select) goes through st.vega_lite_chart itself: it is a widget, with state
and a callback that Streamlit keeps. There is one such chart on a page at most.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ui import streamlit_internals
from ui.drawing.chart_data import DATASET, inner_kind, split

# The parts a draw fills in. Each stands in the design's JSON as a string no spec holds ("\u0000title"),
# and is replaced by its own JSON. (Parameters stay in the design: a selection names the view it listens to,
# and Streamlit renames views in the design's JSON, so the two must be written together.)
HOLES = ("title", "description", "width", "height", "columns")


def _hole(name: str) -> str:
    return f"\u0000{name}"


@dataclass(frozen=True)
class Design:
    """A chart design as JSON, cut at its holes: pieces[0] hole[0] pieces[1] hole[1] ... pieces[-1]."""

    pieces: tuple[str, ...]
    holes: tuple[str, ...]
    width: str

    def fill(self, title=None, description: str | None = None, step: int | None = None,
             columns: int | None = None, row_step: int | None = None) -> str:
        """The chart's JSON with these parts in it (a part the design has no hole for is left out). step: the
        size in pixels of each cell of a design whose width and height are holes (row_step, when given, the
        height of each row instead); columns: how many panels a faceted grid puts in a row."""
        parts = {
            "title": json.dumps(title, ensure_ascii=False),
            "description": json.dumps(description or "", ensure_ascii=False),
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
    inner["data"] = {"name": DATASET}
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
    text = streamlit_internals.vega_lite_json(skeleton, stretch=width == "stretch")
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
    return Design(tuple(pieces), tuple(holes), width)


def chart(text: str, width: str, table: bytes, alt: str | None = None) -> None:
    """Send a chart's finished JSON (Design.fill) where the page is, with its numbers (ChartData.arrow) as the
    dataset it reads, as st.vega_lite_chart(spec with datasets={DATASET: table}, alt=alt) would (alt names a
    spec without a description of its own)."""
    streamlit_internals.send_vega_lite_chart(text, {DATASET: table}, width, alt)

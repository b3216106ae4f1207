"""A heatmap, from a matrix to the chart on screen: the one way the app draws one.

    heatmap.show(weights, tokens, tokens, "weights")        # a matrix, its labels, a title: drawn where the page is

The whole path, in the order it runs:

1. `made` looks the heatmap up: every session that draws the same matrix, labels and look shares one, made once
   per process (a class moves the same sliders through the same values).
2. `_make` turns the matrix into its numbers (charts.heatmap_frame, sent as a table: ChartData.arrow), decides its
   size once (`size`: the cells, the rows, whether it fits its room), and fills in the chart's design
   (render.chart_text: the design, charts.heatmap_chart, is built once per process for the default cells, resized
   for each look of its labels (ui.drawing.resize) and reused at every size that draws alike). The numbers are
   not in the design: a move that changes only them leaves the spec as it was, and the browser swaps them into
   the map it already drew.
3. `draw` sends the finished JSON with its table (ui.drawing.send) and records the matrix for the export panel; a
   clickable map goes through Streamlit's own chart widget instead, so a click on a row reaches the page.

`show` is 1 then 3. A layout that must know whether a map fits before placing it (ui.sections.views.heatmaps)
calls `made` and `draw` itself.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from ui.cache import SharedCache
from ui.drawing import alt_text, charts, export, render, send, softmax
from ui.drawing.chart_data import ChartData
from ui.state import chart_controls, presenter

ROOM_PX = 300  # the width a map may take unless told: about half a column. A map with the page to itself passes more.
# The sizes lessons ask for, by name (charts.CELL_PX, 34, is the default cell): cells asked for are shrunk to fit
# their room and snapped (size), so these are the largest a map's cells may be.
SMALL_CELL_PX = 22  # a map of many columns beside others: the rows of Q, K, V or a layer's outputs
MEDIUM_CELL_PX = 26  # a few maps to a row: vectors of d_model numbers, a grid's panels
LARGE_CELL_PX = 30  # a map the page reads closely: a bigram table, a row of weights
NARROW_ROOM_PX = 240  # a map (or a grid's panel) set several to a row: a third of a column
WIDE_ROOM_PX = 1000  # a grid of maps, or a map with the page's width to itself
# (matrix, labels, look) -> Drawing. A heatmap's JSON is 3-90 KB: 64 MB holds thousands.
_MADE = SharedCache(entries=8192, budget=64 << 20, size=lambda d: len(d.text) + 2 * len(d.table) + d.matrix.nbytes)


@dataclass(frozen=True)
class Size:
    """A heatmap's size in pixels, decided once from its shape, its room and the type in use."""

    cell: int  # a cell's width (and its height, but for a strip's rows)
    row: int  # a row's height: a strip's rows are as tall as their labels need
    fits: bool  # drawn at its own size; otherwise it takes its column's whole width


def size(n_cols: int, cell_px: int, room_px: int, scale: float, printed: int, strip: bool = False,
         across: int | None = None) -> Size:
    """The size of a heatmap of n_cols columns asked for cells of cell_px in room_px of width, at presenter mode's
    type scale, whose widest printed number has `printed` characters (0: it prints none).

    Cells are square and as asked, shrunk so `across` cells (by default its columns) fit the room, snapped to a few
    sizes (charts.cell_size): a (T, b) map drawn beside a (T, T) one, or a (T, 2) map whose T rows must not grow
    tall, passes across=T, and gets the cells a T-wide map would. A map that does not fit, or whose numbers would
    not fit its cells, takes its column's width instead: its rows grow tall enough for a line of numbers. A strip
    (a few rows of many narrow columns) has rows as tall as its labels.
    """
    room = int(room_px * scale)
    cell = charts.cell_size(across or n_cols, int(cell_px * scale), room)
    fits = cell * n_cols <= room and (not printed or cell >= charts.number_width(printed, scale))
    if printed and not fits:
        cell = max(cell, round(charts.px(charts.CELL_TEXT_PX, scale) * 1.6))
    return Size(cell, charts.strip_row(cell, scale) if strip else cell, fits)


@dataclass(frozen=True)
class Drawing:
    """A heatmap ready to send: its finished JSON, and what the export panel keeps of it. picked: on a clickable
    map, the row outlined (the query the page works out); None when not clickable. Shared by every session that
    draws the same heatmap: nothing in it is changed after it is made."""

    text: str
    table: bytes  # its numbers, sent beside text (ui.drawing.chart_data)
    data: ChartData
    fits: bool
    picked: int | None
    title: str
    matrix: np.ndarray
    row_labels: tuple
    col_labels: tuple
    alt: str  # its text for a screen reader, sent beside it (render.described)
    shape_line: str | None = None  # the subtitle it reads from its table (render.heading's `read`)
    title_read: bool = False  # it reads its title from its table too (render.heading's `title_read`)
    temperature: softmax.Temperature | None = None  # matrix holds scores; the map shows their softmax at a τ of its own


def show(matrix, row_labels, col_labels, title: str = "", key: str | None = None, **look) -> None:
    """Draw the heatmap of a matrix where the page is (`made` lists the settings of its look)."""
    draw(made(matrix, row_labels, col_labels, title, **look), key)


def made(matrix, row_labels, col_labels, title: str = "", subtitle: str = "", picked: int | None = None,
         max_width: int = ROOM_PX, cell_px: int = charts.CELL_PX, strip: bool = False, across: int | None = None,
         said_shape: str = "", said_title: str | None = None, **look) -> Drawing:
    """The heatmap of matrix (R, C), a label per row and per column, made once per process.

    subtitle: a grey line under the title (the matrix's shape). said_shape: what of it the text for a screen
    reader says, a part that no slider changes ("(T, d_k)", not "(7, 8)"). said_title: the same for a title that
    says what a control set ("row 7 “t” through layer norm"): the words no control changes ("the row looked at,
    through layer norm"), and the title is read from the map's table (render.show). picked: the rows are
    clickable, and this one is outlined. max_width: the pixels it may take; cell_px: the cells asked for; strip,
    across: see `size`, which decides. look: the rest of charts.heatmap_chart's settings (colours, domain, axis
    titles, annotate: print the numbers, by default up to 16 x 16)."""
    m = np.asarray(matrix)
    digest = hashlib.blake2b(np.ascontiguousarray(m).tobytes(), digest_size=16).digest()
    key = (digest, m.shape, str(m.dtype), tuple(map(str, row_labels)), tuple(map(str, col_labels)), title,
           subtitle, picked, max_width, cell_px, strip, across, said_shape, said_title, presenter.chart_scale(),
           tuple(sorted(look.items())))
    return _MADE.get(key, lambda: _make(m, list(row_labels), list(col_labels), title, subtitle, picked,
                                        (max_width, cell_px, strip, across), look, said_shape, said_title))


def _make(matrix: np.ndarray, row_labels: list, col_labels: list, title: str, subtitle: str, picked: int | None,
          asked: tuple, look: dict, said_shape: str = "", said_title: str | None = None) -> Drawing:
    n_rows, n_cols = matrix.shape
    annotate = look.pop("annotate", max(n_rows, n_cols) <= charts.ANNOTATE_MAX_CELLS)
    temperature = look.get("temperature")
    if temperature is None:
        numbers = charts.heatmap_frame(matrix, row_labels, col_labels, with_text=annotate)
        printed = max(map(len, numbers.columns["text"]), default=0) if annotate else 0  # e.g. "-0.12"
    else:  # scores, whose weights the browser works out and prints (ui.drawing.softmax)
        numbers = softmax.frame(matrix, charts.unique_labels(row_labels), charts.unique_labels(col_labels))
        printed = softmax.PRINTED if annotate else 0
    scale = presenter.chart_scale()
    max_width, cell_px, strip, across = asked
    sized = size(n_cols, cell_px, max_width, scale, printed, strip, across)
    # The design does not depend on the shape (or every slider move would build a new one): it is built for the
    # smallest cell that draws alike (charts.design_cell), and this map's own cells go in as its steps.
    # The shape line goes in the data, not the spec: a move that changes the shape alone leaves the spec as it was.
    line = subtitle if subtitle and len(numbers) else None  # the shape line the map reads from its table
    read = render.reads_title(numbers, said_title)
    alt = alt_text.heatmap(said_title if read else title, look.get("y_title", "query"), look.get("x_title", "key"),
                           line is not None, said_shape, read, from_scores=temperature is not None)
    text, _ = render.chart_text(
        charts.heatmap_chart, numbers, "content" if sized.fits else "stretch",
        step=sized.cell, row_step=sized.row, title=title, subtitle=subtitle, annotate=annotate,
        shape_line_read=line is not None, title_read=read,
        cell_px=charts.design_cell(sized.cell, scale), select_rows=picked is not None, font_scale=scale, **look)
    if picked is not None:  # the outlined row is a parameter of the design: set its value
        text = json.dumps(with_param(json.loads(text), charts.SHOWN_ROW, int(picked)), ensure_ascii=False)
    matrix = np.array(matrix)  # a copy of its own, read-only: it is shared by every session that draws it
    matrix.flags.writeable = False
    return Drawing(text, numbers.arrow(shape_line=line, title=title if read else None), numbers, sized.fits, picked,
                   title, matrix, tuple(row_labels), tuple(col_labels), alt, line, read, temperature)


def with_param(spec: dict, name: str, value) -> dict:
    """A shallow copy of spec whose top-level parameter `name` has this value (the cached design is shared)."""
    params = [{**p, "value": value} if p.get("name") == name else p for p in spec.get("params", [])]
    return {**spec, "params": params}


def draw(drawing: Drawing, key: str | None = None, on_pick: Callable[[int], None] | None = None,
         own: chart_controls.Values | None = None) -> None:
    """Send a made heatmap where the page is, and record it for the export panel. On a clickable one, a click on
    row i calls on_pick(i) before the rerun it starts (a widget callback), so the page draws with that row picked.
    own: the values of the temperature slider a map drawn from scores carries (own_controls)."""
    d = drawing
    width = "content" if d.fits else "stretch"
    if own is not None:
        _draw_softmax(d, own, on_pick, width)
        return
    if d.picked is not None and key is not None:
        # A key of its own for each picked row: the chart comes back with no selection of its own, so a
        # click on the row picked before the "Query row" control moved away still counts as a new click.
        key = f"{key}_{d.picked}"
        render.draw_spec(json.loads(d.text), d.table, key=key, on_select=functools.partial(_clicked, key, on_pick),
                         width=width, alt=d.alt)
    else:
        send.chart(d.text, width, d.table, alt=d.alt)
    export.record(d.title, d.matrix, d.row_labels, d.col_labels,
                  functools.partial(render.file_spec, d.text, d.data, d.alt, d.shape_line,
                                    d.title if d.title_read else None))


def own_controls(drawing: Drawing, name: str) -> chart_controls.Values | None:
    """The values of the controls a made map draws itself (a map drawn from scores: its temperature), pinned to its
    design under `name` (ui.state.chart_controls); None for a map with none."""
    t = drawing.temperature
    if t is None:
        return None
    return chart_controls.values(name, [chart_controls.number(t.key, t.lo, t.hi, t.default, softmax.FIELD)],
                                 drawing.text)


def _draw_softmax(d: Drawing, own: chart_controls.Values, on_pick: Callable[[int], None] | None, width: str) -> None:
    """A map drawn from scores, its slider at the value pinned in its design, under its pinned key, its table the
    scores and the weights at the slider's value now (softmax.with_weights); the export panel gets those weights, as
    core computes them, and the map drawn at it."""
    (control,), key = own.controls, own.key
    spec = with_param(json.loads(d.text), control.key, chart_controls.selected(control, own.first[0]))
    picks = (charts.PICK,) if d.picked is not None else ()
    table = softmax.with_weights(d.data, d.matrix, own.now[0]).arrow(shape_line=d.shape_line,
                                                                    title=d.title if d.title_read else None)
    render.draw_spec(spec, table, key=key, on_select=functools.partial(_clicked, key, on_pick) if picks else "rerun",
                     width=width, alt=d.alt, selection_mode=(*picks, control.key))
    now = json.dumps(with_param(spec, control.key, chart_controls.selected(control, own.now[0])), ensure_ascii=False)
    export.record(d.title, softmax.weights(d.matrix, own.now[0]), d.row_labels, d.col_labels,
                  functools.partial(render.file_spec, now, d.data, d.alt, d.shape_line,
                                    d.title if d.title_read else None))


def _clicked(key: str, on_pick: Callable[[int], None] | None) -> None:
    row = picked_row(st.session_state.get(key))
    if row is not None and on_pick is not None:
        on_pick(row)


def picked_row(state) -> int | None:
    """The row index a click selected on a heatmap drawn with picked rows, or None."""
    try:
        points = state["selection"][charts.PICK]
    except (KeyError, TypeError):
        return None
    if isinstance(points, list) and points and "row_i" in points[0]:
        return int(points[0]["row_i"])
    return None

"""Drawing charts fast: each design built once per process, each finished heatmap made once per process.

Building an Altair chart and validating it costs ~30 ms per heatmap; a page with eight of them would
spend a quarter of a second on that alone. The spec depends only on a chart's shape and settings, so
it is built once per process (keyed by the builder function and its settings), written as JSON once
(ui.drawing.send), and every rerun puts just its numbers into it, as plain lists (ui.drawing.chart_data: no
DataFrame, no Arrow).

A heatmap is a pure function of its matrix, labels and settings, and a class moves the same sliders through
the same values: a finished heatmap (its JSON, its description) is kept for the whole process, keyed by those,
so the second student who draws it finds it made (ui.cache).
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
from ui.drawing import alt_text, charts, colours, export, send
from ui.drawing.chart_data import ChartData
from ui.state import presenter

_SPECS = SharedCache(entries=512)  # (builder, settings) -> spec without data
_DESIGNS = SharedCache(entries=1024)  # (builder, settings, titled, width, described) -> send.Design
# (matrix, labels, settings) -> HeatmapDrawing. A heatmap's JSON is 3-90 KB: 64 MB holds thousands.
_HEATMAPS = SharedCache(entries=8192, budget=64 << 20, size=lambda d: len(d.text) + d.matrix.nbytes)


def _spec(builder: Callable, settings: tuple) -> dict:
    """The chart's spec without its data. Keyed by the builder itself (a function is hashable) and its
    (small, hashable) settings; a module reloaded by the dev server brings new functions, so new keys."""
    # Validation against the Vega-Lite schema is most of the build cost; the same design is validated
    # in the unit tests (tests/ui/test_charts.py), so skip it here.
    def build() -> dict:
        spec = builder(**dict(settings)).to_dict(validate=False)
        spec.pop("data", None)
        spec.pop("datasets", None)
        return spec

    return _SPECS.get((builder, settings), build)


def _design(builder: Callable, settings: tuple, titled: bool, width: str | None, described: bool,
            stepped: bool = False, columned: bool = False) -> send.Design:
    """The design of builder(**settings) as JSON with holes (ui.drawing.send), titled or not; stepped: its
    width and height are steps each draw gives; columned: so is a facet's number of columns."""
    def build() -> send.Design:
        spec = dict(_spec(builder, settings))
        if titled:
            spec["title"] = ""  # a hole: each draw gives its own
        return send.design(spec, width, described, stepped, columned)

    return _DESIGNS.get((builder, settings, titled, width, described, stepped, columned), build)


def spec_for(builder: Callable, **settings) -> dict:
    """The cached spec of builder(**settings); settings must be hashable (numbers, strings, tuples).

    A plain per-process LRU cache, not st.cache_resource: the key is a short tuple, and Streamlit's
    cache hashed it at ~4 ms a call, more than the chart itself costs to send. The title and its
    subtitle (a grey line under it: a matrix's shape) are left out of the key and set on a shallow copy:
    titles that carry a live number (a temperature, a head) would otherwise make every slider position
    a new design to build. Presenter mode's type scale goes to the builder as font_scale, so it is part
    of the key.
    """
    title, subtitle = settings.pop("title", ""), settings.pop("subtitle", "")
    if "font_scale" not in settings:
        settings["font_scale"] = presenter.chart_scale()
    spec = _spec(builder, tuple(sorted(settings.items())))
    if not title and not subtitle:
        return spec
    return {**spec, "title": heading(title, subtitle, settings["font_scale"])}


def heading(title: str, subtitle: str, scale: float) -> dict:
    """A chart's title, and its subtitle (a grey line under it) when there is one, at the type scale in use."""
    out = {"text": title, "fontSize": charts.px(charts.CHART_TITLE_PX, scale), "anchor": "start"}
    if subtitle:
        out.update(subtitle=subtitle, subtitleFontSize=charts.px(charts.LABEL_PX, scale),
                   subtitleColor=colours.subtitle_colour())
    return out


def chart_text(builder: Callable, data: ChartData, width: str | None = None, description: str | None = None,
               step: int | None = None, columns: int | None = None, row_step: int | None = None,
               **settings) -> tuple[str, send.Design]:
    """builder(**settings) with `data` as the JSON ui.drawing.send sends, and its design (which knows its
    width). description: the chart's text for screen readers (else alt_text's, for the builders it knows).
    step: each cell's size, for a design built for another size that draws alike (charts.design_cell), and
    row_step each row's height when it differs;
    columns: a facet's panels to a row, for a design built for another number."""
    title, subtitle = settings.pop("title", ""), settings.pop("subtitle", "")
    settings.setdefault("font_scale", presenter.chart_scale())
    if description is None:
        description = alt_text.for_chart(builder, data, {**settings, "title": title})
    design = _design(builder, tuple(sorted(settings.items())), bool(title or subtitle), width, bool(description),
                     stepped=step is not None, columned=columns is not None)
    titled = heading(title, subtitle, settings["font_scale"]) if title or subtitle else None
    return design.fill(data, title=titled, description=description, step=step, columns=columns,
                       row_step=row_step), design


def show_grid(data: ChartData, columns: int, cell_px: int, title: str) -> None:
    """A grid of attention maps (charts.grid_chart, a charts.grid_frame) of `columns` panels to a row, on cells
    of cell_px: one design serves every number of columns and every cell size that draws alike.

    On a phone a grid of several maps to a row is wider than the screen: its frame scrolls sideways and says so
    (ui.state.presenter.BASE_CSS). It is sent once: a second copy laid out one map under another, shown by screen
    width, doubled what a move sends and lost slider moves in the part that held both (bench/budget.py)."""
    scale = presenter.chart_scale()
    text, design = chart_text(charts.grid_chart, data, step=cell_px, columns=columns, title=title,
                              cell_px=charts.design_cell(cell_px, scale), font_scale=scale)
    send.chart(text, design.width)


def show(builder: Callable, data: ChartData, key: str | None = None, on_select: str = "ignore",
         width: str | None = None, description: str | None = None, record: Recorded | None = None, **settings):
    """Render builder(**settings) (a chart builder that takes `data=None`) with `data`, a table from
    ui.drawing.charts or ui.drawing.plots (or a ChartData built by hand).

    Returns the selection state when on_select is set. Pass width="stretch" for charts whose spec
    says width="container" (bars, lines), "content" for one drawn at its own size. description: the
    text a screen reader reads for it, when ui.drawing.alt_text does not know the builder. record: the chart's
    numbers as a matrix, for the export panel (its CSV; its PNG and SVG are this chart as drawn).
    """
    if on_select != "ignore":  # a chart that reports clicks is a widget: Streamlit's own path
        spec = data.inline(spec_for(builder, **settings))  # a fresh dict: the cached design stays as it was
        text = description or alt_text.for_chart(builder, data, settings)
        if text:
            spec["description"] = text  # the drawn svg's aria-label
        return _draw(spec, key=key, on_select=on_select, width=width, alt=text)
    title = settings.get("title", "")
    text, design = chart_text(builder, data, width, description, **settings)
    send.chart(text, design.width)
    if record is not None:
        export.record(title, record.matrix, record.rows, record.cols, functools.partial(json.loads, text))
    return None


@dataclass(frozen=True)
class Recorded:
    """A chart's numbers as the export panel keeps them: a matrix (R, C), a label per row and per column."""

    matrix: np.ndarray
    rows: list
    cols: list


def describe(matrix, row_labels, col_labels, title: str) -> str:
    """A text alternative for a heatmap: its size, range and largest cell, for screen readers."""
    return alt_text.heatmap(matrix, row_labels, col_labels, title)[:alt_text.MAX_CHARS]


def _draw(spec: dict, key: str | None, on_select: str | Callable, width: str | None, alt: str | None = None):
    """Send a whole spec, its data inside it (Streamlit then has no data of its own to convert)."""
    kwargs = {"key": key} if key else {}
    # A spec's own description already names its svg; Streamlit 1.67 logs a warning with a whole stack
    # trace, at every draw, when alt is given as well, so alt goes only to a spec without one.
    if alt and not spec.get("description"):
        kwargs["alt"] = alt[:500]
    if width:
        kwargs["width"] = width
    if on_select != "ignore":
        kwargs.update(on_select=on_select, selection_mode="pick")
    return st.vega_lite_chart(spec, **kwargs)


@dataclass(frozen=True)
class HeatmapDrawing:
    """A heatmap ready to send: its finished JSON (ui.drawing.send), and what the export panel keeps of it.
    fits: it is drawn at its own size (its cells and numbers fit); otherwise it takes its column's width.
    picked: on a clickable heatmap, the row outlined (the query the page works out); None when not clickable.
    Shared by every session that draws the same heatmap: nothing in it is changed after it is made."""

    text: str
    fits: bool
    picked: int | None
    title: str
    matrix: np.ndarray
    row_labels: tuple
    col_labels: tuple
    description: str

    @property
    def spec(self) -> dict:
        """The chart as a dict (a fresh one: the exports and Streamlit's path for clickable charts)."""
        return json.loads(self.text)


def heatmap_drawing(matrix, row_labels, col_labels, title: str = "", picked: int | None = None,
                    max_width: int = 300, subtitle: str = "", **settings) -> HeatmapDrawing:
    """Heatmap of a matrix with token labels, ready for draw_heatmap. subtitle is a grey line under the
    title (ui.sections.views puts the matrix's shape there). picked, when given, makes the rows clickable and
    outlines that row.

    Cells are square while the plot fits in max_width pixels (about a half-width column; pass more for a
    chart that has the page to itself) and its numbers fit in them. A matrix too wide for that, or whose
    numbers would not fit its cells, takes its column's whole width instead: its cells grow wider, never
    narrower than the numbers at the type size in use (presenter mode scales both).

    Made once per process for each matrix, labels and settings (every session that draws the same one shares it).
    """
    m = np.asarray(matrix)
    digest = hashlib.blake2b(np.ascontiguousarray(m).tobytes(), digest_size=16).digest()
    key = (digest, m.shape, str(m.dtype), tuple(map(str, row_labels)), tuple(map(str, col_labels)), title,
           subtitle, picked, max_width, presenter.chart_scale(), tuple(sorted(settings.items())))
    return _HEATMAPS.get(key, lambda: _make_heatmap(m, list(row_labels), list(col_labels), title, picked,
                                                    max_width, subtitle, dict(settings)))


def _make_heatmap(matrix: np.ndarray, row_labels: list, col_labels: list, title: str, picked: int | None,
                  max_width: int, subtitle: str, settings: dict) -> HeatmapDrawing:
    n_rows, n_cols = np.shape(matrix)
    settings.setdefault("annotate", max(n_rows, n_cols) <= charts.ANNOTATE_MAX_CELLS)
    df = charts.heatmap_frame(matrix, row_labels, col_labels, with_text=settings["annotate"])
    scale = presenter.chart_scale()
    room = int(max_width * scale)
    cell = charts.cell_size(n_cols, int(settings.pop("cell_px", charts.CELL_PX) * scale), room)
    longest = max(map(len, df.columns["text"]), default=0) if settings["annotate"] else 0
    numbers_fit = cell >= charts.number_width(longest, scale)  # the widest number printed, e.g. "-0.12"
    fits = cell * n_cols <= room and (numbers_fit or not settings["annotate"])
    if settings["annotate"] and not fits:  # rows tall enough for a line of numbers
        cell = max(cell, round(charts.px(charts.CELL_TEXT_PX, scale) * 1.6))
    # A strip (a few rows of many narrow columns): its rows are as tall as their labels need, which narrow cells
    # are not (a 12 px row under 12 px labels with accents drew them over each other).
    row = charts.strip_row(cell, scale) if settings.get("strip") else cell
    # The spec must not depend on the shape (or every slider move would rebuild it): pass the
    # snapped cell size and the annotate flag instead of n_rows / n_cols.
    description = describe(matrix, row_labels, col_labels, title)  # per matrix: its extremes move
    # The design is built for the smallest cell size that draws alike (so a new size rarely means a new design),
    # and this heatmap's own size goes in as its step.
    settings = dict(cell_px=charts.design_cell(cell, scale), title=title, subtitle=subtitle,
                    select_rows=picked is not None, font_scale=scale, **settings)
    text, _ = chart_text(charts.heatmap_chart, df, "content" if fits else "stretch", description, step=cell,
                         row_step=row, **settings)
    if picked is not None:  # the outlined row is a parameter of the design: set its value
        spec = with_param(json.loads(text), charts.SHOWN_ROW, int(picked))
        text = json.dumps(spec, ensure_ascii=False)
    matrix = np.array(matrix)  # a copy of its own, read-only: it is shared by every session that draws it
    matrix.flags.writeable = False
    return HeatmapDrawing(text, fits, picked, title, matrix, tuple(row_labels), tuple(col_labels), description)


def with_param(spec: dict, name: str, value) -> dict:
    """A shallow copy of spec whose top-level parameter `name` has this value (the cached design is shared)."""
    params = [{**p, "value": value} if p.get("name") == name else p for p in spec.get("params", [])]
    return {**spec, "params": params}


def draw_heatmap(drawing: HeatmapDrawing, key: str | None = None, on_pick: Callable[[int], None] | None = None):
    """Send a heatmap_drawing where the page is. On a clickable one, a click on row i calls on_pick(i)
    before the rerun it starts (a widget callback), so the page draws with that row already picked."""
    d = drawing
    width = "content" if d.fits else "stretch"
    if d.picked is not None and key is not None:
        # A key of its own for each picked row: the chart comes back with no selection of its own, so a
        # click on the row picked before the "Query row" control moved away still counts as a new click.
        key = f"{key}_{d.picked}"
        _draw(d.spec, key=key, on_select=functools.partial(_clicked, key, on_pick), width=width)
    else:
        send.chart(d.text, width)
    export.record(d.title, d.matrix, d.row_labels, d.col_labels, functools.partial(json.loads, d.text))


def _clicked(key: str, on_pick: Callable[[int], None] | None) -> None:
    row = picked_row(st.session_state.get(key))
    if row is not None and on_pick is not None:
        on_pick(row)


def show_heatmap(matrix, row_labels, col_labels, title: str = "", key: str | None = None, **settings) -> None:
    """heatmap_drawing(...) drawn at once (see there for the settings)."""
    draw_heatmap(heatmap_drawing(matrix, row_labels, col_labels, title, **settings), key)


def picked_row(state) -> int | None:
    """The row index a click selected on a heatmap drawn with select_rows, or None."""
    try:
        points = state["selection"]["pick"]
    except (KeyError, TypeError):
        return None
    if isinstance(points, list) and points and "row_i" in points[0]:
        return int(points[0]["row_i"])
    return None

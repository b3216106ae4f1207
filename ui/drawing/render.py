"""Drawing charts fast: each design built once per process, and a draw puts only its numbers into it.

Building an Altair chart and validating it costs ~30 ms per heatmap; a page with eight of them would
spend a quarter of a second on that alone. The spec depends only on a chart's shape and settings, so
it is built once per process (keyed by the builder function and its settings), written as JSON once
(ui.drawing.send), and every rerun sends just its numbers beside it, built from plain lists (ui.drawing.chart_data:
no DataFrame): a chart whose design did not change is updated in the browser, not drawn again.

A heatmap goes this way too, through ui.drawing.heatmap, which also keeps each finished heatmap for the process.
A heatmap's design for cells of another size is not built again but resized from the one built for the default
cells (ui.drawing.resize): a slider that changes a matrix's width made a new build, 35 ms, for each new size.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from ui.cache import SharedCache
from ui.drawing import alt_text, charts, colours, export, resize, send
from ui.drawing.chart_data import DATASET, SHAPE_LINE, TITLE, ChartData
from ui.state import presenter

_SPECS = SharedCache(entries=512)  # (builder, settings) -> spec without data
_DESIGNS = SharedCache(entries=1024)  # (builder, settings, titled, width, described) -> send.Design


def _spec(builder: Callable, settings: tuple) -> dict:
    """The chart's spec without its data. Keyed by the builder itself (a function is hashable) and its
    (small, hashable) settings; a module reloaded by the dev server brings new functions, so new keys."""
    # Validation against the Vega-Lite schema is most of the build cost; the same design is validated
    # in the unit tests (tests/ui/test_charts.py), so skip it here.
    def build(settings: tuple = settings) -> dict:
        made = builder(**dict(settings))  # an Altair chart, or a design written as a dict (ui.drawing.panels)
        spec = made if isinstance(made, dict) else made.to_dict(validate=False)
        spec.pop("data", None)
        spec.pop("datasets", None)
        return spec

    given = dict(settings)
    if builder in resize.RESIZABLE and given.get("cell_px", charts.CELL_PX) != charts.CELL_PX:
        # built once for the default cells, then resized (ui.drawing.resize): a new size costs no new build
        base = tuple(sorted({**given, "cell_px": charts.CELL_PX}.items()))
        return _SPECS.get((builder, settings), lambda: resize.for_cells(
            _SPECS.get((builder, base), lambda: build(base)), given["cell_px"], given.get("font_scale", 1.0)))
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


def heading(title: str, subtitle: str, scale: float, read: bool = False, title_read: bool = False) -> dict:
    """A chart's title, and its subtitle (a grey line under it) when there is one, at the type scale in use.

    read: the subtitle is read from the first row of the chart's table (its column SHAPE_LINE, sent by
    ChartData.arrow(shape_line=subtitle)) instead of written in the spec; an empty table reads an empty line. A
    heatmap's subtitle is its shape, and many moves (d_k, d_model, seq_len) change a matrix's shape and leave its
    cells the same size; written in the spec, the shape made the browser throw the map away and draw it anew on
    every such move (bench/README.md). title_read: so is the title (column TITLE), for a title that says what a
    control set ("row 7 “t” through layer norm")."""
    out = {"text": {"expr": READ_TITLE} if title_read else title,
           "fontSize": charts.px(charts.CHART_TITLE_PX, scale), "anchor": "start"}
    if subtitle:
        out.update(subtitle={"expr": READ_SHAPE_LINE} if read else subtitle,
                   subtitleFontSize=charts.px(charts.LABEL_PX, scale), subtitleColor=colours.subtitle_colour())
    return out


def _read(column: str) -> str:
    """A Vega expression for the text in the first row of the chart's table's column, or '' for an empty table."""
    return f"length(data('{DATASET}')) ? data('{DATASET}')[0]['{column}'] : ''"


READ_SHAPE_LINE = _read(SHAPE_LINE)
READ_TITLE = _read(TITLE)


def chart_text(builder: Callable, data: ChartData, width: str | None = None, step: int | None = None,
               columns: int | None = None, row_step: int | None = None, shape_line_read: bool = False,
               title_read: bool = False, **settings) -> tuple[str, send.Design]:
    """builder(**settings) drawn with `data` as the JSON ui.drawing.send sends (the data goes beside it, as
    data.arrow()), and its design (which knows its width). step: each cell's size, for a design built for
    another size that draws alike (charts.design_cell), and row_step each row's height when it differs;
    columns: a facet's panels to a row, for a design built for another number. shape_line_read, title_read: the
    subtitle, the title, is read from the data (heading's `read`, `title_read`; the data then goes as
    data.arrow(shape_line=subtitle, title=title)).

    The chart's text for screen readers goes beside it (described), as the element's alt."""
    title, subtitle = settings.pop("title", ""), settings.pop("subtitle", "")
    settings.setdefault("font_scale", presenter.chart_scale())
    design = _design(builder, tuple(sorted(settings.items())), bool(title or subtitle), width, False,
                     stepped=step is not None, columned=columns is not None)
    titled = heading(title, subtitle, settings["font_scale"], shape_line_read, title_read) \
        if title or subtitle else None
    return design.fill(title=titled, step=step, columns=columns, row_step=row_step), design


def reads_title(data: ChartData, said_title: str | None) -> bool:
    """Whether a chart reads its title from its table: its caller gave the title's words that no control changes
    (said_title, for the text a screen reader reads), and the table has a first row to hold it."""
    return said_title is not None and len(data) > 0


def described(builder: Callable, data: ChartData, description: str | None = None, title_read: bool = False,
              **settings) -> str:
    """The text a screen reader reads for a chart (description, else alt_text's for the builders it knows), sent
    as the element's alt. Streamlit's frontend writes the alt into the spec's description before it decides
    whether to keep the drawn chart, so a text that changes with a move rebuilds the chart as a changed spec
    would: it must say what the chart is, never its numbers or labels (ui.drawing.alt_text). title_read: the chart
    reads its title from its table, and the title in settings is the words no control changes."""
    return description if description is not None else alt_text.for_chart(builder, data, settings, title_read)


def show_grid(data: ChartData, columns: int, cell_px: int, title: str, said_title: str | None = None) -> None:
    """A grid of attention maps (charts.grid_chart, a charts.grid_frame) of `columns` panels to a row, on cells
    of cell_px: one design serves every number of columns and every cell size that draws alike. said_title: see
    `show`.

    On a phone a grid of several maps to a row is wider than the screen: its frame scrolls sideways and says so
    (ui.state.presenter.BASE_CSS). It is sent once: a second copy laid out one map under another, shown by screen
    width, doubled what a move sends and lost slider moves in the part that held both (bench/budget.py)."""
    scale = presenter.chart_scale()
    read = reads_title(data, said_title)
    settings = dict(cell_px=charts.design_cell(cell_px, scale), font_scale=scale)
    text, design = chart_text(charts.grid_chart, data, step=cell_px, columns=columns, title=title, title_read=read,
                              **settings)
    alt = described(charts.grid_chart, data, None, read, **settings, title=said_title if read else title)
    send.chart(text, design.width, data.arrow(title=title if read else None), alt=alt)


def show(builder: Callable, data: ChartData, key: str | None = None, on_select: str = "ignore",
         width: str | None = None, description: str | None = None, record: Recorded | None = None,
         said_title: str | None = None, selection_mode: str | tuple[str, ...] = "pick", **settings):
    """Render builder(**settings) (a chart builder that takes `data=None`) with `data`, a table from
    ui.drawing.charts or ui.drawing.plots (or a ChartData built by hand).

    Returns the selection state when on_select is set. Pass width="stretch" for charts whose spec
    says width="container" (bars, lines), "content" for one drawn at its own size. description: the
    text a screen reader reads for it, when ui.drawing.alt_text does not know the builder. record: the chart's
    numbers as a matrix, for the export panel (its CSV; its PNG and SVG are this chart as drawn). said_title: the
    words of a title that says what a control set ("temperature 0.8") without it ("P(next | prompt)"): the title
    is then read from the chart's table (render.heading's title_read) and the text for screen readers says these
    words, so that a move of that control keeps the drawn chart (a description given says the title itself).
    """
    if on_select != "ignore":  # a chart that reports clicks is a widget: Streamlit's own path
        spec = data.named(spec_for(builder, **settings))  # a fresh dict: the cached design stays as it was
        text = description or alt_text.for_chart(builder, data, settings)
        if text:
            spec["description"] = text  # the drawn chart's aria-label
        return draw_spec(spec, data.arrow(), key=key, on_select=on_select, width=width, alt=text,
                         selection_mode=selection_mode)
    title = settings.get("title", "")
    read = reads_title(data, said_title)
    said = {**settings, "title": said_title} if read else settings
    alt = described(builder, data, description, read, **{"font_scale": presenter.chart_scale(), **said})
    text, design = chart_text(builder, data, width, title_read=read, **settings)
    send.chart(text, design.width, data.arrow(title=title if read else None), alt=alt)
    if record is not None:
        export.record(title, record.matrix, record.rows, record.cols,
                      functools.partial(file_spec, text, data, alt, None, title if read else None))
    return None


def record_file(builder: Callable, data: ChartData, record: Recorded, description: str | None = None,
                **settings) -> None:
    """Record a chart for the export panel as builder(**settings) with `data` draws it (its PNG and SVG made from
    that design only if asked for): for a chart drawn from other settings than the ones a file must show, such as
    a design whose own controls the browser has moved since (ui.state.chart_controls)."""
    def made() -> dict:  # only when a file is asked for: the panel records on every run
        return file_spec(json.dumps(data.named(spec_for(builder, **settings)), ensure_ascii=False), data, description)

    export.record(settings.get("title", ""), record.matrix, record.rows, record.cols, made)


def file_spec(text: str, data: ChartData, description: str | None = None, shape_line: str | None = None,
              title: str | None = None) -> dict:
    """A sent chart (its JSON, and the data sent beside it, and its text for screen readers) as one spec with the
    numbers inside, for a file (an SVG names itself by the description); a subtitle and a title the chart read
    from its data (heading's `read`, `title_read`) written in as shape_line and title."""
    spec = data.inlined(json.loads(text))
    if description:
        spec["description"] = description
    heading_ = spec.get("title")
    if isinstance(heading_, dict):
        if shape_line is not None and isinstance(heading_.get("subtitle"), dict):
            heading_ = {**heading_, "subtitle": shape_line}
        if title is not None and isinstance(heading_.get("text"), dict):
            heading_ = {**heading_, "text": title}
        spec["title"] = heading_
    return spec


@dataclass(frozen=True)
class Recorded:
    """A chart's numbers as the export panel keeps them: a matrix (R, C), a label per row and per column."""

    matrix: np.ndarray
    rows: list
    cols: list


def draw_spec(spec: dict, table: bytes, key: str | None, on_select: str | Callable, width: str | None,
              alt: str | None = None, selection_mode: str | tuple[str, ...] = "pick"):
    """Send a spec made by ChartData.named through Streamlit's own chart, with its numbers (ChartData.arrow) as
    the dataset it reads; selection_mode: the spec's selections it reports (a clickable map's row, "pick")."""
    spec = {**spec, "datasets": {DATASET: table}}
    kwargs = {"key": key} if key else {}
    # A spec's own description already names its svg; Streamlit 1.67 logs a warning with a whole stack
    # trace, at every draw, when alt is given as well, so alt goes only to a spec without one.
    if alt and not spec.get("description"):
        kwargs["alt"] = alt[:500]
    if width:
        kwargs["width"] = width
    if on_select != "ignore":
        kwargs.update(on_select=on_select, selection_mode=list(selection_mode) if isinstance(selection_mode, tuple)
                      else selection_mode)
    return st.vega_lite_chart(spec, **kwargs)

"""Maps of one shape side by side, drawn as the panels of one chart: W_Q, W_K and W_V; Q, K and V.

    panels.show(np.stack([Q, K, V]), ["Q", "K", "V"], tokens, dims, "Q, K, V, each on its own colour scale",
                "each map · shape (7, 8) = (T, d_k)", ...)

A map that is a chart of its own costs a move about 11 ms in the browser and 1.6 ms of the server's CPU; the same
map as one panel of a chart, 4.6 and 0.7 (bench/README.md, element_costs.py): most of a map's cost is its being a
chart at all. So maps that stand side by side and share their labels go as one chart. The panels keep what the
maps had apart: each its own colour scale and legend (resolved independently: a map's colours say what they said
on their own), its own axes (a panel wrapped onto a second row keeps its column labels), its name in a header above
it. Maps of one quantity in two settings, compared cell by cell (Masking's outputs without and with the mask; Tiles'
tiled and full outputs), share one colour scale instead (shared), so that equal numbers look equal. One shape line
under the chart's title serves them all, read from its table, as a map's is (ui.drawing.render.heading). The export
panel keeps each map as a matrix and a chart of its own.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import numpy as np

from ui.drawing import alt_text, charts, export, heatmap, render, send
from ui.state import phone, presenter

# The main column of a 1280 px window with the sidebar open (measured in Chromium): the narrowest desktop a row of
# panels must fit.
ROW_PX = 820
# What a panel takes besides its cells, at a type scale of 1, as Chromium draws it (tests/ui/test_panels.py holds
# these to Vega's layout, bench/README.md to Chromium's):
LEGEND_PX = 170  # its colour legend under it, when wider than its cells (charts._cells' gradient, 160 px, and labels)
CHAR_PX = 7  # a character of a row label (a little over their average width)
NAME_CHAR_PX = 6.6  # a character of its name, bold, at the labels' size
OVERHANG_PX = 14  # its last column's label, slanted, past its last cell
LABEL_LIMIT_PX = 90  # the longest row label drawn (charts._axes' labelLimit): a longer one is cut short
EDGE_PX = 46  # its row axis's title and ticks, and the space between panels
SMALLEST_CELL_PX = 3  # 64 columns in a phone's column: the axes keep every label they have room for (charts.label_look)
SENT_SCALE_PREFIX = "concat_0_"  # what Vega-Lite puts before a scale's name in the one view of a vconcat
PANEL_KEYS = ("layer", "width", "height")  # what of a heatmap's design each panel is; the rest is the chart's
EXTENT = {"_lo", "_hi"}  # the fields of the extent a map's numbers take their ink from (charts._numbers)


def panels_design(columns: int = 3, cell_px: int = charts.CELL_PX, font_scale: float = 1.0, shared: bool = False,
                  **look) -> dict:
    """The design of heatmaps of one shape as a facet of `columns` panels to a row: each panel is the design
    charts.heatmap_chart(cell_px=..., font_scale=..., **look) has (its cells, its numbers where they fit, its
    legend under it), on a colour scale of its own and with axes of its own, named by its header (the table's
    label column `panel`). shared: the panels share one colour scale, its legend under them all (one quantity in
    two settings, compared cell by cell: the same colour is the same number in every panel).

    Written as Vega-Lite's facet around the heatmap's design, as render keeps it (shared with the maps drawn
    alone, resized for other cells), not built with Altair: Altair copies the whole chart at each step, and a
    facet took 140-300 ms to build, the interpreter held all along, while every student of a class arriving at
    a fresh server waited (bench/README.md). tests/ui/test_panels.py holds it to the chart Altair builds."""
    # select_rows as a map that is not clickable gives it (ui.drawing.heatmap): the same key, the same design
    inner = render.spec_for(charts.heatmap_chart, cell_px=cell_px, font_scale=font_scale, select_rows=False, **look)
    inner = json.loads(sent_names(json.dumps(inner)))  # a copy of its own: the heatmap's design is shared
    header = {"labelAnchor": "start", "labelFont": charts.FONT, "labelFontSize": charts.px(charts.LABEL_PX, font_scale),
              "labelFontWeight": "bold", "title": None}
    spec = {key: value for key, value in inner.items() if key not in PANEL_KEYS}
    facet = {**spec, "facet": {"field": "panel", "header": header, "sort": {"field": "panel_i"}, "title": None,
                               "type": "nominal"},
             "spec": {key: inner[key] for key in PANEL_KEYS if key in inner}, "columns": columns,
             "resolve": {"axis": {"x": "independent", "y": "independent"},
                         "scale": {"color": "shared" if shared else "independent"}}}
    if shared:  # the numbers' ink follows the colour scale's extent: over every panel, not each its own
        extent = [step for layer in facet["spec"]["layer"] for step in layer.get("transform", [])
                  if step.get("joinaggregate") and {a["as"] for a in step["joinaggregate"]} == EXTENT]
        for layer in facet["spec"]["layer"]:
            layer["transform"] = [step for step in layer.get("transform", []) if step not in extent]
        facet["transform"] = extent[:1]  # run before the facet splits the table into its panels
    return facet


def sent_names(text: str) -> str:
    """A heatmap's design (as JSON) with its expressions' scale names as Vega-Lite names them in a chart of panels
    as sent: the facet is the one view of a vconcat (ui.drawing.chart_data.inner_kind), whose scales are
    concat_0_x and concat_0_y. The test of whether a map's numbers fit its cells reads their width by the scale's
    name; by "x" it read nothing there, and no panel printed its numbers (tests/ui/test_panels.py draws the chart
    as sent)."""
    for channel in ("x", "y"):
        text = text.replace(f"bandwidth('{channel}')", f"bandwidth('{SENT_SCALE_PREFIX}{channel}')")
    return text


def layout(n_cols: int, names: list[str], row_labels: list[str], cell_px: int, printed: int, scale: float
           ) -> tuple[int, int]:
    """(cell_px, columns) for maps of n_cols columns, one a panel named by `names`, with these row labels, whose
    widest number has `printed` characters: cells as asked, shrunk so that the panels fit side by side in a
    desktop's main column (on a phone, one a row: each keeps its legend), grown to print the numbers when they
    still fit; as many to a row as fit. On a projector (presenter mode) the cells are a desktop's, 1.5 times as
    large, and the panels wrap as its column needs."""
    room = Room(n_cols, len(names), max(map(len, names), default=0), max(map(len, row_labels), default=0))
    if phone.on_phone():
        return room.fitted(cell_px, printed, phone.COLUMN_PX, 1.0, alone=True)
    if not presenter.presenting():
        return room.fitted(cell_px, printed, ROW_PX, scale)
    desktop, _ = room.fitted(cell_px, printed, ROW_PX, 1.0)
    row = min(int(ROW_PX * scale), presenter.COLUMN_PX)
    cell = round(desktop * scale)  # not snapped again: a desktop's cells, exactly as much larger as the type
    return cell, room.columns(cell, row, scale)


SHORTEST_PRINTED = 3  # the fewest characters a map prints in a cell: "NaN", "inf", a number at one decimal ("0.5")


def numbers_drawn(annotate: bool, cell: int, scale: float) -> bool:
    """Whether the page's design of the panels holds their layer of numbers: not where a cell is too small for any
    number a map prints (the chart's own test of a number's width, charts._numbers, would fail on every cell). Vega
    would still work out and test every cell's number on every move: 30-56% of the update of QKV's and Multi-head's
    panels of 22 px cells in Chromium (bench/README.md). A file of a panel is drawn at cells wide enough for its
    numbers (chart_files), so it prints them as before."""
    return annotate and cell >= charts.number_width(SHORTEST_PRINTED, scale)


@dataclass(frozen=True)
class Room:
    """What decides how wide a panel is: its columns, how many panels, the longest name and row label."""

    n_cols: int
    panels: int
    name_chars: int
    label_chars: int

    def beside(self, scale: float) -> int:
        """A panel's width beside its cells: its row labels, its row axis and the space to the next."""
        return int((min(self.label_chars * CHAR_PX, LABEL_LIMIT_PX) + EDGE_PX) * scale)

    def width(self, cell: int, scale: float) -> int:
        """A panel's width on cells of `cell` px: its cells and the label past them (or its legend or its name, if
        wider), and beside."""
        least = int(max(LEGEND_PX, self.name_chars * NAME_CHAR_PX) * scale)
        return max(cell * self.n_cols + int(OVERHANG_PX * scale), least) + self.beside(scale)

    def columns(self, cell: int, row: int, scale: float) -> int:
        """How many panels to a row of `row` px."""
        return max(1, min(self.panels, row // self.width(cell, scale)))

    def fitted(self, cell_px: int, printed: int, row: int, scale: float, alone: bool = False) -> tuple[int, int]:
        """(cell, columns) in a row of `row` px, each panel in its share of it (alone: the whole row); cells grown
        to print numbers of `printed` characters when every panel still fits in the row."""
        share = (row if alone else row // self.panels) - self.beside(scale) - int(OVERHANG_PX * scale)
        cell = charts.cell_size(self.n_cols, int(cell_px * scale), max(share, self.n_cols))
        if self.width(cell, scale) > row:  # too wide even alone (64 columns on a phone): smaller than any map snaps
            cell = max(SMALLEST_CELL_PX, (row - self.beside(scale) - int(OVERHANG_PX * scale)) // self.n_cols)
        need = charts.cell_at_least(charts.number_width(printed, scale)) if printed else 0
        if cell < need and self.panels * self.width(need, scale) <= row:
            cell = need
        return cell, self.columns(cell, row, scale)


def show(matrices, names: list[str], row_labels, col_labels, title: str, shape_line: str, file_lines: list[str],
         said_shape: str = "", cell_px: int = heatmap.MEDIUM_CELL_PX, x_title: str = "dimension",
         y_title: str = "token", diverging: bool = True, said_names: bool = True, shared: bool = False,
         domain: tuple[float, float] | None = None) -> None:
    """Draw (P, R, C) matrices as P panels of one chart, each named by names[p], under its title (words no control
    changes: it is part of the design) and one shape line (read from its table); each map
    goes to the export panel under its name, with its own shape line (file_lines[p]) as its file's subtitle.
    said_shape: the maps' shape in symbols, for the text a screen reader reads ("(T, d_k)"), which names the maps
    too unless said_names is False (a name that says what a control set: "Q of head 3"). shared: one colour scale
    for every panel (panels_design). domain: the colour scale's fixed ends (the weights' 0 to 1), part of the design
    as a map's is."""
    m = np.asarray(matrices, dtype=np.float64)
    P, R, C = m.shape
    annotate = max(R, C) <= charts.ANNOTATE_MAX_CELLS
    data = charts.grid_frame(m, names, row_labels, col_labels, with_text=annotate)
    printed = max(map(len, data.columns["text"]), default=0) if annotate else 0
    scale = presenter.chart_scale()
    cell, columns = layout(C, names, list(row_labels), cell_px, printed, scale)
    look = dict(x_title=x_title, y_title=y_title, diverging=diverging, annotate=annotate,
                **({"domain": tuple(domain)} if domain is not None else {}))
    shown = {**look, "annotate": numbers_drawn(annotate, cell, scale)}  # a file of a panel is drawn from `look`
    text, design = render.chart_text(panels_design, data, step=cell, columns=columns, title=title,
                                     subtitle=shape_line,
                                     shape_line_read=True, cell_px=charts.design_cell(cell, scale),
                                     font_scale=scale, shared=shared, **shown)
    alt_ = alt_text.panels(title, P, y_title, x_title, said_shape, tuple(names) if said_names else (), shared, domain)
    send.chart(text, design.width, data.arrow(shape_line=shape_line), alt=alt_)
    rows, cols = list(row_labels), list(col_labels)
    for matrix, name, line in zip(m, names, file_lines):
        export.record(name, matrix, rows, cols,
                      functools.partial(file_spec, matrix, rows, cols, name, line, said_shape, cell, scale, look))


def file_spec(matrix: np.ndarray, rows: list, cols: list, title: str, subtitle: str, said_shape: str, cell_px: int,
              scale: float, look: dict) -> dict:
    """One map of the panels as a heatmap of its own, for a file, its numbers inside. Any thread may ask (a
    download is made outside the page's run): so the type scale comes as an argument."""
    design = render.spec_for(charts.heatmap_chart, title=title, subtitle=subtitle, cell_px=cell_px,
                             font_scale=scale, **look)
    spec = charts.heatmap_frame(matrix, rows, cols, with_text=look["annotate"]).inline(design)
    # an SVG names itself by its description, as a map drawn alone does (ui.drawing.render.file_spec)
    return {**spec, "description": alt_text.heatmap(title, look["y_title"], look["x_title"], said_shape=said_shape)}

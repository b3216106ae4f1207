"""Chart builders: arrays and labels in, alt.Chart out. No Streamlit here, so every builder is unit-tested.

Every builder has two halves: a `*_frame` function that turns arrays into a ChartData (the numbers as plain
columns, ui.drawing.chart_data), and a `*_chart` function that designs the chart from a few small settings
(the spec). The spec does not depend on the numbers, only on the settings, so ui.drawing.render builds it
once and puts the numbers inside it on every slider move.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from core.tokenize import draws_nothing
from ui.drawing import colours, softmax
from ui.drawing.chart_data import ChartData, number_array

# Colour-blind-safe, and monotone in lightness so they also read in greyscale and on a washed-out projector.
SEQUENTIAL = "viridis"  # weights, probabilities: 0..1
DIVERGING = "purpleorange"  # signed values (Q, K, V, scores): centred on 0
ANNOTATE_MAX_CELLS = 16  # print values in cells up to 16 x 16; beyond that the text is unreadable
CELL_PX = 34
FONT = "sans-serif"
# Type sizes in pixels at a font_scale of 1 (presenter mode passes 1.5: 18 px labels on a projector).
LABEL_PX, TITLE_PX, CHART_TITLE_PX, CELL_TEXT_PX = 12, 13, 15, 12
STRIP_LINE = 1.7  # a strip's row height in label heights: an accent (x̂) and a descender (γ, β) stay apart
MIN_LABEL_PX = 8  # an axis label is never smaller: 6 px type drew characters 4 px high
CHAR_EM = 0.52  # the width of one character of a number, in ems: "-0.12" is 2.3 em in Arial, 2.6 in DejaVu Sans
RENDERER_ENV = "ATTENTION_LAB_CHART_RENDERER"  # "svg" draws every chart as svg (on_canvas says when that helps)
SHOWN_ROW, PICK = "shown", "pick"  # a clickable heatmap's parameters: the row outlined, and its click selection
SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}  # invisible characters, drawn visibly in labels


@functools.lru_cache(maxsize=4096)  # the same few labels are drawn on every move: tokens, d0, d1, ...
def visible(label: str) -> str:
    """A label drawn as text: an empty token becomes '∅', and one of characters that draw nothing on their
    own becomes symbols and codes: a space '␣', a new line '⏎', a no-break space 'U+00A0', a zero-width
    joiner 'U+200D', the variation selector of ❤️ 'U+FE0F' (a character-level model reads each as a token)."""
    if label == "":
        return "∅"
    if not all(map(draws_nothing, label)):
        return label
    if all(c in SHOWN for c in label):
        return "".join(SHOWN[c] for c in label)
    return " ".join(SHOWN.get(c, f"U+{ord(c):04X}") for c in label)


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Axis labels must be unique and visible: a repeated token gets its position, 'the' -> 'the (4)';
    a space is drawn as '␣'."""
    return list(_unique_labels(tuple(map(str, tokens))))


@functools.lru_cache(maxsize=1024)
def _unique_labels(tokens: tuple[str, ...]) -> tuple[str, ...]:
    shown = [visible(t) for t in tokens]
    counts: dict[str, int] = {}
    for t in shown:
        counts[t] = counts.get(t, 0) + 1
    return tuple(f"{t} ({i})" if counts[t] > 1 else t for i, t in enumerate(shown))


def themed(chart):
    """chart with its axis, legend and panel labels in a grey that reads at 4.5:1 or more on the chart's
    background, light or dark (Streamlit's chart theme greys them at about 3.7:1 on white)."""
    grey = colours.subtitle_colour()
    return (chart.configure_axis(labelColor=grey, titleColor=grey)
            .configure_legend(labelColor=grey, titleColor=grey)
            .configure_header(labelColor=grey, titleColor=grey))


def heatmap_frame(matrix, row_labels: Sequence[str], col_labels: Sequence[str], decimals: int = 2,
                  with_text: bool = True) -> ChartData:
    """(R, C) matrix -> one row per cell: row, col (labels, sent once each), their indices, value and the
    printed text.

    with_text=False leaves out the text, for a chart that prints no numbers: every column is sent to
    the browser on every rerun. The text's colour is the spec's business (it follows the colour scale).
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"A heatmap needs a 2-D matrix, got shape {m.shape}.")
    R, C = m.shape
    rows, cols = unique_labels(list(row_labels)), unique_labels(list(col_labels))
    if len(rows) != R or len(cols) != C:
        raise ValueError(f"{R} x {C} matrix but {len(rows)} row labels and {len(cols)} column labels.")
    columns = {"value": number_array(m)}
    if with_text:
        # Cell text is only printed up to 16 x 16; formatting 16,000 unprinted strings cost a third of a
        # large page's rerun.
        printed = max(R, C) <= ANNOTATE_MAX_CELLS
        columns["text"] = _printed(m, decimals) if printed else [""] * (R * C)
    return ChartData(columns, {"row": rows, "col": cols}, grid=(("row_i", R), ("col_i", C)))


def _printed(m: np.ndarray, decimals: int) -> list[str]:
    """Each number of m printed with `decimals` decimals ("NaN", "inf", "-inf" where not finite), in C order."""
    values = m.ravel().tolist()
    if np.isfinite(m).all():  # one bound format for every number: a third of the time of a call for each
        return list(map(f"{{:.{decimals}f}}".format, values))
    return [_fmt(v, decimals) for v in values]


def _fmt(v: float, decimals: int) -> str:
    if v != v:
        return "NaN"
    if v in (math.inf, -math.inf):
        return "-inf" if v < 0 else "inf"
    return f"{v:.{decimals}f}"


def symmetric_domain(*matrices) -> tuple[float, float]:
    """A colour domain centred on 0 that holds every value of the matrices: ±(1, 2 or 5 times a power of
    ten). The domain is part of a chart's design; rounded so, a slider move rarely needs a new one (a
    design costs ~30 ms to build, the numbers alone under 1 ms)."""
    finite = [np.abs(m[np.isfinite(m)]) for m in map(np.asarray, matrices)]
    top = max((float(f.max()) for f in finite if f.size), default=0.0)
    if top == 0:
        return -1.0, 1.0
    power = 10.0 ** math.floor(math.log10(top))
    nice = next(step * power for step in (1, 2, 5, 10) if step * power >= top * (1 - 1e-12))
    return -nice, nice


# The normal sizes and, for presenter mode, each of them times 1.5.
_CELL_SIZES = (8, 10, 12, 14, 15, 16, 18, 21, 22, 24, 26, 27, 30, 33, 34, 39, 40, 45, 46, 51, 52, 60, 69, 78)


def cell_size(n_cols: int, cell_px: int = CELL_PX, max_width: int = 520) -> int:
    """Cell edge in pixels: cell_px, shrunk so n_cols fit in max_width, snapped to a few sizes.

    Snapping keeps the number of distinct chart designs small, so their cached specs are reused
    across slider moves instead of being rebuilt for every new shape.
    """
    fit = min(cell_px, max_width // max(n_cols, 1))
    return max([c for c in _CELL_SIZES if c <= fit], default=_CELL_SIZES[0])


def cell_at_least(size_px: int) -> int:  # the smallest snapped size of at least size_px (else the largest)
    return min((c for c in _CELL_SIZES if c >= size_px), default=_CELL_SIZES[-1])


def px(size: int, font_scale: float) -> int:
    """A type size scaled for presenter mode, in whole pixels."""
    return round(size * font_scale)


def number_width(chars: int, font_scale: float = 1.0) -> int:
    """Pixels a printed number of `chars` characters needs inside a cell (with a little margin)."""
    # rounded up: the chart's own test (bandwidth >= chars * em + 4) must hold wherever this says it fits
    return math.ceil(chars * CHAR_EM * px(CELL_TEXT_PX, font_scale)) + 4


def label_look(cell_px: int, font_scale: float = 1.0) -> tuple[int, bool, bool]:
    """How a heatmap's axis labels are drawn on cells of cell_px: (their type size, whether those that would
    overlap are left out, whether they stand upright). Type shrinks with its cells down to MIN_LABEL_PX (on a
    projector, font_scale > 1, it never shrinks); on cells smaller than the type, Vega leaves out every other
    label that would overlap; -45 degree labels need about 1.4 label heights of room each."""
    smallest = px(LABEL_PX, font_scale) if font_scale > 1 else MIN_LABEL_PX
    label_px = min(px(LABEL_PX, font_scale), max(cell_px, smallest))
    return label_px, cell_px < label_px, cell_px < 1.5 * label_px


def strip_row(cell_px: int, font_scale: float = 1.0) -> int:
    """The height of a strip's rows (ui.drawing.heatmap's strip) on cells of cell_px: a line of its label type and
    room above and below it, never less than the cells."""
    return max(cell_px, round(label_look(cell_px, font_scale)[0] * STRIP_LINE))


def design_cell(cell_px: int, font_scale: float = 1.0) -> int:
    """The smallest cell size whose heatmap is drawn like one of cell_px but for the cells' size: the labels look
    alike (label_look) and nothing else in heatmap_chart depends on the size. A design built for it serves
    every size alike, the size itself given by each draw (ui.drawing.render)."""
    look = label_look(cell_px, font_scale)
    return next(c for c in range(1, cell_px + 1) if label_look(c, font_scale) == look)


def heatmap_chart(
    title: str = "", x_title: str = "key", y_title: str = "query", diverging: bool = False,
    domain: tuple[float, float] | None = None, annotate: bool = True, cell_px: int = CELL_PX,
    select_rows: bool = False, font_scale: float = 1.0, colour_scale: str = "linear",
    temperature: softmax.Temperature | None = None, data: pd.DataFrame | None = None,
) -> alt.Chart:
    """An annotated heatmap's design: square cells of cell_px, token labels on both axes, exact values on hover.

    It does not depend on the matrix's shape, so one design serves every shape (ui.drawing.heatmap decides the
    size and gives each draw its own cells). Pass `data` (a heatmap_frame) to embed the numbers, or leave it out
    and let ui.drawing.render attach them. annotate: print each cell's number. select_rows adds a click selection
    on the query row. font_scale scales every text it prints. colour_scale: "sqrt" colours by the square root of
    the value (counts where a few cells dwarf the rest; the page must say so); with it, print no numbers (their
    ink is chosen for a linear scale). temperature: the data holds scores, and the map shows their softmax at the
    temperature of a slider under it, worked out in the browser (ui.drawing.softmax).

    Every label is drawn on cells at least as large as its type, MIN_LABEL_PX (in presenter mode 18 px);
    a crowded axis turns its labels upright, and on smaller cells leaves out those that would overlap. A
    number is printed only where its cell is wide enough for it, in black or white, whichever reads on
    that cell's colour.
    """
    scheme = DIVERGING if diverging else SEQUENTIAL
    x, y = _axes(x_title, y_title, cell_px, font_scale)
    base = alt.Chart(data if data is not None else pd.DataFrame()).encode(x=x, y=y)
    tooltip = [alt.Tooltip("row:N", title=y_title), alt.Tooltip("col:N", title=x_title),
               alt.Tooltip("value:Q", title="weight" if temperature else "value", format=".4f")]
    if temperature is not None:
        tooltip.append(alt.Tooltip("score:Q", title="score", format=".4f"))
    cells = _cells(base, tooltip, scheme, domain, colour_scale, select_rows, font_scale)
    layers = [_missing_cells(base, tooltip), cells.add_params(softmax.slider(temperature)) if temperature else cells]
    if annotate:
        layers.append(_numbers(base, tooltip, scheme, domain, font_scale))
    chart = alt.layer(*layers)
    chart = themed((softmax.derived(chart, temperature) if temperature else chart).properties(
        width=alt.Step(cell_px), height=alt.Step(cell_px)))
    if not select_rows:  # a clickable map stays svg: its rows are elements a test, or a keyboard, can find
        chart = on_canvas(chart)
    return chart.properties(title=title) if title else chart


def on_canvas(chart):
    """chart drawn on a canvas in the browser: a map of hundreds of cells as svg is thousands of elements, which
    the browser lays out again on every move. A canvas is one element; its numbers stay on hover, and in the
    table that the chart's "Show data" button opens.

    A canvas has no element per mark for a screen reader to visit, so its marks are not described (Vega-Lite's
    config `aria`): Vega would otherwise write a sentence for every cell on every move ("key: a; query: b; value:
    0.1234"), which no one can reach, about a tenth of a move of Circuit's two 47 x 47 maps in the browser
    (bench/README.md). The chart as a whole keeps its text (ui.drawing.alt_text), and a file drawn from it, an SVG
    a reader can walk cell by cell, describes every mark again (ui.drawing.chart_files.file_spec), as svg on the
    page does.

    ATTENTION_LAB_CHART_RENDERER=svg (read when a design is built) draws them as svg instead: Vega lays a chart
    out the same way for both, and in svg every label and legend is an element a test or a reader's browser tools
    can measure (the browser tests of the charts' layout start their server so)."""
    renderer = "svg" if os.environ.get(RENDERER_ENV) == "svg" else "canvas"  # named either way: the browser
    # otherwise picks one itself by the number of marks
    if renderer == "canvas":
        chart = chart.copy()  # configure() would replace the config themed() set, so the one setting is added to it
        if chart.config is alt.Undefined:
            chart.config = alt.Config()
        chart.config["aria"] = False
    return chart.properties(usermeta={"embedOptions": {"renderer": renderer}})


def _axes(x_title: str, y_title: str, cell_px: int, font_scale: float) -> tuple[alt.X, alt.Y]:
    """Columns along the top, rows down the side, each in its matrix's order."""
    # No gap is asked between labels: the app's theme asks 2 px, which on 6 px cells left only every fourth label.
    fonts = dict(titleFontSize=px(TITLE_PX, font_scale), labelSeparation=0, labelLimit=px(90, font_scale))
    x_labels, y_labels = axis_labels(cell_px, font_scale)
    x = alt.X("col:N", sort=alt.EncodingSortField("col_i"), title=x_title,
              axis=alt.Axis(orient="top", **fonts, **x_labels))
    return x, alt.Y("row:N", sort=alt.EncodingSortField("row_i"), title=y_title, axis=alt.Axis(**fonts, **y_labels))


def axis_labels(cell_px: int, font_scale: float) -> tuple[dict, dict]:
    """What a heatmap's x and y axes set about their labels on cells of cell_px (label_look): the only part of
    its design, besides the cells' size, that depends on the cells (ui.drawing.resize)."""
    label_px, overlap, upright = label_look(cell_px, font_scale)
    y = {"labelFontSize": label_px, "labelOverlap": "parity" if overlap else False}
    return {**y, "labelAngle": -90 if upright else -45}, y


def _cells(base, tooltip, scheme: str, domain, colour_scale: str, select_rows: bool, font_scale: float):
    """The coloured cells, with the colour legend under the map, and on a clickable map the picked row outlined."""
    diverging = scheme == DIVERGING
    scale = alt.Scale(scheme=scheme, **({"domainMid": 0} if diverging else {}),
                      **({"domain": list(domain)} if domain is not None else {}),
                      **({"type": colour_scale, "zero": True} if colour_scale != "linear" else {}))
    # The legend lies under the map: beside a phone-wide map it was cut off ("0.5" read "0"). Its labels drop trailing
    # zeros (0, 0.5, 1); "r", as Vega gives a format the digits its ticks' step needs: "g" at one read 10 as "1e+1".
    legend = alt.Legend(orient="bottom", direction="horizontal", format="~r", gradientLength=px(160, font_scale),
                        labelFontSize=px(LABEL_PX, font_scale), gradientThickness=px(12, font_scale))
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("value:Q", scale=scale, title=None, legend=legend),
        tooltip=tooltip,
    )
    if not select_rows:
        return rect
    # A click selects a row (`pick`, which the app reads back); the row the page works out is the parameter `shown`,
    # set by ui.drawing.heatmap on every draw, so the outline follows the "Query row" control whichever way it was set.
    # A row clicked is outlined at once, before the rerun it starts (the map then comes back under a key of its own,
    # unclicked, `shown` at that row). Outlined, not the others faded: a faded cell's number would lose its contrast.
    pick = alt.selection_point(name=PICK, fields=["row_i"], on="click", clear=False)
    shown = alt.param(name=SHOWN_ROW, value=-1)
    outlined = f"datum.row_i == (isArray({PICK}.row_i) && length({PICK}.row_i) ? {PICK}.row_i[0] : {SHOWN_ROW})"
    return rect.add_params(pick, shown).encode(
        stroke=alt.condition(outlined, alt.value("#ff4b4b"), alt.value("white")),
        strokeWidth=alt.condition(outlined, alt.value(3.0), alt.value(0.5)),
    )


def _missing_cells(base, tooltip):
    """Cells with no finite value (NaN, or -inf where a mask struck a score), drawn light grey, not left as holes,
    so "-inf" and "NaN" read as values in both themes."""
    # Hidden from screen readers (aria=False): with no such cell, Vega exposes the empty layer as an image
    # with no name. Their values (null) stay in the chart's Show data table; their printed "-inf" stays readable.
    return base.transform_filter("!isValid(datum.value) || !isFinite(datum.value)").mark_rect(
        fill=colours.MISSING_FILL, stroke="white", strokeWidth=0.5, aria=False).encode(tooltip=tooltip)


def _numbers(base, tooltip, scheme: str, domain, font_scale: float):
    """Each cell's number, where every number fits its cell, in the ink that reads on the cell's colour."""
    text_px = px(CELL_TEXT_PX, font_scale)
    char_px = CHAR_EM * text_px
    # a map's numbers all or none (the widest decides); groupby, even empty, or Vega-Lite fails in a facet's panels
    fits = f"bandwidth('x') >= datum._widest * {char_px:g} + 4 && bandwidth('y') >= {text_px + 2}"
    text = base.mark_text(fontSize=text_px, font=FONT).transform_calculate(
        _chars="length(datum.text)").transform_joinaggregate(_widest="max(_chars)", groupby=[])
    if domain is None:
        text = text.transform_joinaggregate(_lo="min(value)", _hi="max(value)", groupby=[])
    for step in colours.scale_position(scheme == DIVERGING, domain):
        text = text.transform_calculate(**{step["as"]: step["calculate"]})
    return text.encode(
        text=alt.condition(fits, alt.Text("text:N"), alt.value("")),
        color=colours.text_colour(scheme),
        tooltip=tooltip,
    )


def grid_frame(matrices, panel_labels: Sequence[str], row_labels, col_labels, with_text: bool = False) -> ChartData:
    """Small multiples: (P, R, C) matrices -> one heatmap_frame per panel (with_text: with its cells' text), one
    after another, with the panel's index in `panel_i` and its name in the label column `panel`."""
    m = np.asarray(matrices, dtype=np.float64)
    P, R, C = m.shape
    rows, cols = unique_labels(list(row_labels)), unique_labels(list(col_labels))
    if (len(rows), len(cols), len(panel_labels)) != (R, C, P):
        raise ValueError(f"{P} panels of {R} x {C} but {len(panel_labels)} panel names, {len(rows)} row labels "
                         f"and {len(cols)} column labels.")
    text = {"text": _printed(m, 2)} if with_text else {}  # with_text: a chart that prints numbers (up to 16 x 16)
    return ChartData({"value": number_array(m), **text}, {"row": rows, "col": cols, "panel": list(panel_labels)},
                     grid=(("panel_i", P), ("row_i", R), ("col_i", C)))


def grid_chart(columns: int = 4, title: str = "", cell_px: int = 18, x_title: str = "key", y_title: str = "query",
               font_scale: float = 1.0, data: pd.DataFrame | None = None) -> alt.Chart:
    """Small multiples of attention maps (one per head, or per layer x head), shared 0..1 colour scale, `columns`
    panels to a row. Sized by steps like heatmap_chart (ui.sections.views.grid_layout decides the cells)."""
    inner = heatmap_chart(x_title=x_title, y_title=y_title, domain=(0.0, 1.0), annotate=False, cell_px=cell_px,
                          font_scale=font_scale)
    header = alt.Header(labelFontSize=px(TITLE_PX, font_scale), title=None)
    chart = alt.layer(*inner.layer, data=data if data is not None else pd.DataFrame()).properties(
        width=alt.Step(cell_px), height=alt.Step(cell_px)
    ).facet(facet=alt.Facet("panel:N", sort=alt.EncodingSortField("panel_i"), title=None, header=header),
            columns=columns)
    chart = on_canvas(themed(chart))
    return chart.properties(title=title) if title else chart

"""Text alternatives for the charts: what each one shows, in a sentence or two.

A screen reader cannot read a picture of numbers; each chart carries this text as its element's alt, which the
browser puts in the chart's Vega-Lite `description` (the drawn chart's aria-label). It says what the chart is
(its kind, title, and what its rows, columns, bars or lines stand for), never its values and never its labels, and
counts nothing a slider changes. A heatmap gives its shape in symbols ("(T, d_k)"): a d_k or seq_len move that
leaves a map's cells the same size leaves its spec as it was (the shape line with its sizes is read from its
table: ui.drawing.render.heading), and its alt must stay as it was too; a grid of maps counts neither its maps nor
their rows (a heads move keeps the grid), and a title that says what a control set is said without it (the whole
title is read from the table too). Streamlit's frontend counts the alt as
part of the chart's spec, and a spec that changed with a slider move has the browser throw the drawn chart away
and build it from nothing instead of swapping its new rows in (ui.drawing.chart_data). Labels are
values here: Circuit's maps are labelled with the random letters a seed draws, and naming them rebuilt four
charts on every seed move (measured in Chromium: 0.72 s a move against 0.40 s without). The numbers and labels
themselves are in the table that the chart's "Show data" button opens, in each value's tooltip, and in the
export panel's CSV.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable

from ui.drawing.chart_data import ChartData

MAX_CHARS = 500  # a short description, not the table: the page shows the numbers too
MAX_NAMED = 6  # groups, reference lines or panels named one by one; more are counted
MAX_SERIES = 10  # a line chart's series (a few fixed names, such as the ladder's eight rungs) named one by one
NUMBERS = " Its numbers are in the table its Show data button opens."
CELLS = " Its numbers are in the table its Show data button opens, one row per cell."
CELLS_AND_SHAPE = (" Show data opens a table of its numbers, one row per cell; its sizes are in the only filled cell"
                   " of column \"shape line\".")
# A map whose weights the browser works out from scores (ui.drawing.softmax): its table holds the scores, and the
# weights at the τ of the last rerun (softmax.with_weights).
FROM_SCORES = (" The map's colours, and any numbers printed on its cells, are weights: each row is the softmax of that"
               " row's scores, each score first divided by the temperature τ set by the slider below the map (at τ = 0,"
               " each row puts all its weight on its largest score, the first of any tie). The Show data button opens a"
               " table with one entry per cell, giving its score and weight; the \"weight\" column uses the τ the text"
               " below the map was written for, and can briefly lag the map while τ is being dragged.")
# A chart whose title says what a control set reads it from its table (ui.drawing.render.heading): its text for
# screen readers names it by the words no control changes, and says where the whole title is.
TITLE_IN_TABLE = " Its whole title, which changes with the controls, is in the first row of column \"title\"."
# Labels drawn as symbols (charts.visible) said as words: a speech engine reads "␣" as "open box" or nothing.
SPOKEN = {"␣": "space", "⏎": "newline", "⇥": "tab", "␍": "carriage return", "∅": "empty"}
CLICK = ": click a row"  # a title's call to the mouse; a keyboard picks the query in the page's box instead


def _named(title: str, kind: str) -> str:
    """The chart's kind, then its title, apart: "Heatmap, the row looked at" (run together, the kind reads as a
    verb)."""
    title = title.replace(CLICK, "").strip()
    return f"{kind}, {title}" if title else kind


def spoken(label) -> str:
    """A label as a speech engine should say it: its symbols for invisible characters as words (SPOKEN)."""
    text = str(label)
    return " ".join(SPOKEN.get(part, part) for part in text.split(" ")) if text else "empty"


def _names(names, most: int = MAX_NAMED) -> str:
    """The first few names, said one by one (a name may hold a comma: they are parted by semicolons)."""
    names = [spoken(n) for n in names]
    shown = "; ".join(names[:most])
    return shown + (f"; and {len(names) - most} more" if len(names) > most else "")


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def _each(what: str) -> str:
    return f", one per {what}" if what else ""


def finished(text: str, numbers: str = NUMBERS, title_read: bool = False) -> str:
    """text with the Show data sentence (and, title_read, where its whole title is: TITLE_IN_TABLE), cut to
    MAX_CHARS in its own part so that those sentences are never lost."""
    ending = numbers + (TITLE_IN_TABLE if title_read else "")
    return text[:MAX_CHARS - len(ending)] + ending


def heatmap(title: str, row_title: str = "query", col_title: str = "key", shape_line: bool = False,
            said_shape: str = "", title_read: bool = False, from_scores: bool = False) -> str:
    """A heatmap: its title, its shape in symbols (said_shape: "(T, d_k)", and what the lesson says of it, such as
    "rows sum to 1"), what its rows and columns stand for (row_title, col_title: its axes' titles), and where its
    shape line is (shape_line: it has one, drawn under its title, which a screen reader cannot read from a canvas,
    and its table holds it). Neither its labels nor its sizes (see the module's docstring): a part of said_shape
    that spells sizes out ("= (T, 2·8)") is left out. title_read: the map reads its title from its table, and
    title is the part of it no control changes. from_scores: its table holds scores, whose weights it shows."""
    shape = f" The matrix is {_SIZES.sub('', said_shape)}." if said_shape else ""
    numbers = FROM_SCORES if from_scores else CELLS_AND_SHAPE if shape_line else CELLS
    return finished(f"{_named(title, 'Heatmap')}.{shape}{_axes(row_title, col_title)}", numbers, title_read)


def _axes(row_title: str, col_title: str) -> str:
    """" One row per token and one column per dimension.": what a map's rows and columns stand for."""
    parts = [f"one row per {row_title}" if row_title else "", f"one column per {col_title}" if col_title else ""]
    said = " and ".join(part for part in parts if part)
    return f" {said[0].upper()}{said[1:]}." if said else ""


def panels(title: str, count: int, row_title: str = "query", col_title: str = "key", said_shape: str = "",
           names: tuple[str, ...] = (), shared: bool = False, domain: tuple[float, float] | None = None) -> str:
    """Maps of one shape, the panels of one chart (ui.drawing.panels): its title, how many (a page draws the same
    number always), their shape in symbols, what their rows and columns stand for, and their names when given (names
    no control changes: "Q: what each token asks", not "Q of head 3"); each cell's row in the table names its map.
    shared: the maps share one colour scale and its legend; domain: its fixed ends (weights: 0 to 1)."""
    shape = f" Each matrix is {_SIZES.sub('', said_shape)}." if said_shape else ""
    named = f" Their names: {_names(names)}." if names else ""
    ends = f" from {domain[0]:g} to {domain[1]:g}" if domain is not None else ""
    legend = f"one colour scale{ends} and one legend for all (equal numbers, equal colours), each map with" if shared \
        else f"each with its own colour legend{ends} and"
    return finished(f"Heatmaps titled \"{title}\": {count} maps in one chart, {legend} its name in a header above "
                    f"it.{named}{shape}{_axes(row_title, col_title)}", PANELS + SHAPE_LINE)


_SIZES = re.compile(r" = \([^()]*\d[^()]*\)")  # "= (T, 2·8)" in a shape: the sizes a slider set, as numbers


def likeliest(data: ChartData, title: str, what: str = "next characters", title_read: bool = False,
              groups: tuple[str, ...] = ()) -> str:
    """Bars of the likeliest of a vocabulary, most likely first (a model's next characters), and the groups their
    colours mark (groups: every group the legend names, whether or not a bar is in it now: a move that empties one
    keeps the chart); not how many bars (a temperature of 0, or a top-k, leaves fewer: the move would rebuild the
    chart)."""
    coloured = f" Each bar is coloured by its group: {_names(groups)}." if groups else ""
    return finished(f"{_named(title, 'Bar chart')}: the most likely {what}, most likely first; bar length: "
                    f"probability.{coloured}", title_read=title_read)


def bars(data: ChartData, title: str, x_title: str, y_title: str, references: tuple[str, ...] = (),
         title_read: bool = False) -> str:
    """A bar chart: how many bars, of what, the groups their colours mark, and its reference lines (its bars'
    labels are not named: see the module's docstring)."""
    labels = data.column("label")
    groups = list(dict.fromkeys(map(str, data.column("group")))) if "group" in data.names() else []
    coloured = f" Each bar is coloured by its group: {_names(groups)}." if groups else ""
    length = f"; bar length: {x_title}" if x_title else ""
    lines = f" {_count(len(references), 'reference line').capitalize()} across the bars: {_names(references)}." \
        if references else ""
    return finished(f"{_named(title, 'Bar chart')}: {_count(len(labels), 'bar')}{_each(y_title)}"
                    f"{length}.{coloured}{lines}", title_read=title_read)


def lines(data: ChartData, title: str, x_title: str, y_title: str, title_read: bool = False) -> str:
    """A line chart: its series (in alphabetical order: their order in the data can follow the numbers) and its
    axes."""
    names = sorted(set(map(str, data.column("series"))))
    return finished(f"{_named(title, 'Line chart')}: {y_title} against {x_title}, {_count(len(names), 'line')} "
                    f"({_names(names, MAX_SERIES)}).", title_read=title_read)


def grid(title: str, row_title: str = "query", col_title: str = "key", title_read: bool = False) -> str:
    """Small multiples of attention maps on one colour scale, 0 to 1, each named above it: what each map's rows and
    columns stand for. Neither how many maps nor their names nor their sizes: a heads or seq_len move changes those
    and keeps the drawn grid (see the module's docstring); each cell's row in the table names its map."""
    parts = [f"one row per {row_title}" if row_title else "", f"one column per {col_title}" if col_title else ""]
    said = " and ".join(part for part in parts if part)
    return finished(f"{_named(title, 'Grid of heatmaps')}: maps on one colour scale from 0 to 1, each named in a "
                    "header above it"
                    f"{'; in each, ' + said if said else ''}.", PANELS, title_read)


PANELS = " Show data opens a table of its numbers, one row per cell, with the name of its map in column \"panel\"."
SHAPE_LINE = " The maps' shape, in numbers, is in the only filled cell of column \"shape line\"."


@functools.cache
def _defaults(builder: Callable) -> dict:
    return {name: p.default for name, p in inspect.signature(builder).parameters.items()
            if p.default is not inspect.Parameter.empty}


def for_chart(builder: Callable, data: ChartData, settings: dict, title_read: bool = False) -> str | None:
    """The text alternative of builder(**settings) drawn with data, or None for a builder it does not know.
    title_read: the chart reads its title from its table, and settings' title is the part no control changes."""
    given = {**_defaults(builder), **settings}
    title = str(given.get("title") or "")
    kind = builder.__name__
    if kind == "bar_chart":
        text = bars(data, title, given["x_title"], given["y_title"], tuple(given.get("references", ())), title_read)
    elif kind == "line_chart":
        text = lines(data, title, given["x_title"], given["y_title"], title_read)
    elif kind == "grid_chart":
        text = grid(title, given["y_title"], given["x_title"], title_read)
    else:
        return None
    return text

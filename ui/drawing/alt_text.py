"""Text alternatives for the charts: what each one shows, in a sentence or two.

A screen reader cannot read a picture of numbers; each chart carries this text as its Vega-Lite
`description` (the drawn chart's aria-label). It says what the chart is (its kind, title, size, and what its
rows, columns, bars or lines are), not its values: the description is part of the chart's spec, and a spec
that changed with every slider move would have the browser draw every chart again from nothing instead of
updating it (ui.drawing.chart_data). The numbers themselves are in the table that the chart's "Show data"
button opens, in each value's tooltip, and in the export panel's CSV.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np

from ui.drawing.chart_data import ChartData

MAX_CHARS = 500  # a short description, not the table: the page shows the numbers too
MAX_NAMED = 6  # labels, series or panels named one by one; more are counted
NUMBERS = " Its numbers are in the table its Show data button opens."


def _named(title: str, kind: str) -> str:
    return f"{kind} {title}".strip() if title else kind


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def heatmap(matrix, row_labels, col_labels, title: str) -> str:
    """A heatmap: its size and what its rows and columns are."""
    m = np.asarray(matrix)
    return (f"{_named(title, 'Heatmap')}: {m.shape[0]} rows ({_names(list(map(str, row_labels)))}) by "
            f"{m.shape[1]} columns ({_names(list(map(str, col_labels)))}).{NUMBERS}")


def bars(data: ChartData, title: str, x_title: str, y_title: str) -> str:
    """A bar chart: how many bars, of what, and their labels."""
    labels = data.column("label")
    return (f"{_named(title, 'Bar chart')}: {x_title} for {len(labels)} values of {y_title} "
            f"({_names(list(map(str, labels)))}).{NUMBERS}")


def lines(data: ChartData, title: str, x_title: str, y_title: str) -> str:
    """A line chart: its series and its axes."""
    names = list(dict.fromkeys(map(str, data.column("series"))))
    count = f"{len(names)} {'line' if len(names) == 1 else 'lines'}"
    return f"{_named(title, 'Line chart')}: {y_title} against {x_title}, {count} ({_names(names)}).{NUMBERS}"


def grid(data: ChartData, title: str) -> str:
    """Small multiples of heatmaps: how many, which, and their size."""
    sizes = dict(data.grid)
    panels = data.labels.get("panel", [])
    return (f"{_named(title, 'Grid of heatmaps')}: {len(panels)} maps ({_names(panels)}), each "
            f"{sizes.get('row_i', 0)} rows by {sizes.get('col_i', 0)} columns.{NUMBERS}")


@functools.cache
def _defaults(builder: Callable) -> dict:
    return {name: p.default for name, p in inspect.signature(builder).parameters.items()
            if p.default is not inspect.Parameter.empty}


def for_chart(builder: Callable, data: ChartData, settings: dict) -> str | None:
    """The text alternative of builder(**settings) drawn with data, or None for a builder it does not know."""
    given = {**_defaults(builder), **settings}
    title = str(given.get("title") or "")
    kind = builder.__name__
    if kind == "bar_chart":
        text = bars(data, title, given["x_title"], given["y_title"])
    elif kind == "line_chart":
        text = lines(data, title, given["x_title"], given["y_title"])
    elif kind == "grid_chart":
        text = grid(data, title)
    else:
        return None
    return text[:MAX_CHARS]

"""Text alternatives for the charts: what each one shows and its extremes, in a sentence or two.

A screen reader cannot read a picture of numbers; each chart carries this text as its Vega-Lite
`description` (the drawn svg's aria-label) and as Streamlit's `alt`. It is worked out from the numbers
on every draw, never stored in a cached design (ui.drawing.render): the extremes move with the sliders.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import numpy as np

from ui.drawing.chart_data import ChartData

MAX_CHARS = 500  # a short description, not the table: the page shows the numbers too
MAX_NAMED = 6  # series or panels named one by one; more are counted


def _named(title: str, kind: str) -> str:
    return f"{kind} {title}".strip() if title else kind


def _values(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def heatmap(matrix, row_labels, col_labels, title: str) -> str:
    """A heatmap: its size, range and largest cell, and how many cells hold no number (masked, NaN)."""
    m = np.asarray(matrix, dtype=np.float64)
    finite = np.isfinite(m)
    name = _named(title, "Heatmap")
    if not finite.any():
        return f"{name}: {m.shape[0]} by {m.shape[1]}, no finite values."
    r, c = np.unravel_index(np.argmax(np.where(finite, m, -np.inf)), m.shape)
    holes = int((~finite).sum())
    return (f"{name}: {m.shape[0]} rows by {m.shape[1]} columns, values from {m[finite].min():.3g} "
            f"to {m[finite].max():.3g}; the largest is row {row_labels[r]}, column {col_labels[c]}."
            + (f" {holes} cells hold no number (masked or undefined)." if holes else ""))


def bars(data: ChartData, title: str, x_title: str, y_title: str) -> str:
    """A bar chart: how many bars, the range of their values and the longest."""
    values, labels = _values(data.column("value")), data.column("label")
    name = _named(title, "Bar chart")
    finite = np.isfinite(values)
    if not finite.any():
        return f"{name}: {len(values)} bars of {x_title} by {y_title}, no finite values."
    top = int(np.argmax(np.where(finite, values, -np.inf)))
    return (f"{name}: {x_title} for {len(values)} values of {y_title}, from {values[finite].min():.3g} to "
            f"{values[top]:.3g}; the longest bar is {labels[top]}.")


def lines(data: ChartData, title: str, x_title: str, y_title: str) -> str:
    """A line chart: its series, the span of x, and where y is lowest and highest."""
    xs, ys, series = _values(data.column("x")), _values(data.column("y")), data.column("series")
    names = list(dict.fromkeys(series))
    name = _named(title, "Line chart")
    count = f"{len(names)} {'line' if len(names) == 1 else 'lines'}"
    head = f"{name}: {y_title} against {x_title}, {count} ({_names(names)})"
    finite = np.isfinite(ys) & np.isfinite(xs)
    if not finite.any():
        return f"{head}, no finite values."
    lo = int(np.argmin(np.where(finite, ys, np.inf)))
    hi = int(np.argmax(np.where(finite, ys, -np.inf)))
    where = (lambda i: f"{series[i]} at {xs[i]:.3g}") if len(names) > 1 else (lambda i: f"at {xs[i]:.3g}")
    return (f"{head}; {x_title} from {xs[finite].min():.3g} to {xs[finite].max():.3g}; {y_title} lowest "
            f"{ys[lo]:.3g} ({where(lo)}), highest {ys[hi]:.3g} ({where(hi)}).")


def grid(data: ChartData, title: str) -> str:
    """Small multiples of heatmaps: how many, their size, the range and the panel with the largest value."""
    sizes = dict(data.grid)
    panels = data.labels.get("panel", [])
    values = _values(data.column("value"))
    name = _named(title, "Grid of heatmaps")
    head = (f"{name}: {len(panels)} maps ({_names(panels)}), each {sizes.get('row_i', 0)} rows by "
            f"{sizes.get('col_i', 0)} columns")
    finite = np.isfinite(values)
    if not finite.any():
        return f"{head}, no finite values."
    top = int(np.argmax(np.where(finite, values, -np.inf)))
    at = {column: data.column(column)[top] for column in ("panel", "row", "col")}
    return (f"{head}; values from {values[finite].min():.3g} to {values[top]:.3g}; the largest is in "
            f"{at['panel']}, row {at['row']}, column {at['col']}.")


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

"""A chart's numbers sent inside its Vega-Lite spec, column by column: no pandas, no Arrow on a rerun.

A chart drawn from a DataFrame pays twice on every slider move: for building the frame and for Streamlit
converting it to Arrow. For the small matrices on these pages that was about five times what the rest
of the chart costs (bench/bench_pages.py measures a page). Here a chart's data is a few plain lists,
one per column, put into the spec as a single datum that the browser unpacks with Vega-Lite's `flatten`
transform. A column of labels (the tokens along an axis) travels once, as its list of labels, and each
row carries only the label's index, in the column named `<label column>_i`. A table whose rows are the
cells of an array (a heatmap, a grid of heatmaps) sends no indices at all: the browser numbers the rows
and works out each cell's row and column from its number and the array's shape.

Streamlit moves a spec's top-level `data` out to Arrow, so the data goes one level down: the whole
chart becomes the only layer of a layer (or the only chart of a concat, for a faceted grid), and that
inner view holds the data. The outer view keeps the title, the size and the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Properties that stay on the outer view; everything else (marks, encodings, transforms, layers, facets)
# moves into the inner view with the data. `params` must stay outside: Vega-Lite makes a top-level signal
# only for a selection declared on the outermost view (its `views` still name the inner layer it listens
# to), and both the browser's chart and the app's PNG/SVG export fail with "Unrecognized signal name"
# when a selection sits one level down.
OUTER = ("$schema", "config", "title", "width", "height", "autosize", "padding", "background", "description",
         "params")
COMPOSITE = ("facet", "hconcat", "vconcat", "concat", "repeat")  # views that cannot sit inside a layer
LABELS_PREFIX = "_labels_"
GRID_KEY = "_grid"  # in the sent datum: [[index column, size], ...] of a table of array cells
# Digits sent of each number: as many as a tooltip prints (4 decimals), and 4 significant digits of a number
# smaller than that, so a tiny value is not sent as 0; the colours need far fewer.
DECIMALS = 4
SIGNIFICANT = 4


def split(spec: dict) -> tuple[dict, dict]:
    """A chart's spec cut in two: what stays on the outer view, and the inner view that will hold the data."""
    outer = {k: v for k, v in spec.items() if k in OUTER}
    inner = {k: v for k, v in spec.items() if k not in OUTER and k not in ("data", "datasets")}
    return outer, inner


def inner_kind(inner: dict) -> str:
    """How the outer view holds the inner one: as the only layer of a layer, or (a facet, a concatenation,
    which cannot sit in a layer) as the only chart of a vconcat."""
    return "vconcat" if any(k in inner for k in COMPOSITE) else "layer"


@dataclass
class ChartData:
    """A tidy table as lists: columns[name][i] is row i's value in that column; every list is as long.

    labels[name] are the labels of a label column: row i's label is labels[name][column(name + "_i")[i]].
    grid, when given as ((index column, size), ...), says the rows are the cells of an array of that shape in
    C order (row i is cell np.unravel_index(i, shape)); its index columns are then computed, never stored.
    """

    columns: dict[str, list] = field(default_factory=dict)
    labels: dict[str, list[str]] = field(default_factory=dict)
    grid: tuple[tuple[str, int], ...] = ()

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def column(self, name: str) -> list:
        """One column's values, an index column of the grid worked out, a label column spelled out."""
        if name in self.labels:
            names = self.labels[name]
            return [names[i] for i in self.column(f"{name}_i")]
        indices = [index for index, _ in self.grid]
        if name in indices:
            cells = np.unravel_index(np.arange(len(self)), [size for _, size in self.grid])
            return cells[indices.index(name)].tolist()
        return self.columns[name]

    def names(self) -> list[str]:
        return [*(index for index, _ in self.grid), *self.columns, *self.labels]

    def frame(self):
        """The table as a pandas DataFrame (for tests and exports; a rerun never needs one)."""
        import pandas as pd

        return pd.DataFrame({name: self.column(name) for name in self.names()})

    @classmethod
    def concat(cls, parts: list[ChartData]) -> ChartData:
        """The rows of several tables with the same columns, one after another (labels and indices spelled
        out)."""
        names = parts[0].names() if parts else []
        return cls({name: [v for part in parts for v in part.column(name)] for name in names})

    def datum(self) -> dict:
        """The table as the one datum the browser unpacks: its columns, and each label column's labels."""
        datum = {**self.columns, **{LABELS_PREFIX + name: labels for name, labels in self.labels.items()}}
        if self.grid:
            datum[GRID_KEY] = [list(pair) for pair in self.grid]
        return datum

    def unpack(self) -> list[dict]:
        """The transforms that turn the datum back into the table's rows (they go before the chart's own)."""
        unpack = [{"flatten": list(self.columns)}] if self.columns else []
        if self.grid:
            unpack.append({"window": [{"op": "row_number", "as": "_n"}]})  # 1, 2, ... in the rows' order
            stride = 1
            for index, size in reversed(self.grid):
                unpack.append({"calculate": f"floor((datum._n - 1) / {stride}) % {size}", "as": index})
                stride *= size
        unpack += [{"calculate": f"datum[{LABELS_PREFIX + name!r}][datum[{name + '_i'!r}]]", "as": name}
                   for name in self.labels]
        return unpack

    def inline(self, spec: dict) -> dict:
        """spec (a chart without data) with this table inside it, as the browser will draw it."""
        outer, inner = split(spec)
        inner["data"] = {"values": [self.datum()]}
        inner["transform"] = self.unpack() + inner.get("transform", [])
        return {**outer, inner_kind(inner): [inner]}

    @classmethod
    def from_spec(cls, spec: dict) -> ChartData:
        """The table a spec made by inline() carries (what tests and exports read back)."""
        inner = (spec.get("layer") or spec.get("vconcat") or [{}])[0]
        values = inner.get("data", {}).get("values", [{}])
        datum = values[0] if values else {}
        columns = {k: v for k, v in datum.items() if not k.startswith(LABELS_PREFIX) and k != GRID_KEY}
        labels = {k[len(LABELS_PREFIX):]: v for k, v in datum.items() if k.startswith(LABELS_PREFIX)}
        return cls(columns, labels, tuple((index, size) for index, size in datum.get(GRID_KEY, ())))


def numbers(values) -> list:
    """Numbers as a list for the browser, each rounded to DECIMALS decimals (what a tooltip prints) or, for a
    number smaller than that, to SIGNIFICANT significant digits; None (JSON's null) for NaN and ±inf, which
    JSON cannot write. A chart draws a null as a missing value."""
    a = np.asarray(values, dtype=np.float64).ravel()
    finite = np.isfinite(a)
    with np.errstate(all="ignore"):
        magnitude = np.floor(np.log10(np.abs(a)))
        decimals = np.maximum(DECIMALS, SIGNIFICANT - 1 - np.where(finite & (a != 0), magnitude, 0))
        decimals = np.clip(decimals, -300, 300)
        # Divide by a power of ten that is exact, so each result is the double nearest the short decimal and
        # prints as one: 0.1235, not 0.12350000000000001.
        up = 10.0 ** decimals
        rounded = np.round(a * up) / up
    out = rounded.tolist()
    if not finite.all():
        out = [v if ok else None for v, ok in zip(out, finite.tolist())]
    return out

"""A chart's numbers, column by column, apart from its design: sent beside the spec, swapped into the view.

A chart's numbers are a few plain lists, one per column (no pandas on a rerun: building a DataFrame for the
small matrices on these pages cost about five times the rest of the chart). They travel to the browser as a
named dataset (`DATASET`), an Arrow table built straight from the lists, beside a spec that holds none of
them. The browser keeps a chart whose spec has not changed and swaps the new rows into the Vega view it
already drew; a spec that carried its numbers was a new spec on every slider move, and the browser built
every chart of the page again from nothing (MEASURED.md, "What a move costs in the browser").

The chart becomes the only layer of a layer (or the only chart of a concat, for a faceted grid), and that
inner view names the dataset; the outer view keeps the title, the size, the config and the parameters.

For a file (the export panel's PNG and SVG, drawn on the server) and for the tests, `inline` puts the numbers
inside the spec instead, as a single datum the renderer unpacks: a column of labels travels once as its list
of labels, each row carrying the label's index (`<label column>_i`), and the cells of an array carry no
indices at all (the renderer numbers the rows and works out each cell's row and column from the shape).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

# Properties that stay on the outer view; everything else (marks, encodings, transforms, layers, facets)
# moves into the inner view with the data. `params` must stay outside: Vega-Lite makes a top-level signal
# only for a selection declared on the outermost view (its `views` still name the inner layer it listens
# to), and both the browser's chart and the app's PNG/SVG export fail with "Unrecognized signal name"
# when a selection sits one level down.
OUTER = ("$schema", "config", "title", "width", "height", "autosize", "padding", "background", "description",
         "params", "usermeta")
COMPOSITE = ("facet", "hconcat", "vconcat", "concat", "repeat")  # views that cannot sit inside a layer
LABELS_PREFIX = "_labels_"
DATASET = "table"  # the name of the dataset a drawn chart's inner view reads
# The column whose first row holds the grey line drawn under a heatmap's title, its shape ("Q · shape (7, 8) = (T,
# d_k)"): a title reads it from the data (ui.drawing.render.heading), so a move that changes only a matrix's shape
# leaves the spec as it was. Its other rows hold empty text (a missing value: the Show data table would print None),
# dictionary-encoded: a byte a row (as plain text, four: 18 KB more a move on Circuit's two maps of 47 x 47).
SHAPE_LINE = "shape line"
# The column whose first row holds a chart's title when the title carries what a control set ("row 7 “t” through layer
# norm", "P(next | prompt), temperature 0.8"): read from the data the same way, so that such a move keeps the drawn
# chart too (the text for screen readers then says the title without them: ui.drawing.alt_text).
TITLE = "title"
GRID_KEY = "_grid"  # in the inlined datum: [[index column, size], ...] of a table of array cells
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
    """A tidy table as lists: columns[name][i] is row i's value in that column; every list is as long. A column of
    many numbers (a matrix's cells) may be a number_array instead, NaN for a missing value; column() and the
    datum give it as a list.

    labels[name] are the labels of a label column: row i's label is labels[name][column(name + "_i")[i]].
    grid, when given as ((index column, size), ...), says the rows are the cells of an array of that shape in
    C order (row i is cell np.unravel_index(i, shape)); its index columns are then computed, never stored.
    """

    columns: dict[str, list | np.ndarray] = field(default_factory=dict)
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
        return listed(self.columns[name])

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
        datum = {**{name: listed(values) for name, values in self.columns.items()},
                 **{LABELS_PREFIX + name: labels for name, labels in self.labels.items()}}
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

    def arrow(self, shape_line: str | None = None, title: str | None = None) -> bytes:
        """The table as the rows a browser draws, in Arrow's stream format: every column spelled out (a label
        column as its labels, an index of the grid as whole numbers); None, JSON's null, stays null. shape_line:
        the line under the chart's title, in the first row of the column SHAPE_LINE; title: the title itself, in
        the first row of the column TITLE (both left out of an empty table)."""
        indices = _grid_indices(self.grid) if self.grid else {}
        numbers = {}
        for name, values in self.columns.items():
            if isinstance(values, np.ndarray):  # number_array's: NaN is a missing value
                column = pa.array(values, from_pandas=True)
            elif name.endswith("_i"):
                column = pa.array(np.asarray(values, dtype=_index_type(max(values, default=0) + 1)))
            else:  # a column of nulls alone (a matrix of NaN) has no type a chart reads: call it numbers
                column = pa.array(values)
                column = column.cast(pa.float64()) if pa.types.is_null(column.type) else column
            numbers[name] = column
        positions = {**indices, **numbers}
        labels = {name: pa.DictionaryArray.from_arrays(positions[f"{name}_i"], _arrow_texts(tuple(names)))
                  for name, names in self.labels.items()}
        for name, text in ((SHAPE_LINE, shape_line), (TITLE, title)):
            if text is not None and len(self):
                numbers[name] = _first_row(text, len(self))
        # labels first, then the numbers: the order in which the chart's "Show data" table shows its columns
        table = pa.table({**labels, **numbers, **indices})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema, options=_IPC_OPTIONS) as writer:
            writer.write_table(table)
        return sink.getvalue().to_pybytes()

    @classmethod
    def from_arrow(cls, data: bytes) -> ChartData:
        """The table arrow() wrote, its columns spelled out (what tests and exports read back)."""
        table = pa.ipc.open_stream(data).read_all()
        return cls({name: table.column(name).to_pylist() for name in table.column_names})  # a label: its text

    def named(self, spec: dict) -> dict:
        """spec (a chart without data) wrapped so that its inner view reads the dataset `DATASET`: what is
        sent, with arrow() beside it."""
        outer, inner = split(spec)
        inner["data"] = {"name": DATASET}
        return {**outer, inner_kind(inner): [inner]}

    def inlined(self, sent: dict) -> dict:
        """A spec made by named() with this table inside it in place of the dataset's name: one a file can be
        drawn from with no dataset beside it."""
        kind = "layer" if "layer" in sent else "vconcat"
        inner = dict(sent[kind][0])
        inner["data"] = {"values": [self.datum()]}
        inner["transform"] = self.unpack() + inner.get("transform", [])
        return {**sent, kind: [inner]}

    def inline(self, spec: dict) -> dict:
        """spec (a chart without data) with this table inside it: a chart for a file, drawn on the server."""
        return self.inlined(self.named(spec))

    @classmethod
    def from_spec(cls, spec: dict) -> ChartData:
        """The table a spec made by inline() carries (what tests and exports read back)."""
        inner = (spec.get("layer") or spec.get("vconcat") or [{}])[0]
        values = inner.get("data", {}).get("values", [{}])
        datum = values[0] if values else {}
        columns = {k: v for k, v in datum.items() if not k.startswith(LABELS_PREFIX) and k != GRID_KEY}
        labels = {k[len(LABELS_PREFIX):]: v for k, v in datum.items() if k.startswith(LABELS_PREFIX)}
        return cls(columns, labels, tuple((index, size) for index, size in datum.get(GRID_KEY, ())))


def _first_row(text: str, n: int) -> pa.DictionaryArray:
    """A column of n rows whose first holds text and the others empty text, a byte a row: each text written once."""
    return pa.DictionaryArray.from_arrays(_first_of(n), _arrow_texts((text, "")))


# Parts of a table that depend on its shape alone, made once per shape: a chart's table is made on every move, and
# each of pyarrow's calls costs a few microseconds whatever its size (arrow() took 0.29 ms for a 7 x 16 map, 0.1
# ms of it these). Arrow's arrays cannot be changed, so one serves every table of that shape (or those labels).
@functools.lru_cache(maxsize=1024)
def _arrow_texts(texts: tuple[str, ...]) -> pa.Array:
    """Texts as an Arrow array of strings: a table's labels (tokens, dimensions), which a move seldom changes."""
    return pa.array(texts, pa.string())


@functools.lru_cache(maxsize=256)
def _first_of(n: int) -> pa.Array:
    """The indices of _first_row's column: 0, then n - 1 ones."""
    firsts = np.ones(n, dtype=np.int8)
    firsts[0] = 0
    return pa.array(firsts)


@functools.lru_cache(maxsize=256)
def _grid_indices(grid: tuple[tuple[str, int], ...]) -> dict[str, pa.Array]:
    """The index columns of a grid's cells, in C order, each in the smallest whole-number type that holds it."""
    cells = np.unravel_index(np.arange(math.prod(size for _, size in grid)), [size for _, size in grid])
    return {index: pa.array(cell.astype(_index_type(size))) for (index, size), cell in zip(grid, cells)}


_IPC_OPTIONS = pa.ipc.IpcWriteOptions()  # given, so pyarrow does not look up its legacy-format settings each time


def _index_type(n: int) -> type:
    """The smallest whole-number type that numbers n things: an index column is most of a table's bytes."""
    return np.int8 if n <= 127 else np.int16 if n <= 32767 else np.int32


def numbers(values) -> list:
    """Numbers as a list for the browser, each rounded to DECIMALS decimals (what a tooltip prints) or, for a
    number smaller than that, to SIGNIFICANT significant digits; None (JSON's null) for NaN and ±inf, which
    JSON cannot write. A chart draws a null as a missing value."""
    return listed(number_array(values))


def number_array(values) -> np.ndarray:
    """numbers() as a flat float64 array, NaN where numbers() has None: the column a table of many numbers keeps
    (a matrix's cells). Arrow takes an array whole; a list costs it about 0.1 µs a number, 0.4 ms a move for a grid
    of four 32 x 32 maps."""
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
    return np.where(finite, rounded, np.nan)


def listed(values) -> list:
    """A column as a list: an array of numbers (number_array) with None for its NaN, anything else as it is."""
    if not isinstance(values, np.ndarray):
        return values
    out = values.tolist()
    missing = np.isnan(values)
    if missing.any():
        out = [None if gone else v for v, gone in zip(out, missing.tolist())]
    return out

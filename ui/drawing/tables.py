"""Tables of numbers, drawn as Markdown tables of their cells as text, each number printed as its column's format
says: the browser draws an HTML table (a screen reader reads it as a table).

Why Markdown and not st.table: a lesson's tables change on every move, and st.table draws each cell as Markdown of
its own, a renderer per cell; one Markdown table is one. Measured in Chromium (python bench/element_costs.py), ten
changing 4 x 4 tables added about 8 ms a move each as st.table, 2-3 ms as Markdown.

Why not st.dataframe: its grid draws the cells on a canvas and keeps a hidden copy of them for screen readers,
which it brings up to date a fifth of a second after every other change of the page (measured in Chromium:
python bench/browser_moves.py, a QKV seed move ended 0.2 s later than its last chart); its cells keep the
theme's type size, which no page style reaches (a projector needs larger); and its code is a large download on
first view. An HTML table is read by a screen reader as a table, takes the page's type (presenter mode enlarges
it), and is drawn with the rest of the page (ui.state.presenter's style sets its numbers in figures of one width
and lets a wide one scroll in its own frame). A table that needs a cell kind only the grid draws (a bar) passes
column_config and keeps st.dataframe.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from ui.state import presenter
from ui.text import escape_md


def arrow_table(table: dict | pd.DataFrame):
    """A table for st.dataframe as Arrow, built straight from its columns: a DataFrame and Streamlit's
    conversion of it cost about 1 ms a table on every rerun, this a tenth of that. A column Arrow cannot
    type (numbers mixed with text) goes as text; a DataFrame is passed on as it is."""
    if isinstance(table, pd.DataFrame):
        return table
    columns = {}
    for name, values in table.items():
        try:
            columns[name] = pa.array(values if isinstance(values, np.ndarray) else list(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            columns[name] = pa.array([str(v) for v in values])
    return pa.table(columns)


def text_cells(table: dict | pd.DataFrame, formats: dict[str, str]) -> dict[str, list[str]]:
    """Every heading and cell as the page prints it (a formatted column by its format, any other as str).

    A table's headings and cells are read as Markdown, and some hold what a student typed (a sentence's tokens, a
    guessed character): each heading and text cell is escaped, so "*", "|" or "$x$" shows as typed. A number
    printed by a format holds only digits, signs, points, commas, "e", "%", "inf" or "nan": nothing Markdown
    reads."""
    columns = table.items() if isinstance(table, dict) else ((c, table[c].tolist()) for c in table.columns)
    return {escape_md(name): [as_text(v, formats[name]) if name in formats and not isinstance(v, str)
                              else escape_md(text_of(v)) for v in values]
            for name, values in columns}


def markdown(table: dict | pd.DataFrame, formats: dict[str, str]) -> str:
    """The table in Markdown: a heading row, then a row per row; the first column (what names the rows) flush
    left, the rest right-aligned, so a column's decimal points line up as in a printed table."""
    cells = text_cells(table, formats)
    if not cells:
        return ""
    align = [":--", *["--:"] * (len(cells) - 1)]
    lines = [_row(cells), _row(align), *map(_row, zip(*cells.values()))]
    return "\n".join(lines)


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"


_ALIGN_ROW = re.compile(r"\|( :?-+:? \|)+")
_CELL_EDGE = re.compile(r" ?(?<!\\)\| ?")  # a cell's edge: a "|" no backslash escapes


def read(text: str) -> pd.DataFrame | None:
    """The table `markdown` wrote, its headings and cells as written (Markdown markers still escaped); None for
    Markdown that is no such table. What tests and tools read a page's tables back with."""
    lines = text.splitlines()
    if len(lines) < 2 or not lines[0].startswith("| ") or not _ALIGN_ROW.fullmatch(lines[1]):
        return None
    rows = [_CELL_EDGE.split(line)[1:-1] for line in lines]
    return pd.DataFrame(rows[2:], columns=rows[0])


def show(table: dict | pd.DataFrame, formats: dict[str, str], width: str = "stretch",
         column_config: dict | None = None) -> None:
    """A table of numbers, {column name: values} (or a DataFrame); formats: {column: a printf format such as
    "%.3f", or "localized" (1,234) or "percent" (12%)}. column_config: Streamlit's own, for a cell kind only the
    interactive grid draws (a bar); with it the table is an st.dataframe, except on a projector."""
    if column_config is not None and not presenter.presenting():
        st.dataframe(arrow_table(table), hide_index=True, width=width, column_config=column_config)
        return
    st.markdown(markdown(table, formats), width=width)


def text_of(value) -> str:
    """A cell of a column without a format: text as it is, a whole number as digits, anything else as str."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def as_text(value, number_format: str) -> str:
    """One cell as the page prints it: a printf format, "localized" or "percent"; text as it is."""
    if isinstance(value, str):
        return value
    if number_format == "localized":
        return f"{value:,}"
    if number_format == "percent":
        return f"{value:.0%}"
    return number_format % value

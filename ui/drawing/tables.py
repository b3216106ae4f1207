"""Tables of numbers, drawn as HTML tables of their cells as text (st.table), each number printed as its column's
format says.

Why not st.dataframe: its grid draws the cells on a canvas and keeps a hidden copy of them for screen readers,
which it brings up to date a fifth of a second after every other change of the page (measured in Chromium:
python bench/browser_moves.py, a QKV seed move ended 0.2 s later than its last chart); its cells keep the
theme's type size, which no page style reaches (a projector needs larger); and its code is a large download on
first view. An HTML table is read by a screen reader as a table, takes the page's type (presenter mode enlarges
it), and is drawn with the rest of the page. A table that needs a cell kind only the grid draws (a bar) passes
column_config and keeps st.dataframe.
"""

from __future__ import annotations

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


def text_table(table: dict | pd.DataFrame, formats: dict[str, str]) -> pa.Table:
    """Every cell as the page prints it (a formatted column by its format, any other as str), as Arrow.

    st.table reads every cell and heading as Markdown, and some hold what a student typed (a sentence's tokens,
    a guessed character): each heading and text cell is escaped, so "*" or "$x$" shows as typed. A number
    printed by a format holds only digits, signs, points, commas, "e", "%", "inf" or "nan": nothing Markdown
    reads."""
    columns = table.items() if isinstance(table, dict) else ((c, table[c].tolist()) for c in table.columns)
    return pa.table({escape_md(name): pa.array([as_text(v, formats[name]) if name in formats and not isinstance(v, str)
                                                else escape_md(text_of(v)) for v in values], type=pa.string())
                     for name, values in columns})


def show(table: dict | pd.DataFrame, formats: dict[str, str], width: str = "stretch",
         column_config: dict | None = None) -> None:
    """A table of numbers, {column name: values} (or a DataFrame); formats: {column: a printf format such as
    "%.3f", or "localized" (1,234) or "percent" (12%)}. column_config: Streamlit's own, for a cell kind only the
    interactive grid draws (a bar); with it the table is an st.dataframe, except on a projector."""
    if column_config is not None and not presenter.presenting():
        st.dataframe(arrow_table(table), hide_index=True, width=width, column_config=column_config)
        return
    # hide_index said, not left to Streamlit: to decide it, Streamlit turns the table into pandas (a third of the
    # table's cost on every rerun), only to find the plain 0..n index an Arrow table always has.
    st.table(text_table(table, formats), width=width, hide_index=True)


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

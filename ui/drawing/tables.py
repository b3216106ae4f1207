"""Tables of numbers: st.dataframe, handed over as Arrow built straight from their columns; in presenter mode an
HTML table whose type the page's style enlarges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from ui.state import presenter


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


def show(table: dict | pd.DataFrame, formats: dict[str, str], width: str = "stretch",
         column_config: dict | None = None) -> None:
    """A table of numbers, {column name: values} (or a DataFrame); formats: {column: a printf format such as
    "%.3f", or "localized" (1,234) or "percent" (12%)}. column_config: Streamlit's own, for what formats cannot
    say (a bar); without it each formatted column is a NumberColumn.

    st.dataframe draws its cells on a canvas in the theme's type size, which no page style reaches: on a
    projector (presenter mode) the same numbers go as an HTML table, whose cells the presenter style enlarges."""
    if presenter.presenting():
        frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
        st.table(frame.assign(**{c: [as_text(v, f) for v in frame[c]] for c, f in formats.items()}),
                 hide_index=True, width=width)
        return
    config = column_config or {c: st.column_config.NumberColumn(format=f) for c, f in formats.items()}
    st.dataframe(arrow_table(table), hide_index=True, width=width, column_config=config)


def as_text(value, number_format: str) -> str:
    """One cell as the interactive table prints it: a printf format, "localized" or "percent"; text as it is."""
    if isinstance(value, str):
        return value
    if number_format == "localized":
        return f"{value:,}"
    if number_format == "percent":
        return f"{value:.0%}"
    return number_format % value

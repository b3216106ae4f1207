"""Tables of numbers for st.dataframe, handed over as Arrow built straight from their columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa


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

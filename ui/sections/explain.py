"""Explanations built from live numbers: one query's output written out as a weighted sum of value rows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.demos.heads import weighted_sum_terms
from ui.drawing import tables
from ui.drawing.charts import unique_labels
from ui.text import escape_md

MAX_TERMS_IN_EQUATION = 8
MAX_DIMS_IN_TABLE = 8  # value dimensions the table adds up: a table 512 numbers wide is not read, only scrolled


def weighted_sum(weights_row: np.ndarray, V: np.ndarray, labels: list[str], query: int) -> None:
    """z_i = a_i1 v_1 + ... + a_iT v_T with the actual numbers, and the table that adds them up."""
    labels = unique_labels(labels)
    q = escape_md(labels[query])
    terms = [f"{w:.2f}·v({escape_md(lab)})" for w, lab in zip(weights_row, labels)]
    shown = " + ".join(terms[:MAX_TERMS_IN_EQUATION]) + (" + …" if len(terms) > MAX_TERMS_IN_EQUATION else "")
    st.markdown(f"**Output for “{q}”:** z({q}) = {shown}")
    d_v = V.shape[1]
    shown_dims = min(d_v, MAX_DIMS_IN_TABLE)
    cut = f" The table shows the first {shown_dims} of each value row's {d_v} numbers." if shown_dims < d_v else ""
    st.caption(f"The weights in this row sum to {weights_row.sum():.4f}. Each value row is scaled by its weight; "
               f"the scaled rows are added column by column.{cut}")
    contributions = weighted_sum_terms(weights_row, V[:, :shown_dims])  # (T, shown dims)
    with_total = np.vstack([contributions, contributions.sum(axis=0)])  # the last row adds them up: z
    table = {"value row": [*labels, "= z (sum)"], "weight": np.append(weights_row, weights_row.sum()),
             **{f"dim {j}": with_total[:, j] for j in range(shown_dims)}}
    tables.show(table, {c: "%.3f" for c in list(table)[1:]})

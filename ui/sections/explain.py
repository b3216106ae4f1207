"""Explanations built from live numbers: one query's output written out as a weighted sum of value rows."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.demos.heads import weighted_sum_terms
from ui.drawing.charts import unique_labels
from ui.drawing.tables import arrow_table
from ui.text import escape_md

MAX_TERMS_IN_EQUATION = 8


def weighted_sum(weights_row: np.ndarray, V: np.ndarray, labels: list[str], query: int) -> None:
    """z_i = a_i1 v_1 + ... + a_iT v_T with the actual numbers, and the table that adds them up."""
    labels = unique_labels(labels)
    q = escape_md(labels[query])
    terms = [f"{w:.2f}·v({escape_md(lab)})" for w, lab in zip(weights_row, labels)]
    shown = " + ".join(terms[:MAX_TERMS_IN_EQUATION]) + (" + …" if len(terms) > MAX_TERMS_IN_EQUATION else "")
    st.markdown(f"**Output for “{q}”:** z({q}) = {shown}")
    st.caption(f"The weights in this row sum to {weights_row.sum():.4f}. Each value row is scaled by its weight; "
               "the scaled rows are added column by column.")
    contributions = weighted_sum_terms(weights_row, V)  # (T, d_v)
    with_total = np.vstack([contributions, contributions.sum(axis=0)])  # the last row adds them up: z
    table = {"value row": [*labels, "= z (sum)"], "weight": np.append(weights_row, weights_row.sum()),
             **{f"dim {j}": with_total[:, j] for j in range(V.shape[1])}}
    st.dataframe(arrow_table(table), hide_index=True,
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in list(table)[1:]})

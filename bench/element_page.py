"""The page bench/element_costs.py serves: a bare page's live part (one slider, one 7x7 heatmap that follows it)
with N more elements of one kind in it, each redrawn on every move.

ELEMENTS=kind:N in the environment says which: caption_fixed (the same text every move), caption (a number in
it changes), formula (a caption holding a LaTeX formula whose number changes), metric (st.metric, a number that
changes), slider (a slider nobody moves), table (st.table, 4 x 4 numbers that change), markdown_table (the same
numbers as one Markdown table), chart (another heatmap whose numbers change: Streamlit's own path, its data in
the spec), lab_heatmap (this app's heatmap, ui.drawing.heatmap: its numbers a dataset beside a spec that stays,
drawn on a canvas), lab_heatmap_unprinted (the same without its numbers printed in the cells), lab_grid (N maps
of 7x7 as the panels of one chart, as the app draws a grid of heads: ui.drawing.render.show_grid), columns (a row
of two st.columns, a caption in each: two captions and three layout blocks), row (the same two captions in one
horizontal st.container: one block). none:0 is the bare page.
"""

import os
import sys
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # streamlit puts the script's folder on the path, not the repository's
    sys.path.insert(0, ROOT)

from ui.drawing import charts, render  # noqa: E402
from ui.drawing import heatmap as lab_heatmap  # noqa: E402

KIND, COUNT = os.environ.get("ELEMENTS", "none:0").split(":")
LABELS = [f"t{i}" for i in range(7)]


def heatmap(values: np.ndarray) -> alt.Chart:
    rows, cols = np.indices(values.shape)
    data = pd.DataFrame({"row": rows.ravel(), "col": cols.ravel(), "value": values.ravel()})
    return alt.Chart(data).mark_rect().encode(
        x="col:O", y="row:O", color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1]))).properties(
        width=200, height=200)


def extra(kind: str, i: int, values: np.ndarray) -> None:
    """The i-th extra element of this kind, from this move's numbers."""
    corner = values[:4, :4]
    if kind == "caption_fixed":
        st.caption(f"A fixed caption, number {i}, with a few **bold** words.")
    elif kind == "caption":
        st.caption(f"Caption {i}: this move's number is {values.flat[i % values.size]:.3f}, with **bold** words.")
    elif kind == "table":
        st.table(pd.DataFrame(corner, columns=list("abcd")).round(3), hide_index=True)
    elif kind == "markdown_table":
        lines = ["| a | b | c | d |", "| --: | --: | --: | --: |",
                 *("| " + " | ".join(f"{x:.3f}" for x in row) + " |" for row in corner)]
        st.markdown("\n".join(lines))
    elif kind == "chart":
        st.altair_chart(heatmap(values[::-1]))
    elif kind == "lab_heatmap":
        lab_heatmap.show(values[::-1], LABELS, LABELS, f"map {i}")
    elif kind == "lab_heatmap_unprinted":
        lab_heatmap.show(values[::-1], LABELS, LABELS, f"map {i}", annotate=False)
    elif kind == "slider":
        st.slider(f"A slider nobody moves ({i})", 0, 10, 3, key=f"still_{i}")
    elif kind == "metric":
        st.metric(f"Metric {i}", f"{values.flat[i % values.size]:.3f} bits")
    elif kind in ("columns", "row"):
        left, right = st.columns(2) if kind == "columns" else [st.container(horizontal=True, gap="medium")] * 2
        left.caption(f"Left {i}: {values.flat[i % values.size]:.3f}")
        right.caption(f"Right {i}: {values.flat[(i + 1) % values.size]:.3f}")
    elif kind == "formula":
        number = values.flat[i % values.size]
        st.caption(f"A caption with a formula whose number changes: $\\sqrt{{d_k}} = {number:.3f}$")


def body() -> None:
    seed = st.slider("Random seed", 0, 999, 0, key="seed")
    values = np.random.default_rng(seed).random((7, 7))
    st.altair_chart(heatmap(values))
    if KIND == "lab_grid":  # COUNT maps, one chart
        maps = np.random.default_rng(seed).random((int(COUNT), 7, 7))
        render.show_grid(charts.grid_frame(maps, [f"map {i}" for i in range(len(maps))], LABELS, LABELS), 4, 26,
                         "maps")
        return
    for i in range(int(COUNT)):
        extra(KIND, i, values)


st.title("Elements")
st.fragment(body)()

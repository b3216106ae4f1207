"""Pieces of screen that several lessons draw: the tokens line, heatmaps side by side, one picked row
written out as a weighted sum, and the layers x heads grid of attention maps.

A lesson section calls these with arrays from core; the layout maths (cell sizes, columns) lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from core.tokenize import word_tokens
from ui import charts, explain, presenter, render
from ui.text import code_span, shape_caption

NO_TOKENS = "There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation)."
GRID_DROP = ["text", "dark_text", "dark_text_div"]  # the small multiples print no values in their cells


def tokens_line(sentence: str, max_tokens: int) -> list[str]:
    """The sentence's first max_tokens word tokens, listed; stops the page with a warning if there are none."""
    tokens = word_tokens(sentence, max_tokens)
    if not tokens:
        st.warning(NO_TOKENS)
        st.stop()
    st.markdown("**Tokens:** " + " · ".join(code_span(t) for t in tokens))
    total = len(word_tokens(sentence))
    if total > len(tokens):
        st.caption(f"Showing the first {len(tokens)} of {total} tokens (seq_len).")
    return tokens


@dataclass
class Heatmap:
    """One matrix to draw: its labels, title and widget key, and the caption of its shape beneath it.

    name and shape make the caption "name · shape (7, 8) = shape"; settings go to render.show_heatmap.
    """

    matrix: np.ndarray
    rows: list[str]
    cols: list[str]
    title: str
    key: str
    name: str = ""
    shape: str = ""
    settings: dict = field(default_factory=dict)


def heatmaps(*maps: Heatmap, widths: list[float] | None = None) -> int | None:
    """Heatmaps side by side, each with its shape caption. Returns the row clicked in the one drawn with
    select_rows=True (None before a click, or when none may be clicked)."""
    picked = None
    for column, m in zip(st.columns(widths or len(maps)), maps):
        with column:
            row = render.show_heatmap(m.matrix, m.rows, m.cols, title=m.title, key=m.key, **m.settings)
            shape_caption(m.name or m.title, m.matrix, m.shape)
            if m.settings.get("select_rows"):
                picked = row
    return picked


def picked_query(picked: int | None, T: int) -> int:
    """The clicked query row if it is still on screen, else the last token."""
    return picked if picked is not None and 0 <= picked < T else T - 1


def explain_row(weights: np.ndarray, V: np.ndarray, tokens: list[str], picked: int | None,
                where: str = "the weights") -> int:
    """A clicked row of the weights (T, T) written out as that token's output, sum_j a_ij v_j; returns it."""
    query = picked_query(picked, len(tokens))
    st.caption(f"Click a query row in {where} to see its output built up; the last token is shown until you do.")
    explain.weighted_sum(weights[query], V, tokens, query)
    return query


def grid_layout(T: int, panels: int, width_px: int, panel_px: int, cell_px: int = charts.CELL_PX,
                gap_px: int = 70) -> tuple[int, int]:
    """(cell_px, columns) for small multiples of (T, T) maps: panels at most panel_px wide, as many per
    row as fit width_px. Presenter mode scales every size by the same factor."""
    scale = presenter.chart_scale()
    cell = charts.cell_size(T, int(cell_px * scale), max_width=int(panel_px * scale))
    columns = max(1, min(panels, int(width_px * scale) // (cell * T + gap_px)))
    return cell, columns


def grid_frame(weights: np.ndarray, labels: list[str], panel_names: list[str]) -> pd.DataFrame:
    """(P, T, T) attention maps -> the tidy frame of a grid chart, without the per-cell text columns."""
    return charts.grid_frame(weights, panel_names, labels, labels).drop(columns=GRID_DROP)


def layer_head_names(n_layers: int, n_heads: int) -> list[str]:
    """Panel titles of a layers x heads grid, row by row: 'layer 1 · head 1', 'layer 1 · head 2', ..."""
    return [f"layer {layer + 1} · head {head + 1}" for layer in range(n_layers) for head in range(n_heads)]


def attention_grid(frame: pd.DataFrame, T: int, panels: int, title: str, width_px: int, panel_px: int,
                   cell_px: int = charts.CELL_PX, gap_px: int = 70) -> None:
    """Draw a grid chart of attention maps (a frame from grid_frame) laid out to fit width_px."""
    cell, columns = grid_layout(T, panels, width_px, panel_px, cell_px, gap_px)
    render.show(charts.grid_chart, frame, columns=columns, cell_px=cell, title=title)

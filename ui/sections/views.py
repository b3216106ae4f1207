"""Pieces of screen that several lessons draw: the sidebar settings and tokens line, heatmaps side by side
(or one beside a table), one picked row written out as a weighted sum, tables of numbers, and the layers x
heads grid of attention maps.

A lesson section calls these with arrays from core; the layout maths (cell sizes, columns) lives here.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import streamlit as st

from core.tokenize import word_tokens
from ui.drawing import charts, export, heatmap, render, softmax, tables
from ui.drawing import panels as draw_panels
from ui.drawing.chart_data import ChartData
from ui.sections import explain
from ui.state import chart_controls, controls, phone, presenter, seq_len
from ui.text import code_span, counted, shape_text

NO_TOKENS = "There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation)."


def sentence_settings(d_k_hi: int = 64, d_k_default: int = 8, seq_len_hi: int = 32) -> tuple[str, int, int, int, int]:
    """The sidebar settings of the one-head lessons, drawn in this order and returned so: the input text,
    seq_len, d_model, d_k and the seed."""
    sentence = controls.input_text()
    max_tokens = seq_len.seq_len(len(word_tokens(sentence)), hi=seq_len_hi)
    D, d_k = controls.d_model(), controls.d_k(hi=d_k_hi, default=d_k_default)
    if d_k > D:
        st.sidebar.caption(D_K_ABOVE.format(d_k=d_k, D=D))
    return sentence, max_tokens, D, d_k, controls.seed()


def sentence_state(state: Mapping) -> dict:
    """What sentence_settings and query_picker last set in this tab, read from the page's state by the keys they
    bind: the text, seq_len, d_model, d_k, the seed and the query row's label (each None where none is set)."""
    keys = {"text": controls.TEXT, "seq_len": seq_len.SEQ_LEN, "d_model": controls.D_MODEL, "d_k": controls.D_K,
            "seed": controls.SEED, "query": QUERY_KEY}
    return {name: state.get(key) for name, key in keys.items()}


D_K_ABOVE = ("d_k = {d_k} is more than d_model = {D}: the projections spread {D} numbers over {d_k}, so the queries "
             "and keys vary in only {D} independent directions. Real models keep d_k at or below d_model (with H "
             "heads, d_model divided by H); the raw scores still spread like √d_k, which is what these pages show.")


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

    name and shape make the subtitle "name · shape (7, 8) = shape"; settings go to ui.drawing.heatmap.made.
    """

    matrix: np.ndarray
    rows: list[str]
    cols: list[str]
    title: str
    key: str
    name: str = ""
    shape: str = ""
    settings: dict = field(default_factory=dict)
    note: str = ""  # a caption under the shape caption (a measured number, what to look for)


def heatmaps(*maps: Heatmap, widths: list[float] | None = None) -> dict[str, chart_controls.Values]:
    """Heatmaps side by side, each with its shape line (ui.drawing.heatmap makes and draws each one). Returns the
    values of the controls a map draws itself (a map drawn from scores: its temperature) by the map's key.

    Maps drawn at their own size go in one horizontal container, which wraps them onto another line
    where the screen is too narrow: one block to send instead of a column per map and the row that holds
    them. Maps that take their column's width, or carry a note beneath them, or given widths, get columns.
    A single map takes the page's own width: no block to send at all.
    """
    # The shape line is the chart's subtitle, not a caption under it: one element fewer to send per map.
    drawings = [heatmap.made(m.matrix, m.rows, m.cols, m.title, shape_text(m.name or m.title, m.matrix, m.shape),
                             said_shape=m.shape, **m.settings) for m in maps]
    if len(maps) == 1 and widths is None:
        places = [contextlib.nullcontext()]
    elif widths is None and all(d.fits for d in drawings) and not any(m.note for m in maps):
        places = [st.container(horizontal=True, gap="medium")] * len(maps)
    else:
        places = st.columns(widths or len(maps))
    own = {}
    for place, m, d in zip(places, maps, drawings):
        with place:
            # A click on a row of a clickable map sets the Query row box to that row's token.
            on_pick = functools.partial(_pick, charts.unique_labels(m.rows)) if d.picked is not None else None
            if (values := heatmap.own_controls(d, m.key)) is not None:
                own[m.key] = values
            heatmap.draw(d, m.key, on_pick=on_pick, own=values)
            if m.note:
                st.caption(m.note)
    return own


def panels(title: str, *maps: Heatmap, said_names: bool = True, shared: bool = False) -> None:
    """Maps of one shape and one set of labels (W_Q, W_K and W_V; Q, K and V) side by side as the panels of one
    chart titled `title` and "each on its own colour scale" (ui.drawing.panels: the panels look like a grid's, whose
    maps share one scale), each named by its own title: one chart for a move to update instead of one a map. The
    first map's settings serve them all; one shape line ("each map · shape ...") under the chart's title.
    said_names: the text for a screen reader names the maps (not for names that say what a control set: "Q of head
    3"). shared: one quantity in two settings, to compare cell by cell: one colour scale for all, "on one colour
    scale"."""
    first = maps[0]
    look = {**ALONE, **{k: v for k, v in first.settings.items() if k in PANEL_LOOK}}
    lines = [shape_text(m.name or m.title, m.matrix, m.shape) for m in maps]
    scales = "on one colour scale" if shared else "each on its own colour scale"
    draw_panels.show(np.stack([m.matrix for m in maps]), [m.title for m in maps], first.rows, first.cols,
                     f"{title}, {scales}", shape_text("each map", first.matrix, first.shape), lines, first.shape,
                     said_names=said_names, shared=shared, **look)


# What of a Heatmap's settings its panel keeps. A domain is part of the chart's design: only a fixed one (PROBABILITY,
# the weights' 0 to 1), never one computed from the numbers, or every move would be a new design.
PANEL_LOOK = ("cell_px", "x_title", "y_title", "diverging", "domain")
ALONE = dict(x_title="key", y_title="query", diverging=False)  # a panel whose map says none: as the map alone draws


# ---- the query a lesson works out ----------------------------------------------------------------------

QUERY_KEY = "query"  # in the link: ?query=mat (a repeated token is named with its position: "the (4)")
_QUERY_DEFAULT = "_query_default"  # the last token when the box was last drawn


def query_picker(tokens: list[str]) -> int:
    """The query row the page works out, as a select box of the tokens bound to the URL (the last token
    unless a link, a click on a row of the weights, or the box says otherwise); returns its index.

    One key for every lesson that offers it, so the row picked on one page is the row picked on the next.
    A click on a map can only set the box's value: the box is what the link and the keyboard reach.
    """
    labels = charts.unique_labels(tokens)
    # A row nobody picked follows the last token when the tokens change (seq_len, the text): it was the
    # default, not a choice. A picked row stays as long as its token is there.
    if QUERY_KEY in st.session_state and st.session_state[QUERY_KEY] == st.session_state.get(_QUERY_DEFAULT):
        st.session_state[QUERY_KEY] = labels[-1]
    st.session_state[_QUERY_DEFAULT] = labels[-1]
    label = controls.option(QUERY_KEY, "Query row", labels, labels[-1], kind="selectbox", container=st,
                            width=260, help="The token whose row of the weights is worked out below. "
                                            "Clicking a row of the weights map picks it too.")
    controls.show_url_notes()  # a link's unknown query is noted here, beside the box
    return labels.index(label)


def _pick(labels: list[str], row: int) -> None:
    """A click on row `row` of a map: the Query row box takes that token (before the rerun draws it)."""
    if 0 <= row < len(labels):
        st.session_state[QUERY_KEY] = labels[row]


def explain_row(weights: np.ndarray, V: np.ndarray, tokens: list[str], query: int,
                where: str = "the weights") -> int:
    """Row `query` of the weights (T, T) written out as that token's output, sum_j a_ij v_j; returns it."""
    label = charts.unique_labels(tokens)[query]
    st.caption(f"The output of the query {code_span(label)}, built up from the values. Pick another "
               f"query by clicking its row in {where}, or in the Query row box above.")
    explain.weighted_sum(weights[query], V, tokens, query)
    return query


def in_a_row(n: int) -> list:
    """n places side by side, one element each (metrics, links), filled left to right.

    One horizontal container that shares its width among them: st.columns(n) would send a block per
    column and one for the row, n + 1 messages where this sends one. The places are that one container,
    so what is written to them lands in the order it is written.
    """
    return [st.container(horizontal=True, gap="medium")] * n


def grid_layout(T: int, panels: int, width_px: int, panel_px: int, cell_px: int = charts.CELL_PX,
                gap_px: int = 70, halve_above: int | None = None, min_cell_px: int | None = None
                ) -> tuple[int, int]:
    """(cell_px, columns) for small multiples of (T, T) maps: panels at most panel_px wide, as many per
    row as fit width_px (on a phone, as many as fit its column). Presenter mode scales every size by the same
    factor.

    halve_above: with more panels than this, each gets half of panel_px. min_cell_px: a map too long for
    the smallest snapped cell shrinks its cells further, down to min_cell_px, to stay panel_px wide.
    """
    scale = presenter.chart_scale()
    if halve_above is not None and panels > halve_above:
        panel_px //= 2
    if phone.on_phone():  # two maps to a row on a phone's column, not a grid that scrolls sideways
        width_px = min(width_px, phone.COLUMN_PX)
        panel_px = min(panel_px, phone.COLUMN_PX // 2 - gap_px)
    # a panel's cell is decided as a single map's is (heatmap.size: cells as asked, shrunk to fit the panel's
    # room, snapped), so a map drawn alone and the same map in a grid of its room get the same cells
    fitted = heatmap.size(T, cell_px, panel_px, scale, printed=0)
    cell = fitted.cell
    if min_cell_px is not None and not fitted.fits:
        cell = max(min_cell_px, int(panel_px * scale) // T)
    # A projector's column is not wider for the larger type: width_px grows with it only up to that column; the
    # room between maps (their labels) grows with the type.
    room_px = min(int(width_px * scale), presenter.COLUMN_PX) if presenter.presenting() else width_px
    columns = max(1, min(panels, room_px // (cell * T + int(gap_px * scale))))
    return cell, columns


def layer_head_names(n_layers: int, n_heads: int) -> list[str]:
    """Panel titles of a layers x heads grid, row by row: 'layer 1 · head 1', 'layer 1 · head 2', ..."""
    return [f"layer {layer + 1} · head {head + 1}" for layer in range(n_layers) for head in range(n_heads)]


def record_maps(maps: np.ndarray, labels: list[str], names: list[str], width_px: int) -> None:
    """Each (T, T) map of a grid (maps (P, T, T), a name per panel) for the export panel, as a matrix of its own.
    Its chart, a heatmap of that map alone, is built only if a PNG or SVG of it is asked for: a live panel
    records them on every tick."""
    scale = presenter.chart_scale()
    for name, weights in zip(names, maps):
        title = f"Attention, {name}"
        export.record(title, weights, labels, labels,
                      functools.partial(map_spec, weights, labels, title, scale, width_px))


def map_spec(weights: np.ndarray, labels: list[str], title: str, scale: float, width_px: int) -> dict:
    """One attention map as a heatmap for a file, on the grid's scale (0 to 1), its numbers printed up to 16 x 16.
    Any thread may ask (a download is made outside the page's run): so the type scale comes as an argument."""
    T = len(labels)
    annotate = T <= charts.ANNOTATE_MAX_CELLS
    cell = heatmap.size(T, charts.CELL_PX, width_px, scale, printed=0).cell  # as the page would size it alone
    design = render.spec_for(charts.heatmap_chart, title=title, subtitle=shape_text("weights", weights, "(T, T)"),
                             domain=PROBABILITY, annotate=annotate, cell_px=cell, font_scale=scale)
    return charts.heatmap_frame(weights, labels, labels, with_text=annotate).inline(design)


def attention_grid(frame: ChartData, T: int, panels: int, title: str, width_px: int, panel_px: int,
                   cell_px: int = charts.CELL_PX, gap_px: int = 70, halve_above: int | None = None) -> None:
    """Draw a grid chart of attention maps (a frame from charts.grid_frame) laid out to fit width_px."""
    cell, columns = grid_layout(T, panels, width_px, panel_px, cell_px, gap_px, halve_above)
    render.show_grid(frame, columns, cell, title)


def layers_heads_grid(frame: ChartData, n_layers: int, n_heads: int, T: int, width_px: int, panel_px: int,
                      cell_px: int = charts.CELL_PX, min_cell_px: int | None = None) -> None:
    """Every layer x head map (a frame from charts.grid_frame with layer_head_names), one row per layer when a
    layer's heads fit side by side in width_px; the title says so."""
    cell, columns = grid_layout(T, n_heads, width_px, panel_px, cell_px, min_cell_px=min_cell_px)
    title = f"{counted(n_layers, 'layer')} x {counted(n_heads, 'head')}" + (
        " (one row per layer)" if columns == n_heads and n_layers > 1 else "")
    # The title stays in the spec: only a layers or heads move changes it, and that changes the grid's columns, so
    # its spec, anyway; a title column would cost a byte a cell on every move.
    render.show_grid(frame, columns, cell, title)


# ---- small pieces of the single-head lessons (QKV, scaling, masking) ----------------------------------

PROBABILITY = (0.0, 1.0)  # the colour domain of attention weights


def square(matrix: np.ndarray, tokens: list[str], title: str, key: str, name: str = "", shape: str = "(T, T)",
           note: str = "", **settings) -> Heatmap:
    """A (T, T) map with the tokens on both axes (scores, weights, a mask), in the room of half a column (sized by
    ui.drawing.heatmap), so it sits beside another."""
    return Heatmap(matrix, tokens, tokens, title, key, name, shape, settings, note)


def weights_map(matrix: np.ndarray, tokens: list[str], title: str, key: str, name: str = "weights",
                shape: str = "(T, T)", **settings) -> Heatmap:
    """square() for attention weights: coloured on the fixed scale 0 to 1."""
    return square(matrix, tokens, title, key, name, shape, domain=PROBABILITY, **settings)


def softmax_map(scores: np.ndarray, tokens: list[str], title: str, key: str, temperature: softmax.Temperature,
                name: str = "weights", shape: str = "(T, T)", **settings) -> Heatmap:
    """weights_map() of softmax(scores / τ), worked out in the browser, τ a slider under the map: a move of it
    recolours the map already drawn (ui.drawing.softmax); heatmaps() returns where the slider stands."""
    return weights_map(scores, tokens, title, key, name, shape, temperature=temperature, **settings)


def row_table(names: list[str], matrix: np.ndarray, first: str = "row", columns: list[str] | None = None) -> dict:
    """A (N, d) matrix as a table: its row names in the first column, then d0, d1, ... (or `columns`)."""
    return {first: list(names), **{name: matrix[:, j] for j, name in enumerate(columns or dim_labels(matrix.shape[1]))}}


def token_rows(matrix: np.ndarray, tokens: list[str], title: str, key: str, name: str = "", shape: str = "(T, d_k)",
               **settings) -> Heatmap:
    """A (T, d) map of one vector per token (embeddings, queries, outputs): tokens down, dimensions across."""
    settings = {"diverging": True, "x_title": "dimension", "y_title": "token", **settings}
    return Heatmap(matrix, tokens, dim_labels(matrix.shape[1]), title, key, name, shape, settings)


def beside(m: Heatmap, widths: tuple[float, float] = (1, 1)):
    """Draw m in a left column and return the right one, for what goes beside it: `with beside(m): ...`."""
    left, right = st.columns(widths)
    with left:
        heatmaps(m)
    return right


def dim_labels(n: int) -> list[str]:
    """Column labels of n feature dimensions: d0, d1, ..."""
    return [f"d{j}" for j in range(n)]


def number(x: float, spec: str = "g") -> str:
    """A number as people write it: -1e+09, -inf, 0.25, and NaN (which Python writes as 'nan')."""
    return "NaN" if x != x else format(x, spec)


def numbers_text(values, most: int = 6, spec: str = "g") -> str:
    """The first `most` values as 'a, b, c, …' (the ellipsis only when some are left out)."""
    shown = ", ".join(number(v, spec) for v in values[:most])
    return shown + (", …" if len(values) > most else "")


def number_table(table: dict | pd.DataFrame, number_format: str = "%.3f", columns: list[str] | None = None) -> None:
    """A full-width table, {column name: values} (or a DataFrame); its number columns (every column but the
    first, unless named) in number_format."""
    names = list(table.keys() if isinstance(table, dict) else table.columns)
    columns = names[1:] if columns is None else columns
    tables.show(table, {c: number_format for c in columns})

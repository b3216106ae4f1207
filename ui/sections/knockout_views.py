"""Knock out a head: a section any model page adds with one call, knockout_section(model, ids, prefix).

It switches one head off (a control bound to the URL), shows the loss on the page's own sequence and the
next-token probabilities with all heads and with that head off, and the layers x heads table of what
each single-head knockout costs. The numbers come from core.demos.knockout; cached by the model's source.
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from core.demos.knockout import compare, knockout_table, mean_loss
from core.model import KNOCKOUT_MODES, Knockout
from ui.compute import model_store
from ui.compute.memo import shared
from ui.compute.model_store import Model
from ui.drawing import charts, export, render
from ui.sections import model_views as mv
from ui.sections import views
from ui.state import controls, presenter

NONE = "none"
MODE_HELP = ("zero: the head's output becomes 0. mean: it becomes its average over the sequence, so only "
             "what the head reads from this particular input is removed.")


def head_names(n_layers: int, n_heads: int) -> list[str]:
    """The choices of the switch: 'none', then 'layer 1 · head 1', ... (counted from 1 on screen)."""
    return [NONE, *views.layer_head_names(n_layers, n_heads)]


def knockout_controls(prefix: str, n_layers: int, n_heads: int) -> Knockout:
    """The head to switch off and how, bound to the URL as {prefix}_off and {prefix}_off_mode."""
    left, right = views.in_a_row(2)
    names = head_names(n_layers, n_heads)
    picked = controls.option(f"{prefix}_off", "Switch off", names, NONE, kind="selectbox", container=left)
    mode = controls.option(f"{prefix}_off_mode", "Its output becomes", list(KNOCKOUT_MODES), "zero",
                           container=right, horizontal=True, help=MODE_HELP)
    if picked == NONE:
        return Knockout((), mode)
    index = names.index(picked) - 1  # row by row: layer = index // H, head = index % H
    return Knockout(((index // n_heads, index % n_heads),), mode)


@shared(128)
def read_both(source: tuple, ids: tuple[int, ...], heads: tuple, mode: str) -> dict:
    """core.demos.knockout.compare for a model named by its source: (V,) probabilities, (T - 1,) losses."""
    m = model_store.from_source(source)
    return compare(m.params, m.cfg, np.array(ids, dtype=np.int64), Knockout(heads, mode))


@shared(64)
def cost_table(source: tuple, ids: tuple[int, ...], mode: str, counted: tuple | None = None) -> np.ndarray:
    """(L, H) rise of the loss on the sequence's own next tokens when each head alone is off (only the
    positions counted (T - 1,) > 0, when given)."""
    m = model_store.from_source(source)
    seq = np.array(ids, dtype=np.int64)
    mask = None if counted is None else np.array(counted, dtype=np.float64)
    return knockout_table(m.params, m.cfg, seq[:-1], seq[1:], mask, mode=mode)


def table_frame(table: np.ndarray) -> dict:
    """(L, H) -> a table with a 'layer' column and one column per head, as a student reads it."""
    return {"layer": [f"layer {layer + 1}" for layer in range(table.shape[0])],
            **{f"head {h + 1}": table[:, h] for h in range(table.shape[1])}}


def change_metric(place, label: str, loss: float, base: float) -> None:
    """A loss beside its change from base. A rise is drawn red and a fall green (a higher loss is worse); a change
    that rounds to 0 at the three decimals shown has no arrow and no colour: "+0.000" under a red arrow would
    say the loss rose when it did not."""
    change = round(loss, 3) - round(base, 3)  # the change between the numbers as printed: no "1.234 → 1.235, 0"
    if round(change, 3) == 0:
        place.metric(label, f"{loss:.3f}", delta="no change", delta_color="off", delta_arrow="off")
    else:
        place.metric(label, f"{loss:.3f}", delta=f"{change:+.3f}", delta_color="inverse")


def knockout_section(model: Model, ids: tuple[int, ...], prefix: str, unit: str = "character",
                     counted: tuple | None = None, counted_name: str = "") -> None:
    """The whole section: controls, loss with and without, the probability bars side by side, the table.

    counted: (T - 1,) 0/1 per prediction (position t predicts ids[t + 1]); when given, every loss is the
    mean over those positions only, which counted_name names ("the repeat")."""
    st.header("Knock out a head")
    cfg = model.cfg
    knockout = knockout_controls(prefix, cfg.n_layers, cfg.n_heads)
    if len(ids) < 2:
        st.info(f"Knocking out is measured on the sequence's own next {unit}s: give it at least two {unit}s.")
        return
    seen = read_both(model.source, ids, knockout.heads, knockout.mode)
    mask = None if counted is None else np.array(counted, dtype=np.float64)
    base, off = mean_loss(seen["losses"], mask), mean_loss(seen["losses_off"], mask)
    cols = views.in_a_row(2)
    cols[0].metric("Loss, all heads on", f"{base:.3f}")
    label = "Loss, " + (f"{views.layer_head_names(cfg.n_layers, cfg.n_heads)[_flat(knockout, cfg)]} off"
                        if knockout.heads else "nothing switched off")
    change_metric(cols[1], label, off, base)
    n = int(mask.sum()) if mask is not None else len(ids) - 1
    predictions = f"{n} prediction{'s' if n != 1 else ''}"
    over = f"over the {predictions} of {counted_name}" if mask is not None else f"over its {predictions}"
    st.caption(f"Mean cross-entropy (nats) of predicting each next {unit} of the sequence from the ones "
               f"before it, {over}.")
    for column, (title, probs) in zip(st.columns(2), (("All heads", seen["probs"]), ("Head off", seen["probs_off"]))):
        with column:
            mv.bars(probs, model.tokenizer, f"{title} · P(next {unit})")
    table = cost_table(model.source, ids, knockout.mode, counted)
    views.number_table(table_frame(np.where(np.abs(table) < 5e-4, 0.0, table)), "%+.3f")  # no "-0.000"
    record_table(table, knockout.mode)
    layer, head = np.unravel_index(np.argmax(table), table.shape)
    st.caption(f"What each knockout costs ({knockout.mode} mode): the loss with that one head off minus the "
               f"loss with all heads. The most needed head here is layer {layer + 1} · head {head + 1} "
               f"({table.max():+.3f} nats); entries near 0 are heads this sequence can do without.")


def record_table(table: np.ndarray, mode: str) -> None:
    """The (L, H) table of knockout costs for the export panel: its CSV, and as a picture a map of it (the table
    itself is no chart), each cell printed, centred on 0, built only when a PNG or SVG is asked for."""
    rows = [f"layer {layer + 1}" for layer in range(table.shape[0])]
    cols = [f"head {h + 1}" for h in range(table.shape[1])]
    title = f"Knockout cost (nats, {mode} mode)"
    export.record(title, table, rows, cols,
                  functools.partial(table_spec, table, rows, cols, title, presenter.chart_scale()))


def table_spec(table: np.ndarray, rows: list[str], cols: list[str], title: str, scale: float) -> dict:
    """The knockout table as a heatmap for a file (any thread may ask: the type scale comes as an argument)."""
    design = render.spec_for(charts.heatmap_chart, title=title, subtitle=f"shape {table.shape} = (layers, H)",
                             diverging=True, annotate=True, x_title="head", y_title="layer", font_scale=scale)
    return charts.heatmap_frame(table, rows, cols).inline(design)


def _flat(knockout: Knockout, cfg) -> int:
    layer, head = knockout.heads[0]
    return layer * cfg.n_heads + head

"""The Multi-head lesson with trained weights: every head of the toy-English model on the sentence, the heads
the measurements single out for each rule, and the one that reads this sentence's rule."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.compute import cached
from ui.compute.memo import shared
from ui.drawing import charts
from ui.drawing.chart_data import ChartData
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections import views


@shared(64)
def heads_grid(sentence: str) -> ChartData:
    """Every layer x head map of the trained model on the sentence, as one small-multiples frame."""
    seen = tv.labelled(cached.trained_attention(sentence))
    L, H, T, _ = seen["weights"].shape
    return charts.grid_frame(np.asarray(seen["weights"]).reshape(L * H, T, T), views.layer_head_names(L, H),
                             seen["labels"], seen["labels"])


def view() -> None:
    """The sidebar's sentence box and the note on the fixed sizes, then every head and the rule's head."""
    sentence, seen = tv.opening()
    if seen is None:
        return
    L, H, T, _ = seen["weights"].shape
    cfg = tv.model_config()
    st.header(f"{L} layers of {H} heads, each with d_k = {cfg.d_model} / {H} = {cfg.d_k}")
    views.layers_heads_grid(heads_grid(sentence), L, H, T, width_px=1000, panel_px=240)
    prose.show("multi_head", "trained_heads", named=tv.heads_named())
    _, layer, head = tv.rule_head(seen["rule"])
    name = tv.head_name(layer, head)
    st.header(f"The head for this sentence's rule: {name}")
    m = tv.weights_heatmap(seen, layer, head, "mh_tr_weights", f"weights of {name}")
    m.note = tv.share_note(seen, layer, head)
    views.heatmaps(m, widths=[1, 1])
    prose.show("multi_head", "trained_jobs")
    tv.closing_note()

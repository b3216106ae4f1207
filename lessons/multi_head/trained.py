"""The Multi-head lesson with trained weights: every head of the toy-English model on the sentence, the heads
the measurements single out for each rule, and the one that reads this sentence's rule."""

from __future__ import annotations

import streamlit as st

from lessons.multi_head import cached
from ui.drawing import heatmap
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections import views


def view() -> None:
    """The sidebar's sentence box and the note on the fixed sizes, then every head and the rule's head."""
    sentence, seen = tv.opening()
    if seen is None:
        return
    L, H, T, _ = seen["weights"].shape
    cfg = tv.model_config()
    st.header(f"{L} layers of {H} heads, each with d_k = {cfg.d_model} / {H} = {cfg.d_k}")
    views.layers_heads_grid(cached.heads_grid(sentence), L, H, T, width_px=heatmap.WIDE_ROOM_PX,
                            panel_px=heatmap.NARROW_ROOM_PX)
    prose.show("multi_head", "trained_heads", named=tv.heads_named())
    _, layer, head = tv.rule_head(seen["rule"])
    name = tv.head_name(layer, head)
    st.header(f"The head for this sentence's rule: {name}")
    m = tv.weights_heatmap(seen, layer, head, "mh_tr_weights", f"weights of {name}")
    m.note = tv.share_note(seen, layer, head)
    views.heatmaps(m, widths=[1, 1])
    prose.show("multi_head", "trained_jobs")
    tv.closing_note()

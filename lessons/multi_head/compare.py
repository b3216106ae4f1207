"""One head against H: a single head as wide as the model (d_k = D) on the same sentence and seed, beside the H split
heads' maps, how spread out their rows are (mean row entropy), and the attention parameters, the same for any H."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.costs import attention_params
from lessons.multi_head.cached import Setup, compute
from lessons.multi_head.maths import head_entropies
from lessons.multi_head.views import draw_heads
from ui.drawing import heatmap
from ui.frame import prose
from ui.sections import views
from ui.sections.views import PROBABILITY
from ui.text import counted, every, shape_caption

COMPARE_PANELS = 16  # the side-by-side comparison draws at most this many heads
# 1 head against H sit in two columns of the page: each grid has half the page, its panels smaller than the
# lesson's own grid's, so that several of H's heads stand beside each other
COMPARE_ROOM_PX, COMPARE_PANEL_PX = 600, 170


def section(a: dict, s: Setup) -> None:
    st.header(f"Compare: 1 head vs {counted(s.H, 'head')}")
    if s.H == 1:
        st.info("Pick more than one head in the sidebar to compare the split with a single head.")
        return
    one = compute(s._replace(H=1))
    prose.show("multi_head", "compare", D=s.D, heads=counted(s.H, "head"), d_k=s.D // s.H)
    left, right = st.columns([2, 3])
    with left:
        heatmap.show(one["weights"][0], list(s.tokens), list(s.tokens), title=f"1 head, d_k = {s.D}",
                     said_title="Attention weights of 1 head, d_k = d_model", domain=PROBABILITY, annotate=False)
        shape_caption("weights", one["weights"], "(1, T, T)")
    with right:
        # Its title is in its spec: a heads move changes its columns, so its spec, anyway, and a title column
        # would cost a byte a cell (H x T x T of them) on every move.
        draw_heads(s, f"{counted(s.H, 'head')}, d_k = {s.D // s.H}", width_px=COMPARE_ROOM_PX,
                   panel_px=COMPARE_PANEL_PX, first=COMPARE_PANELS)
        shape_caption("weights", a["weights"], "(H, T, T)")
        if s.H > COMPARE_PANELS:
            st.caption(f"The first {COMPARE_PANELS} of the {s.H} heads.")
    spread_section(one["weights"], a["weights"], s.D)


def spread_section(one: np.ndarray, heads: np.ndarray, D: int) -> None:
    single, split = head_entropies(one), head_entropies(heads)
    cols = views.in_a_row(3)
    cols[0].metric("Mean row entropy, 1 head", f"{single['mean']:.2f} bits")
    cols[1].metric(f"Mean row entropy, {counted(len(heads), 'head')}", f"{split['mean']:.2f} bits",
                   help="Averaged over heads; 0 bits = all weight on one key, log2(T) bits = uniform.")
    cols[2].metric("Parameters in W_qkv and W_O", f"{attention_params(D):,}", help="The same for any H: 4D² + 4D.")
    per_head = ", ".join(f"{e:.2f}" for e in split["per_head"])
    st.caption(prose.text("multi_head", "entropy", per_head=per_head, keys=every(heads.shape[-1], "key"),
                          uniform=split["uniform"]))

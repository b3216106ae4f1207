"""The scaling lesson's mistake: dividing the scores by √d_v instead of √d_k, drawn beside the right weights. An aside
of the Technical level, drawn only while open (lessons/scaling/page.py)."""

from __future__ import annotations

import streamlit as st

from lessons.scaling import maths
from ui.frame import prose
from ui.sections.views import heatmaps, weights_map
from ui.state import controls

OPEN_KEY = "scaling_d_v_open"  # in the link while the √d_v mistake is open
TITLE = "Mistake: dividing by √d_v instead of √d_k"
D_V = "scaling_d_v"  # its slider's key, in the link too


def section(a: dict, tokens: list[str], d_k: int) -> None:
    """The √d_v mistake: a live part of its own, its slider beside it (it reaches nothing else)."""
    d_v = controls.number_slider(D_V, "d_v (value size, for the √d_v mistake)", 1, 512, 64,
                                 container=st, width=controls.IN_PAGE_PX,
                                 help="The width of the value vectors. It has nothing to do with the scores' spread; "
                                      "here it only sets what the mistaken line divides by.")
    controls.show_url_notes()
    mistake = maths.scale_mistake(a["scores"], d_k, d_v)
    kind, factor = maths.divisor_error(d_k, d_v)
    effect = prose.text("scaling", kind, wrong=mistake["wrong_divisor"], right=mistake["right_divisor"],
                        factor=factor, diff=mistake["largest_difference"])
    prose.show("scaling", "d_v", d_k=d_k, d_v=d_v, effect=effect)
    summary = {side: f"mean row entropy {mistake[side + '_entropy']:.2f} bits, mean largest weight "
                     f"{mistake[side + '_max']:.3f}." for side in ("wrong", "right")}
    heatmaps(weights_map(mistake["wrong"], tokens, "wrong: softmax(Q Kᵀ / √d_v)", "scaling_wrong",
                         note=f"Divided by √d_v = √{d_v} = {mistake['wrong_divisor']:.2f}: {summary['wrong']}"),
             weights_map(mistake["right"], tokens, "right: softmax(Q Kᵀ / √d_k)", "scaling_right",
                         note=f"Divided by √d_k = √{d_k} = {mistake['right_divisor']:.2f}: {summary['right']}"))

"""The feed-forward layer of the block lesson: GELU against ReLU, one row's hidden units, what the firing and the
silent units write back through W_proj, and how many fire at each position of the prompt."""

from __future__ import annotations

import streamlit as st

from lessons.block import cached
from lessons.block import views as bv
from ui.drawing import plots, render
from ui.frame import page, prose
from ui.text import code_span, shape_text


def section(r: dict, label: str) -> None:
    prose.section("The feed-forward layer", "block", "ffn", param_share=r["ffn_param_share"])
    if page.technical():  # the arrays' names and shapes: the Simple text says it in words
        st.caption(" → ".join([shape_text("ffn_in (layer-normed x + attention)", r["ffn_in"], "(T, D)"),
                               shape_text("W_fc", r["w_fc"], "(D, F)"), shape_text("hidden", r["ffn_pre"], "(T, F)"),
                               shape_text("W_proj", r["w_proj"], "(F, D)"),
                               shape_text("ffn_out", r["ffn_out"], "(T, D)")]))
    c, curve = cached.curves()
    left, right = st.columns(2)
    with left:
        render.show(plots.line_chart, curve, width="stretch", title="GELU against ReLU", x_title="input",
                    y_title="output")
    with right:
        render.show(plots.line_chart, bv.hidden_lines(r), width="stretch",
                    x_title="hidden unit, lowest pre-activation first",
                    title=f"row {r['position']} “{label}”: its hidden units", y_title="value", whole_x=True,
                    said_title="the hidden units of the row looked at")
    prose.show("block", "gelu", min_x=c["gelu_min_x"], min_y=c["gelu_min"])
    on, off = r["written_row"]["firing"], r["written_row"]["silent"]
    verdict = (prose.text("block", "firing_more") if off > on else
               prose.text("block", "firing_less", ratio=off / on))
    prose.show("block", "firing", position=r["position"], char=code_span(label), fires=r["firing_row"], F=r["F"],
               share=r["firing_mean"], T=r["T"], most=r["silent_most"], silent=r["F"] - r["firing_row"], on=on,
               off=off, on_mean=r["written_mean"]["firing"], off_mean=r["written_mean"]["silent"], verdict=verdict)
    render.show(plots.bar_chart, bv.written_bars(r), width="stretch", x_title="length of what they write",
                title=f"row {r['position']} “{label}”: written through W_proj", y_title="group of hidden units",
                said_title="the row looked at, written through W_proj")
    render.show(plots.line_chart, plots.line_frame(range(r["T"]), {"share of hidden units that fire": r["firing"]}),
                width="stretch", title="How many hidden units fire, position by position", x_title="position",
                y_title="share of the F units", whole_x=True)

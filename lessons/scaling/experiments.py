"""The scaling lesson's sections that do not read the sentence: why √d_k (the variance of q·k measured on random
vectors of its own), exp overflowing on large scores, and the saturation experiment with its two controls (a live
part of its own)."""

from __future__ import annotations

import streamlit as st

from lessons.scaling import cached, maths
from ui.drawing import plots, render
from ui.drawing.chart_data import ChartData
from ui.frame import prose
from ui.sections.views import number_table, numbers_text
from ui.state import controls


def line_chart(frame: ChartData, title: str, y_title: str, **settings) -> None:
    render.show(plots.line_chart, frame, width="stretch", x_title="d_k (log scale)", y_title=y_title,
                title=title, log_x=True, **settings)


def why_section() -> None:
    """The variance of q·k against d_k, measured on random vectors of its own: no control reaches it."""
    prose.section("Why √d_k?", "scaling", "why")
    st.latex(prose.text("scaling", "variance_formula"))
    prose.show("scaling", "why_measured", pairs=maths.VARIANCE_PAIRS)
    v, frame = cached.variance()
    left, right = st.columns([4, 3])
    with left:
        line_chart(frame, "variance of q·k vs d_k", "variance (log scale)", log_y=True)
    with right:
        number_table({"d_k": v["d_k"], "formula": v["formula"], "Var(q·k)": v["raw"],
                      "Var(q·k / √d_k)": v["scaled"]})
    st.caption(prose.text("scaling", "why_sentence"))


def overflow_section() -> None:
    """exp overflowing on a row of large scores, and the max subtraction that saves it: no control reaches it."""
    o = maths.overflow()
    shown = {name: numbers_text(o[name], spec=".4g") for name in ("scores", "naive_exp", "naive", "shifted",
                                                                  "shifted_exp", "weights")}
    prose.section("Large scores and the computer: overflow", "scaling", "overflow", f64=o["limits"]["float64"],
                  f32=o["limits"]["float32"], f16=o["limits"]["float16"], **shown)


def saturation() -> None:
    """The saturation experiment's controls and its charts: they rerun alone."""
    exp_T = controls.number_slider("scaling_T", "Experiment: tokens T", 2, 32, 16,
                                   help="How many keys each random query chooses among in the saturation experiment.")
    trials = controls.choice("scaling_trials", "Experiment: trials", (1, 10, 50, 100), 50,
                             help="How many random (T, d_k) query and key sets are averaged for each d_k.")
    controls.show_url_notes()
    saturation_section(exp_T, trials)


def saturation_section(T: int, trials: int) -> None:
    st.header("The saturation experiment")
    s, top, spread = cached.saturation(T, trials)
    prose.show("scaling", "experiment", T=T, trials=trials, draws="draws" if trials > 1 else "draw",
               d_max=maths.D_K_SWEEP[-1])
    left, right = st.columns(2)
    with left:
        line_chart(top, "max weight vs d_k", "max weight (mean)")
    with right:
        line_chart(spread, "row entropy vs d_k", "entropy, bits (mean)")
    at_512 = {name: s[name][-1] for name in ("max_unscaled", "max_scaled", "entropy_unscaled", "entropy_scaled")}
    st.caption(prose.text("scaling", "experiment_result", T=T, uniform=s["uniform_entropy"], d_max=s["d_k"][-1],
                          **at_512))

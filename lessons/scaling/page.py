"""Lesson: why the scores are divided by √d_k before the softmax."""

import numpy as np
import streamlit as st

from core import attention, sampling
from core.demos import heads, measures
from lessons import COURSE
from lessons.scaling import cached, maths
from lessons.scaling.questions import questions
from ui.drawing import plots, render
from ui.drawing.chart_data import ChartData
from ui.frame import page, prose
from ui.sections import views
from ui.sections.views import (
    explain_row,
    heatmaps,
    number_table,
    numbers_text,
    query_picker,
    sentence_settings,
    square,
    tokens_line,
    weights_map,
)
from ui.state import controls, phone
from ui.text import counted

compute = cached.scaling_view


def line_chart(frame: ChartData, title: str, y_title: str, **settings) -> None:
    render.show(plots.line_chart, frame, width="stretch", x_title="d_k (log scale)", y_title=y_title,
                title=title, log_x=True, **settings)


def weights_section(a: dict, tokens: list[str], d_k: int) -> None:
    """The scores through the softmax, with the temperature and the switch that divides them by √d_k beside
    them: a live part of its own (those two controls, the query row and a click on the map reach nothing else)."""
    st.header("Scores → weights")
    temperature_place, switch_place = views.in_a_row(2)
    temperature = controls.attention_temperature(container=temperature_place)
    scaled = controls.toggle("scaling_on", "Divide the scores by √d_k", default=True, container=switch_place,
                             help="Switch off to feed the raw scores Q Kᵀ to the softmax.")
    controls.show_url_notes()
    logits, weights = maths.scaled_weights(a["scores"], d_k, scaled, temperature)  # (T, T) each
    root, tau = np.sqrt(d_k), f"τ = {temperature:.2f}"
    prose.show("scaling", "weights_rule" if scaled else "weights_rule_off", root=root, tau=temperature, d_k=d_k)
    if temperature == 0:
        st.info("Temperature 0: each row puts all of its weight on its largest score (argmax), a one-hot row.")
    before = "scores before the softmax: " + ("Q Kᵀ / √d_k" if scaled else "Q Kᵀ (not scaled)")
    query = query_picker(tokens)
    heatmaps(square(logits, tokens, before, "scaling_logits", "scaled scores" if scaled else "raw scores",
                    diverging=True),
             weights_map(weights, tokens, "weights: click a row", "scaling_weights",
                         shape="(T, T), rows sum to 1", picked=query))
    st.caption(prose.text("scaling", "random_weights"))
    divisor = f"√d_k · τ = {root:.2f} · {temperature:.2f}" if scaled else tau
    st.caption(prose.text("scaling", "weights_summary", divisor=divisor, keys=counted(len(tokens), "key"),
                          **measures.weight_summary(weights)))
    explain_row(weights, a["V"], tokens, query)


def compare_section(a: dict, tokens: list[str], d_k: int) -> None:
    st.header("Compare: unscaled vs scaled")
    root = np.sqrt(d_k)
    prose.show("scaling", "compare", d_k=d_k, root=root)
    heatmaps(square(a["scores"], tokens, "unscaled scores Q Kᵀ", "scaling_raw", "Q Kᵀ", diverging=True,
                    note=prose.text("scaling", "spread_raw", spread=a["spread_raw"], root=root)),
             square(a["scaled_scores"], tokens, "scaled scores Q Kᵀ / √d_k", "scaling_scaled", "Q Kᵀ / √d_k",
                    diverging=True, note=prose.text("scaling", "spread_scaled", spread=a["spread_scaled"])))
    notes = [prose.text("scaling", "summary", **a[name]) for name in ("summary_unscaled", "summary_scaled")]
    heatmaps(weights_map(a["weights_unscaled"], tokens, "unscaled weights softmax(Q Kᵀ)", "scaling_w_raw",
                         "softmax(Q Kᵀ)", note=notes[0]),
             weights_map(a["weights_scaled"], tokens, "scaled weights softmax(Q Kᵀ / √d_k)", "scaling_w_scaled",
                         "softmax(Q Kᵀ / √d_k)", note=notes[1]))


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


def d_v_section(a: dict, tokens: list[str], d_k: int) -> None:
    """The √d_v mistake: a live part of its own, its slider beside it (it reaches nothing else)."""
    st.header("A mistake: dividing by √d_v")
    d_v = controls.number_slider("scaling_d_v", "d_v (value size, for the √d_v mistake)", 1, 512, 64,
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


def controls_and_sections() -> None:
    """The sentence's controls and the sections they drive: a move of one reruns this alone."""
    sentence, max_tokens, D, d_k, seed = sentence_settings(d_k_hi=512, d_k_default=64)
    phone.in_reach("d_k")  # on a phone, d_k stays beside the scores whose spread it sets
    controls.show_url_notes()

    tokens = tokens_line(sentence, max_tokens)
    a = compute(tokens, D, d_k, seed)
    # the sections with controls of their own are live parts of their own: a move of one reruns that alone
    page.live(weights_section, a, tokens, d_k)
    compare_section(a, tokens, d_k)
    if page.technical():
        page.live(d_v_section, a, tokens, d_k)


def experiment() -> None:
    """The saturation experiment's controls and its charts: they rerun alone."""
    exp_T = controls.number_slider("scaling_T", "Experiment: tokens T", 2, 32, 16,
                                   help="How many keys each random query chooses among in the saturation experiment.")
    trials = controls.choice("scaling_trials", "Experiment: trials", (1, 10, 50, 100), 50,
                             help="How many random (T, d_k) query and key sets are averaged for each d_k.")
    controls.show_url_notes()
    saturation_section(exp_T, trials)


page.opening(COURSE, "scaling")

page.live(controls_and_sections)
if page.technical():  # the proof, and the overflow the softmax guards against
    why_section()  # its own random vectors: the same on every link, drawn outside the live parts
    overflow_section()
page.live(experiment)

page.closing(COURSE, "scaling", questions, code=(
    maths.scaling_view, heads.single_head, maths.scaled_weights, sampling.probs_from_logits, attention.softmax,
    maths.saturation_experiment, measures.entropy, maths.dot_product_variance, maths.scale_mistake,
    maths.overflow))

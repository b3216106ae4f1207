"""Lesson 2: why the scores are divided by √d_k before the softmax."""

import numpy as np
import pandas as pd
import streamlit as st

from core.attention import softmax
from core.demos import measures, scaling
from core.demos.heads import single_head
from core.sampling import probs_from_logits
from core.tokenize import word_tokens
from ui import charts, controls, explain, page, presenter, render
from ui.text import code_span, notice, shape_caption, show_code

TRIALS = (1, 10, 50, 100)
VARIANCE_PAIRS = 2000


@st.cache_data(show_spinner=False, max_entries=256)
def compute(tokens: tuple[str, ...], D: int, d_k: int, seed: int, scaled: bool, temperature: float,
            d_v: int) -> dict:
    return scaling.scaling_view(list(tokens), D, d_k, seed, scaled, temperature, d_v)


@st.cache_data(show_spinner=False, max_entries=64)
def saturation(T: int, trials: int, seed: int) -> dict:
    return scaling.saturation_experiment(scaling.D_K_SWEEP, T, trials, np.random.default_rng([seed, T, trials]))


@st.cache_data(show_spinner=False, max_entries=64)
def variance(seed: int) -> dict:
    rng = np.random.default_rng([seed, VARIANCE_PAIRS])
    return scaling.dot_product_variance(scaling.D_K_SWEEP, VARIANCE_PAIRS, rng)


@st.cache_data(show_spinner=False, max_entries=64)
def saturation_frames(T: int, trials: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    s = saturation(T, trials, seed)
    flat = np.full(len(s["d_k"]), 1.0)
    top = charts.line_frame(s["d_k"], {"unscaled": s["max_unscaled"], "scaled by √d_k": s["max_scaled"],
                                       f"uniform (1/T = {s['uniform_max']:.3f})": flat * s["uniform_max"]})
    spread_ = charts.line_frame(s["d_k"], {"unscaled": s["entropy_unscaled"], "scaled by √d_k": s["entropy_scaled"],
                                           f"uniform (log2 T = {s['uniform_entropy']:.2f})":
                                           flat * s["uniform_entropy"]})
    return top, spread_


@st.cache_data(show_spinner=False, max_entries=64)
def variance_frame(seed: int) -> pd.DataFrame:
    v = variance(seed)
    return charts.line_frame(v["d_k"], {"formula: d_k": v["formula"], "measured: q·k": v["raw"],
                                        "measured: q·k / √d_k": v["scaled"]})


page.header(__file__)
st.title("2 · Scaling")
st.markdown(
    "A score is a dot product: d_k products added together. The more terms you add, the wider the sum "
    "spreads: for queries and keys with unit-variance entries, the variance of a score is **d_k** itself. "
    "Feed widely spread scores to a softmax and it *saturates*: the biggest score takes almost all of the "
    "weight, every other key gets almost none, and the gradients that would teach the model to look "
    "elsewhere all but vanish. Dividing every score by **√d_k** puts the spread back to about 1 whatever "
    "d_k is, so attention stays soft enough to learn: **softmax(Q Kᵀ / √d_k)**."
)

sentence = controls.input_text()
max_tokens = controls.seq_len()
D = controls.d_model()
d_k = controls.d_k(hi=512, default=64)
seed = controls.seed()
temperature = controls.temperature()
st.sidebar.markdown("**On this page**")
scaled = controls.toggle("scaling_on", "Divide the scores by √d_k", default=True,
                         help="Switch off to feed the raw scores Q Kᵀ to the softmax.")
d_v = controls.number_slider("scaling_d_v", "d_v (value size, for the d_v mistake)", 1, 512, 64,
                             help="The width of the value vectors. It has nothing to do with the scores' spread.")
exp_T = controls.number_slider("scaling_T", "Experiment: tokens T", 2, 32, 16,
                               help="How many keys each random query chooses among in the saturation experiment.")
trials = controls.choice("scaling_trials", "Experiment: trials", TRIALS, 50,
                         help="How many random (T, d_k) query and key sets are averaged for each d_k.")
controls.show_url_notes()

tokens = word_tokens(sentence, max_tokens)
if not tokens:
    st.warning("There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation).")
    st.stop()
a = compute(tuple(tokens), D, d_k, seed, scaled, temperature, d_v)
T = len(tokens)
root = float(np.sqrt(d_k))
cell = min(charts.CELL_PX, 360 // T)  # two heatmaps side by side stay inside their columns

st.markdown("**Tokens:** " + " · ".join(code_span(t) for t in tokens))
if len(word_tokens(sentence)) > T:
    st.caption(f"Showing the first {T} of {len(word_tokens(sentence))} tokens (seq_len).")

# ---- the scores the softmax sees ----------------------------------------------------------------------
st.subheader("Scores → weights")
divisor = f"√d_k · τ = {root:.2f} · {temperature:.2f}" if scaled else f"τ = {temperature:.2f}"
formula = "softmax(Q Kᵀ / (√d_k · τ))" if scaled else "softmax(Q Kᵀ / τ), scaling switched off"
st.markdown(f"weights = **{formula}**, with d_k = {d_k} and temperature τ = {temperature:.2f}.")
if temperature == 0:
    st.info("Temperature 0: each row puts all of its weight on its largest score (argmax), a one-hot row.")
left, right = st.columns(2)
with left:
    logit_title = "logits Q Kᵀ / √d_k" if scaled else "logits Q Kᵀ (not scaled)"
    render.show_heatmap(a["logits"], tokens, tokens, title=logit_title, key="scaling_logits", diverging=True,
                        cell_px=cell)
    shape_caption("logits", a["logits"], "(T, T)")
with right:
    picked = render.show_heatmap(a["weights"], tokens, tokens, title="weights: click a row", key="scaling_weights",
                                 select_rows=True, domain=(0.0, 1.0), cell_px=cell)
    shape_caption("weights", a["weights"], "(T, T), rows sum to 1")
st.caption(f"Before the softmax each score is divided by {divisor}. Mean row entropy "
           f"{a['summary']['entropy']:.2f} bits (uniform over {T} keys: {a['summary']['uniform_entropy']:.2f}); "
           f"mean largest weight {a['summary']['max']:.3f}.")
query = picked if picked is not None and picked < T else T - 1
st.caption("Click a query row in the weights to see its output built up; the last token is shown until you do.")
explain.weighted_sum(a["weights"][query], a["V"], tokens, query)

# ---- side by side -------------------------------------------------------------------------------------
st.subheader("Compare: unscaled vs scaled")
st.markdown(f"The same sentence, the same W_Q and W_K, the same d_k = {d_k}; only the division by "
            f"√d_k = {root:.2f} differs (temperature 1 on both sides).")
left, right = st.columns(2)
with left:
    render.show_heatmap(a["scores"], tokens, tokens, title="unscaled scores Q Kᵀ", key="scaling_raw", diverging=True,
                        cell_px=cell)
    shape_caption("Q Kᵀ", a["scores"], "(T, T)")
    st.caption(f"Spread (standard deviation): {a['spread_raw']:.2f}; √d_k = {root:.2f}.")
    render.show_heatmap(a["weights_unscaled"], tokens, tokens, title="unscaled weights softmax(Q Kᵀ)",
                        key="scaling_w_raw", domain=(0.0, 1.0), cell_px=cell)
    shape_caption("softmax(Q Kᵀ)", a["weights_unscaled"], "(T, T)")
    st.caption(f"Mean row entropy {a['summary_unscaled']['entropy']:.2f} bits; "
               f"mean largest weight {a['summary_unscaled']['max']:.3f}.")
with right:
    render.show_heatmap(a["scaled_scores"], tokens, tokens, title="scaled scores Q Kᵀ / √d_k", key="scaling_scaled",
                        diverging=True, cell_px=cell)
    shape_caption("Q Kᵀ / √d_k", a["scaled_scores"], "(T, T)")
    st.caption(f"Spread (standard deviation): {a['spread_scaled']:.2f}, close to 1 at any d_k.")
    render.show_heatmap(a["weights_scaled"], tokens, tokens, title="scaled weights softmax(Q Kᵀ / √d_k)",
                        key="scaling_w_scaled", domain=(0.0, 1.0), cell_px=cell)
    shape_caption("softmax(Q Kᵀ / √d_k)", a["weights_scaled"], "(T, T)")
    st.caption(f"Mean row entropy {a['summary_scaled']['entropy']:.2f} bits; "
               f"mean largest weight {a['summary_scaled']['max']:.3f}.")

# ---- the experiment -----------------------------------------------------------------------------------
st.subheader("The saturation experiment")
s = saturation(exp_T, trials, seed)
st.markdown(
    f"Forget the sentence: draw T = {exp_T} random queries and keys with entries from N(0, 1), compute the "
    f"softmax of their scores with and without √d_k, and average over {trials} such draw{'s' if trials > 1 else ''} "
    f"for every d_k from 1 to 512."
)
top_frame, entropy_frame = saturation_frames(exp_T, trials, seed)
left, right = st.columns(2)
with left:
    render.show(charts.line_chart, top_frame, width="stretch", x_title="d_k (log scale)",
                y_title="max weight (mean)", title="max weight vs d_k", log_x=True)
with right:
    render.show(charts.line_chart, entropy_frame, width="stretch", x_title="d_k (log scale)",
                y_title="entropy, bits (mean)", title="row entropy vs d_k", log_x=True)
st.caption(
    f"At d_k = 512 the unscaled softmax gives its favourite key {s['max_unscaled'][-1]:.3f} of the weight on "
    f"average (entropy {s['entropy_unscaled'][-1]:.2f} bits); scaled, {s['max_scaled'][-1]:.3f} "
    f"({s['entropy_scaled'][-1]:.2f} bits, where an even spread over {exp_T} keys would be "
    f"{s['uniform_entropy']:.2f}). At d_k = 1 the two are the same: √1 = 1."
)

# ---- why √d_k -----------------------------------------------------------------------------------------
st.subheader("Why √d_k?")
st.markdown(
    "A score adds up d_k products, one per dimension. When the entries of q and k are independent with mean 0 "
    "and variance 1, each product has mean 0 and variance 1, and the variances of independent terms add up:"
)
st.latex(r"\operatorname{Var}(q \cdot k) = \sum_{i=1}^{d_k} \operatorname{Var}(q_i k_i) = d_k, \qquad "
         r"\operatorname{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = \frac{d_k}{d_k} = 1")
st.markdown(f"So a raw score's standard deviation is √d_k, and dividing by √d_k brings it back to 1. "
            f"Measured on {VARIANCE_PAIRS:,} random pairs for every d_k:")
v = variance(seed)
left, right = st.columns([4, 3])
with left:
    render.show(charts.line_chart, variance_frame(seed), width="stretch", x_title="d_k (log scale)",
                y_title="variance (log scale)", title="variance of q·k vs d_k", log_x=True, log_y=True)
with right:
    table = pd.DataFrame({"d_k": v["d_k"], "formula": v["formula"], "Var(q·k)": v["raw"],
                          "Var(q·k / √d_k)": v["scaled"]})
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in table.columns[1:]})
st.caption(f"On the sentence above (d_k = {d_k}): the raw scores spread with standard deviation "
           f"{a['spread_raw']:.2f} against √d_k = {root:.2f}; the scaled ones {a['spread_scaled']:.2f}. "
           "W_Q and W_K are drawn with variance 1/d_model so that Q and K have unit-variance entries.")

# ---- the d_v mistake ----------------------------------------------------------------------------------
st.subheader("A mistake: dividing by d_v")
m = a["mistake"]
if d_v > root:
    effect = (f"divides by {d_v} instead of {root:.2f}, {d_v / root:.1f}× too much: the weights flatten "
              "towards uniform and attention stops choosing")
elif d_v < root:
    effect = (f"divides by {d_v} instead of {root:.2f}, {root / d_v:.1f}× too little: the weights stay "
              "sharp, as if the scaling were (partly) switched off")
else:
    effect = "happens to divide by the right number here, because d_v = √d_k; change either and they part"
st.markdown(
    "d_v is the width of the value vectors: how much each token hands over, not how its query and key are "
    f"compared. The scores' spread depends on d_k alone. With d_k = {d_k} and d_v = {d_v}, the mistake {effect}."
)
left, right = st.columns(2)
with left:
    render.show_heatmap(m["wrong"], tokens, tokens, title="wrong: softmax(Q Kᵀ / d_v)", key="scaling_wrong",
                        domain=(0.0, 1.0), cell_px=cell)
    shape_caption("weights", m["wrong"], "(T, T)")
    st.caption(f"Divided by d_v = {d_v}: mean row entropy {m['wrong_entropy']:.2f} bits, "
               f"mean largest weight {m['wrong_max']:.3f}.")
with right:
    render.show_heatmap(m["right"], tokens, tokens, title="right: softmax(Q Kᵀ / √d_k)", key="scaling_right",
                        domain=(0.0, 1.0), cell_px=cell)
    shape_caption("weights", m["right"], "(T, T)")
    st.caption(f"Divided by √d_k = {root:.2f}: mean row entropy {m['right_entropy']:.2f} bits, "
               f"mean largest weight {m['right_max']:.3f}.")
st.caption("Most models use d_v = d_k, which hides this bug as a different one: dividing by d_k instead of "
           "√d_k, √d_k times too much.")

notice([
    "Switch scaling off and raise d_k: the rows of the weights turn into near one-hot rows, one bright cell each.",
    "The scaled scores keep a standard deviation near 1 at every d_k; the raw ones grow like √d_k.",
    "In the experiment, the unscaled max weight climbs towards 1 and its entropy falls towards 0 as d_k grows; "
    "the scaled curves stay flat.",
    "Both curves start at the same point: at d_k = 1, √d_k = 1 and scaling changes nothing.",
    "The measured variance of q·k follows the line Var = d_k; divided by √d_k it stays at 1.",
    "Temperature multiplies the divisor: τ < 1 sharpens the weights like a larger d_k would, τ > 1 flattens them.",
])
if not presenter.presenting():
    show_code(scaling.scaling_view, single_head, scaling.scaled_weights, probs_from_logits, softmax,
              scaling.saturation_experiment, measures.entropy, scaling.dot_product_variance, scaling.scale_mistake)
page.footer(__file__)

"""Lesson: why the scores are divided by √d_k before the softmax."""

import numpy as np
import streamlit as st

from core import attention, sampling
from core.demos import heads, measures
from lessons import COURSE
from lessons.scaling import cached, experiments, maths, mistake
from lessons.scaling.questions import questions
from ui.drawing.softmax import Temperature
from ui.frame import page, prose
from ui.sections import views
from ui.sections.views import (
    explain_row,
    heatmaps,
    query_picker,
    sentence_settings,
    softmax_map,
    square,
    tokens_line,
    weights_map,
)
from ui.state import controls, phone
from ui.text import counted

compute = cached.scaling_view
WEIGHTS_KEY = "scaling_weights"
# τ keeps the link key attn_temp it has always had, so links made before still open at their τ
TEMPERATURE = Temperature("attn_temp", "Attention temperature τ")


def weights_section(a: dict, tokens: list[str], d_k: int) -> None:
    """The scores through the softmax, with the switch that divides them by √d_k above the maps and the temperature
    τ the weights map's own slider: a live part of its own (those two, the query row and a click on the map reach
    nothing else). A move of τ recolours and renumbers the map in the browser as it is dragged
    (ui.drawing.softmax), and the rerun it then starts writes the words under the maps."""
    st.header("Scores → weights")
    scaled = controls.toggle("scaling_on", "Divide the scores by √d_k", default=True, container=st,
                             help="Switch off to feed the raw scores Q Kᵀ to the softmax.")
    controls.show_url_notes()
    logits = maths.scaled_scores(a["scores"], d_k, scaled)  # (T, T)
    before = "scores before the softmax: " + ("Q Kᵀ / √d_k" if scaled else "Q Kᵀ (not scaled)")
    query = query_picker(tokens)
    own = heatmaps(square(logits, tokens, before, "scaling_logits", "scaled scores" if scaled else "raw scores",
                          diverging=True),
                   softmax_map(logits, tokens, "weights: click a row", WEIGHTS_KEY, TEMPERATURE,
                               shape="(T, T), rows sum to 1", picked=query))
    controls.show_url_notes()  # a link's unusable τ is noted under the maps
    temperature = own[WEIGHTS_KEY].now[0]
    _, weights = maths.scaled_weights(a["scores"], d_k, scaled, temperature)  # (T, T), as the map shows them
    st.caption(prose.text("scaling", "tau_slider"))
    if temperature == 0:  # the limit, not a division by 0
        formula = "softmax(Q Kᵀ / (√d_k · τ)), with d_k = " + str(d_k) if scaled else \
            "softmax(Q Kᵀ / τ), scaling switched off"
        st.info(prose.text("scaling", "tau_zero", formula=formula))
    else:
        prose.show("scaling", "weights_rule" if scaled else "weights_rule_off", root=np.sqrt(d_k), tau=temperature,
                   d_k=d_k)
    st.caption(prose.text("scaling", "weights_summary", keys=counted(len(tokens), "key"),
                          **measures.weight_summary(weights)))
    st.caption(prose.text("scaling", "random_weights"))
    explain_row(weights, a["V"], tokens, query)


def compare_section(a: dict, tokens: list[str], d_k: int) -> None:
    st.header("Compare: unscaled vs scaled")
    root = np.sqrt(d_k)
    prose.show("scaling", "compare", d_k=d_k, root=root)
    # One quantity, scaled or not, compared cell by cell: each pair the panels of one chart on one colour scale, so
    # the scaled scores look as much smaller as they are, and a weight is the same colour in both maps.
    views.panels("Scores",
                 square(a["scores"], tokens, "unscaled scores Q Kᵀ", "scaling_raw", "Q Kᵀ", diverging=True),
                 square(a["scaled_scores"], tokens, "scaled scores Q Kᵀ / √d_k", "scaling_scaled", "Q Kᵀ / √d_k",
                        diverging=True), shared=True)
    st.caption(prose.text("scaling", "one_scale" if d_k > 1 else "one_scale_same", root=root) + " "
               + prose.text("scaling", "spreads" if a["spread_raw"] > 0 else "spreads_none", raw=a["spread_raw"],
                            scaled=a["spread_scaled"], root=root))
    views.panels("Weights",
                 weights_map(a["weights_unscaled"], tokens, "unscaled weights softmax(Q Kᵀ)", "scaling_w_raw",
                             "softmax(Q Kᵀ)", "(T, T), rows sum to 1"),
                 weights_map(a["weights_scaled"], tokens, "scaled weights softmax(Q Kᵀ / √d_k)", "scaling_w_scaled",
                             "softmax(Q Kᵀ / √d_k)", "(T, T), rows sum to 1"), shared=True)
    raw, scaled = a["summary_unscaled"], a["summary_scaled"]
    st.caption(prose.text("scaling", "summaries", entropy_raw=raw["entropy"], entropy_scaled=scaled["entropy"],
                          max_raw=raw["max"], max_scaled=scaled["max"], uniform=raw["uniform_entropy"],
                          keys=counted(len(tokens), "key")))


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
    if page.technical():  # an aside, drawn only while open
        box = controls.aside(mistake.OPEN_KEY, mistake.TITLE, icon=":material/report:", holds=(mistake.D_V,))
        controls.show_url_notes()  # a link's unusable value for it is noted beside it
        if box.open:
            with box:
                page.live(mistake.section, a, tokens, d_k)


page.opening(COURSE, "scaling")

page.live(controls_and_sections)
if page.technical():  # the proof, and the overflow the softmax guards against
    experiments.why_section()  # its own random vectors: the same on every link, drawn outside the live parts
    experiments.overflow_section()
page.live(experiments.saturation)

page.closing(COURSE, "scaling", questions, code=(
    maths.scaling_view, heads.single_head, maths.scaled_weights, sampling.probs_from_logits, attention.softmax,
    maths.saturation_experiment, measures.entropy, maths.dot_product_variance, maths.scale_mistake,
    maths.overflow))

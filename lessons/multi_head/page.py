"""Lesson: several heads side by side, their concatenation, W_O, and three equal implementations."""

import streamlit as st

from core import attention
from core.tokenize import word_embeddings, word_tokens
from lessons import COURSE
from lessons.multi_head import compare, not_explanation, trained
from lessons.multi_head.cached import Setup, compute
from lessons.multi_head.maths import mha_weights, multi_head
from lessons.multi_head.questions import questions
from lessons.multi_head.views import draw_heads, forms_table
from ui.drawing import heatmap
from ui.frame import page, prose
from ui.sections import trained_views, views
from ui.sections.views import PROBABILITY, Heatmap, dim_labels, heatmaps
from ui.state import controls, phone, seq_len
from ui.text import shape_str

GRID_PANELS = 32  # the grid at the top draws at most this many heads; any head can be looked at closely below
VECTORS = dict(diverging=True, x_title="dimension", y_title="token")  # rows of tokens, columns of dimensions


def heads_section(a: dict, s: Setup) -> None:
    d_k = s.D // s.H
    st.header(f"{s.H} head{'s' if s.H > 1 else ''}, each with d_k = {s.D} / {s.H} = {d_k}")
    for column, label, value in zip(views.in_a_row(3), ["d_model (D)", "heads (H)", "d_k = D / H"], [s.D, s.H, d_k]):
        column.metric(label, value)
    # 128 maps of 32 x 32 would be 131,072 cells: 3.8 MB sent per slider move, too small to read.
    draw_heads(s, "Attention weights, one map per head", width_px=heatmap.WIDE_ROOM_PX, first=GRID_PANELS)
    causal = ", nothing above the diagonal (causal)" if s.causal else ""
    st.caption(f"weights · shape {shape_str(a['weights'].shape)} = (H, T, T): one (T, T) map per head, every row "
               f"sums to 1{causal}. Hover over a cell, or tap it, for its value. "
               + prose.text("multi_head", "random_weights"))
    if s.H > GRID_PANELS:
        st.caption(f"The first {GRID_PANELS} of the {s.H} heads; pick any head in the sidebar's "
                   "“Head to look at closely” to see its map and its numbers below.")


def inside_head_section(a: dict, tokens: list[str]) -> None:
    """One head up close: a live part of its own (the head picked, the query row and a click on the map reach
    nothing else)."""
    H = a["Q"].shape[0]
    title = st.container()  # the heading names the head: written once the control is read
    focus = controls.choice("mh_head", "Head to look at closely", list(range(1, H + 1)), 1,
                            container=st, width=controls.IN_PAGE_PX) if H > 1 else 1
    controls.show_url_notes()
    h, d_k = focus - 1, a["Q"].shape[-1]
    title.header(f"Inside head {focus}")
    small = dict(VECTORS, cell_px=heatmap.MEDIUM_CELL_PX)
    views.panels("Q, K, V of this head",
                 *[Heatmap(a[name][h], tokens, dim_labels(d_k), f"{name} of head {focus}", f"mh_{name}", "",
                           "(T, d_k)", small) for name in "QKV"], said_names=False)
    st.caption(prose.text("multi_head", "slices_one" if d_k == 1 else "slices", head=focus, first=h * d_k,
                          last=(h + 1) * d_k - 1, top=d_k - 1))
    query = views.query_picker(tokens)
    heatmaps(
        Heatmap(a["weights"][h], tokens, tokens, f"Head {focus} weights: click a row", "mh_weights",
                f"weights[{h}]", "(T, T), rows sum to 1",
                dict(picked=query, domain=PROBABILITY, said_title="Weights of the head looked at")),
        Heatmap(a["heads"][h], tokens, dim_labels(d_k), f"Output of head {focus}", "mh_head_out",
                f"head {focus} output", "(T, d_k)", dict(small, said_title="Output of the head looked at")),
        widths=[3, 2])
    views.explain_row(a["weights"][h], a["V"][h], tokens, query)


def concat_section(a: dict, tokens: list[str]) -> None:
    (H, _, d_k), D = a["heads"].shape, a["X"].shape[1]
    st.header("Concat, then W_O")
    concat_cols = [f"h{c // d_k + 1}·{c % d_k}" for c in range(D)]
    wide = dict(VECTORS, cell_px=heatmap.SMALL_CELL_PX)
    heatmaps(Heatmap(a["concat"], tokens, concat_cols, "Concat of the head outputs", "mh_concat", "concat",
                     f"(T, H·d_k) = (T, {H}·{d_k}) = (T, D)", dict(wide, x_title="head · dimension")))
    heatmaps(Heatmap(a["w_o"], concat_cols, dim_labels(D), "W_O", "mh_w_o", "W_O", "(D, D)",
                     dict(wide, x_title="output dim", y_title="head · dimension")),
             Heatmap(a["out"], tokens, dim_labels(D), "Output = concat · W_O", "mh_out", "output",
                     "(T, D), the same shape as the input X", wide))
    st.caption(prose.text("multi_head", "w_o"))


def forms_section(a: dict) -> None:
    st.header("Three ways to write it, one answer")
    table = forms_table(a)
    views.number_table(table, "%.1e", columns=list(table)[3:])
    worst = max(max(d) for d in a["max_diff"].values())
    box = st.success if worst < 1e-10 else st.error
    box(prose.text("multi_head", "forms_agree", worst=worst))
    st.caption(prose.text("multi_head", "forms"))


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    if trained_views.weights_switch():  # the toy-English model's heads on the sentence, in its own words
        trained.view()
        return
    sentence = controls.input_text()
    max_tokens = seq_len.seq_len(len(word_tokens(sentence)))
    D = controls.d_model()
    H = controls.heads(D)
    seed = controls.seed()
    causal = controls.toggle("mh_causal", "Causal mask",
                             help="Each token may look only at itself and earlier tokens (as in a language model).")
    phone.in_reach("heads")  # the lesson is about heads: on a phone, their slider stays beside the maps
    controls.show_url_notes()

    tokens = views.tokens_line(sentence, max_tokens)
    setup = Setup(tuple(tokens), D, H, seed, causal)
    try:
        a = compute(setup)
    except ValueError as err:  # a setting core cannot use: say why, never a traceback
        st.error(str(err))
        st.stop()
    heads_section(a, setup)
    page.live(inside_head_section, a, tokens)
    concat_section(a, tokens)
    if page.technical():
        forms_section(a)
    compare.section(a, setup)


page.opening(COURSE, "multi_head", formula="formula")

page.live(controls_and_sections)
not_explanation.section()  # measured on the shipped word model: the same for every link, outside the live part

page.closing(COURSE, "multi_head", questions, code=(
    multi_head, mha_weights, attention.multi_head_attention, attention.qkv_heads, attention.split_heads,
    attention.merge_heads, attention.multi_head_attention_loop, attention.multi_head_attention_einsum,
    word_embeddings))

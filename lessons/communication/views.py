"""What the Context and order lesson draws: one word's outputs in two sentences, self- against
cross-attention, the word-order test, an encoder against a decoder, and token 0's reach through a
recurrence against one attention step. Each function takes a result of the lesson's maths
(lessons/communication/maths.py) and lays it out; nothing here computes.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.drawing import charts, heatmap, plots, render
from ui.drawing.charts import unique_labels
from ui.frame import page, prose
from ui.sections import views
from ui.sections.views import Heatmap, dim_labels, heatmaps, weights_map
from ui.text import code_span, counted, shape_str

ROW = dict(domain=views.PROBABILITY, x_title="key", y_title="query", cell_px=heatmap.LARGE_CELL_PX)
# the two sentences' vectors stand side by side, each d_model wide: a cell a step under a medium one keeps both in
# a row
VECTORS_CELL_PX = 24
VECTORS = dict(diverging=True, x_title="dimension", y_title="", cell_px=VECTORS_CELL_PX)


def tokens_markdown(tokens: list[str], marked: int | None = None) -> str:
    """Tokens as code spans joined by dots, the one at `marked` in bold."""
    return " · ".join(f"**{code_span(t)}**" if i == marked else code_span(t) for i, t in enumerate(tokens))


def two_contexts(r: dict, word: str) -> None:
    """same_word_two_contexts: the word's output in each sentence, their cosine, and the rows that differ."""
    label = code_span(word)
    st.markdown(f"**Sentence 1:** {tokens_markdown(r['tokens_a'], r['index_a'])}  \n"
                f"**Sentence 2:** {tokens_markdown(r['tokens_b'], r['index_b'])}")
    outputs = np.vstack([r["out_a"], r["out_b"]])  # (2, d_k)
    left, right = st.columns([3, 1])
    with left:
        views.heatmaps(Heatmap(outputs, ["in sentence 1", "in sentence 2"], dim_labels(outputs.shape[1]),
                              "the shared word's output in each sentence", "comm_outputs", "outputs",
                              "(2, d_k): one output row per sentence", VECTORS))
    right.metric("cosine similarity", f"{r['cosine']:.4f}", help="1 would mean the two outputs point the same way.")
    heatmaps(Heatmap(r["weights_a"][None, :], [word], r["tokens_a"], "its attention row in sentence 1",
                     "comm_row_a", "row", "(1, T₁), sums to 1", ROW),
             Heatmap(r["weights_b"][None, :], [word], r["tokens_b"], "its attention row in sentence 2",
                     "comm_row_b", "row", "(1, T₂), sums to 1", ROW))
    prose.show("communication", "contexts_same" if r["same_words"] else "contexts_result", word=label,
               cos=r["cosine"])


def self_and_cross(own: dict, cross: dict) -> None:
    """cross_attention of sentence 1 with itself (square) and with sentence 2 (rectangular)."""
    heatmaps(weights_map(own["weights"], own["tokens_q"], "self-attention: sentence 1 reads itself", "comm_self",
                         shape="(T₁, T₁), rows sum to 1"),
             Heatmap(cross["weights"], cross["tokens_q"], cross["tokens_kv"],
                     "cross-attention: sentence 1 reads sentence 2", "comm_cross", "weights",
                     "(T₁, T₂), rows sum to 1",
                     dict(ROW, cell_px=charts.CELL_PX)))
    if page.technical():  # the matrices' shapes, by their symbols: the Simple text says it in words
        st.caption(f"Q · shape {shape_str(cross['Q'].shape)} from sentence 1; K and V · shape "
                   f"{shape_str(cross['K'].shape)} from sentence 2; output · shape {shape_str(cross['out'].shape)}: "
                   "one output per query, as many as sentence 1 has tokens.")


def word_order(r: dict) -> None:
    """order_view: the shuffled sentence, both outputs, their difference, and the largest difference
    without and with positions."""
    st.markdown(f"**Shuffled:** {tokens_markdown(r['tokens_permuted'])}  \n"
                f"**New order:** {' '.join(str(p) for p in r['permutation'])} (original positions)")
    # the panels of one chart on one colour scale: rounding-sized differences look like 0, equal outputs alike
    dims, rows, look = dim_labels(r["out"].shape[1]), r["tokens_permuted"], dict(VECTORS, y_title="token")
    views.panels("Outputs and difference",
                 Heatmap(r["out_moved"], rows, dims, "outputs, rows moved", "comm_out_moved", "out[order]",
                         "(T, d_k)", look),
                 Heatmap(r["out_permuted"], rows, dims, "shuffled sentence's outputs", "comm_out_shuffled",
                         "out(shuffled)", "(T, d_k)", look),
                 Heatmap(r["difference"], rows, dims, "difference: shuffled − moved", "comm_out_diff", "difference",
                         "(T, d_k)", look), shared=True)
    left, middle, right = views.in_a_row(3)
    left.metric("largest difference without positions", f"{r['max_diff_without']:.1e}")
    middle.metric("largest difference with positions", f"{r['max_diff_with']:.3g}")
    right.metric("largest difference, causal mask, no positions", f"{r['max_diff_causal']:.3g}")
    prose.show("communication", "order_result", without=r["max_diff_without"], with_=r["max_diff_with"],
               causal=r["max_diff_causal"])


def encoder_decoder(r: dict, tokens: list[str]) -> None:
    """encoder_decoder: both weight maps, and how many tokens each token hears."""
    views.panels("Weights",  # one quantity, 0 to 1, the same colour for the same weight in both
                 weights_map(r["weights_encoder"], tokens, "encoder: no mask", "comm_encoder",
                             shape="(T, T), rows sum to 1"),
                 weights_map(r["weights_decoder"], tokens, "decoder: causal mask", "comm_decoder",
                             shape="(T, T), rows sum to 1, 0 above the diagonal"), shared=True)
    table = {"token": unique_labels(tokens), "hears (encoder)": r["listens_encoder"],
             "hears (decoder)": r["listens_decoder"]}
    views.number_table(table, "%d")
    T = len(tokens)
    prose.show("communication", "messages", tokens=counted(T, "token"),
               messages=counted(r["messages_encoder"], "message"), dec=r["messages_decoder"])


def reach(r: dict, tokens: list[str], keep: float) -> None:
    """reach_of_first_token: a line per route, and the table of steps and shares, position by position."""
    frame = plots.line_frame(np.arange(len(tokens)), {f"recurrence, keep = {keep:g}": r["recurrence"],
                                                        "attention (decoder weight a_t0)": r["attention"]})
    render.show(plots.line_chart, frame, width="stretch", x_title="position t", y_title="share of token 0 at t",
                title="how much of token 0 reaches each position", whole_x=True)
    table = {"position": np.arange(len(tokens)), "token": tokens,
             "recurrence steps": r["steps_recurrence"], "recurrence share": r["recurrence"],
             "attention steps": r["steps_attention"], "attention share": r["attention"]}
    views.number_table(table, "%.4g", ["recurrence share", "attention share"])
    last = len(tokens) - 1
    steps = int(r["steps_recurrence"][last])
    prose.show("communication", "reach_result", last=last, steps=steps, steps_said=counted(steps, "sequential step"),
               factors=counted(steps, "factor"),
               rnn=r["recurrence"][last], attn=r["attention"][last], keep=keep, newest=r["newest"])

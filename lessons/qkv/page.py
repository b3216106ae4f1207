"""Lesson: from token embeddings to queries, keys, values and raw scores."""

import numpy as np
import streamlit as st

from core.attention import scaled_dot_product_attention, softmax
from core.demos.context import walk_through
from core.demos.heads import projections, single_head
from core.demos.measures import spread, weight_summary
from core.tokenize import word_embeddings
from lessons import COURSE
from lessons.qkv import cached, maths, trained, why
from lessons.qkv import views as qv
from lessons.qkv.questions import questions
from ui.drawing import heatmap
from ui.drawing.charts import unique_labels
from ui.frame import page, prose
from ui.sections import trained_views, views, walkthrough_views
from ui.sections.views import Heatmap, dim_labels, heatmaps, square, token_rows, weights_map
from ui.state import controls, phone
from ui.text import code_span, counted

ROLES = {"Q": "what each token asks", "K": "what each token offers", "V": "what each token hands over"}

compute = cached.single_head


def embeddings_section(a: dict, tokens: list[str]) -> None:
    st.header("Embeddings X")
    heatmaps(token_rows(a["X"], tokens, "X", "qkv_x", shape="(T, d_model)", max_width=qv.EMBEDDINGS_ROOM_PX))
    st.caption(prose.text("qkv", "embeddings") + "\n\n" + prose.text("qkv", "positions"))


def projections_section(a: dict) -> None:
    st.header("Three projections")
    D, d_k = a["W_Q"].shape
    settings = dict(diverging=True, x_title="output dim", y_title="input dim", cell_px=heatmap.SMALL_CELL_PX)
    names = ("W_Q", "W_K", "W_V")
    views.panels(", ".join(names), *[
        Heatmap(a[name], dim_labels(D), dim_labels(d_k), name, f"qkv_{name}", shape="(d_model, d_k)",
                settings=settings) for name in names])


def qkv_section(a: dict, tokens: list[str]) -> None:
    st.header("Queries, keys, values")
    views.panels("Q, K, V", *[
        token_rows(a[name], tokens, f"{name}: {role}", f"qkv_{name}", name, cell_px=heatmap.SMALL_CELL_PX)
        for name, role in ROLES.items()])


def geometry_section(a: dict, tokens: list[str]) -> None:
    """Two arrows the student turns, their dot product, and what that says about the sentence's scores: a live
    part of its own, since its four sliders reach nothing else."""
    prose.section("How a query meets a key: the dot product", "qkv", "geometry")
    turn, chart = st.columns((2, 3))
    angle_a = controls.number_slider("qkv_angle_a", "Direction of a (degrees)", 0, 360, 30, step=5, container=turn)
    angle_b = controls.number_slider("qkv_angle_b", "Direction of b (degrees)", 0, 360, 60, step=5, container=turn)
    length_a = controls.number_slider("qkv_len_a", "Length of a", 0.5, 2.0, 1.0, step=0.25, container=turn)
    length_b = controls.number_slider("qkv_len_b", "Length of b", 0.5, 2.0, 1.0, step=0.25, container=turn)
    controls.show_url_notes()
    g = maths.two_arrows(angle_a, angle_b, length_a, length_b)
    with chart:
        qv.draw_arrows(g, f"a · b = {g['dot']:.3f}")
    (ax, ay), (bx, by) = g["a"], g["b"]
    prose.show("qkv", "geometry_values", ax=ax, ay=ay, bx=bx, by=by, dot=g["dot"], la=g["length_a"],
               lb=g["length_b"], theta=g["theta"], cos=g["cos"], polar=g["polar"], largest=g["largest"])
    prose.show("qkv", "geometry_" + g["sign"], theta=g["theta"], largest=g["largest"])
    labels = [code_span(t) for t in unique_labels(tokens)]
    high, low = maths.extreme_pair(a["Q"], a["K"]), maths.extreme_pair(a["Q"], a["K"], highest=False)
    st.caption(prose.text("qkv", "geometry_scores", d_k=a["Q"].shape[1], score=high["score"], q=labels[high["query"]],
                          k=labels[high["key"]], ql=high["q_len"], kl=high["k_len"], theta=high["theta"],
                          low=low["score"], q2=labels[low["query"]], k2=labels[low["key"]], theta2=low["theta"],
                          lean=prose.text("qkv", "geometry_low_" + ("negative" if low["score"] < 0 else "positive"))))


def scores_section(a: dict, tokens: list[str]) -> int:
    """The scores and their softmax, with the query row picked by the box or a click; returns that row."""
    st.header("Raw scores Q Kᵀ")
    query = views.query_picker(tokens)
    heatmaps(square(a["scores"], tokens, "scores = Q Kᵀ", "qkv_scores", "Q Kᵀ", diverging=True),
             weights_map(a["weights"], tokens, "softmax(Q Kᵀ / √d_k): click a row", "qkv_weights",
                         shape="(T, T), rows sum to 1", picked=query))
    root, summary = np.sqrt(a["Q"].shape[1]), weight_summary(a["weights"])
    st.caption(prose.text("qkv", "spread", raw=spread(a["scores"]), root=root, scaled=spread(a["scores"] / root),
                          entropy=summary["entropy"], keys=counted(len(tokens), "key"),
                          uniform=summary["uniform_entropy"]))
    return query


def query_sections(a: dict, tokens: list[str], D: int, d_k: int, seed: int) -> None:
    """The scores and the query worked by hand: a live part of its own, so a click on a row (or the Query row
    box) reruns these sections alone."""
    page.live(query_sections, a, tokens, D, d_k, seed)


def walk_section(a: dict, tokens: list[str], query: int, D: int, d_k: int, seed: int) -> None:
    """The picked query worked by hand: its dot products, its softmax, then its weighted sum of values."""
    st.header("One query worked by hand")
    walkthrough_views.walk_through(tokens, D, d_k, seed, query)
    prose.show("qkv", "walk_sum")
    views.explain_row(a["weights"], a["V"], tokens, query)


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    if trained_views.weights_switch():  # the toy-English model's weights on the sentence, in its own words
        trained.view()
        return
    sentence, max_tokens, D, d_k, seed = views.sentence_settings()
    phone.in_reach("d_k")  # on a phone, d_k stays beside the Q, K and scores it reshapes
    controls.show_url_notes()

    tokens = views.tokens_line(sentence, max_tokens)
    a = compute(tokens, D, d_k, seed)
    embeddings_section(a, tokens)
    projections_section(a)
    qkv_section(a, tokens)
    page.live(geometry_section, a, tokens)
    query = scores_section(a, tokens)
    walk_section(a, tokens, query, D, d_k, seed)


page.opening(COURSE, "qkv")
why.section()  # the motivation, before any matrix: the same for every reader, outside the live part

page.live(controls_and_sections)

page.closing(COURSE, "qkv", questions, code=(
    single_head, projections, word_embeddings, maths.two_arrows, maths.extreme_pair, maths.score_geometry,
    scaled_dot_product_attention, softmax, walk_through))

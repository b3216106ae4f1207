"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions).

In class, the lesson's prediction: which key a query attends to most on this lesson's head, under the causal
mask (attend_most), from the sentence the page last used in this tab (settings)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import streamlit as st

from core.attention import causal_mask, scaled_dot_product_attention, softmax
from lessons.masking.maths import mask_by_multiplying
from ui.drawing import heatmap
from ui.frame import predict
from ui.frame.class_question import ClassQuestion
from ui.frame.exercises import Exercise
from ui.sections.views import sentence_state


def causal_pictures() -> dict:
    """The two pictures of "which_causal": title -> (4, 4) weights (rows queries, columns keys), and their labels.
    B is causal attention on seeded random vectors, A its transpose (every token looks ahead)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 4))
    _, causal = scaled_dot_product_attention(x, x, x, mask=causal_mask(4))
    return {"labels": ["t0", "t1", "t2", "t3"], "pictures": {"Picture A": causal.T, "Picture B": causal}}


def _projector_pictures() -> dict:
    """The two pictures as numbers, for the projector in class."""
    seen = causal_pictures()
    return {"heatmaps": [{"title": title, "rows": seen["labels"], "columns": seen["labels"],
                          "values": weights.tolist()} for title, weights in seen["pictures"].items()]}


def _causal_pictures() -> None:
    seen = causal_pictures()
    labels = seen["labels"]
    for column, (title, weights) in zip(st.columns(2), seen["pictures"].items()):
        with column:
            heatmap.show(weights, labels, labels, title=title, key=f"ex_pic_{title[-1].lower()}",
                                domain=(0.0, 1.0))


def questions() -> list[Exercise]:
    _, w = scaled_dot_product_attention(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), mask=causal_mask(4))
    late = softmax(np.zeros((4, 4))) * causal_mask(4)  # masking after the softmax: the wrong order
    multiplied = mask_by_multiplying(np.full((4, 4), 2.0), causal_mask(4))  # 0 for the future, not -inf
    return [
        Exercise("row0", "Under a causal mask, what weight does the first token (row 0) give to itself?",
                 answer=float(w[0, 0]),
                 explanation="Row 0 may only look at key 0; a softmax over a single score is exactly 1.",
                 part="row_0"),
        Exercise("late_mask", "Four tokens, all scores equal. Someone applies the softmax first and zeroes the "
                 "future weights afterwards. What does row 1 sum to?", answer=float(late[1].sum()),
                 explanation=f"The softmax gave {late[1, 0]:g} to each of the four keys; zeroing keys 2 and 3 leaves "
                 f"{late[1, 0]:g} + {late[1, 1]:g} = {late[1].sum():g}. Mask the scores (with -inf) before the softmax "
                 "and row 1 sums to 1.",
                 part="after_softmax"),
        Exercise("multiplied", "Four tokens, every score 2. Someone multiplies the scores by the causal mask (1 "
                 "where allowed, 0 for the future) and then takes the softmax. What total weight does row 0 put on "
                 "the three future keys? (3 decimals)", answer=float(multiplied["leaked"][0]), tolerance=0.002,
                 explanation="Row 0's scores become [2, 0, 0, 0]. A score of 0 is not hidden: e⁰ = 1, so the "
                 f"three future keys get 3 / (e² + 3) = {multiplied['leaked'][0]:.3f} of the weight. Setting them "
                 "to −∞ instead gives them exactly 0.", part="multiply"),
        Exercise("which_causal", "Rows are queries, columns are keys. Which picture shows causal attention?",
                 options=("Picture A", "Picture B"), correct=1, figure=_causal_pictures,
                 figure_view=_projector_pictures,
                 explanation="Causal attention lets query i see keys 0..i only: all its weight sits on or "
                 "below the diagonal (lower triangle), as in B. A is its transpose: every token looks ahead.",
                 part="mask"),
    ]


# ---- in class: the prediction on this lesson's head ------------------------------------------------------------


def settings(state: Mapping) -> dict:
    """The sentence settings and query row the page last used in this tab (views.sentence_state)."""
    return sentence_state(state)


def attend_most(sentence: str, D: int, d_k: int, seed: int, max_tokens: int, query: int) -> ClassQuestion:
    """"Which key will this query attend to most?" on this lesson's head, under the causal mask
    (ui.frame.predict.attend_most)."""
    return predict.attend_most(sentence, D, d_k, seed, max_tokens, query, masked=True)

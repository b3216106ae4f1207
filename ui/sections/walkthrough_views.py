"""Worked examples drawn under the single-head lessons: one query's scores written out as dot products and
its softmax step by step (QKV), and the three ways people write the causal mask side by side (Masking).

The numbers come from core.demos.context (walk_through, mask_conventions); this module lays them out.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.demos import context
from ui.compute.memo import shared
from ui.drawing.charts import unique_labels
from ui.frame import prose
from ui.sections import views
from ui.text import code_span

TERMS_SHOWN = 4  # products written out per dot product; the rest are summed into the score column
walk = shared(256)(context.walk_through)


def _factor(x: float) -> str:
    return f"({x:.2f})" if x < 0 else f"{x:.2f}"


def written_out(q: np.ndarray, k: np.ndarray) -> str:
    """q · k as the reader would write it: '0.12·(-0.40) + 0.33·0.51 + … (8 terms)'."""
    terms = [f"{_factor(a)}·{_factor(b)}" for a, b in zip(q, k)]
    shown = " + ".join(terms[:TERMS_SHOWN])
    return shown + (f" + … ({len(terms)} terms)" if len(terms) > TERMS_SHOWN else "")


SOFTMAX_STEPS = ("÷ √d_k", "exp(· − max)")  # the softmax's own steps: the Technical level's columns
SCALED_IN_WORDS = "scaled score"  # the ÷ √d_k column without steps: what the softmax reads, named with no formula


def walk_table(w: dict, tokens: list[str], steps: bool = True) -> dict:
    """One row per key: the dot product written out, the score, the scaled score, (with steps) exp(scaled -
    max), and the weight. Without steps (the Simple level) the scaled scores, the softmax's inputs, stay, under
    a name in words."""
    table = {
        "key": unique_labels(tokens),
        "q · k written out": [written_out(w["q"], k) for k in w["K"]],
        "q · k (score)": w["dots"],
        SOFTMAX_STEPS[0]: w["scaled"],
        SOFTMAX_STEPS[1]: w["exps"],
        "weight": w["weights"],
    }
    if steps:
        return table
    return {(SCALED_IN_WORDS if name == SOFTMAX_STEPS[0] else name): column for name, column in table.items()
            if name != SOFTMAX_STEPS[1]}


def walk_through(tokens: list[str], D: int, d_k: int, seed: int, query: int) -> dict:
    """The picked query's row of the heatmaps above, one key at a time: dot products, then the softmax."""
    w = walk(tokens, D, d_k, seed, query)
    label = code_span(unique_labels(tokens)[query])
    st.markdown(f"### One query, step by step: {label}")
    prose.show("qkv", "walk_dots", token=label, d_k=d_k, scale=w["scale"])
    table = walk_table(w, tokens, steps=prose.technical())
    views.number_table(table, "%.4f", [name for name in table if name not in ("key", "q · k written out")])
    st.caption(f"table · shape ({len(tokens)}, {len(table)}): one row per key; the score column is row {query} of "
               f"the scores heatmap, the weight column row {query} of the softmax heatmap.")
    prose.show("qkv", "walk_softmax", row_max=w["row_max"], exp_sum=w["exp_sum"], total=float(w["weights"].sum()))
    return w


def conventions_section(scaled_scores: np.ndarray, tokens: list[str]) -> dict:
    """The causal mask as this app writes it (True = may look), as np.triu(..., k=1) writes it (True =
    blocked) and as an additive 0 / -inf matrix, and the weights each gives: the same."""
    prose.section("Three ways to write the same mask", "masking", "conventions")
    c = context.mask_conventions(scaled_scores)  # three (T, T) softmaxes: cheaper than a cache's hashing
    views.heatmaps(
        views.weights_map(c["allowed"].astype(float), tokens, "allowed: 1 = may look (this app)",
                          "masking_conv_allowed", "allowed", "(T, T) bool, np.tril(ones)"),
        views.weights_map(c["blocked"].astype(float), tokens, "blocked: 1 = hidden, np.triu(ones, k=1)",
                          "masking_conv_blocked", "blocked", "(T, T) bool, = ~allowed"),
        views.weights_map(c["additive"], tokens, "additive: 0 or −∞, added to the scores", "masking_conv_additive",
                          "additive", "(T, T) float, −∞ where blocked"))
    table = {
        "convention": ["allowed (this app, torch SDPA bool mask)", "blocked (np.triu k=1, nn.MultiheadAttention)",
                       "additive (0 / −∞)"],
        "applied as": ["np.where(allowed, s, −∞)", "np.where(~blocked, s, −∞)", "s + additive"],
        "largest |difference| from this app's weights": [c["diff"][name] for name in c["weights"]],
    }
    views.number_table(table, "%g", [list(table)[-1]])
    prose.show("masking", "conventions_agree", diff=views.number(c["max_diff"]))
    return c

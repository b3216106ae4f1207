"""Context and order with trained weights: "bank" in two sentences read by the toy-English model, how alike
its two vectors are after each layer (beside the one-head figure with random weights), and the attention rows
of "bank" in the head that reads its sense."""

from __future__ import annotations

import inspect

import numpy as np
import streamlit as st

from core.demos.word_heads import RULE_SENTENCES
from core.tokenize import word_tokens
from lessons.communication import cached
from lessons.communication.maths import bank_similarity
from lessons.communication.views import ROW
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections import views
from ui.sections.views import Heatmap, heatmaps
from ui.state import controls
from ui.text import code_span

WORD = "bank"
_DEFAULTS = inspect.signature(bank_similarity).parameters
SENTENCE_1, SENTENCE_2 = _DEFAULTS["first"].default, _DEFAULTS["second"].default  # the core's own pair
APART = (0.95, 0.3)  # the text says training pulls the vectors apart when the untrained model leaves them above
# a cosine of 0.95 and the trained one at least 0.3 below that; other typed pairs get the plainer text


def where(seen: dict) -> int | None:
    """The position of "bank" whose vector bank_similarity compares (its last occurrence), or None."""
    tokens = seen["tokens"]
    return len(tokens) - 1 - tokens[::-1].index(WORD) if WORD in tokens else None


def bank_row(seen: dict, at: int, layer: int, head: int, n: int) -> Heatmap:
    labels = seen["labels"]
    return Heatmap(np.asarray(seen["weights"][layer, head, at])[None, :], [WORD], labels,
                   f"row of “{WORD}” in sentence {n}", f"comm_tr_row_{n}", "row", f"(1, T{'₁₂'[n - 1]}), sums to 1",
                   ROW)


def bank_section(D: int, d_k: int, seed: int) -> tuple[list[str], list[str]]:
    """The two sentences read by the trained model; returns their word tokens (for the sections below, which
    keep random weights)."""
    prose.section("One word, two contexts", "communication", "trained_contexts")
    st.caption(tv.learned_note())
    first, second = views.in_a_row(2)
    one = controls.text("bank_one", "Sentence 1 (the model's words)", SENTENCE_1, container=first)
    two = controls.text("bank_two", "Sentence 2 (the model's words)", SENTENCE_2, container=second)
    tokens = word_tokens(one, 32), word_tokens(two, 32)
    box = "both sentence boxes above"
    seen = [tv.read(text, f"Sentence {n}", box, example) for n, (text, example) in
            enumerate(((one, SENTENCE_1), (two, SENTENCE_2)), 1)]
    if any(s is None for s in seen):
        return tokens
    at = [where(s) for s in seen]
    if None in at:
        st.warning(f"Both sentences need the word {code_span(WORD)} among the words the model reads: the section "
                   "compares its two vectors.")
        return tokens
    similar, start = cached.bank_similarity(one, two), cached.before_training(one, two)
    _, layer, head = tv.rule_head({"kind": "bank"})
    for weights, found in (("trained", similar), ("before training", start)):
        for cell, stage, cos in zip(views.in_a_row(len(found["stages"])), found["stages"], found["cosine"]):
            cell.metric(f"cosine, {stage}, {weights}", f"{cos:.2f}", help="Of the two vectors of “bank”: 1 means "
                        "the same direction, 0 unrelated. Before training: the same model with its random initial "
                        "weights.")
    untrained_text = ", ".join(f"{stage} {cos:.3f}" for stage, cos in zip(start["stages"], start["cosine"]))
    apart = start["cosine"][-1] > APART[0] and similar["cosine"][-1] < start["cosine"][-1] - APART[1]
    prose.show("communication", "trained_contexts_result" if apart else "trained_contexts_result_close",
               stages=len(similar["stages"]) - 1,
               first=similar["cosine"][0], last=similar["cosine"][-1], untrained=untrained_text,
               head=tv.head_name(layer, head), off=tv.measured("bank")["off_accuracy"])
    rows = [bank_row(s, a, layer, head, n) for n, (s, a) in enumerate(zip(seen, at), 1)]
    heatmaps(*rows)
    cues = [tv.cue_of(s, "bank") for s in seen]
    st.caption(bank_rows_note(seen, at, cues, layer, head))
    return tokens


def bank_rows_note(seen: list[dict], at: list[int], cues: list[int | None], layer: int, head: int) -> str:
    """What the two rows show: the weight on each sentence's cue, beside the share measured."""
    said = []
    for n, (s, a, cue) in enumerate(zip(seen, at, cues), 1):
        if cue is not None and cue < a:
            said.append(f"in sentence {n} it puts **{float(s['weights'][layer, head, a, cue]):.2f}** on "
                        f"{code_span(s['labels'][cue])}")
    share = tv.measured("bank")["share"]
    found = ("; ".join(said) + ". ") if said else "Neither sentence has river or money words before it. "
    return (f"The rows of {code_span(WORD)} in {tv.head_name(layer, head)}: "
            f"{found[0].upper() + found[1:]}On its {RULE_SENTENCES} bank test sentences this head's mean share on "
            f"the cue is **{share:.2f}**.")

"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions).

In class, the lesson's prediction: which key a query attends to most on this lesson's head (attend_most), from the
sentence the page last used in this tab (settings)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping

import numpy as np

from core.attention import scaled_dot_product_attention
from core.demos.word_heads import read_words, rule_positions, trained_attention, word_model
from core.tokenize import word_tokens
from lessons.qkv.maths import two_arrows
from ui.frame import predict
from ui.frame.class_question import ClassQuestion
from ui.frame.exercises import Exercise
from ui.sections import trained_views
from ui.sections.views import sentence_settings, sentence_state
from ui.state.controls import DEFAULT_TEXT
from ui.text import code_span

# where the trained view is: the sidebar's switch (on a phone the sidebar is folded, its button at the top left)
SWITCH_HINT = (f"Set the sidebar's Weights switch to {trained_views.TRAINED} (on a phone, open the sidebar at the top "
               "left). ")

D_K = inspect.signature(sentence_settings).parameters["d_k_default"].default  # the page's default d_k


def questions() -> list[Exercise]:
    T = len(word_tokens(DEFAULT_TEXT))
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    _, w = scaled_dot_product_attention(q, k, k)
    dots = (q @ k.T)[0]  # (3,)
    apart = two_arrows(0, 120, 2.0, 2.0)  # two arrows of length 2, 120° apart
    la, lb, theta = apart["length_a"], apart["length_b"], apart["theta"]
    return [
        Exercise("score_count", f"The default sentence has {T} tokens and d_k = {D_K}. How many numbers are in "
                 "the score matrix Q Kᵀ?", answer=T * T, tolerance=0,
                 explanation=f"One score for every (query, key) pair: {T} queries × {T} keys = {T * T}, whatever d_k "
                 "is. (Q has one row of d_k numbers per token, and so has K; their product Q Kᵀ is T by T.)",
                 part="spread", said_in_class=f"*The lesson's default sentence is {code_span(DEFAULT_TEXT)}.*"),
        Exercise("first_weight", "A query q = [1, 0] meets three keys k₁ = [1, 0], k₂ = [0, 1], "
                 "k₃ = [0.5, 0.5]. After dividing by √2 and a softmax, what weight goes to k₁? (3 decimals)",
                 answer=float(w[0, 0]), tolerance=0.002,
                 explanation=f"The dot products are {dots[0]:g}, {dots[1]:g} and {dots[2]:g}; divided by √2 they "
                 f"are {dots[0] / np.sqrt(2):.3f}, {dots[1] / np.sqrt(2):.3g} and {dots[2] / np.sqrt(2):.3f}; "
                 f"their softmax is {w[0, 0]:.3f}, {w[0, 1]:.3f}, {w[0, 2]:.3f}.", part="walk_softmax",
                 said_in_class="*The softmax gives each score s the weight e^s divided by the sum of e^s over the "
                               "row.*"),
        Exercise("dot_angle", "Arrow a points along 0°, arrow b along 120°, and both have length 2. What is "
                 "their dot product a · b?", answer=apart["dot"],
                 explanation=f"The two lengths multiplied together and by the cosine of the angle: {la:g} · {lb:g} · "
                 f"cos {theta:g}° is {la * lb:g} · ({apart['cos']:g}), {apart['dot']:g}. More than 90° apart, the "
                 "arrows lean away from each other, so the dot product is negative.", part="geometry"),
        Exercise("why_same_rows", "The sentence “the cat saw the dog” has “the” twice. Why are both "
                 "“the” rows of Q identical?", options=(
                     "Because attention averages them", "Because they have the same embedding, and each row of Q "
                     "is computed from its own embedding alone", "Because the softmax makes them equal"), correct=1,
                 explanation="Before attention mixes anything, each row of Q depends only on that token's own "
                 "embedding. A position vector added to each embedding is what tells them apart; the random "
                 "views here leave it out.", part="positions"),
        trained_row(),
    ]


def trained_row() -> Exercise:
    """The trained model's agreement head on the example: which word the verb's deciding row reads."""
    sentence = trained_views.EXAMPLE
    tokens = read_words(sentence)["tokens"]
    rule = rule_positions(tokens)
    layer, head = word_model().meta["phenomena"]["agreement"]["head"]
    row = trained_attention(sentence)["weights"][layer, head, rule["query"]]  # (T,)
    picks = [rule["query"], rule["cue"], rule["query"] - 2]  # the noun itself, the subject, the place word
    options = (f"{tokens[picks[0]]}, the noun itself", f"{tokens[picks[1]]}, the subject",
               f"{tokens[picks[2]]}, the word between them")
    return Exercise("trained_row", f"{SWITCH_HINT}On “{sentence}”, the row of "
                    f"`{tokens[rule['query']]}` in {trained_views.head_name(layer, head)} predicts the verb. Which "
                    "word gets most of its weight?",
                    options=options, correct=picks.index(int(row.argmax())),
                    explanation=f"`{tokens[int(row.argmax())]}` gets {row.max():.2f} of the row: the verb must agree "
                    "with the subject, not with the nearer noun, and this head puts its weight there. That the model "
                    "uses what this head reads is shown by switching it off (Multi-head).", part="trained_head")


# ---- in class: the prediction on this lesson's head ------------------------------------------------------------


def settings(state: Mapping) -> dict:
    """The sentence settings and query row the page last used in this tab (views.sentence_state)."""
    return sentence_state(state)


def attend_most(sentence: str, D: int, d_k: int, seed: int, max_tokens: int, query: int) -> ClassQuestion:
    """"Which key will this query attend to most?" on this lesson's head (ui.frame.predict.attend_most)."""
    return predict.attend_most(sentence, D, d_k, seed, max_tokens, query)

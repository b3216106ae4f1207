"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from lessons.scaling.maths import overflow
from ui.frame.exercises import Exercise

D_K, WIDE = 64, 256  # the d_k of the first question, and of the second


def questions() -> list[Exercise]:
    o = overflow()
    big = f"{o['scores'][0]:g}"
    return [
        Exercise("factor_64", f"By what number are the raw scores divided when d_k = {D_K}?",
                 answer=float(np.sqrt(D_K)), part="idea",
                 explanation=f"Scores are divided by the square root of d_k: √{D_K} is {np.sqrt(D_K):g} (the same as "
                 f"multiplying by 1/{np.sqrt(D_K):g} = {1 / np.sqrt(D_K):g})."),
        Exercise("variance", f"q and k each have d_k = {WIDE} independent entries with mean 0 and variance 1. "
                 "What is the variance of their dot product q·k?", answer=float(WIDE), part="idea",
                 explanation=f"q·k is a sum of {WIDE} products, each with variance 1·1 = 1; independent variances "
                 f"add, so the sum has variance d_k = {WIDE} (standard deviation {np.sqrt(WIDE):g}). Dividing by "
                 "√d_k brings it back to 1."),
        Exercise("bug_dv", "This function should compute scaled dot-product attention. Which line has the bug?",
                 code="def attention(Q, K, V):\n    d_k = Q.shape[-1]\n    d_v = V.shape[-1]\n"
                      "    scores = Q @ K.T / np.sqrt(d_v)\n    weights = softmax(scores)\n    return weights @ V",
                 options=("line 2", "line 3", "line 4", "line 6"), correct=2, part="d_v",
                 explanation="The scale belongs to the dot product of queries and keys, whose vectors have d_k "
                 "entries. Dividing by √d_v only works by accident when d_v = d_k."),
        Exercise("overflow", f"In float64, a softmax written as exp(s) / sum(exp(s)) reads a row of scores "
                 f"[{', '.join(f'{x:g}' for x in o['scores'])}]. What are its weights?", options=(
                     "Nearly one-hot: almost all on the first score", "NaN: exp overflows to inf, and inf / inf is "
                     "not a number", "All three equal, a third each"), correct=1 if np.isnan(o["naive"]).all() else 0,
                 part="overflow",
                 explanation=f"exp({big}) is beyond float64's largest number (its exponent can be at most "
                 f"{o['limits']['float64']:.2f}), so every exp is inf and every weight inf / inf, NaN. Subtracting "
                 f"the row's largest score first gives [{', '.join(f'{x:g}' for x in o['shifted'])}] and the weights "
                 f"[{', '.join(f'{x:.3f}' for x in o['weights'])}]."),
    ]

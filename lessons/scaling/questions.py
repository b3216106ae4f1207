"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

import numpy as np

from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    return [
        Exercise("factor_64", "By what number are the raw scores divided when d_k = 64?", answer=float(np.sqrt(64)),
                 explanation="Scores are divided by √d_k = √64 = 8 (equivalently multiplied by 1/8 = 0.125)."),
        Exercise("variance", "q and k each have d_k = 256 independent entries with mean 0 and variance 1. "
                 "What is the variance of their dot product q·k?", answer=256.0,
                 explanation="q·k is a sum of 256 products, each with variance 1·1 = 1; independent variances "
                 "add, so the sum has variance d_k = 256 (standard deviation 16). Dividing by √d_k brings it back "
                 "to 1."),
        Exercise("bug_dv", "This function should compute scaled dot-product attention. Which line has the bug?",
                 code="def attention(Q, K, V):\n    d_k = Q.shape[-1]\n    d_v = V.shape[-1]\n"
                      "    scores = Q @ K.T / np.sqrt(d_v)\n    weights = softmax(scores)\n    return weights @ V",
                 options=("line 2", "line 3", "line 4", "line 6"), correct=2,
                 explanation="The scale belongs to the dot product of queries and keys, whose length is d_k. "
                 "Dividing by √d_v only works by accident when d_v = d_k."),
    ]

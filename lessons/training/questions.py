"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

import numpy as np

from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    V = 65
    return [
        Exercise("uniform_loss", f"Before training, a model that spreads its guess evenly over {V} characters "
                 "has what cross-entropy loss, in nats? (2 decimals)", answer=float(np.log(V)), tolerance=0.005,
                 explanation=f"The loss is −ln p(correct) = −ln(1/{V}) = ln {V} ≈ {np.log(V):.2f}. A loss "
                 "far below that means the model has learnt something."),
        Exercise("bigram", "A bigram model predicts the next character from the current one only. Which can go "
                 "below the bigram baseline?", options=(
                     "Neither: a bigram model is the best possible", "A transformer with attention: it can use "
                     "every earlier character in its window, not just the last one",
                     "A model with a larger vocabulary"),
                 correct=1, explanation="Attention lets a position read all earlier positions, so the model can "
                 "use context a bigram model cannot see."),
    ]

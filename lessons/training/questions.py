"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from core.tasks import make_data
from lessons.training.setup import Settings
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    defaults = Settings()
    task = make_data(defaults.corpus, length=defaults.task_length)  # the page's default run: the copy task
    V = task.vocab_size
    induction = make_data("induction", length=defaults.task_length)
    keys = induction.expected_keys()  # (T,) the answer's key for each counted query
    back = {int(i - k) for i, k in enumerate(keys) if k >= 0}
    return [
        Exercise("uniform_loss", f"Before training, a model that spreads its guess evenly over the {V} tokens of "
                 f"the {defaults.corpus} task has what cross-entropy loss, in nats? (2 decimals)",
                 answer=float(np.log(V)), tolerance=0.005, part="update_rule",  # the loss's formula: Technical
                 explanation=f"Its surprise at the right token, which it gave 1/{V} of the probability: the natural "
                 f"log of {V}, about {np.log(V):.2f}. A loss far below that means the model has learnt something."),
        Exercise("bigram", "A bigram model predicts the next character from the current one only. Which can go "
                 "below the bigram baseline?", options=(
                     "Neither: a bigram model is the best possible", "A transformer with attention: it can use "
                     "every earlier character in its window, not just the last one",
                     "A model with a larger vocabulary"),
                 correct=1, part="idea", explanation="Attention lets a position read all earlier positions, so the "
                 "model can use context a bigram model cannot see."),
        Exercise("fixed_length", f"In this page's induction task (L = {defaults.task_length} letters), where does the "
                 "letter to predict sit, seen from each query of the second half?", options=(
                     f"always {min(back)} keys back: position alone finds it",
                     "somewhere different in every sequence: only the letters can find it"),
                 correct=0 if len(back) == 1 else 1, part="task",
                 explanation=f"Every sequence has the same length, so the answer is always {min(back)} keys back. A "
                 "first-layer head can learn that offset without reading the letters; the Induction circuit "
                 "lesson trains a model on repeats of varying length and place, where it cannot."),
    ]

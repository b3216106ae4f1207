"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

import numpy as np

from core.demos.bigram import bigram_counts, bigram_probs
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    ids = np.array(["abn".index(c) for c in "banana"])  # a = 0, b = 1, n = 2
    counts = bigram_counts(ids, 3)
    return [
        Exercise("banana", "In “banana”, count which letter follows which (vocabulary a, b, n). With add-one "
                 "smoothing (α = 1), what is P(next = n | a)?", answer=float(bigram_probs(counts, 1.0)[0, 2]),
                 explanation=f"a is followed by n {counts[0, 2]} times and by nothing else (the last a ends the "
                 "text), so the row of a is [0, 0, 2]. Adding 1 to each gives [1, 1, 3], and 3 / 5 = 0.6."),
        Exercise("pairs", "A text has 1,000 characters. How many (previous, next) pairs does the bigram count "
                 "table add up to?", answer=float(bigram_counts(np.zeros(1000, dtype=int), 1).sum()), tolerance=0,
                 explanation="Every character but the first has a previous one: 999 pairs. The whole (V, V) "
                 "table of counts sums to that."),
    ]

"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from core.bigram import bigram_counts, bigram_probs
from lessons.bigram.maths import context_target_pairs
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    ids = np.array(["abn".index(c) for c in "banana"])  # a = 0, b = 1, n = 2
    counts = bigram_counts(ids, 3)
    row = [int(c) for c in counts[0]]  # what follows a
    smoothed = [c + 1 for c in row]
    pairs = context_target_pairs(ids, 5)  # x = "banan", y = "anana"
    context, last, target = ("".join("abn"[i] for i in part) for part in (pairs["contexts"][2], pairs["x"][2:3],
                                                                           pairs["y"][2:3]))
    wrong = "b" if target != "b" else "a"
    n_pairs = int(bigram_counts(np.zeros(1000, dtype=int), 1).sum())
    return [
        Exercise("banana", "In “banana”, count which letter follows which (vocabulary a, b, n). With add-one "
                 "smoothing (α = 1), what probability does the bigram model give to n right after a?",
                 answer=float(bigram_probs(counts, 1.0)[0, 2]), part="probs",
                 explanation=f"a is followed by n {counts[0, 2]} times and by nothing else (the last a ends the "
                 f"text), so the row of a is {row}. Adding 1 to each gives {smoothed}, and {smoothed[2]} / "
                 f"{sum(smoothed)} = {bigram_probs(counts, 1.0)[0, 2]:g}."),
        Exercise("context_target", "Cut “banana” into (context → target) pairs. At position t = 2 the context is "
                 f"“{context}”. What is the target, and what does a bigram model read to guess it?", options=(
                     f"target {target}; the bigram model reads “{context}”",
                     f"target {target}; the bigram model reads “{last}”",
                     f"target {wrong}; the bigram model reads “{last}”"), correct=1,
                 explanation=f"y is x shifted by one, so the target at t = 2 is the character after “{context}”: "
                 f"{target}. A bigram model reads only the last character of the context, “{last}”; a transformer "
                 "reads all of it.", part="pairs"),
        Exercise("pairs", "A text has 1,000 characters. How many (previous, next) pairs does the bigram count "
                 "table add up to?", answer=float(n_pairs), tolerance=0,
                 explanation=f"Every character but the first has a previous one: {n_pairs:,} pairs. The whole "
                 "table of counts sums to that.", part="counts"),
    ]

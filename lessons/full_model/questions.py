"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

from core.costs import attention_memory
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    gb = attention_memory(100_000, dtype="float16")["per_head"] / 1e9
    return [
        Exercise("temp0", "At temperature 0, what probability does the most likely next character get?",
                 answer=1.0, explanation="Temperature 0 is the limit of an ever colder softmax: all the "
                 "probability lands on the largest logit (greedy decoding)."),
        Exercise("memory", "How many gigabytes (10⁹ bytes) does ONE head's attention weight matrix take at "
                 "T = 100,000 tokens in float16 (2 bytes a number)?", answer=gb,
                 explanation=f"T × T × 2 bytes = 10¹⁰ × 2 = {gb:.0f} GB, for one head of one layer: "
                 "why long-context models never store the full matrix."),
    ]

"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from lessons.tiles.maths import attention_memory_both_ways, online_softmax_step
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    one = np.ones(1)
    rescale = float(online_softmax_step(2.0 * one, one, np.zeros((1, 1)), np.array([[5.0]]), np.zeros((1, 1)))[3][0])
    mem = attention_memory_both_ways(65_536, 128, 64)
    return [
        Exercise("rescale", "A query's running maximum was m = 2. The next block holds a score of 5. By what "
                 "factor are its running sum l and its accumulator multiplied before the block is added? "
                 "(3 decimals)", answer=rescale, tolerance=0.001,
                 explanation=f"The factor is exp(m_old − m_new) = exp(2 − 5) = e⁻³ ≈ {rescale:.4f}: the old terms "
                 "were exp(score − 2) and must become exp(score − 5).", part="rescale"),
        Exercise("tile_ratio", "T = 65,536 tokens, tiles of b = 128 keys. How many times more scores does the "
                 "full (T, T) matrix hold than one (T, b) tile?", answer=mem["full_scores"] / mem["tile_scores"],
                 tolerance=0, explanation=f"T × T over T × b is T / b = 65,536 / 128 = "
                 f"{mem['full_scores'] // mem['tile_scores']:,}, whatever the bytes per number: "
                 f"{mem['full_scores'] / 1e9:.1f} GB against {mem['tile_scores'] / 1e6:.1f} MB in float32.",
                 part="memory"),
    ]

"""A histogram of the numbers a room typed, for the projector's reveal: bars around the right answer, with the
numbers far from the rest counted apart (a slip such as 1e9 typed for 8 must not squash the room into one bar,
and 1e308 must not overflow the edges). Plain NumPy; classroom.questions sums up a room's answers with it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BINS = 10  # bars of the histogram of a class's typed numbers
FENCE = 10.0  # a typed number this many scales from the room's median is counted apart (histogram)
REACH = 1e6  # a typed number further than this many answer sizes from the answer is counted apart at once
FAR = 1e300  # ... and further than this from it whatever its size: a float's differences stay finite below 1e307
NARROWEST = 0.01  # the narrowest histogram, as a share of its numbers' size: 10 bins of 0.1% of it
MAD_TO_SD = 1.4826  # the median absolute deviation times this is the standard deviation, for normal data


def histogram(numbers: Sequence[float], answer: float, bins: int = BINS) -> dict:
    """Equal bins over the typed numbers and the answer: {"edges": (bins + 1,), "counts": (bins,), "below", "above"}.

    A number more than FENCE times the answers' scale away from their median is counted apart, below or above the
    bins, so that one slip (1e9 typed for 8) does not squash the room's answers into one bar, while a
    misconception's answer (64 for 8) keeps its own. The scale is the larger of the median absolute deviation (as a
    standard deviation) and the median's size: neither moves when a few answers go far astray, so a slip cannot
    widen the fence that should keep it out, even in a room of four. A number further than REACH answer sizes
    from the answer (1e308 typed for 8) is counted apart whatever the fence says, and counts in the median and the
    scale as if it were at that distance: so every difference computed here stays finite, and so do the edges.
    Every number is counted once: sum(counts) + below + above == len(numbers). The last bin includes its right edge.
    """
    x = np.asarray(numbers, dtype=np.float64)
    reach = min(REACH * max(1.0, abs(answer)), FAR)
    near = np.clip(x, answer - reach, answer + reach)  # the median and the scale move no more for 1e308 than 1e7
    inside = x[_fenced(near) & (near == x)]
    lo = min(answer, float(inside.min())) if inside.size else answer
    hi = max(answer, float(inside.max())) if inside.size else answer
    least = NARROWEST * max(1.0, abs(lo), abs(hi))
    if hi - lo < least:  # everyone typed the answer, or numbers too close to split: one bar around them
        middle = lo / 2 + hi / 2
        lo, hi = middle - 5 * least, middle + 5 * least
    edges = np.linspace(lo, hi, bins + 1)
    counts, _ = np.histogram(x[(x >= lo) & (x <= hi)], bins=edges)
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts],
            "below": int((x < lo).sum()), "above": int((x > hi).sum())}


def _fenced(x: np.ndarray) -> np.ndarray:
    """Which numbers lie within FENCE scales of their median (see histogram)."""
    if not x.size:
        return np.ones(0, dtype=bool)
    median = _median(x)
    scale = max(MAD_TO_SD * _median(np.abs(x - median)), abs(median))
    return np.abs(x - median) <= FENCE * scale if scale > 0 else np.ones(x.shape, dtype=bool)


def _median(x: np.ndarray) -> float:
    """np.median without its overflow: the two middle numbers are halved before they are added."""
    ordered, half = np.sort(x), len(x) // 2
    return float(ordered[half]) if len(x) % 2 else float(ordered[half - 1] / 2 + ordered[half] / 2)

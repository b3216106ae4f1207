"""The QKV lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

import inspect

from core.demos import heads
from lessons.qkv.maths import average_or_attend, layer_heads, next_words
from ui.compute.memo import shared

_DEFAULTS = inspect.signature(average_or_attend).parameters
FIRST, SECOND = _DEFAULTS["first"].default, _DEFAULTS["second"].default  # the core's own pair

single_head = shared(256)(heads.single_head)  # the page's one head on the sentence
trained_layer = shared(128)(layer_heads)  # one layer of the toy-English model on the sentence


@shared(1)
def why_figures() -> tuple[dict, list[list[tuple[str, float]]]]:
    """lessons.qkv.maths.average_or_attend on the two sentences, and the model's next words after each."""
    return average_or_attend(FIRST, SECOND), [next_words(s, 3) for s in (FIRST, SECOND)]

"""The Context and order lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more). Not in views.py, whose encoder_decoder
draws what encoder_decoder here computes."""

from __future__ import annotations

from core.demos.word_heads import untrained
from lessons.communication import maths
from ui.compute.memo import shared

same_word_two_contexts = shared(128)(maths.same_word_two_contexts)
cross_attention = shared(128)(maths.cross_attention)
order_view = shared(128)(maths.order_view)
encoder_decoder = shared(128)(maths.encoder_decoder)
# the toy-English model's "bank" in two sentences (the lesson's trained weights)
bank_similarity = shared(64)(maths.bank_similarity)


@shared(64)
def before_training(first: str, second: str) -> dict:
    """lessons.communication.maths.bank_similarity with the same model's random initial weights (untrained)."""
    return maths.bank_similarity(first, second, model=untrained())

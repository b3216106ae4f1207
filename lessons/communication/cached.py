"""The Context and order lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more). Not in views.py, whose encoder_decoder
draws what encoder_decoder here computes."""

from __future__ import annotations

from lessons.communication import maths
from ui.compute.memo import Shared

same_word_two_contexts = Shared(maths.same_word_two_contexts, 128)
cross_attention = Shared(maths.cross_attention, 128)
order_view = Shared(maths.order_view, 128)
encoder_decoder = Shared(maths.encoder_decoder, 128)
# the toy-English model's "bank" in two sentences (the lesson's trained weights)
bank_similarity = Shared(maths.bank_similarity, 64)

"""The masking lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

from lessons.masking import maths
from ui.compute.memo import shared

masking_view = shared(256)(maths.masking_view)
no_peeking = shared(256)(maths.no_peeking)

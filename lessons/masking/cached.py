"""The masking lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

from lessons.masking import maths
from ui.compute.memo import Shared

masking_view = Shared(maths.masking_view, 256)
no_peeking = Shared(maths.no_peeking, 256)

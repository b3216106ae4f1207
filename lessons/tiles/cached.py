"""The tiles lesson's computation, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

from lessons.tiles import maths
from ui.compute.memo import shared

tiles_view = shared(256)(maths.tiles_view)

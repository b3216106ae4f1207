"""After the warm-up, what it loaded is set aside from the cyclic garbage collector (ui/compute/warm.py,
set_aside): the objects alive then are no longer walked, and garbage made later is still collected."""

from __future__ import annotations

import gc

from ui.compute import warm


class Knot:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_set_aside_takes_what_is_alive_out_of_the_collectors_walks_and_later_cycles_are_still_freed():
    try:
        kept = Knot()
        aside = warm.set_aside()
        assert aside == gc.get_freeze_count() > 1000
        assert not any(obj is kept for obj in gc.get_objects())  # no longer in any generation the collector walks
        later = Knot()
        del later
        assert gc.collect() >= 1  # a cycle made after the warm-up is found and freed as before
    finally:
        gc.unfreeze()  # the rest of the test run keeps its collector as it was

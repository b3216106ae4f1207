"""The circuit lesson's reading of one sequence, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

import numpy as np

from lessons.circuit import maths
from ui.compute import model_store
from ui.compute.memo import shared


@shared(128)
def circuit_reading(source: tuple, ids: tuple[int, ...]) -> dict:
    """lessons.circuit.maths.read_sequence of the model `source` names on these token ids."""
    m = model_store.from_source(source)
    return maths.read_sequence(m.params, m.cfg, np.array(ids, dtype=np.int64))

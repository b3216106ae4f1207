"""The circuit lesson's reading of one sequence and how far its copying reaches (its loss on the repeat at
several stretch lengths, on fresh sequences, and with its positional head off), kept once per process and shared
read-only by every session (ui.compute.memo). Here and not in page.py: the page is a script run again on every
rerun, and a wrapper made there would be made anew each time (ui/compute/cached.py says more; the reach figures
cost 55 ms of a first view)."""

from __future__ import annotations

import numpy as np

from lessons.circuit import maths
from ui.compute import model_store
from ui.compute.memo import shared

PREVIOUS, INDUCTION, POSITIONAL = (0, 1), (1, 1), (0, 0)  # (layer, head), counted from 0; on screen from 1
REACH_SEQUENCES = 128  # fresh sequences per stretch length in the figures of how far copying reaches


def training_lengths(model) -> tuple[int, int]:
    """The shortest and longest stretch the model was trained on (its saved task)."""
    task = model.meta["task"]
    return int(task["min_length"]), int(task["max_length"])


@shared(128)
def circuit_reading(source: tuple, ids: tuple[int, ...]) -> dict:
    """lessons.circuit.maths.read_sequence of the model `source` names on these token ids."""
    m = model_store.from_source(source)
    return maths.read_sequence(m.params, m.cfg, np.array(ids, dtype=np.int64))


@shared(4, spinner="Reading fresh sequences of several stretch lengths…")
def reach(source: tuple) -> dict:
    """The repeat's mean loss at 2 letters, the shortest and longest trained length, 20 and the longest that
    fits twice, on REACH_SEQUENCES fresh sequences each; at the longest with the positional head off; and how far
    the positional and the induction head's rows move when the letters change (maths.letter_dependence)."""
    model = model_store.from_source(source)
    n_symbols = len(model.meta["tokenizer"]["chars"])
    (lo, hi), most = training_lengths(model), min(n_symbols, (model.cfg.max_len + 1) // 2)
    lengths = (2, lo, hi, 20, most)
    losses = maths.copying_by_length(model.params, model.cfg, n_symbols, lengths, REACH_SEQUENCES)
    off = maths.copying_by_length(model.params, model.cfg, n_symbols, (most,), REACH_SEQUENCES, off=POSITIONAL)
    moved = maths.letter_dependence(model.params, model.cfg, n_symbols, REACH_SEQUENCES)  # (L, H)
    return {"lo": lo, "hi": hi, "most": most, **dict(zip(("at_2", "at_lo", "at_hi", "at_20", "at_most"), losses)),
            "off": float(off[0]), "n": REACH_SEQUENCES, "moved": float(moved[POSITIONAL]),
            "moved_induction": float(moved[INDUCTION])}

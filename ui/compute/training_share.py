"""The share of a server process that live training may take: every run trained in a page (the Training lesson's,
the Ladder lesson's own rung) ticks within it, so that the slider moves of everyone else keep the rest.

A run trains in ticks, one every TICK_EVERY_S, each of at most TICK_BUDGET_S of training; when several runs of one
process train at once, they share TRAIN_SHARE of it between them (fair_budget): each tick gets less time, and
training slows down instead of the process.
"""

from __future__ import annotations

import threading
import time

TICK_BUDGET_S = 0.25  # training time per tick (the drawing adds ~20-60 ms)
TRAIN_SHARE = 0.5  # of one process (one core): the most that all its training runs together may take
TICK_EVERY_S = 1.0  # how often a running run's page ticks it (a live part's timer)
ACTIVE_WITHIN_S = 3.0  # a run ticked this recently counts as training now

_last_tick: dict[int, float] = {}  # id of a running run in this process -> when it last ticked
_ticks_lock = threading.Lock()  # sessions tick from their own script threads


def fair_budget(run_id: int, now: float | None = None) -> float:
    """The training time a tick of this run gets now: TICK_BUDGET_S alone, less when other runs of this process
    train too, so that all of them together take at most TRAIN_SHARE of the process (ticks come every
    TICK_EVERY_S). 10 students training on two processes get 0.1 s a tick each instead of 0.25."""
    now = time.monotonic() if now is None else now
    with _ticks_lock:
        _last_tick[run_id] = now
        for other, when in list(_last_tick.items()):
            if now - when > ACTIVE_WITHIN_S:
                del _last_tick[other]
        active = len(_last_tick)
    return min(TICK_BUDGET_S, TRAIN_SHARE * TICK_EVERY_S / active)


def forget() -> None:
    """Count no run as training (tests)."""
    with _ticks_lock:
        _last_tick.clear()

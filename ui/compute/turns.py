"""Script runs take turns: at most two of a process's runs execute at once, the others wait in the order they
asked.

Streamlit runs each session's script on a thread of its own, and Python's interpreter lock lets one of them run at
a time, switching every few milliseconds. When a class moves at once, every run advances a little at a time and
they all end together, after the whole batch's work: each student waits for everyone, and their next moves leave
together too, so the class stays in step, round after round. Switching among a hundred threads also costs CPU of
its own. In turns, the first run of a batch ends after its own work, the next after two, and so on; students whose
run ended read the page while the rest are served, which breaks the lockstep. Measured on one process
(bench/load_test.py, docs/LOAD.md, 30 Nov): 60 busy students' first views p95 1.7 s instead of 3.1-4.5 s; 120
arriving at a fresh server, first views p95 4.3-4.6 s instead of 8.1-9.4 s and 33-38 ms of CPU a rerun instead of
49-55; ten students training beside twenty moving, twice the training steps.

A turn is taken by the page's whole run (streamlit_app.main) or by a live part rerunning alone (ui.frame.page.live),
and held until the run ends, however it ends (a rerun or stop request raises through it). A run inside a run on
the same thread (a live part drawn by its page's run) is the same turn. Two turns, not one: one run's NumPy and
database calls release the interpreter lock and the other runs meanwhile, and one long run (a training tick) does
not hold up every student. ATTENTION_LAB_TURNS sets another number (a large one: every run at once, as Streamlit
alone would).

A visit goes first: a run that draws a page its session has not shown yet (a student's first view, or another
lesson opened) waits only for the visits before it, not for the moves. A student who moves a slider has the page
in front of them while the move waits; a student who has just arrived has nothing until their run ends. Measured
on one process (bench/load_test.py --sessions 120 --cold, docs/LOAD.md, 1 Dec): 120 arriving within 5 s at a fresh
server, first views p95 0.51-0.60 s instead of 1.33-1.34 s, and its moves p95 1.50-1.56 s instead of 1.35 s: the
moves pay a little for it.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
from collections.abc import Iterator

DEFAULT_TURNS = 2


def turns_from_environment() -> int:
    """ATTENTION_LAB_TURNS, a whole number of 1 or more; anything else means the default."""
    raw = os.environ.get("ATTENTION_LAB_TURNS", "")
    return int(raw) if raw.strip().isdigit() and int(raw) >= 1 else DEFAULT_TURNS


TURNS = turns_from_environment()  # runs of one process executing at once
WAIT_LIMIT_S = 30.0  # a run waits no longer than this (a run that never ends must not stop the others for good)

_log = logging.getLogger(__name__)


class Turns:
    """A first-come, first-served counting lock whose holder's thread may take it again (nested runs). Each
    waiting run has an event of its own, set when its turn comes: a turn given back wakes one run, not all."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self._lock = threading.Lock()
        self._running = 0
        self._queue: collections.deque[threading.Event] = collections.deque()  # moves: every other run
        self._visits: collections.deque[threading.Event] = collections.deque()  # served before any move
        self._depth = threading.local()

    @contextlib.contextmanager
    def turn(self, visit: bool = False) -> Iterator[None]:
        """Hold a turn while the block runs; visit: a run that draws a page its session has not shown yet, which
        waits only for the visits that came before it."""
        depth = getattr(self._depth, "n", 0)
        if depth == 0:
            self._take(self._visits if visit else self._queue)
        self._depth.n = depth + 1
        try:
            yield
        finally:
            self._depth.n = depth
            if depth == 0:
                self._give_back()

    def _take(self, queue: collections.deque[threading.Event]) -> None:
        with self._lock:
            # a free turn goes to whoever asks when no one is waiting ahead of them: for a visit, no earlier
            # visit; for a move, no run at all
            ahead = self._visits if queue is self._visits else (self._visits or self._queue)
            if self._running < self.turns and not ahead:
                self._running += 1
                return
            mine = threading.Event()
            queue.append(mine)
        if mine.wait(WAIT_LIMIT_S):
            return  # _give_back counted this run in as it woke it
        with self._lock:
            if mine.is_set():  # given its turn just as the wait ran out
                return
            kept = [waiting for waiting in queue if waiting is not mine]
            queue.clear()
            queue.extend(kept)
            self._running += 1  # run anyway, out of turn: a stuck run must not stop the whole class
        _log.warning("a script run waited %.0f s for its turn; running it out of turn", WAIT_LIMIT_S)

    def _give_back(self) -> None:
        with self._lock:
            self._running -= 1
            while (self._visits or self._queue) and self._running < self.turns:
                self._running += 1
                (self._visits or self._queue).popleft().set()

    def waiting(self) -> int:
        """Runs waiting for a turn now."""
        with self._lock:
            return len(self._visits) + len(self._queue)


_TURNS = Turns(TURNS)


def turn(visit: bool = False) -> contextlib.AbstractContextManager[None]:
    """Hold one of the process's turns while the block runs (at once if this thread already holds one); a visit
    (a page its session has not shown yet) goes before every move waiting."""
    return _TURNS.turn(visit)

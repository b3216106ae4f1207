"""A bounded dictionary shared by every session of the process, in which each value is made once.

A class of thirty on one link moves the same sliders through the same values: whatever a move makes (a
lesson's matrices, a chart's finished JSON) is the same for every student who makes that move, so the
second student should find it made. Sessions run in threads of their own, so two of them can ask for the
same missing value at once; the second then waits for the first instead of making it again (thirty students
opening one link after a server start would otherwise each compute every matrix of the page: a queue of
thirty times the work in one process).

The dictionary forgets its least recently used values past `entries` of them, or past `budget` bytes when it
is given one (values then say their size through `size`), so a long class cannot fill the server's memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable


class SharedCache:
    """key -> value for the whole process, least recently used forgotten first, each value made once."""

    def __init__(self, entries: int, budget: int | None = None, size: Callable[[object], int] = lambda _: 0):
        self.entries, self.budget, self.size = entries, budget, size
        self.values: OrderedDict = OrderedDict()
        self.held = 0  # the sizes of the values kept, in bytes (when there is a budget)
        self.making: dict[Hashable, threading.Event] = {}  # keys being made now, and the event that says done
        self.lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], object]):
        """The value kept for key, or make() kept and returned. make() runs outside the lock (a slow one
        must not hold up other keys); a session that asks for a key while another makes it waits for that
        value. If the maker fails, a waiting session makes it itself (and sees the error, if it repeats)."""
        while True:
            with self.lock:
                if key in self.values:
                    self.values.move_to_end(key)
                    self.hits += 1
                    return self.values[key]
                pending = self.making.get(key)
                if pending is None:
                    self.making[key] = threading.Event()
                    self.misses += 1
                    break
            pending.wait()  # made (or failed) by another session: look again
        try:
            value = make()
        finally:
            with self.lock:
                self.making.pop(key).set()
        with self.lock:
            self._keep(key, value)
        return value

    def _keep(self, key: Hashable, value) -> None:
        if key in self.values:
            self.held -= self.size(self.values.pop(key))
        self.values[key] = value
        self.held += self.size(value)
        while self.values and (len(self.values) > self.entries
                               or (self.budget is not None and self.held > self.budget and len(self.values) > 1)):
            _, old = self.values.popitem(last=False)
            self.held -= self.size(old)

    def clear(self) -> None:
        """Forget every value (tests; a server never needs to)."""
        with self.lock:
            self.values.clear()
            self.held = 0

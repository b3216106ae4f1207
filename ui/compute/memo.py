"""Results shared by every session of the process, read-only: a bounded dictionary per function (ui.cache).

st.cache_data hashes a call's arguments with its own hasher, inspects the function's signature and unpickles
a copy of the result on every call, hit or miss: 0.25-0.35 ms a call, where the lessons' computations take
about as long themselves, and a page makes several per slider move. `shared` keeps a function's results in
a dictionary keyed by its arguments (lists as tuples) instead, makes every array in them read-only, and hands
each caller its own dictionary (or tuple of them) around the shared values. Use it for pure functions of
small arguments; a result must not be changed in place (its arrays cannot be).
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from ui.cache import SharedCache


def _hashable(value):
    """Lists (of tokens) as tuples, so they can be part of a dictionary key."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def _read_only(value):
    """Every array in a result (in its dictionaries, lists and tuples, however deep) made read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, dict):
        for item in value.values():
            _read_only(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _read_only(item)
    return value


def _own(result):
    """What a caller gets: its own dictionary around the shared values (in a tuple too), so that adding to
    it leaves the shared one alone."""
    if isinstance(result, dict):
        return dict(result)
    if isinstance(result, tuple):
        return tuple(_own(item) for item in result)
    return result


class _Shared:
    """fn's results for its last `entries` argument lists, for every session (ui.cache.SharedCache: a result
    asked for by several sessions at once is computed once)."""

    def __init__(self, fn, entries: int, spinner: str = ""):
        self.fn, self.spinner = fn, spinner
        self.results = SharedCache(entries)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        key = (_hashable(args), tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))
        return _own(self.results.get(key, lambda: self._compute(args, kwargs)))

    def _compute(self, args, kwargs):
        if self.spinner:  # a miss that takes seconds says so on the page
            with st.spinner(self.spinner):
                return _read_only(self.fn(*args, **kwargs))
        return _read_only(self.fn(*args, **kwargs))

    def clear(self) -> None:
        """Forget every result (tests; a server never needs to)."""
        self.results.clear()


def shared(entries: int = 128, spinner: str = ""):
    """Decorator: keep fn's results for its last `entries` argument lists, shared read-only (see above).
    spinner: what the page says while a result is computed (for one that takes a second or more).

    The one way to share a computation: `@shared(n)` on a function written for it, and `name =
    shared(n)(maths.fn)` for a function of the lesson's maths or the core shared as it is. A lesson's shared
    computations live in its cached.py (docs/LAYOUT.md)."""
    return lambda fn: _Shared(fn, entries, spinner)

"""The computations the lesson pages draw, cached once per process and shared by every session.

A lesson page is a script that runs again on every slider move, so a cache wrapper made in it would be
made anew each time, and Streamlit would hash the function's source again: about 1 ms a wrapper, every
rerun. Made here, in a module imported once, each wrapper is built once.

The lessons' one-sentence computations (`_cached`) keep their results in a plain dictionary keyed by the
arguments, not in st.cache_data: that hashes the arguments with its own hasher, inspects the function's
signature and unpickles a copy of the result on every call, 0.25-0.35 ms a call where the computation itself
takes about as long, and a page makes several per slider move. Shared instead of copied, a result's arrays
are made read-only and each caller gets its own dictionary around them.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from core.demos import circuit, communication, context, heads, masking, scaling, tiles
from ui import model_store, plots
from ui.chart_data import ChartData


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


class _Shared:
    """fn's results for its last `entries` argument lists, for every session (fn returns a dict)."""

    def __init__(self, fn, entries: int):
        self.fn, self.entries = fn, entries
        self.results: OrderedDict = OrderedDict()
        self.lock = threading.Lock()  # sessions run in threads of their own
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs) -> dict:
        key = (_hashable(args), tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))
        with self.lock:
            result = self.results.get(key)
            if result is not None:
                self.results.move_to_end(key)
        if result is None:  # computed outside the lock: a slow one must not hold up the others
            result = _read_only(self.fn(*args, **kwargs))
            with self.lock:
                self.results[key] = result
                while len(self.results) > self.entries:
                    self.results.popitem(last=False)
        return dict(result)  # a caller may add to its dictionary without touching the shared one


def _cached(fn, entries: int = 256) -> _Shared:
    return _Shared(fn, entries)


single_head = _cached(heads.single_head)
scaling_view = _cached(scaling.scaling_view)
masking_view = _cached(masking.masking_view)
no_peeking = _cached(masking.no_peeking)
tiles_view = _cached(tiles.tiles_view)
same_word_two_contexts = _cached(context.same_word_two_contexts, 128)
cross_attention = _cached(context.cross_attention, 128)
order_view = _cached(communication.order_view, 128)
encoder_decoder = _cached(communication.encoder_decoder, 128)

# The scaling lesson's two experiments draw random vectors of their own, not the sentence's: the page's
# seed does not reach them, so a seed or sentence move reuses them (each costs 10-70 ms to draw) and every
# link shows the same curves.
EXPERIMENT_SEED = 0


@st.cache_data(show_spinner=False, max_entries=64)
def saturation(T: int, trials: int, seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData, ChartData]:
    """The saturation experiment's numbers and its two line charts' data, each with the uniform row as a
    flat line."""
    s = scaling.seeded_saturation(T, trials, seed)
    top = {"unscaled": s["max_unscaled"], "scaled by √d_k": s["max_scaled"],
           f"uniform (1/T = {s['uniform_max']:.3f})": np.full(len(s["d_k"]), s["uniform_max"])}
    spread = {"unscaled": s["entropy_unscaled"], "scaled by √d_k": s["entropy_scaled"],
              f"uniform (log2 T = {s['uniform_entropy']:.2f})": np.full(len(s["d_k"]), s["uniform_entropy"])}
    return s, plots.line_frame(s["d_k"], top), plots.line_frame(s["d_k"], spread)


@st.cache_data(show_spinner=False, max_entries=64)
def variance(seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData]:
    """The measured variance of q·k against d_k, and its line chart's data."""
    v = scaling.seeded_variance(seed)
    lines = {"formula: d_k": v["formula"], "measured: q·k": v["raw"], "measured: q·k / √d_k": v["scaled"]}
    return v, plots.line_frame(v["d_k"], lines)


@st.cache_data(show_spinner=False, max_entries=128)
def circuit_reading(source: tuple, ids: tuple[int, ...]) -> dict:
    """core.demos.circuit.read_sequence of the model `source` names on these token ids."""
    m = model_store.from_source(source)
    return circuit.read_sequence(m.params, m.cfg, np.array(ids, dtype=np.int64))

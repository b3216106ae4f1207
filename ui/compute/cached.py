"""The computations the lesson pages draw, cached once per process and shared by every session.

A lesson page is a script that runs again on every slider move, so a cache wrapper made in it would be
made anew each time, and Streamlit would hash the function's source again: about 1 ms a wrapper, every
rerun. Made here, in a module imported once, each wrapper is built once.

The results are kept once per process in plain dictionaries and shared read-only (ui.compute.memo), not copied
out of st.cache_data on every call.
"""

from __future__ import annotations

import numpy as np

from core.demos import circuit, communication, context, heads, masking, scaling, tiles, word_heads
from ui.compute import model_store
from ui.compute.memo import Shared, shared
from ui.drawing import plots
from ui.drawing.chart_data import ChartData

single_head = Shared(heads.single_head, 256)
scaling_view = Shared(scaling.scaling_view, 256)
masking_view = Shared(masking.masking_view, 256)
no_peeking = Shared(masking.no_peeking, 256)
tiles_view = Shared(tiles.tiles_view, 256)
same_word_two_contexts = Shared(context.same_word_two_contexts, 128)
cross_attention = Shared(context.cross_attention, 128)
order_view = Shared(communication.order_view, 128)
encoder_decoder = Shared(communication.encoder_decoder, 128)
# the toy-English model on a sentence (the word lessons' trained weights)
trained_attention = Shared(word_heads.trained_attention, 128)
trained_layer = Shared(word_heads.layer_heads, 128)
bank_similarity = Shared(word_heads.bank_similarity, 64)

# The scaling lesson's two experiments draw random vectors of their own, not the sentence's: the page's
# seed does not reach them, so a seed or sentence move reuses them (each costs 10-70 ms to draw) and every
# link shows the same curves.
EXPERIMENT_SEED = 0


@shared(64)
def saturation(T: int, trials: int, seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData, ChartData]:
    """The saturation experiment's numbers and its two line charts' data, each with the uniform row as a
    flat line."""
    s = scaling.seeded_saturation(T, trials, seed)
    top = {"unscaled": s["max_unscaled"], "scaled by √d_k": s["max_scaled"],
           f"uniform (1/T = {s['uniform_max']:.3f})": np.full(len(s["d_k"]), s["uniform_max"])}
    spread = {"unscaled": s["entropy_unscaled"], "scaled by √d_k": s["entropy_scaled"],
              f"uniform (log2 T = {s['uniform_entropy']:.2f})": np.full(len(s["d_k"]), s["uniform_entropy"])}
    return s, plots.line_frame(s["d_k"], top), plots.line_frame(s["d_k"], spread)


@shared(64)
def variance(seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData]:
    """The measured variance of q·k against d_k, and its line chart's data."""
    v = scaling.seeded_variance(seed)
    lines = {"formula: d_k": v["formula"], "measured: q·k": v["raw"], "measured: q·k / √d_k": v["scaled"]}
    return v, plots.line_frame(v["d_k"], lines)


@shared(128)
def circuit_reading(source: tuple, ids: tuple[int, ...]) -> dict:
    """core.demos.circuit.read_sequence of the model `source` names on these token ids."""
    m = model_store.from_source(source)
    return circuit.read_sequence(m.params, m.cfg, np.array(ids, dtype=np.int64))

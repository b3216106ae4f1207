"""The block lesson's readings of one block and its experiments, kept once per process and shared read-only by
every session (ui.compute.memo), keyed by the model's small source tuple. Here and not in page.py: the page is
a script run again on every rerun, and a wrapper made there would be made anew each time (ui/compute/cached.py
says more)."""

from __future__ import annotations

import numpy as np

from core.model import forward
from lessons.block import maths
from ui.compute import model_store
from ui.compute.memo import shared
from ui.drawing import plots
from ui.drawing.chart_data import ChartData


@shared(128)
def reading(source: tuple, ids: tuple[int, ...], layer: int, position: int) -> dict:
    """lessons.block.maths.block_reading of the model `source` names."""
    m = model_store.from_source(source)
    return maths.block_reading(m.params, m.cfg, np.array(ids, dtype=np.int64), layer, position)


@shared(128)
def wired(source: tuple, ids: tuple[int, ...], layer: int) -> dict:
    """The block `layer` wired pre-norm and post-norm on the input it gets in the model's own forward pass."""
    m = model_store.from_source(source)
    _, trace = forward(m.params, m.cfg, np.array(ids, dtype=np.int64))
    return maths.wirings(m.params["blocks"][layer], m.cfg, trace.layers[layer].x)


@shared(64)
def depth_experiment(depth: int, seed: int) -> tuple[dict, ChartData]:
    """lessons.block.maths.amplification and its line chart's data."""
    a = maths.amplification(depth, seed)
    return a, plots.line_frame(a["depth"], {"pre-norm": a["pre"], "post-norm": a["post"]})


@shared(64)
def depth_spread(depth: int) -> dict:
    """lessons.block.maths.ratio_spread: the ratio of the ten seeds' stacks of this depth."""
    return maths.ratio_spread(depth)


@shared(1)
def curves() -> tuple[dict, ChartData]:
    """GELU and ReLU on [-4, 4], and their line chart's data."""
    c = maths.activation_curves()
    return c, plots.line_frame(c["x"], {"GELU": c["gelu"], "ReLU": c["relu"]})

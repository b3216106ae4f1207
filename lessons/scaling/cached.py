"""The scaling lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

import numpy as np

from lessons.scaling import maths
from ui.compute.memo import shared
from ui.drawing import plots
from ui.drawing.chart_data import ChartData

scaling_view = shared(256)(maths.scaling_view)

# The lesson's two experiments draw random vectors of their own, not the sentence's: the page's seed does not
# reach them, so a seed or sentence move reuses them (each costs 10-70 ms to draw) and every link shows the
# same curves.
EXPERIMENT_SEED = 0


@shared(64)
def saturation(T: int, trials: int, seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData, ChartData]:
    """The saturation experiment's numbers and its two line charts' data, each with the uniform row as a
    flat line."""
    s = maths.seeded_saturation(T, trials, seed)
    top = {"unscaled": s["max_unscaled"], "scaled by √d_k": s["max_scaled"],
           f"uniform (1/T = {s['uniform_max']:.3f})": np.full(len(s["d_k"]), s["uniform_max"])}
    spread = {"unscaled": s["entropy_unscaled"], "scaled by √d_k": s["entropy_scaled"],
              f"uniform (log2 T = {s['uniform_entropy']:.2f})": np.full(len(s["d_k"]), s["uniform_entropy"])}
    return s, plots.line_frame(s["d_k"], top), plots.line_frame(s["d_k"], spread)


@shared(64)
def variance(seed: int = EXPERIMENT_SEED) -> tuple[dict, ChartData]:
    """The measured variance of q·k against d_k, and its line chart's data."""
    v = maths.seeded_variance(seed)
    lines = {"formula: d_k": v["formula"], "measured: q·k": v["raw"], "measured: q·k / √d_k": v["scaled"]}
    return v, plots.line_frame(v["d_k"], lines)

"""The multi-head lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo): the set-up with random weights and its grid of heads, the trained model's heads, and what
switching each of its heads off does. Here and not in page.py: the page is a script run again on every rerun,
and a wrapper made there would be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from lessons.multi_head.maths import looked_at_or_used, multi_head
from ui.compute import cached
from ui.compute.memo import shared
from ui.drawing import charts
from ui.drawing.chart_data import ChartData
from ui.sections import trained_views as tv
from ui.sections import views

KIND = "bank"  # the rule whose heads "attention is not explanation" switches off


class Setup(NamedTuple):
    """What every array of the lesson is computed from: the tokens and the sidebar's settings."""

    tokens: tuple[str, ...]
    D: int
    H: int
    seed: int
    causal: bool


@shared(256)
def compute(s: Setup) -> dict:
    """lessons.multi_head.maths.multi_head for these settings (ValueError when core cannot use them)."""
    a = multi_head(list(s.tokens), s.D, s.H, s.seed, s.causal)
    # The page shows only each form's output shape and its difference: keep the cached result small.
    a["forms"] = {name: out.shape for name, (out, _) in a["forms"].items()}
    return a


@shared(128)
def head_grid(s: Setup, first: int | None = None) -> ChartData:
    """The first `first` heads' (T, T) maps as one small-multiples frame."""
    weights = compute(s)["weights"][:first]  # (H, T, T)
    tokens = list(s.tokens)
    return charts.grid_frame(weights, [f"head {h + 1}" for h in range(len(weights))], tokens, tokens)


@shared(64)
def heads_grid(sentence: str) -> ChartData:
    """Every layer x head map of the trained model on the sentence, as one small-multiples frame."""
    seen = tv.labelled(cached.trained_attention(sentence))
    L, H, T, _ = seen["weights"].shape
    return charts.grid_frame(np.asarray(seen["weights"]).reshape(L * H, T, T), views.layer_head_names(L, H),
                             seen["labels"], seen["labels"])


@shared(1, spinner="Switching each head of the word model off, one at a time…")
def not_explanation_figures() -> dict:
    """lessons.multi_head.maths.looked_at_or_used for the bank rule."""
    return looked_at_or_used(KIND)

"""The multi-head lesson's own pieces: its cached set-up, the one-map-per-head grid and the table of
the three implementations. Pieces other lessons draw as well live in ui.sections.views."""

from __future__ import annotations

from typing import NamedTuple

from core import attention
from lessons.multi_head.maths import multi_head
from ui.compute.memo import shared
from ui.drawing import charts
from ui.drawing.chart_data import ChartData
from ui.sections import views
from ui.text import shape_str

FORMS = [attention.multi_head_attention, attention.multi_head_attention_loop, attention.multi_head_attention_einsum]
CROWDED = 16  # beyond this many heads in one grid, each panel is half as wide


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


def draw_heads(s: Setup, title: str, width_px: int, panel_px: int = 240, first: int | None = None) -> None:
    """One map per head (the first `first`), as many side by side as fit width_px."""
    panels = min(s.H, first or s.H)
    views.attention_grid(head_grid(s, first), len(s.tokens), panels, title, width_px, panel_px,
                         halve_above=CROWDED)


def forms_table(a: dict) -> dict:
    """One row per implementation: its core function, output shape and largest differences from the reshape."""
    names = list(a["forms"])
    return {"implementation": names, "core function": [fn.__name__ for fn in FORMS],
            "output shape": [shape_str(shape) for shape in a["forms"].values()],
            "max |Δ output| vs reshape": [a["max_diff"][name][0] for name in names],
            "max |Δ weights| vs reshape": [a["max_diff"][name][1] for name in names]}

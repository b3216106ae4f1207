"""The multi-head lesson's own pieces: the one-map-per-head grid and the table of the three implementations
(its set-up, shared by every session, is made in cached.py). Pieces other lessons draw as well live in
ui.sections.views."""

from __future__ import annotations

from core import attention
from lessons.multi_head.cached import Setup, head_grid
from ui.drawing import heatmap
from ui.sections import views
from ui.text import shape_str

FORMS = [attention.multi_head_attention, attention.multi_head_attention_loop, attention.multi_head_attention_einsum]
CROWDED = 16  # beyond this many heads in one grid, each panel is half as wide


def draw_heads(s: Setup, title: str, width_px: int, panel_px: int = heatmap.NARROW_ROOM_PX,
               first: int | None = None) -> None:
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

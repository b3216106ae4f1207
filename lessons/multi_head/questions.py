"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

from core.costs import param_count
from core.model import ModelConfig
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    cfg = ModelConfig(vocab_size=2, d_model=64, n_heads=8, n_layers=1, max_len=8)
    attn = param_count(cfg)["attention (W_qkv, W_o)"]
    return [
        Exercise("dk_per_head", "d_model = 64 split over 8 heads: how many dimensions does each head's query "
                 "have?", answer=float(cfg.d_k),
                 explanation="Heads split d_model evenly: d_k = d_model / H = 64 / 8 = 8."),
        Exercise("attn_params", "How many parameters does one attention layer with d_model = 64 have, "
                 "counting W_qkv (64 × 192), W_o (64 × 64) and their biases?", answer=float(attn), tolerance=0,
                 explanation=f"64·192 + 192 + 64·64 + 64 = {attn}. The number of heads does not change it: "
                 "heads are slices of the same matrices."),
    ]

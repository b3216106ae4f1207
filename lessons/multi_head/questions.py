"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.footer)."""

from __future__ import annotations

from core.costs import param_count
from core.demos.word_heads import word_model
from core.model import ModelConfig
from ui.frame.exercises import Exercise
from ui.sections import trained_views


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
        head_off(),
    ]


def head_off() -> Exercise:
    """The trained model's agreement head switched off, as measured on held-out sentences (saved with it)."""
    model = word_model()
    figures, others = model.meta["phenomena"]["agreement"], model.cfg.n_layers * model.cfg.n_heads - 1
    off = figures["off_accuracy"]
    options = ("Still right almost always: the other heads make up for it", "Right about half the time, a coin toss",
               "Wrong almost always: the verb flips")
    correct = 0 if off > 0.9 else (2 if off < 0.1 else 1)
    return Exercise("head_off", "With trained weights, one head reads the subject for the verb "
                    f"({trained_views.head_name(*figures['head'])}). Switch that head off alone, keeping the other "
                    f"{others}: how often does the model still give the verb the subject's number?", options=options,
                    correct=correct,
                    explanation=f"Measured on held-out sentences: right {figures['accuracy']:.0%} of the time with "
                    f"every head, {off:.0%} with that head off. No other head makes up for it: the model is left "
                    "guessing between singular and plural.")

"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from core.layers import gelu, layer_norm
from core.model import ModelConfig
from ui.frame.exercises import Exercise

ROW = np.array([2.0, 4.0, 6.0, 8.0])  # mean 5, variance 5


def questions() -> list[Exercise]:
    first = float(layer_norm(ROW, np.ones(4), np.zeros(4))[0])
    width = ModelConfig(vocab_size=95, d_model=64, n_heads=4, n_layers=2, max_len=64).ff_width
    dip = float(gelu(np.array(-1.0)))
    stream = float(np.linalg.norm(np.array([3.0, 0.0]) + np.array([0.0, 4.0])))
    return [
        Exercise("ln_first", "Layer norm with γ = 1 and β = 0 reads the row [2, 4, 6, 8]. What is the first "
                 "number of its output (3 decimals)?", answer=first,
                 explanation="The mean is 5 and the (biased) variance (9 + 1 + 1 + 9) / 4 = 5, so the first "
                 f"entry is (2 − 5) / √5 ≈ {first:.3f}; ε = 1e-5 changes only the sixth decimal."),
        Exercise("ffn_width", "A block with d_model = 64 and the usual feed-forward width: how many hidden "
                 "units does each token get?", answer=float(width),
                 explanation=f"The feed-forward goes D → 4D → D: 4 × 64 = {width} hidden units per token, "
                 "each token on its own."),
        Exercise("gelu_minus_one", "What is GELU(−1), to two decimals? (ReLU gives 0.)", answer=dip,
                 tolerance=0.05, explanation=f"GELU(x) = x · Φ(x) ≈ −1 × 0.159 = {dip:.3f}: a small negative "
                 "input lets a little of itself through, still negative, where ReLU gives exactly 0."),
        Exercise("residual_length", "A token's row is x = [3, 0]; attention adds [0, 4]. How long is the row "
                 "x + attention?", answer=stream,
                 explanation=f"The vectors add: [3, 4], of length √(9 + 16) = {stream:g}. Lengths do not add "
                 "(3 + 4 = 7 would need both to point the same way)."),
        Exercise("which_wiring", "In which wiring does a block's input reach its output with no layer norm "
                 "in between?", options=("pre-norm: x + f(ln(x))", "post-norm: ln(x + f(x))"), correct=0,
                 explanation="Pre-norm normalises only what the sublayer reads; the stream itself goes "
                 "straight through the sum. Post-norm puts a layer norm after every sum, so everything, the "
                 "straight path included, is rescaled at every sublayer."),
    ]

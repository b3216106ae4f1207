"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from core.layers import gelu, layer_norm
from core.model import ModelConfig
from lessons.block.maths import block_reading
from lessons.block.views import DEFAULT_POSITION, DEFAULT_PROMPT, the_model
from ui.frame.exercises import Exercise

ROW = np.array([2.0, 4.0, 6.0, 8.0])
X, ATTENTION = np.array([3.0, 0.0]), np.array([0.0, 4.0])  # a row and what attention adds to it


def questions() -> list[Exercise]:
    first = float(layer_norm(ROW, np.ones(4), np.zeros(4))[0])
    mean, var = float(ROW.mean()), float(ROW.var())
    by_n_less_one = float((ROW[0] - mean) / np.sqrt(ROW.var(ddof=1)))  # dividing by D - 1: not layer norm
    width = ModelConfig(vocab_size=95, d_model=64, n_heads=4, n_layers=2, max_len=64).ff_width
    dip = float(gelu(np.array(-1.0)))
    stream = float(np.linalg.norm(X + ATTENTION))
    return [
        Exercise("ln_first", f"Layer norm with γ = 1 and β = 0 reads the row [{', '.join(f'{x:g}' for x in ROW)}]. "
                 "Its variance, as layer norm takes it, is the average of the squared distances from the mean, "
                 f"over all {ROW.size} numbers. What is the first number of its output (3 decimals)?",
                 answer=first, part="layer_norm",
                 said_in_class="*Layer norm subtracts the row's mean, then divides by the square root of that "
                               "variance.*",
                 explanation=f"The mean is {mean:g} and the variance (the mean of the squared distances from it) "
                 f"{var:g}, so the first entry is ({ROW[0]:g} − {mean:g}) divided by the square root of {var:g}, "
                 f"about {first:.3f}. Dividing the squared distances by {ROW.size - 1} instead of {ROW.size}, as "
                 f"for a sample's variance in statistics, would give {by_n_less_one:.3f}: layer norm divides by D, "
                 "the row's length."),
        Exercise("ffn_width", "A block whose rows hold d_model = 64 numbers, with the usual feed-forward width: how "
                 "many hidden units does each token get?", answer=float(width), part="ffn",
                 explanation=f"The feed-forward goes D → 4D → D: 4 × 64 = {width} hidden units per token, "
                 "each token on its own."),
        Exercise("gelu_minus_one", "What does GELU give for an input of −1, to two decimals? (ReLU gives 0.)",
                 answer=dip, tolerance=0.05, part="gelu",
                 said_in_class=f"*GELU multiplies its input x by the chance that a standard normal number lies below "
                               f"x; for x = −1 that chance is about {-dip:.3f}.*",
                 explanation=f"GELU multiplies its input by a number between 0 and 1 that grows with the input: the "
                 f"share of a bell curve (the normal distribution, centred on 0 with spread 1) that lies below it, "
                 f"about {-dip:.3f} at −1. So it gives −1 × {-dip:.3f}, about {dip:.3f}, close to the curve's "
                 "lowest point. A small negative input lets a little of itself through, still negative, "
                 "where ReLU gives exactly 0."),
        firing_or_not(),
        Exercise("residual_length", f"A token's row is x = [{X[0]:g}, {X[1]:g}]; attention adds [{ATTENTION[0]:g}, "
                 f"{ATTENTION[1]:g}]. How long is the row x + attention?", answer=stream, part="residual",
                 explanation=f"The vectors add: [{X[0] + ATTENTION[0]:g}, {X[1] + ATTENTION[1]:g}], of length "
                 f"{stream:g}. Lengths do not add ({np.linalg.norm(X):g} + {np.linalg.norm(ATTENTION):g} would need "
                 "both to point the same way)."),
        Exercise("which_wiring", "In which wiring does a block's input reach its output with no layer norm "
                 "in between?", options=("pre-norm: layer norm only on what each sublayer reads",
                                         "post-norm: layer norm on each sum"), correct=0, part="wirings",
                 explanation="Pre-norm normalises only what the sublayer reads; the stream itself goes "
                 "straight through the sum. Post-norm puts a layer norm after every sum, so everything, the "
                 "straight path included, is rescaled at every sublayer."),
    ]


def firing_or_not() -> Exercise:
    """Block 1 of the shipped model at the page's default row: which group of hidden units writes more."""
    model, _ = the_model()
    ids = model.tokenizer.encode(DEFAULT_PROMPT)[-model.cfg.max_len:]
    r = block_reading(model.params, model.cfg, ids, 0, min(DEFAULT_POSITION, len(ids) - 1))
    on, off = r["written_row"]["firing"], r["written_row"]["silent"]
    fires = r["firing_row"]
    return Exercise("firing_or_not", f"In block 1, at the page's default row, {fires} of the {r['F']} hidden units "
                    f"fire and {r['F'] - fires} do not. Which group writes the longer vector through W_proj?",
                    options=(f"the {fires} that fire", f"the {r['F'] - fires} that do not"), correct=int(off > on),
                    part="firing",
                    explanation=f"Lengths {on:.2f} (firing) and {off:.2f} (not firing). A unit that does not fire "
                    f"still passes on a small negative amount, at most {r['silent_most']:.2f} in size, and there are "
                    "many of them: together they can outweigh the few that fire.")

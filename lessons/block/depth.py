"""Why deep post-norm stacks are harder to train: every weight of a deep stack of random blocks nudged a little,
wired pre-norm and post-norm, and how far each output moves (lessons.block.maths.amplification), set beside ten
stacks of the same depth. A live part of its own: its two controls reach nothing else, and it does not read the
prompt."""

from __future__ import annotations

import streamlit as st

from lessons.block import cached, maths
from lessons.block.views import DEFAULT_DEPTH, MAX_DEPTH
from ui.drawing import plots, render
from ui.frame import prose
from ui.state import controls

CLEARLY_HARDER = 1.25  # post-norm moved this many times as far as pre-norm, averaged over the depths


def section() -> None:
    """The deep random stacks: a live part of its own (its two controls reach nothing else, and it does not
    read the prompt)."""
    st.sidebar.markdown("**Deep stacks**")
    depth = controls.number_slider("block_depth", "Blocks in the stack", 2, MAX_DEPTH, DEFAULT_DEPTH,
                                   help="How deep the random stack of the last section is.")
    seed = controls.seed()
    # ten stacks cost ten times one: measured at the depth the page opens on (made once per process), elsewhere
    # when asked, so that a move of the depth slider stays one stack's work
    beside = controls.toggle("block_spread", "Set beside ten stacks of this depth",
                             help="Measure the same for the stacks of seeds 0 to 9 at this depth (ten times the "
                                  "work of one); at the depth the page opens on it is always shown.")
    controls.show_url_notes()
    a, frame = cached.depth_experiment(depth, seed)
    prose.section("Why deep post-norm stacks are harder to train", "block", "depth", nudge=a["size"],
                  D=maths.DEPTH_D)
    render.show(plots.line_chart, frame, width="stretch", title=f"Output moved by a {a['size']:.0%} nudge",
                x_title="blocks in the stack", y_title="relative change of the output", whole_x=True)
    # "shakes post-norm harder" only past the spread one shallow stack has by chance: at 2 blocks the ten seeds'
    # ratios run from 0.89 to 1.12
    part = "depth_numbers" if a["ratio"] >= CLEARLY_HARDER else "depth_close"
    st.markdown(prose.text("block", part, depth=depth, seed=seed, pre=a["pre"][-1], post=a["post"][-1],
                           ratio=a["ratio"]))
    if depth != DEFAULT_DEPTH and not beside:
        return
    spread = cached.depth_spread(depth)
    prose.show("block", "depth_spread", depth=depth, seed=seed, ratio=a["ratio"], last=int(spread["seeds"][-1]),
               low=spread["low"], median=spread["median"], high=spread["high"],
               where=among(seed, a["ratio"], spread))


def among(seed: int, ratio: float, spread: dict) -> str:
    """Where the seed's ratio stands among the ten stacks' (lessons.block.maths.ratio_spread): the largest or the
    smallest of them when it is one of them, else above or below their median."""
    if seed in spread["seeds"] and ratio in (spread["high"], spread["low"]):
        return "the largest of them" if ratio == spread["high"] else "the smallest of them"
    return "their median" if ratio == spread["median"] else (
        "above their median" if ratio > spread["median"] else "below their median")

"""Attention is not explanation: on the trained word model's bank sentences, the heads that look at the cue
beside what switching each one off does. The same for every reader and every link (the shipped model and its
test sentences), so it is drawn outside the page's live part, at both weights settings."""

from __future__ import annotations

import numpy as np
import streamlit as st

from lessons.multi_head.cached import not_explanation_figures
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections import views
from ui.text import counted

SPARE = 0.05  # heads whose knockout together leaves the rule right to within this of every head on are spare
TOSS = 0.65  # a knockout that leaves the rule right less often than this leaves about a coin toss: needed


def section() -> None:
    f = not_explanation_figures()
    needed, (a, b) = f["needed"], f["also_looking"][:2]
    shares, off, odds = f["shares"], f["off_accuracy"], f["off_log_odds"]
    also = len(f["also_looking"])
    looking = "Those two heads" if also == 2 else f"The {counted(also, 'head')} besides {tv.head_name(*needed)}"
    spare = f["also_off_accuracy"] >= f["accuracy"] - SPARE
    verdict = " ".join([prose.text("multi_head", "not_explanation_spare" if spare else "not_explanation_lost",
                                   looking=looking),
                        prose.text("multi_head", "not_explanation_needed" if off[needed] < TOSS else
                                   "not_explanation_costliest", needed=tv.head_name(*needed))])
    prose.section("Attention is not explanation", "multi_head", "not_explanation", n=f["n"],
                  together="both of them" if also == 2 else f"all {also} heads that look there",
                  verdict=verdict,
                  needed=tv.head_name(*needed), a=tv.head_name(*a), b=tv.head_name(*b), share=shares[needed],
                  share_a=shares[a], share_b=shares[b], off=off[needed], off_a=off[a], off_b=off[b],
                  accuracy=f["accuracy"], odds=f["log_odds"], odds_off=odds[needed], odds_a=odds[a],
                  odds_b=odds[b], both=f["also_off_accuracy"], odds_both=f["also_off_log_odds"])
    L, H = shares.shape
    views.number_table({"head": views.layer_head_names(L, H), "weight on the cue": shares.ravel(),
                        "right with it off": off.ravel(), "log-odds with it off": odds.ravel()}, "%.2f")
    st.caption(prose.text("multi_head", "not_explanation_table", n=f["n"], accuracy=f["accuracy"],
                          odds=f["log_odds"], heads=int(np.size(shares))))

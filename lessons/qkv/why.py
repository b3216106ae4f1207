"""The QKV lesson's opening, before any matrix: why a token needs the tokens before it (two sentences whose next
word an earlier word decides), the plainest way to use them (the running average, the same weights whatever
the words) and what attention changes (a trained head's weights, which follow the words), then the three
vectors the rest of the page computes. Fixed sentences and the shipped word model: drawn the same for everyone,
outside the page's live part."""

from __future__ import annotations

import numpy as np
import streamlit as st

from lessons.qkv.cached import FIRST, SECOND, why_figures
from ui.drawing import charts
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections import views
from ui.sections.views import Heatmap
from ui.text import code_span

ROW = dict(domain=views.PROBABILITY, x_title="key", y_title="", cell_px=charts.CELL_PX)


def said(words: list[tuple[str, float]]) -> str:
    return ", ".join(f"{code_span(w)} {p:.2f}" for w, p in words)


def rows(a: dict) -> list[Heatmap]:
    """The row of "bank" in each sentence: averaged, then attended (the head the measurements single out)."""
    name = tv.head_name(*a["head"])
    maps = []
    for n, s in enumerate(a["sentences"], 1):
        both = np.stack([s["average"], s["attended"]])  # (2, T)
        maps.append(Heatmap(both, ["average", name], s["tokens"], f"the row of “bank”, sentence {n}",
                            f"qkv_why_{n}", "rows", "(2, T): the running average, then the trained head", ROW))
    return maps


def section() -> None:
    a, after = why_figures()
    first, second = a["sentences"]
    prose.section("Why attention: an average of the past is not enough", "qkv", "why", first=FIRST, second=SECOND,
                  back=first["at"] + 1 - first["cue"], at=first["at"], n=first["at"] + 1, average=first["cue_average"],
                  head=tv.head_name(*a["head"]), w1=first["cue_attended"], w2=second["cue_attended"],
                  off=a["off_accuracy"])
    views.heatmaps(*rows(a))
    st.caption(prose.text("qkv", "why_next", after_1=said(after[0]), after_2=said(after[1])))
    prose.show("qkv", "no_mask")
    prose.section("Three vectors per token", "qkv", "vectors")

"""Why nucleus (top-p) sampling exists, on the shipped character model: greedy decoding falls into a loop, pure
sampling draws now and then from the long tail of unlikely characters, top-p cuts the tail off. Fixed prompt,
length and seeds: the same for every reader, computed once per process, drawn outside the page's live parts."""

from __future__ import annotations

import numpy as np
import streamlit as st

from lessons.full_model.cached import LENGTH, PROMPT, SEEDS, P, top_p_figures
from ui.compute.model_store import Model
from ui.frame import prose
from ui.sections import model_views as mv
from ui.sections import views
from ui.text import code_span


def section(model: Model | None) -> None:
    """The section, or nothing when this server has no documentation model to show it on."""
    if model is None:
        return
    f = top_p_figures(model.source)
    ways, greedy = f["ways"], f["ways"]["greedy"]
    pure, top = ways["pure"], ways["top-p"]
    loop = greedy["loop"]
    cycle = model.tokenizer.decode(loop["cycle"]) if loop else ""
    prose.section("Why top-p: greedy decoding loops, pure sampling wanders", "full_model", "why_top_p",
                  n=LENGTH, prompt=code_span(PROMPT), seeds=len(SEEDS), p=P,
                  looped=prose.text("full_model", "greedy_loop", start=loop["start"], cycle=code_span(mv.shown(cycle)),
                                    period=loop["period"], window=model.cfg.max_len)
                  if loop else prose.text("full_model", "greedy_no_loop"),
                  tail=float(np.mean(pure["tail"])), low=min(pure["tail_probs"]) if pure["tail_probs"] else 0.0,
                  top_tail=float(np.mean(top["tail"])))
    if f["words"]:
        st.markdown(prose.text("full_model", "why_top_p_words", known_pure=float(np.nanmean(pure["known"])),
                               known_top=float(np.nanmean(top["known"])), known_greedy=greedy["known"][0]))
    table = {"way": list(ways),
             "draws from the tail (mean per text)": [float(np.mean(w["tail"])) for w in ways.values()],
             "real words": [float(np.nanmean(w["known"])) if f["words"] else float("nan") for w in ways.values()],
             "ends in a loop": ["yes" if w["loop"] else "no" for w in ways.values()]}
    views.number_table(table, "%.2f", columns=list(table)[1:3])
    for (way, w), column in zip(ways.items(), st.columns(len(ways))):
        with column:
            st.markdown(f"**{way}**")
            st.code(w["texts"][0], language=None, wrap_lines=True)  # plain: the page's own generation is "text"

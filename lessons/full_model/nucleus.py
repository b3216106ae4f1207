"""The next-character bars with top-p: which characters are in the nucleus, which are cut, and a caption
with the nucleus's size and mass. core.sampling decides which characters are in; this only counts them."""

from __future__ import annotations

import numpy as np

from core.sampling import probs_from_logits
from ui.compute.model_store import Model
from ui.drawing import alt_text, plots, render
from ui.drawing.chart_data import ChartData
from ui.frame import prose
from ui.sections import model_views as mv
from ui.text import code_span

IN, CUT = "in the nucleus (sampled from)", "cut by top-p"
GROUPS = ((IN, plots.BAR_FILL), (CUT, "#808080"))  # grey: 3.2:1 on the bar's track, 3.9:1 on white, 4.8:1 on dark


def read(model: Model, ids: tuple, temperature: float, top_k: int, top_p: float) -> dict:
    """The side's probabilities before the top-p cut (temperature and top-k applied) and after it: (V,) each.
    The nucleus is where `after` is above 0 (core.sampling.nucleus keeps the rest at exactly 0)."""
    logits = mv.read_prompt(model.source, ids)["logits"]
    before = probs_from_logits(logits, temperature, top_k or None)  # (V,)
    after = probs_from_logits(logits, temperature, top_k or None, top_p)  # (V,) renormalised over the nucleus
    inside = after > 0
    return {"before": before, "after": after, "inside": inside, "n": int(inside.sum()),
            "mass": float(before[inside].sum())}


def drawn(seen: dict) -> np.ndarray:
    """The ids of the bars: the most likely characters before the cut, most likely first, none of probability 0."""
    before = seen["before"]
    order = np.argsort(-before, kind="stable")[:mv.TOP_BARS]
    return order[before[order] > 0]


def frame(seen: dict, tokenizer) -> ChartData:
    """The most likely characters before the cut (as mv.bars draws them), each marked in or out of the nucleus."""
    before, order = seen["before"], drawn(seen)
    labels = [mv.shown(tokenizer.itos[i]) + (" (unknown)" if i == 0 else "") for i in order]
    data = plots.bar_frame(labels, before[order])
    data.columns["group"] = [IN if seen["inside"][i] else CUT for i in order]
    return data


def bars(seen: dict, tokenizer, title: str, said_title: str | None = None) -> ChartData:
    """The bars of what top-p kept and cut, titled `title` (said_title: its words no control changes, render.show)."""
    data = frame(seen, tokenizer)
    # for the export panel: each bar's probability, and 1 where it is in the nucleus
    order = drawn(seen)
    numbers = np.column_stack([seen["before"][order], seen["inside"][order]]).astype(float)  # (bars, 2)
    render.show(plots.bar_chart, data, width="stretch", title=title, y_title="next character", groups=GROUPS,
                description=alt_text.likeliest(data, said_title or title, title_read=said_title is not None,
                                               groups=tuple(name for name, _ in GROUPS)),
                said_title=said_title,
                record=render.Recorded(numbers, data.columns["label"], ["probability", "in the nucleus (1 = yes)"]))
    return data


def caption(seen: dict, tokenizer, top_p: float, n_bars: int) -> str:
    """What top-p did to this side's distribution: the nucleus's size and mass, and the top character's
    probability before and after the renormalisation; how many of the bars are grey (cut), or that the nucleus
    is longer than the bars (then none is)."""
    top = int(np.argmax(seen["after"]))
    cut = int((~seen["inside"][drawn(seen)]).sum())  # the grey bars: drawn, outside the nucleus
    more = (prose.text("full_model", "nucleus_more", drawn=n_bars) if seen["n"] > n_bars else
            prose.text("full_model", "nucleus_cut", cut=cut, bars="bar is" if cut == 1 else "bars are") if cut
            else "")
    return prose.text("full_model", "nucleus", p=top_p, n=seen["n"], V=len(seen["before"]), mass=seen["mass"],
                      top=code_span(mv.shown(tokenizer.itos[top])), top_before=seen["before"][top],
                      top_after=seen["after"][top]) + (" " + more if more else "")

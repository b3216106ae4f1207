"""The four ways a causal mask goes wrong, each drawn beside what it does: masking after the softmax, a row with
nothing left to see (and -1e9 against -inf), multiplying the scores by the mask, and np.triu(...) * -inf. The
Technical level's sections of the masking lesson."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.drawing import charts, plots, render
from ui.frame import prose
from ui.sections import views
from ui.sections.views import beside, heatmaps, numbers_text, weights_map
from ui.text import counted, shape_caption

OPEN_KEY = "masking_mistakes"  # in the link while the mistakes are open: ?masking_mistakes=true
# The aside's label, quoted by the lesson's "What to notice" (lessons/masking/prose.md): the four mistakes and the
# trade-off between a finite fill and −∞, which is not a mistake but a choice
TITLE = "Masking mistakes, and −1e9 against −∞"
FILLS = {"fill value": "value", "in float32": "float32", "in float16": "float16"}  # table column: fill_in_float16 key
MAX_MASK_CELLS = 8  # rows and columns of the additive masks printed as tables
MASK_TEXT = {-np.inf: "−∞", 0.0: "0"}  # how a mask's cells read; NaN reads "NaN" (views.number)
TRIU_FORMS = ("**Broken:** `np.triu(np.ones((T, T)), k=1) * -np.inf`",
              "**Right:** `np.triu(np.full((T, T), -np.inf), k=1)`")


def sections(a: dict, tokens: list[str]) -> None:
    """The four mistakes, in order, from the lesson's computations (lessons.masking.maths.masking_view)."""
    after_softmax_section(a["after_softmax"], tokens)
    fully_masked_section(a["fully_masked"], a["fills"], a["causal_fill_difference"], tokens)
    multiplied_section(a["multiplied"], tokens)
    triu_inf_section(a["triu_inf"], tokens)


def after_softmax_section(after: dict, tokens: list[str]) -> None:
    prose.section("Mistake 1: masking after the softmax", "masking", "after_softmax")
    with beside(weights_map(after["wrong"], tokens, "wrong: softmax, then mask", "masking_after",
                            "softmax(scores) * mask")):
        render.show(plots.bar_chart, plots.bar_frame(tokens, after["row_sums"]), width="stretch",
                    title="row sums after masking late", x_title="row sum (should be 1)", y_title="query")
        shape_caption("row sums", after["row_sums"], "(T,)")
    st.caption(prose.text("masking", "row_sums", sums=numbers_text(after["row_sums"], 8, ".3f")))


def fully_masked_section(fm: dict, fills: dict, causal_diff: float, tokens: list[str]) -> None:
    prose.section("Mistake 2: a row with nothing left to see", "masking", "empty_row")
    heatmaps(weights_map(fm["naive"], tokens, "naive softmax: row 0 is NaN", "masking_naive"),
             weights_map(fm["ours"], tokens, "guarded softmax: row 0 is 0", "masking_ours"))
    prose.show("masking", "empty_row_values", row=numbers_text(fm["naive"][0]))
    prose.section("−1e9 or −∞: a trade-off", "masking", "big_negative", causal_diff=causal_diff,
                  row=numbers_text(fm["big_negative"][0], spec=".3f"), T=len(tokens))
    with beside(weights_map(fm["big_negative"], tokens, "fill −1e9: row 0 leaks", "masking_big")):
        fill_table = {name: [views.number(x) for x in fills[key]] for name, key in FILLS.items()}
        views.number_table(fill_table, columns=[])
        prose.show("masking", "float16", row=numbers_text(fm["big_negative_f16"][0]))


def multiplied_section(mul: dict, tokens: list[str]) -> None:
    prose.section("Mistake 3: multiplying the scores by the mask", "masking", "multiply")
    with beside(weights_map(mul["wrong"], tokens, "wrong: softmax(scores × mask)", "masking_multiplied",
                            shape="(T, T), future scores 0 instead of −∞")):
        render.show(plots.bar_chart, plots.bar_frame(tokens, mul["leaked"]), width="stretch", domain=(0.0, 1.0),
                    title="weight on future keys", x_title="weight leaked (should be 0)", y_title="query")
        shape_caption("leaked", mul["leaked"], "(T,)")
    leaked = mul["leaked"]
    st.caption(prose.text("masking", "multiply_values", row0=leaked[0], future=counted(len(tokens) - 1, "key"),
                          mean=leaked.mean(), right=float(mul["right_leaked"].max())))


def triu_inf_section(tri: dict, tokens: list[str]) -> None:
    prose.section("Mistake 4: building the mask as np.triu(…) * −∞", "masking", "triu_inf")
    shown = min(len(tokens), MAX_MASK_CELLS)
    labels = charts.unique_labels(tokens)[:shown]
    for place, name, label in zip(st.columns(2), ("broken", "right"), TRIU_FORMS):
        cells = tri[name][:shown, :shown]
        table = {"query ↓ key →": labels, **{key: [MASK_TEXT.get(x, views.number(x)) for x in cells[:, j]]
                                            for j, key in enumerate(labels)}}
        place.markdown(label)
        with place:
            views.number_table(table, columns=[])
    cut = f" The tables show the first {shown} rows and columns of {len(tokens)}." if shown < len(tokens) else ""
    nan = f"all {tri['nan_rows']} of the {len(tokens)} rows" if len(tokens) > 1 else "its one row"
    prose.show("masking", "triu_inf_values", nan=nan, cut=cut,
               row=numbers_text(tri["naive"][0]), guarded_nan=tri["guarded_nan"], cells=len(tokens) ** 2,
               right=numbers_text(tri["right_weights"][0]))

"""The head view: one layer's attention on the prompt drawn as lines, each character on the left (a query)
joined to the characters it reads on the right (keys), one colour and dash per head, width and opacity by
weight. Its controls, the layer and a switch per head, are bound to the link.

One Vega-Lite chart: rule marks between two columns of text marks, its design built once per shape
(ui.drawing.render) and its numbers sent as one (heads, T, T) grid of every head (ui.drawing.chart_data). The
head switches are the chart's own check boxes (ui.state.chart_controls): a click shows or hides a head's lines in the
browser at once, and the server then rewrites the caption and the link.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from ui.compute.model_store import Model
from ui.drawing import alt_text, colours, render
from ui.drawing.chart_data import ChartData, numbers
from ui.drawing.charts import FONT, LABEL_PX, px, themed
from ui.frame import prose
from ui.sections import model_views as mv
from ui.state import chart_controls, controls, presenter
from ui.text import code_span

MAX_POSITIONS = 32  # the last 32 characters: more rows than that no longer fit a screen
MIN_WEIGHT = 0.01  # lines for weights below 1% are not drawn: they would be invisible anyway
ROW_PX, WIDTH_PX, LABEL_ROOM_PX = 22, 420, 80
# One colour per head, each at least 3:1 against both the light (#ffffff) and the dark (#0e1117) background,
# and a dash pattern per head as well, for readers who cannot tell the colours apart.
HEAD_COLOURS = ("#4c78a8", "#e6550d", "#54a24b", "#b279a2", "#9d755d", "#7f7f7f", "#d6616b", "#3182bd")
HEAD_DASHES = ((1, 0), (6, 3), (2, 2), (8, 3, 2, 3), (12, 4), (4, 4), (1, 3), (10, 2, 2, 2))


def head_name(h: int) -> str:
    return f"head {h + 1}"


def switch_key(h: int) -> str:
    """Head h's switch: its key in the link and the name of its parameter in the chart."""
    return f"fm_hv_head{h + 1}"


def head_view_chart(n_positions: int, shown: tuple[bool, ...], title: str = "", font_scale: float = 1.0,
                    data: pd.DataFrame | None = None) -> alt.Chart:
    """Lines from queries (left) to keys (right), from a grid frame of every head with columns value, head, q, k
    and their indices head_i, q_i, k_i (see frame()). shown: each head's switch as the chart starts (a check box
    under it, which shows or hides that head's lines in the browser)."""
    n_heads = len(shown)
    width, room = px(WIDTH_PX, font_scale), px(LABEL_ROOM_PX, font_scale)
    left, right = room, width - room
    names = [head_name(h) for h in range(n_heads)]
    legend = alt.Legend(orient="top", title=None, labelFontSize=px(LABEL_PX, font_scale),
                        symbolStrokeWidth=px(3, font_scale), symbolSize=px(300, font_scale))
    scale = alt.Scale(domain=[-0.5, n_positions - 0.5], reverse=True)
    # One point selection per head, bound to a check box: its one field `on` is what the box says. A line is drawn
    # while its head's selection holds the line's own `on` (always true).
    switches = [alt.selection_point(name=switch_key(h), fields=["on"], value=[{"on": bool(shown[h])}],
                                    bind=alt.binding_checkbox(name=head_name(h))) for h in range(n_heads)]
    switched_on = {"or": [{"and": [{"field": "head_i", "equal": h}, {"param": switch_key(h)}]}
                          for h in range(n_heads)]}
    base = alt.Chart(data if data is not None else pd.DataFrame())
    lines = base.mark_rule().encode(
        x=alt.value(left), x2=alt.value(right),
        y=alt.Y("q_i:Q", axis=None, scale=scale), y2=alt.Y2("k_i"),
        color=alt.Color("head:N", scale=alt.Scale(domain=names, range=[HEAD_COLOURS[h % 8] for h in range(n_heads)]),
                        legend=legend),
        strokeDash=alt.StrokeDash("head:N", scale=alt.Scale(domain=names, range=[list(HEAD_DASHES[h % 8])
                                                                                for h in range(n_heads)]),
                                  legend=legend),
        size=alt.Size("value:Q", scale=alt.Scale(domain=[0, 1], range=[0.5, px(4, font_scale)]), legend=None),
        opacity=alt.Opacity("value:Q", scale=alt.Scale(domain=[0, 1], range=[0.15, 0.9]), legend=None),
        tooltip=[alt.Tooltip("head:N"), alt.Tooltip("q:N", title="query (reads)"),
                 alt.Tooltip("k:N", title="key (is read)"), alt.Tooltip("value:Q", title="weight", format=".3f")],
    ).transform_filter(alt.datum.value >= MIN_WEIGHT).transform_calculate(on="true").transform_filter(switched_on)
    text = dict(baseline="middle", font=FONT, fontSize=px(LABEL_PX + 2, font_scale), color=colours.subtitle_colour())
    # one label per row: the first head's row of key 0 (every query has it), its column of query 0 (every key)
    queries = base.mark_text(align="right", dx=-8, **text).encode(
        x=alt.value(left), y=alt.Y("q_i:Q", axis=None, scale=scale), text="q:N",
    ).transform_filter((alt.datum.head_i == 0) & (alt.datum.k_i == 0))
    keys = base.mark_text(align="left", dx=8, **text).encode(
        x=alt.value(right), y=alt.Y("k_i:Q", axis=None, scale=scale), text="k:N",
    ).transform_filter((alt.datum.head_i == 0) & (alt.datum.q_i == 0))
    # Vega lists the check boxes last parameter first: given last head first, they read head 1, head 2, ...
    lines = lines.add_params(*reversed(switches))
    chart = themed(alt.layer(lines, queries, keys).properties(width=width, height=px(ROW_PX, font_scale) * n_positions)
                   ).configure_view(strokeWidth=0).properties(autosize=alt.AutoSizeParams(type="pad"))
    # "pad": the plot keeps its size and the title and legend add to it (Streamlit would fit all of it in)
    return chart.properties(title=title) if title else chart


def frame(weights: np.ndarray, labels: list[str]) -> ChartData:
    """weights (H, T, T) of one layer -> the grid of every head, (H, T, T), one row per line (the chart's switches
    decide which heads' lines are drawn)."""
    H, _, T = np.shape(weights)
    return ChartData({"value": numbers(weights)}, {"head": [head_name(h) for h in range(H)], "q": labels, "k": labels},
                     grid=(("head_i", H), ("q_i", T), ("k_i", T)))


def recorded(weights: np.ndarray, heads: tuple[int, ...], labels: list[str]) -> render.Recorded:
    """The drawn heads' maps for the export panel, one under another: (len(heads) * T, T), each row named by its
    head and its query character ("head 1 · a"), a column per key character."""
    drawn = np.asarray(weights)[list(heads)]  # (heads drawn, T, T)
    rows = [f"{head_name(h)} · {label}" for h in heads for label in labels]
    return render.Recorded(drawn.reshape(-1, drawn.shape[-1]), rows, list(labels))


def strongest(weights: np.ndarray, heads: tuple[int, ...], labels: list[str]) -> list[tuple[str, str, float]]:
    """For the last query, each drawn head's heaviest key: (head, key label, weight)."""
    return [(head_name(h), labels[int(np.argmax(weights[h, -1]))], float(np.max(weights[h, -1]))) for h in heads]


# What the chart is, the same whatever its switches say and whatever the prompt: a text that changed would make the
# browser build the chart again, its switches back at their first values. Its numbers are in the caption under it.
DESCRIPTION = (f"Head view for the chosen layer: lines from each character of the prompt (queries, left) to itself and "
               f"each earlier character it reads (keys, right), thicker and darker for a heavier weight, none below "
               f"{MIN_WEIGHT:g}. Check boxes after the chart, one per head, show or hide that head's lines. The "
               f"caption under the chart says where the heaviest line of each shown head goes from the last "
               f"character.")


def layer_control(n_layers: int) -> int:
    """The layer (fm_hv_layer, bound to the link), 0-based."""
    layer = controls.option("fm_hv_layer", "Layer", [f"layer {i + 1}" for i in range(n_layers)], container=st,
                            horizontal=True)
    return int(layer.split()[-1]) - 1


def head_view_section(model: Model, ids: tuple, weights: np.ndarray) -> None:
    """weights (L, H, T, T): every layer's maps on the prompt, as read_prompt returns them."""
    prose.section("Head view: who reads whom", "full_model", "head_view", min=MIN_WEIGHT)
    layer = layer_control(weights.shape[0])
    w = weights[layer][..., -MAX_POSITIONS:, -MAX_POSITIONS:]  # (H, T', T')
    H, T = w.shape[0], w.shape[-1]
    labels = [mv.shown(c) for c in model.tokenizer.decode(ids[-T:])]
    look = dict(n_positions=T, title=f"Layer {layer + 1}: each character (left) and what it reads (right)",
                subtitle=f"weights · shape {tuple(w.shape)} = (H, T, T), each head switched below",
                font_scale=presenter.chart_scale())
    switched = chart_controls.values("fm_hv", [chart_controls.switch(switch_key(h)) for h in range(H)],
                                     tuple(sorted(look.items())))
    controls.show_url_notes()
    heads = tuple(h for h in range(H) if switched.now[h])
    data = frame(w, labels)
    render.show(head_view_chart, data, key=switched.key, on_select="rerun",
                selection_mode=tuple(switch_key(h) for h in range(H)), width="content",
                description=alt_text.finished(DESCRIPTION), shown=switched.first, **look)
    if heads:
        render.record_file(head_view_chart, data, recorded(w, heads, labels),
                           alt_text.finished(DESCRIPTION), shown=switched.now, **look)
    else:
        st.info(prose.text("full_model", "head_view_none"))
        return
    cut = (" " + prose.text("full_model", "head_view_cut", drawn=T, T=len(ids)) if T < len(ids) else "")
    looks = "; ".join(f"{head} → {code_span(key)} ({weight:.2f})" for head, key, weight in strongest(w, heads, labels))
    st.caption(prose.text("full_model", "head_view_last", last=code_span(labels[-1]), looks=looks) + cut)

"""Bar and line chart builders: arrays in, alt.Chart out, designed once per setting like the heatmaps
in ui.drawing.charts (the spec never depends on the numbers, so ui.drawing.render caches it and sends only the data).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import pandas as pd

from ui.drawing import colours
from ui.drawing.chart_data import ChartData, numbers
from ui.drawing.charts import FONT, LABEL_PX, TITLE_PX, px, themed, unique_labels

BAR_FILL, BAR_TRACK = "#3b528b", "#e8e8e8"
HEADROOM = 1.2  # the value axis reaches a little past the longest bar, to leave room for its number
# Reference lines across a bar chart: Okabe-Ito's vermillion and bluish green, each at least 3:1 against the light
# and the dark theme's background, and dashed apart for a greyscale reader.
REFERENCE_COLOURS = ("#d55e00", "#009e73")
REFERENCE_DASHES = ((8, 4), (2, 3))
_FRACTION = "datum.value % 1 != 0"
# An axis of whole numbers (positions, steps, counts). tickMinStep alone does not do it: Vega asks for fewer
# ticks, but its tick maker still steps by 0.5 on a short axis (0 to 2 in three ticks), and "d" then prints
# 0, 1, 1, 2, 2. So a tick between two whole numbers is drawn with no label, no tick mark and no grid line.
WHOLE_TICKS = {"format": "d", "tickMinStep": 1, "labelExpr": f"{_FRACTION} ? '' : datum.label",
               "tickOpacity": {"condition": {"test": _FRACTION, "value": 0}, "value": 1},
               "gridOpacity": {"condition": {"test": _FRACTION, "value": 0}, "value": 1}}


def bar_chart(title: str = "", x_title: str = "probability", y_title: str = "token",
              domain: tuple[float, float] | None = None, font_scale: float = 1.0,
              groups: tuple[tuple[str, str], ...] = (), number_format: str = ".3f",
              references: tuple[str, ...] = (), data: pd.DataFrame | None = None) -> alt.Chart:
    """Horizontal bars from a frame with columns label, value (and order, to keep the given order).
    groups, (name, colour) pairs: each bar takes the colour of its `group` column, named in a legend.
    number_format: how each bar's number is printed (d3-format: ".3f" probabilities, "d" counts).
    references: the names of up to two vertical reference lines (a baseline the bars are measured against), named
    in a legend; their values are the frame's columns ref_0 and ref_1, the same on every row (bar_frame's
    references). Not with groups: the two legends would share one colour scale.

    Without a domain the value axis ends a little past the longest bar. Each bar lies on a light track
    as wide as the plot, and its number is printed in black at the track's right end: it reads the
    same in the light and the dark theme and is never cut off.
    """
    fonts = dict(labelFontSize=px(LABEL_PX, font_scale), titleFontSize=px(TITLE_PX, font_scale))
    x_scale = alt.Scale(domain=list(domain)) if domain else alt.Scale(zero=True, nice=False)
    base = alt.Chart(data if data is not None else pd.DataFrame()).encode(
        # labelLimit: a bar's name whole up to its limit (a quiz item's start, "0.25 to under 0.285"), where the
        # default cut them at about 11 characters on a projector
        y=alt.Y("label:N", sort=alt.EncodingSortField("order"), title=y_title,
                axis=alt.Axis(labelOverlap=False, labelLimit=px(260, font_scale), **fonts)),
        tooltip=[alt.Tooltip("label:N", title=y_title), alt.Tooltip("value:Q", format=".4f", title=x_title)],
    )
    # bars of counts ("d") tick whole numbers only: a count of 3 is never split at 0.5, 1.5, 2.5
    whole = WHOLE_TICKS if number_format.endswith("d") else {}
    x = alt.X("value:Q", title=x_title, scale=x_scale, axis=alt.Axis(tickCount=5, **whole, **fonts))
    # The track and the invisible mark are drawing aids, hidden from screen readers (aria=False).
    track = base.mark_bar(color=BAR_TRACK, aria=False).encode(x=alt.value(0), x2=alt.value("width"))
    bars = base.mark_bar(color=BAR_FILL).encode(x=x)
    if groups:
        names, fills = [g[0] for g in groups], [g[1] for g in groups]
        # stack=None: a colour would otherwise stack the bars, and the stacked layer loses the bars' order
        bars = bars.encode(x=alt.X("value:Q", title=x_title, scale=x_scale, stack=None,
                                   axis=alt.Axis(tickCount=5, **whole, **fonts)),
                           color=alt.Color("group:N", title=None, scale=alt.Scale(domain=names, range=fills),
                                           legend=alt.Legend(orient="bottom", labelFontSize=fonts["labelFontSize"],
                                                             labelLimit=px(320, font_scale))))
    layers = [track, bars, *_reference_rules(alt.Chart(base.data), references, x_scale, x_title, font_scale)]
    if groups and references:
        raise ValueError("A bar chart takes groups or reference lines, not both.")
    if not domain:  # an invisible mark past the longest bar (or line) stretches the axis to it
        layers.append(base.mark_point(opacity=0, aria=False).encode(x=alt.X("room:Q", scale=x_scale)))
    text = base.mark_text(align="right", dx=-4, font=FONT, color=colours.DARK_TEXT, fontSize=px(LABEL_PX, font_scale)
                          ).encode(x=alt.value("width"), text=alt.Text("value:Q", format=number_format))
    layers.append(text)
    step = px(20, font_scale)
    # one transform for all layers, so they share one data source and the bars keep the frame's order
    longest = f"max({', '.join(['datum.value'] + [f'datum.ref_{i}' for i in range(len(references))])})"
    chart = themed(alt.layer(*layers).transform_calculate(room=f"{longest} * {HEADROOM}").properties(
        width="container", height=alt.Step(step)))
    return chart.properties(title=title) if title else chart


def _reference_rules(plain, references: tuple[str, ...], x_scale, x_title: str, font_scale: float) -> list:
    """One vertical line across the plot per reference (drawn once: from the first row; no y encoding, so it spans
    every bar), coloured and dashed by name, with a legend; a line is a drawing aid (aria=False): the chart's
    description names them. plain: a chart of the bars' data with no encoding."""
    if len(references) > len(REFERENCE_COLOURS):
        raise ValueError(f"A bar chart draws at most {len(REFERENCE_COLOURS)} reference lines.")
    names, n = list(references), len(references)
    legend = alt.Legend(orient="bottom", title=None, labelFontSize=px(LABEL_PX, font_scale),
                        labelLimit=px(320, font_scale), symbolStrokeWidth=2)
    colour = alt.Scale(domain=names, range=list(REFERENCE_COLOURS[:n]))
    dashes = alt.Scale(domain=names, range=[list(d) for d in REFERENCE_DASHES[:n]])
    return [plain.transform_filter("datum.order == 0").transform_calculate(reference=json.dumps(name)).mark_rule(
        strokeWidth=2, aria=False).encode(
        x=alt.X(f"ref_{i}:Q", scale=x_scale, title=x_title),
        color=alt.Color("reference:N", scale=colour, legend=legend),
        strokeDash=alt.StrokeDash("reference:N", scale=dashes, legend=legend),
        tooltip=[alt.Tooltip("reference:N", title="line"), alt.Tooltip(f"ref_{i}:Q", format=".4f", title=x_title)])
        for i, name in enumerate(names)]


def bar_frame(labels: Sequence[str], values, references: Sequence[float] = ()) -> ChartData:
    """One bar per label, in the given order; references: the values of bar_chart's reference lines, in its order."""
    values = numbers(values)
    columns = {"label": unique_labels(list(labels)), "value": values, "order": list(range(len(values)))}
    columns.update({f"ref_{i}": numbers([ref] * len(values)) for i, ref in enumerate(references)})
    return ChartData(columns)


def line_chart(x_title: str, y_title: str, title: str = "", log_x: bool = False, log_y: bool = False,
               whole_x: bool = False, font_scale: float = 1.0, data: pd.DataFrame | None = None) -> alt.Chart:
    """Lines from a tidy frame with columns x, y, series (one line per series, colour-blind-safe palette).

    whole_x marks an x axis of whole numbers (positions, steps, units): whole-number ticks only.
    A log axis writes its numbers in one notation, never "1e+13" beside "100,000,000,000": SI prefixes on
    a log y axis (1k, 1M, 1G), whole numbers on a log x axis (1, 2, ..., 1,024, ..., 1,048,576).
    """
    fonts = dict(labelFontSize=px(LABEL_PX, font_scale), titleFontSize=px(TITLE_PX, font_scale))
    x_scale = alt.Scale(type="log", base=2) if log_x else alt.Scale(zero=False)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    # a log x axis counts things (d_k, tokens) at powers of 2: whole numbers with separators, 1,024 not 1.024k
    # whole_x: x counts positions, so a short axis gets ticks 0, 1, 2 rather than 0.00, 0.05, ...
    x_axis = alt.Axis(format=",d", **fonts) if log_x else alt.Axis(
        **fonts, **(WHOLE_TICKS if whole_x else {}))
    y_axis = alt.Axis(format="~s", **fonts) if log_y else alt.Axis(**fonts)
    legend = alt.Legend(labelFontSize=px(LABEL_PX, font_scale), labelLimit=px(240, font_scale),
                        symbolSize=px(100, font_scale ** 2))
    # A line as a whole has no text of its own (Vega would expose it as an image with no name): aria=False
    # hides it; its points keep their values, and the chart's description says what the lines show.
    chart = alt.Chart(data if data is not None else pd.DataFrame()).mark_line(point=True, aria=False).encode(
        x=alt.X("x:Q", title=x_title, scale=x_scale, axis=x_axis),
        y=alt.Y("y:Q", title=y_title, scale=y_scale, axis=y_axis),
        color=alt.Color("series:N", title=None, scale=alt.Scale(scheme="tableau10"), legend=legend),
        # line style too, for greyscale readers; legend=None here would hide the merged colour legend as well
        strokeDash=alt.StrokeDash("series:N", title=None, legend=legend),
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("x:Q", title=x_title),
                 alt.Tooltip("y:Q", title=y_title, format=".4f")],
    ).properties(width="container", height=px(280, font_scale))
    chart = themed(chart)
    return chart.properties(title=title) if title else chart


def line_frame(x, series: dict[str, Sequence[float]]) -> ChartData:
    """{name: ys} over a shared x -> tidy table (x, y, series), one line after another."""
    xs = numbers(x)
    return ChartData({"x": xs * len(series), "y": [y for ys in series.values() for y in numbers(ys)],
                      "series": [name for name in series for _ in xs]})

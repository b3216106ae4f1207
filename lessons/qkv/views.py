"""What only the QKV lesson draws: two arrows in the plane, the vectors whose dot product the student turns.

The chart is designed once (ui.drawing.render caches its spec) and each rerun sends only the arrows' ends.
"""

from __future__ import annotations

from math import atan2, cos, degrees, sin

import altair as alt
import pandas as pd

from ui.drawing import alt_text, render
from ui.drawing.chart_data import ChartData, numbers
from ui.drawing.charts import FONT, LABEL_PX, TITLE_PX, px, themed
from ui.drawing.colours import subtitle_colour

# Okabe and Ito's blue and vermillion: told apart with every common colour-vision deficiency, and each at
# least 3:1 against both the light and the dark theme's background (5.2 and 3.6; 3.9 and 4.9), as WCAG asks
# of lines that carry meaning. b is also dashed, for a reader in greyscale.
ARROW_COLOURS = {"a": "#0072b2", "b": "#d55e00"}
# X's rows, (T, d_model) with d_model up to 64: wider than a map beside another, so that a few dozen columns
# keep cells large enough to read
EMBEDDINGS_ROOM_PX = 700
REACH = 2.4  # the axes run from -REACH to REACH: room for the longest arrow (2) and its label
LABEL_OUT = 0.32  # a label sits this far (in the axes' units) past its arrow's tip, along the arrow


def arrows_frame(a, b) -> ChartData:
    """The two arrows, a and b (2,) each, as rows: name, the tip (x, y), the label's place, and the turn that
    points the tip's triangle along the arrow (Vega turns a shape clockwise from pointing up)."""
    xs, ys = [float(a[0]), float(b[0])], [float(a[1]), float(b[1])]
    directions = [atan2(y, x) for x, y in zip(xs, ys)]
    return ChartData({"name": ["a", "b"], "x": numbers(xs), "y": numbers(ys),
                      "turn": numbers([90.0 - degrees(d) for d in directions]),
                      "lx": numbers([x + LABEL_OUT * cos(d) for x, d in zip(xs, directions)]),
                      "ly": numbers([y + LABEL_OUT * sin(d) for y, d in zip(ys, directions)])})


def arrows_chart(font_scale: float = 1.0, data: pd.DataFrame | None = None) -> alt.Chart:
    """Two arrows from the origin on square axes from -REACH to REACH, each in its colour and named at its tip."""
    size = px(260, font_scale)
    fonts = dict(labelFontSize=px(LABEL_PX, font_scale), titleFontSize=px(TITLE_PX, font_scale))
    scale = alt.Scale(domain=[-REACH, REACH], nice=False)
    colour = alt.Color("name:N", scale=alt.Scale(domain=list(ARROW_COLOURS), range=list(ARROW_COLOURS.values())),
                       legend=None)
    tooltip = [alt.Tooltip("name:N", title="vector"), alt.Tooltip("x:Q", format=".3f"),
               alt.Tooltip("y:Q", format=".3f")]
    plain = alt.Chart(data if data is not None else pd.DataFrame())  # one data for every layer, sent once
    base = plain.encode(color=colour, tooltip=tooltip)
    axis = alt.Axis(tickCount=5, grid=True, **fonts)  # the grid shows a right angle as one
    x, y = alt.X("x:Q", scale=scale, title="x", axis=axis), alt.Y("y:Q", scale=scale, title="y", axis=axis)
    shaft = base.mark_rule(strokeWidth=px(3, font_scale)).encode(
        x=alt.X("zero:Q", scale=scale, title="x"), y=alt.Y("zero:Q", scale=scale, title="y"), x2="x:Q", y2="y:Q",
        strokeDash=alt.StrokeDash("name:N", scale=alt.Scale(domain=["a", "b"], range=[[1, 0], [6, 3]]),
                                  legend=None))
    tip = base.mark_point(shape="triangle", filled=True, opacity=1, size=px(160, font_scale ** 2)).encode(
        x=x, y=y, angle=alt.Angle("turn:Q", scale=None))
    # bold type of 20 px counts as large text, for which 3:1 is enough: both colours have it on both themes
    label = base.mark_text(font=FONT, fontSize=px(20, font_scale), fontWeight="bold").encode(
        x=alt.X("lx:Q", scale=scale), y=alt.Y("ly:Q", scale=scale), text="name:N")
    origin = plain.mark_point(filled=True, size=px(30, font_scale ** 2), color=subtitle_colour(),
                                    aria=False).encode(x=alt.datum(0, scale=scale), y=alt.datum(0, scale=scale))
    # autosize "pad": width and height are the plot's own, so one unit is as long across as up and the angles
    # are drawn true ("fit", the default, squeezes the plot by the title and axes, more in height than width)
    chart = alt.layer(origin, shaft, tip, label).transform_calculate(zero="0").properties(
        width=size, height=size, autosize=alt.AutoSizeParams(type="pad", contains="padding"))
    return themed(chart)


# The arrows' text for screen readers: what the chart is, never where the arrows point (a slider move that changed
# it would have the browser draw the chart anew instead of moving its arrows: ui.drawing.alt_text). Their ends are
# in its table, and its title, with their dot product, in the table's column "title".
ARROWS_DESCRIPTION = (f"Two arrows from the origin on square axes, x and y each from -{REACH:g} to {REACH:g}: a, solid "
                      "and blue; b, dashed and orange-red; each named just past its tip. The four sliders before the "
                      "chart set each arrow's direction and length.")
# The title's words: the whole title, with the dot product, is read from the chart's table. A speech engine may
# not say "·": the words say it too.
SAID_TITLE = "a · b (the dot product of a and b)"


def draw_arrows(g: dict, title: str) -> None:
    """The arrows of lessons.qkv.maths.two_arrows's result g, titled `title` (which carries their dot product)."""
    render.show(arrows_chart, arrows_frame(g["a"], g["b"]), width="content", title=title, said_title=SAID_TITLE,
                description=alt_text.finished(f"Vector plot, {SAID_TITLE}. {ARROWS_DESCRIPTION}", title_read=True))



"""A map of attention weights that the browser works out from their scores: softmax(score / τ) along each row, with
τ a slider the chart draws under itself. A move of that slider recolours and renumbers the map already drawn, as
the slider is dragged, with no round trip to the server; the chart then reports τ (ui.state.chart_controls) and the
server's rerun writes what changed in words. The design and the scores stay the same whatever τ is, so the browser
never builds the chart again for it.

The formula is the one core.sampling.probs_from_logits computes, written as Vega-Lite transforms: each row's
largest score is taken away before the division (so a tiny τ gives a one-hot row, split between tied scores, not
an overflow), and τ = 0 puts the whole row's weight on its first largest score. A score that is not a number (a
masked one) gets no weight. The server's own weights, for the page's words and the export panel's files, come from
core (weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import numpy as np

from core.sampling import probs_from_logits
from ui.drawing.chart_data import ChartData, number_array

WEIGHT = "weight"  # the column of the weights at the τ the server last heard, beside the scores (with_weights)
FIELD = "level"  # the one field of the slider's point selection (ui.state.chart_controls.number)
DECIMALS = 2  # each weight printed with two decimals, as the server prints a map's numbers (charts.heatmap_frame)
PRINTED = DECIMALS + 2  # the widest weight printed, "0.25": the map is sized for it (ui.drawing.heatmap)


@dataclass(frozen=True)
class Temperature:
    """The slider under a map drawn from scores: `key` is its key in the link and its parameter's name."""

    key: str
    label: str
    lo: float = 0.0
    hi: float = 3.0
    step: float = 0.05
    default: float = 1.0


def frame(scores, row_labels: list[str], col_labels: list[str]) -> ChartData:
    """(R, C) scores -> one row per cell with its `score`, as a heatmap's frame (charts.heatmap_frame) but for the
    column's name. Sent whole, not rounded to a tooltip's digits as a map's values are: divided by a small τ, a
    score's last digits decide which key takes the weight. Not a number where a score is not finite."""
    m = np.asarray(scores, dtype=np.float64)
    R, C = m.shape
    if len(row_labels) != R or len(col_labels) != C:
        raise ValueError(f"{R} x {C} scores but {len(row_labels)} row labels and {len(col_labels)} column labels.")
    return ChartData({"score": np.where(np.isfinite(m), m, np.nan).ravel()}, {"row": row_labels, "col": col_labels},
                     grid=(("row_i", R), ("col_i", C)))


def slider(t: Temperature) -> alt.SelectionParameter:
    """τ's slider: a point selection bound to a range input (a click on the map does not move it)."""
    return alt.selection_point(name=t.key, fields=[FIELD], value=[{FIELD: t.default}], clear=False,
                               bind=alt.binding_range(min=t.lo, max=t.hi, step=t.step, name=f"{t.label} "))


def derived(chart, t: Temperature):
    """chart (a layer whose layers read `value` and `text`) with each cell's `value`, its weight, and its printed
    `text` worked out from its `score` and τ: transforms every layer runs first."""
    tau = f"({t.key}.{FIELD} ? {t.key}.{FIELD}[0] : {t.default:g})"  # the selection's value ({field: [value]})
    return chart.transform_joinaggregate(
        _max="max(score)", _first="argmax(score)", groupby=["row_i"],
    ).transform_calculate(
        _e=f"!isValid(datum.score) || !isFinite(datum.score) ? 0 : {tau} > 0 ? exp((datum.score - datum._max) / {tau})"
           f" : datum._first.col_i == datum.col_i ? 1 : 0",
    ).transform_joinaggregate(
        _sum="sum(_e)", groupby=["row_i"],
    ).transform_calculate(value="datum._e / datum._sum", text=f"format(datum.value, '.{DECIMALS}f')")


def with_weights(data: ChartData, scores, tau: float) -> ChartData:
    """frame()'s table with the column WEIGHT: the weights at τ as core computes them, rounded as a map's values are.
    The map works its own out in the browser and never reads the column; it is there for the chart's Show data table
    (and a screen reader, to whom a canvas shows no numbers), which would otherwise list the scores alone. While τ is
    dragged it holds the weights at the τ of the last rerun, the one the words under the map were written for."""
    return ChartData({**data.columns, WEIGHT: number_array(weights(scores, tau))}, data.labels, data.grid)


def weights(scores, tau: float) -> np.ndarray:
    """The weights the map shows at τ, as core computes them: (R, C) -> (R, C)."""
    return probs_from_logits(scores, tau)

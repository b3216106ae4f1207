"""A map of weights the browser works out from scores (ui.drawing.softmax): Vega, running the map's own transforms,
prints the weights core computes at every temperature, 0 and a tiny one included; and a chart's own controls read
only values they can take from the browser and the link (ui.state.chart_controls)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.sampling import probs_from_logits
from tests.ui.test_charts import walk
from ui.drawing import charts, softmax
from ui.state import chart_controls

T = softmax.Temperature("attn_temp", "Attention temperature τ")
LABELS = ["a", "b", "c", "d", "e"]


def drawn_weights(scores: np.ndarray, tau: float) -> list[list[str]]:
    """The numbers Vega prints in each cell of the map of scores at τ, row by row, as the browser draws them."""
    import vl_convert

    spec = charts.heatmap_chart(domain=(0.0, 1.0), select_rows=True, temperature=T).to_dict(validate=True)
    spec["params"] = [{**p, "value": [{softmax.FIELD: tau}]} if p["name"] == T.key else p for p in spec["params"]]
    frame = softmax.frame(scores, LABELS[: scores.shape[0]], LABELS[: scores.shape[1]])
    sg = vl_convert.vegalite_to_scenegraph(frame.inline(spec))
    [texts] = [m["items"] for m in walk(sg) if m.get("marktype") == "text" and m.get("role") == "mark"]
    ys = sorted({round(i["y"]) for i in texts})
    rows = [sorted((i["x"], i["text"]) for i in texts if round(i["y"]) == y) for y in ys]
    return [[text for _, text in row] for row in rows]


def printed(weights: np.ndarray) -> list[list[str]]:
    return [[f"{w:.2f}" for w in row] for row in weights]


SCORES = np.array([[0.3, -1.2, 2.5, 2.5, 0.0],  # a tie for the largest: τ = 0 takes the first
                   [-40.0, 12.0, 11.5, -3.0, 0.7],  # wide scores: a small τ must not overflow
                   [1.0, 1.0, 1.0, 1.0, 1.0],  # all equal: even at any τ > 0
                   [0.1, -math.inf, 0.2, -math.inf, -0.3]])  # masked keys get no weight


@pytest.mark.parametrize("tau", [1.0, 0.5, 3.0, 0.05, 1e-3, 0.0])
def test_vega_prints_the_weights_core_computes(tau):
    want = probs_from_logits(SCORES, tau)
    assert drawn_weights(SCORES, tau) == printed(want)
    np.testing.assert_allclose(softmax.weights(SCORES, tau), want)


def test_the_drawn_weights_follow_tau_and_not_the_default():
    """The test above can fail: the map at τ = 0.05 is not the map at the default τ = 1."""
    assert drawn_weights(SCORES, 0.05) != drawn_weights(SCORES, 1.0)


def test_the_map_is_sized_for_its_widest_weight():
    assert softmax.PRINTED == len(f"{0.25:.{softmax.DECIMALS}f}")


def test_the_frame_sends_scores_whole_and_no_infinity():
    scores = np.array([[1.0 / 3.0, -math.inf], [math.nan, 123456.789012345]])
    frame = softmax.frame(scores, ["x", "y"], ["p", "q"])
    sent = np.asarray(frame.columns["score"], dtype=float)
    assert sent[0] == 1.0 / 3.0 and sent[3] == 123456.789012345  # not rounded to a tooltip's 4 decimals
    assert np.isnan(sent[1]) and np.isnan(sent[2])
    with pytest.raises(ValueError):
        softmax.frame(scores, ["x"], ["p", "q"])


@pytest.mark.parametrize(("sent", "taken"), [(0.5, 0.5), (2, 2.0), (-3, 0.0), (1e9, 3.0), ("0.5", None),
                                             (None, None), (True, None), (math.nan, None), (math.inf, None),
                                             ([1], None), ({"x": 1}, None)])
def test_a_slider_takes_only_numbers_from_the_browser_clamped(sent, taken):
    control = chart_controls.number(T.key, T.lo, T.hi, T.default, softmax.FIELD)
    assert control.from_browser(sent) == taken


@pytest.mark.parametrize(("sent", "taken"), [(True, True), (False, False), (1, None), ("false", None), (None, None)])
def test_a_switch_takes_only_true_or_false_from_the_browser(sent, taken):
    assert chart_controls.switch("fm_hv_head1").from_browser(sent) == taken


def test_what_the_browser_reports_is_read_only_where_it_fits():
    controls = [chart_controls.number(T.key, T.lo, T.hi, T.default, softmax.FIELD), chart_controls.switch("s")]
    state = {"selection": {T.key: [{softmax.FIELD: 0.25}], "s": [{"on": False}], "pick": [{"row_i": 2}]}}
    assert chart_controls.reported(state, controls) == {T.key: 0.25, "s": False}
    hostile = {"selection": {T.key: [{softmax.FIELD: "drop table"}], "s": "yes"}}
    assert chart_controls.reported(hostile, controls) == {}
    for odd in (None, {}, {"selection": None}, {"selection": []}, "x"):
        assert chart_controls.reported(odd, controls) == {}


def test_the_weights_map_s_table_lists_the_weights_at_tau_beside_the_scores():
    """The map works its weights out in the browser; its Show data table (and a screen reader, to whom a canvas shows
    no numbers) reads them from the column `weight`: core's weights at the τ of the last rerun, beside the scores."""
    from tests.apptest_helpers import SENT_ATOL, chart_by_title, chart_data, matrix, move_chart_control, ok, run_page

    at = ok(run_page("lessons/scaling/page.py", {"d_k": "4"}))
    for tau in (1.0, 0.3):
        if tau != 1.0:
            ok(move_chart_control(at, "attn_temp", tau).run())
        chart = chart_by_title(at, "weights: click a row")
        table = chart_data(chart)
        scores = matrix(chart).to_numpy()
        sent = table.pivot(index="row_i", columns="col_i", values=softmax.WEIGHT).sort_index().sort_index(axis=1)
        np.testing.assert_allclose(sent.to_numpy(float), probs_from_logits(scores, tau), rtol=0, atol=SENT_ATOL)
    assert not np.allclose(sent.to_numpy(float), probs_from_logits(scores, 1.0), atol=0.01)  # it followed τ

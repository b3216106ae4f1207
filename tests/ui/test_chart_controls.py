"""Controls a chart draws itself (ui.state.chart_controls), on a page of their own through AppTest: a link seeds
them, the browser's report moves them, a new design pins them again under a new key at their values of the moment,
and a control the chart no longer draws leaves the link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import ROOT

SCRIPT = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from ui.state import chart_controls, controls

controls.start_run()
n, design = st.session_state.get("n", 4), st.session_state.get("design", "a")
chosen = [chart_controls.switch(f"h{{i + 1}}") for i in range(n)] + [chart_controls.number("t", 0, 3, 1, "level")]
values = chart_controls.values("chart", chosen, design=(n, design))
controls.show_url_notes()
st.session_state["seen"] = values
"""


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def report(at: AppTest, **selection) -> AppTest:
    """What the browser sends when the chart's controls are moved: its selection, by control."""
    key = at.session_state["seen"].key
    at.session_state[key] = {"selection": selection}
    return at


def test_a_link_seeds_the_controls_and_a_bad_value_says_so():
    at = AppTest.from_string(SCRIPT)
    at.query_params.update({"h2": "false", "t": "7"})
    seen = run(at).session_state["seen"]
    assert seen.now == seen.first == (True, False, True, True, 3.0)
    assert any("t" in str(i.value) and "0 to 3" in str(i.value) for i in at.info)


def test_the_browser_moves_them_and_a_new_design_pins_them_again():
    at = run(AppTest.from_string(SCRIPT))
    first_key = at.session_state["seen"].key
    seen = run(report(at, h1=[{"on": False}], t=[{"level": 0.25}])).session_state["seen"]
    assert seen.now == (False, True, True, True, 0.25) and seen.first == (True, True, True, True, 1.0)
    assert seen.key == first_key  # the chart drawn is kept: its design carries the values it started from
    assert dict(at.query_params) == {"h1": "false", "t": "0.25"}
    at.session_state["design"] = "b"  # a new design: drawn again, from the values of the moment
    seen = run(at).session_state["seen"]
    assert seen.first == seen.now == (False, True, True, True, 0.25) and seen.key != first_key


def test_a_control_the_chart_no_longer_draws_leaves_the_link():
    at = AppTest.from_string(SCRIPT)
    at.query_params["h4"] = "false"
    assert run(at).session_state["seen"].now == (True, True, True, False, 1.0)
    at.session_state["n"] = 2  # a model of two heads: no head 4
    assert run(at).session_state["seen"].now == (True, True, 1.0)
    assert "h4" not in dict(at.query_params)

"""The address bar reproduces the view: on every lesson page, after every control is moved, a fresh page
opened with exactly the link's parameters shows the same widget values and the same charts.

AppTest does not run the browser's side of bind="query-params" (the part that writes the address bar),
so the link is made here as that code makes it: every URL-bound widget whose value differs from the
default the widget was drawn with, and nothing else. A control whose widget default is not the value a
fresh page starts with would drop out of the link and the reopened page would differ: that fails here.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lessons import COURSE
from tests.apptest_helpers import asides, chart_control_widgets, chart_data, chart_spec, charts, run_page

KINDS = ("slider", "select_slider", "toggle", "checkbox", "radio", "selectbox", "text_input", "text_area",
         "number_input")


def widgets(at) -> dict:
    """Every URL-bound widget the page drew, by key (the controls record each one they draw), and every switch a
    chart draws itself (in the link as a widget's value is)."""
    bound = at.session_state["_view"] if "_view" in at.session_state else {}
    found = {}
    for kind in KINDS:
        for el in getattr(at, kind):
            if el.key in bound:
                found[el.key] = (kind, el)
    found.update({key: ("aside", el) for key, el in asides(at).items() if key in bound})
    found.update({key: ("chart", el) for key, el in chart_control_widgets(at).items() if key in bound})
    assert set(found) == set(bound), f"bound keys with no widget: {set(bound) - set(found)}"
    return found


def default_of(kind: str, el):
    """The default a widget was drawn with: what the binding leaves out of the address bar."""
    if kind == "aside":
        return el.default
    if kind == "chart":
        return el.control.default
    proto = el.proto
    if kind == "slider":
        return proto.default[0]
    if kind in ("select_slider",):
        return el.options[int(proto.default[0])]
    if kind in ("radio", "selectbox"):
        return el.options[proto.default]
    return proto.default


def shown_value(kind: str, el):
    """A widget's value in the form its default takes (options are compared as their labels)."""
    if kind in ("select_slider", "radio", "selectbox"):
        return str(el.value)
    return el.value


def link_params(at) -> dict[str, str]:
    """The address bar after this run: every bound value that differs from its widget's default."""
    params = {}
    for key, (kind, el) in widgets(at).items():
        value = shown_value(kind, el)
        if value != default_of(kind, el):
            params[key] = ("true" if value else "false") if isinstance(value, bool) else (
                str(int(value)) if isinstance(value, float) and value.is_integer() else str(value))
    return params


def move(kind: str, el):
    """Set a widget to a value other than its current one, inside its range or options."""
    v = el.value
    if kind in ("toggle", "checkbox", "aside") or (kind == "chart" and el.control.lo is None):
        return el.set_value(not v)
    if kind == "chart":  # a chart's own slider: a little up, or to its bottom
        return el.set_value(v + 0.25 if v + 0.25 <= el.control.hi else el.control.lo)
    if kind == "slider":
        lo, hi = el.min, el.max
        step = el.step
        target = lo + step if v != lo + step and lo + step <= hi else hi
        return el.set_value(type(v)(target))
    if kind in ("select_slider", "radio", "selectbox"):
        options = list(el.options)
        other = next(o for o in reversed(options) if o != str(v)) if len(options) > 1 else options[0]
        return el.set_value(type(v)(other) if not isinstance(v, str) else other)
    if kind in ("text_input", "text_area"):
        return el.set_value((v or "") + " and the dog")
    if kind == "number_input":
        return el.set_value(el.min if v != el.min else el.max)
    raise AssertionError(kind)


def rerun(at) -> None:
    """Run the page again as the app does: the entry script starts each run with no recorded settings
    (controls.start_run), so a control the page no longer draws is no longer part of the view."""
    at.session_state["_view"] = {}
    at.run(timeout=120)
    assert not at.exception, [e.message for e in at.exception]


def view(at) -> dict:
    """What a user sees that the link must reproduce: every bound widget's value and every chart (a chart's own
    controls as they are now: its design keeps the values it was drawn with, and the browser shows the moves)."""
    own = chart_control_widgets(at)

    def as_shown(spec: dict) -> dict:
        params = [{**p, "value": [{own[p["name"]].control.field: own[p["name"]].value}]} if p.get("name") in own
                  else p for p in spec.get("params", [])]
        return {**spec, "params": params} if params else spec

    return {"widgets": {k: shown_value(kind, el) for k, (kind, el) in widgets(at).items()},
            "charts": [(as_shown(chart_spec(c)), chart_data(c)) for c in charts(at)]}


@pytest.mark.parametrize("lesson", COURSE, ids=lambda lesson: lesson.url_path)
def test_link_reproduces_every_moved_control(lesson):
    at = run_page(lesson.path, timeout=120)
    assert not at.exception
    fresh = {k: shown_value(kind, el) for k, (kind, el) in widgets(at).items()}
    # at a fresh page the link is empty: every widget's default is the value the page starts with
    assert link_params(at) == {}, "a fresh page's widgets were drawn with defaults other than their values"
    for key in list(fresh):
        if key == "present":  # presenter mode hides the code and exports; moved last, on its own
            continue
        found = widgets(at)
        if key not in found:  # a control the earlier moves took off the page
            continue
        kind, el = found[key]
        move(kind, el)
        rerun(at)
    widgets(at)["present"][1].set_value(True)
    rerun(at)
    params = link_params(at)
    # every moved control that still differs from a fresh page is in the link, switches included
    now = view(at)
    differs = {k for k, v in now["widgets"].items() if k in fresh and v != fresh[k]}
    assert differs <= set(params), f"settings that differ from a fresh page but are not in the link: " \
                                   f"{differs - set(params)}"
    assert "present" in params
    reopened = run_page(lesson.path, query=params, timeout=120)
    assert not reopened.exception, [e.message for e in reopened.exception]
    assert not [str(i.value) for i in reopened.info if i.icon == ":material/link:"], "the link had unusable values"
    again = view(reopened)
    assert again["widgets"] == now["widgets"]
    assert len(again["charts"]) == len(now["charts"])
    for (spec_a, data_a), (spec_b, data_b) in zip(now["charts"], again["charts"]):
        assert spec_a == spec_b
        pd.testing.assert_frame_equal(data_a, data_b)


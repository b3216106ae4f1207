"""Controls a chart draws itself: each a Vega-Lite point selection bound to an input under the chart (a check box,
a slider), so a move changes what the chart shows at once, in the browser, from the numbers it already holds, with
no round trip to the server and no chart built again. The chart reports its selections (on_select="rerun"), so the
server then reruns the chart's live part: it writes in words what the control changed and puts it in the link, as
it does for every other control.

A control's first value is part of the chart's design. A design that changed would be a new chart whose controls
start again from those first values, so they are pinned, kept in the session, until the design changes for a reason
of its own (another length of prompt, another row picked): then they are pinned again at the controls' values of
the moment, under a new widget key (a new widget starts with no selection of its own, so nothing stale is read back).

In the link a control is key=value, absent at its default; a settings file's value wins, as for every control
(ui.state.controls). The Full model's head view draws a switch per head so (lessons/full_model/head_view.py);
Scaling's weights map draws its temperature so (ui.drawing.softmax).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import streamlit as st

from ui.state import controls

NAMES = "_chart_controls"  # the names of the charts with controls this session has drawn (tests find them here)


@dataclass(frozen=True)
class Control:
    """One control a chart draws: `key` is its key in the link and its Vega-Lite parameter's name, `field` the one
    field its point selection holds. A switch (lo is None) is on or off; a number lies in [lo, hi]."""

    key: str
    field: str
    default: bool | float
    lo: float | None = None
    hi: float | None = None

    def from_link(self, raw: str):
        """A link's (or a settings file's) text read as this control's value, with a note where it could not be."""
        if self.lo is None:
            return controls.switch(self.key, bool(self.default))(raw)
        return controls.link_number(self.key, raw, self.default, self.fit,
                                    f"; the allowed range here is {self.lo:g} to {self.hi:g}, so {{}} is used.")

    def fit(self, value: float) -> float:
        return min(max(float(value), self.lo), self.hi)

    def from_browser(self, value):
        """A value the browser reported, or None when it is not one this control can take (a page's script, or
        someone hand-crafting messages, may send anything)."""
        if self.lo is None:
            return value if isinstance(value, bool) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return self.fit(value)


def switch(key: str, default: bool = True) -> Control:
    """A check box: its selection's one field `on` is what the box says."""
    return Control(key, "on", default)


def number(key: str, lo: float, hi: float, default: float, field: str) -> Control:
    """A slider over [lo, hi]: its selection's one field is where it stands."""
    return Control(key, field, float(default), float(lo), float(hi))


def selected(control: Control, value) -> list[dict]:
    """The selection that holds `value`: a parameter's value in the chart's spec, and what the chart reports."""
    return [{control.field: value}]


@dataclass(frozen=True)
class Values:
    now: tuple  # each control now
    first: tuple  # the values the chart's design carries (pinned)
    key: str  # the chart's widget key: its selections are read back under it
    controls: tuple[Control, ...] = ()  # the controls, in the order of now and first


def pinned_key(name: str) -> str:
    return f"_{name}_pinned"


def reported(state, chosen: Sequence[Control]) -> dict:
    """{key: value} for each control the browser has reported since its chart was drawn (a bound point selection's
    selection is [{field: value}]; an untouched one is reported empty, or not at all)."""
    try:
        selection = state["selection"]
    except (KeyError, TypeError):
        return {}
    out = {}
    for c in chosen:
        points = selection.get(c.key) if hasattr(selection, "get") else None
        if isinstance(points, list) and points and isinstance(points[0], dict) and c.field in points[0]:
            if (value := c.from_browser(points[0][c.field])) is not None:
                out[c.key] = value
    return out


def in_the_link(control: Control, value) -> None:
    """A control in the view a shared link and a settings file carry, and in the address bar, left out at its
    default as the binding leaves out a widget's default."""
    controls.record(control.key, value, control.default)
    text = None if value == control.default else controls.url_text(value)
    if st.query_params.get(control.key) != text:
        if text is None:
            del st.query_params[control.key]
        else:
            st.query_params[control.key] = text


def values(name: str, chosen: Sequence[Control], design: Hashable) -> Values:
    """The controls `chosen` of the chart `name`, whose design, but for the controls' first values, is `design`:
    what each is now, the first values to build the design with, and the chart's widget key. Records each in the
    page's view and the address bar."""
    keys = tuple(c.key for c in chosen)
    pinned = st.session_state.get(pinned_key(name))
    if pinned is not None and tuple(pinned["keys"]) != keys:
        for gone in set(pinned["keys"]) - set(keys):  # a control the chart no longer draws (a head the model
            if gone in st.query_params:  # now shown lacks) leaves the link with it
                del st.query_params[gone]
        pinned = None  # other controls: nothing carries over
    # The chart drawn last run is still there, with whatever its controls were moved to; a chart not drawn in the
    # last run (the page left and come back to) is gone, and one drawn again starts from its design's values.
    alive = pinned is not None and pinned["key"] in st.session_state
    moved = reported(st.session_state.get(pinned["key"]), chosen) if alive else {}
    pending = st.session_state.get(controls.PENDING, {})
    now, again = [], not alive or pinned["design"] != design
    for i, c in enumerate(chosen):
        if c.key in pending:  # a settings file just loaded: its value wins, and the chart must start from it
            value, again = c.from_link(str(pending.pop(c.key))), True
        elif c.key in moved:
            value = moved[c.key]
        elif pinned is not None:  # untouched since the chart was drawn: as it was
            value = pinned["now"][i]
        elif (raw := st.query_params.get(c.key)) is not None:
            value = c.from_link(str(raw))
        else:
            value = c.default
        now.append(value)
    now_t = tuple(now)
    if again:
        generation = pinned["generation"] + 1 if pinned else 0
        pinned = {"keys": keys, "design": design, "first": now_t, "generation": generation,
                  "key": f"{name}_{generation}", "controls": tuple(chosen)}
    pinned["now"] = now_t
    st.session_state[pinned_key(name)] = pinned
    st.session_state.setdefault(NAMES, set()).add(name)
    for c, value in zip(chosen, now_t):
        in_the_link(c, value)
    return Values(now_t, pinned["first"], pinned["key"], tuple(chosen))

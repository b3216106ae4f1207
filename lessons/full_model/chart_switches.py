"""Switches a chart draws itself: each a Vega-Lite point selection bound to a check box under the chart, so a click
shows or hides what the chart already holds at once, in the browser, with no round trip to the server and no chart
built again. The chart reports its selections (on_select="rerun"), so the server then reruns the chart's live part:
it writes in words what the switch changed and puts the switch in the link, as it does for every other control.

A switch's first value is part of the chart's design. A design that changed would be a new chart whose switches
start again from those first values, so they are pinned, kept in the session, until the design changes for a reason
of its own (another length of prompt, another layer): then they are pinned again at the switches' values of the
moment, under a new widget key (a new widget starts with no selection of its own, so nothing stale is read back).

In the link a switch is key=false when off and absent when on (its default); a settings file's value wins, as for
every control (ui.state.controls). The Full model's head view draws its heads' switches so (head_view.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import streamlit as st

from ui.state import controls

DEFAULT = True  # a switch nobody touched is on
NAMES = "_chart_switches"  # the names of the charts with switches this session has drawn (tests find them here)


@dataclass(frozen=True)
class Switches:
    on: tuple[bool, ...]  # each switch now
    first: tuple[bool, ...]  # the values the chart's design carries (pinned)
    key: str  # the chart's widget key: its selections are read back under it


def pinned_key(name: str) -> str:
    return f"_{name}_pinned"


def reported(state, keys: Sequence[str]) -> dict[str, bool]:
    """{key: on} for each switch the browser has reported since its chart was drawn (a selection of a bound point
    selection is [{"on": bool}]; an untouched one is reported empty, or not at all)."""
    try:
        selection = state["selection"]
    except (KeyError, TypeError):
        return {}
    out = {}
    for key in keys:
        points = selection.get(key) if hasattr(selection, "get") else None
        if isinstance(points, list) and points and isinstance(points[0], dict) and "on" in points[0]:
            out[key] = bool(points[0]["on"])
    return out


def in_the_link(key: str, value: bool) -> None:
    """A switch in the view a shared link and a settings file carry, and in the address bar, left out when on (its
    default) as the binding leaves out a widget's default."""
    controls.record(key, value, DEFAULT)
    text = None if value == DEFAULT else controls.url_text(value)
    if st.query_params.get(key) != text:
        if text is None:
            del st.query_params[key]
        else:
            st.query_params[key] = text


def switches(name: str, keys: Sequence[str], design: Hashable) -> Switches:
    """The switches `keys` (each also its Vega-Lite parameter's name and its key in the link) of the chart `name`,
    whose design, but for the switches' first values, is `design`: what each is now, the first values to build
    the design with, and the chart's widget key. Records each in the page's view and the address bar."""
    pinned = st.session_state.get(pinned_key(name))
    if pinned is not None and tuple(pinned["keys"]) != tuple(keys):
        pinned = None  # another number of switches: nothing carries over
    # The chart drawn last run is still there, with whatever its switches were clicked to; a chart not drawn in the
    # last run (the page left and come back to) is gone, and one drawn again starts from its design's values.
    alive = pinned is not None and pinned["key"] in st.session_state
    clicked = reported(st.session_state.get(pinned["key"]), keys) if alive else {}
    pending = st.session_state.get(controls.PENDING, {})
    now, again = [], not alive or pinned["design"] != design
    for i, key in enumerate(keys):
        if key in pending:  # a settings file just loaded: its value wins, and the chart must start from it
            value, again = controls.switch(key, DEFAULT)(str(pending.pop(key))), True
        elif key in clicked:
            value = clicked[key]
        elif pinned is not None:  # untouched since the chart was drawn: as it was
            value = pinned["now"][i]
        elif (raw := st.query_params.get(key)) is not None:
            value = controls.switch(key, DEFAULT)(str(raw))
        else:
            value = DEFAULT
        now.append(value)
    now_t = tuple(now)
    if again:
        generation = pinned["generation"] + 1 if pinned else 0
        pinned = {"keys": tuple(keys), "design": design, "first": now_t, "generation": generation,
                  "key": f"{name}_{generation}"}
    pinned["now"] = now_t
    st.session_state[pinned_key(name)] = pinned
    st.session_state.setdefault(NAMES, set()).add(name)
    for key, value in zip(keys, now_t):
        in_the_link(key, value)
    return Switches(now_t, pinned["first"], pinned["key"])

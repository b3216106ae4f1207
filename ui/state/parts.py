"""Which live parts of the page are drawing now (ui.frame.page.live: a part reruns alone when one of its own
controls moves).

What a page records as it draws (the settings it showed, for the share link; the matrices it drew, for the
export panel) is tagged with the parts it was drawn in, so that a part rerunning alone replaces what it recorded
last time and leaves the rest of the page's records as they are.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import streamlit as st

_STACK = "_live_parts"  # the parts drawing now, outermost first


def start_run() -> None:
    """A full run of the page begins: no part is drawing yet."""
    st.session_state[_STACK] = ()


def current() -> tuple[str, ...]:
    """The parts drawing now, outermost first (empty outside every part)."""
    return st.session_state.get(_STACK, ())


@contextlib.contextmanager
def drawing(part: str, enclosing: tuple[str, ...]) -> Iterator[None]:
    """Inside: `part` draws, within `enclosing` (the parts it was drawn in, in the page's full run)."""
    before = current()
    st.session_state[_STACK] = (*enclosing, part)
    try:
        yield
    finally:
        st.session_state[_STACK] = before

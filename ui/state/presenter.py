"""Presenter mode: large type and cells for a projector. One switch, read by every page and chart.

The switch itself is drawn by ui.frame.page.header (bound to the URL as present=true); this module only holds
its state and what follows from it, so that chart code can ask without importing the page frame.
"""

from __future__ import annotations

import streamlit as st

KEY = "present"

CSS = """
<style>
  /* Presenter mode: type and charts readable from the back of a room. */
  .stMainBlockContainer { max-width: 100%; padding-top: 2rem; }
  .stMainBlockContainer p, .stMainBlockContainer li { font-size: 1.45rem; line-height: 1.5; }
  .stMainBlockContainer h1 { font-size: 3.2rem; }
  .stMainBlockContainer h2, .stMainBlockContainer h3 { font-size: 2.2rem; }
  .stMainBlockContainer [data-testid="stCaptionContainer"] { font-size: 1.2rem; }
</style>
"""


def presenting() -> bool:
    """True in presenter mode: pages show one idea per screen and hide the secondary material."""
    return bool(st.session_state.get(KEY, False))


def chart_scale() -> float:
    """Cells grow by half in presenter mode."""
    return 1.5 if presenting() else 1.0


def apply_style() -> None:
    """Enlarge the page's type when presenting (a constant stylesheet: nothing a user typed is in it)."""
    if presenting():
        st.html(CSS)

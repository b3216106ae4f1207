"""The lesson's main control, within reach on a phone."""

from __future__ import annotations

import streamlit as st

# The main column of a page on a phone 390 px wide (Streamlit's side margins taken off): what a grid of maps may
# fill there (ui.sections.views.grid_layout).
COLUMN_PX = 358
# What every phone browser's User-Agent holds and desktop browsers' do not (Chrome, Safari and Firefox on Android
# and iOS all write "Mobile"; a tablet does not, and gets the wide layout its screen has room for).
_PHONE_MARK = "Mobi"

# The controls the style below may keep in reach: each lesson's main sidebar control (a key, never a page's text).
IN_REACH = ("heads", "bg_alpha", "block_pos", "ci_length", "tl_block", "d_k", "tr_steps")


# On a phone the sidebar, once opened, covers most of the screen, so a student never saw a sidebar slider and the
# chart it moves at once. Folded on a narrow screen, the sidebar becomes a strip along the screen's bottom edge
# holding only the lesson's main control(s): the same widget (its key, its place in the link), moved by the page's
# style, not drawn twice. Opened, the sidebar is as it always was. The keys are written into the style (a constant:
# no page puts its own text into HTML, tests/system/test_security.py), so one style serves every page: a key in
# IN_REACH is kept in reach on every page whose sidebar holds it. Each page's sidebar holds one of them (Attention in
# tiles two: d_k and its block size), so a lesson that keeps another control in reach picks a key no other page's
# sidebar holds, or one its own sidebar alone does, and adds it to both.
_IN_REACH_CSS = """
<style>
  @media (max-width: 640px) {
    .stApp:has([data-testid="stExpandSidebarButton"]) section[data-testid="stSidebar"] {
      /* !important: the sidebar's own size and place are set in its style attribute */
      position: fixed !important; top: auto !important; bottom: 0; left: 0; right: 0; width: 100% !important;
      min-width: 100% !important; max-width: 100% !important; height: auto !important; min-height: 0 !important;
      max-height: 45vh; transform: none; z-index: 999990;
      box-shadow: 0 -2px 8px rgba(0, 0, 0, 0.25);
    }
    .stApp:has([data-testid="stExpandSidebarButton"]) section[data-testid="stSidebar"]
      :is([data-testid="stSidebarHeader"], [data-testid="stSidebarNav"], [data-testid="stSidebarNavSeparator"],
          [data-testid="stSidebarUserContent"] [data-testid="stVerticalBlock"]
            > :not(.st-key-heads, .st-key-bg_alpha, .st-key-block_pos, .st-key-ci_length, .st-key-tl_block,
                   .st-key-d_k, .st-key-tr_steps))
      { display: none; }
    .stApp:has([data-testid="stExpandSidebarButton"]) [data-testid="stSidebarUserContent"] {
      padding: 0.5rem 1.25rem 0.25rem;
    }
    .stApp:has([data-testid="stExpandSidebarButton"]) [data-testid="stSidebarContent"] { height: auto; }
    /* room under the page's last element, which the strip would cover */
    .stApp:has([data-testid="stExpandSidebarButton"]) .stMainBlockContainer { padding-bottom: 12rem; }
  }
</style>
"""


def on_phone() -> bool:
    """The page is read on a phone, as far as the server can tell: by the browser's User-Agent.

    Streamlit tells a page nothing of the screen's width, and a grid of maps is laid out on the server (a facet's
    panels to a row are part of its chart): a page that waits for the browser to say how wide it is would draw
    every grid twice. A desktop window made narrow still gets the wide layout: its grid scrolls in its frame."""
    try:
        agent = st.context.headers.get("User-Agent") or ""
    except Exception:  # no browser behind the run (a test's or the warm-up's): the wide layout
        return False
    return _PHONE_MARK in agent


def in_reach(*keys: str) -> None:
    """Keep the sidebar controls `keys` (the ones the lesson is about) in reach on a phone: while the sidebar is
    folded on a narrow screen they sit on a strip along the screen's bottom edge, beside whatever chart is in view.
    Call it once a run, after drawing them."""
    if not set(keys) <= set(IN_REACH):
        raise ValueError(f"{sorted(set(keys) - set(IN_REACH))} are not written into the style: add them to IN_REACH "
                         "and to _IN_REACH_CSS")
    st.html(_IN_REACH_CSS)

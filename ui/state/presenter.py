"""Presenter mode: large type and cells for a projector. One switch, read by every page and chart.

The switch itself is drawn by ui.frame.page.switches (bound to the URL as present=true); this module only holds
its state and what follows from it, so that chart code can ask without importing the page frame.
"""

from __future__ import annotations

import streamlit as st

KEY = "present"
# The page's column on a 1280 x 720 projector with the sidebar folded (as a present=true link opens it), less a
# margin: what a chart laid out for presenter mode may fill.
COLUMN_PX = 1080

# Every page, presenting or not: captions carry results, and Streamlit draws them at 0.6 opacity, 3.9:1 on
# white (WCAG AA asks 4.5:1), inline code in them at 3.0:1. A caption here takes the page's own text colour
# (inherited, so it follows the light or dark theme) at 85%, fully opaque: quieter than the text, ~8:1 on white.
BASE_CSS = """
<style>
  [data-testid="stCaptionContainer"] { color: inherit; opacity: 1; }
  [data-testid="stCaptionContainer"] p { color: color-mix(in srgb, currentColor 85%, transparent); }
  [data-testid="stCaptionContainer"] code { color: inherit; }
  /* A page's sections are h2 under its h1 title (a screen reader's outline skips no level); drawn at the size
     of Streamlit's h3, so a section heading does not shout as loud as the title. */
  .stMainBlockContainer h2 { font-size: 1.75rem; }
  .stMainBlockContainer h3 { font-size: 1.25rem; }
  /* KaTeX draws a displayed formula a pixel or two wider and taller than its box, which made each one a
     scrolling region that no keyboard can reach; the formulas are written to fit the page's width. */
  [data-testid="stMarkdownContainer"] .katex-display { overflow: visible; }
  /* A table of numbers (ui/drawing/tables.py, a Markdown table: the only tables the pages' Markdown holds) sets
     its numbers right-aligned; in figures of one width, the decimal points of a column line up, as in a printed
     table. A table wider than its column scrolls in its own frame, not the whole page with it. */
  [data-testid="stMarkdownContainer"] table :is(th, td) { font-variant-numeric: tabular-nums; }
  [data-testid="stMarkdownContainer"]:has(> table) { max-width: 100%; overflow-x: auto; }
  /* On a phone, a chart wider than the screen scrolls inside its own frame; without this it ran past the
     screen's edge and made the whole main area scroll sideways, text included. Phones only: on a wider
     screen a chart a few pixels wider than its column would become a scrolling region with nothing a
     keyboard can focus in it. */
  @media (max-width: 640px) {
    [data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
  }
  @media (max-width: 640px) {
    /* A chart or table still wider than the screen says so, at its left edge while it scrolls (FOCUSABLE_FRAMES
       marks it) */
    :is([data-testid="stVegaLiteChart"], [data-testid="stMarkdownContainer"]:has(> table))[data-scroll-frame]::before {
      content: "Wider than the screen: swipe sideways for the rest →"; display: block; position: sticky; left: 0;
      width: max-content; font-size: 0.875rem; padding-bottom: 0.25rem;
    }
  }
  /* The element that carries FOCUSABLE_FRAMES' script shows nothing; without this it took a gap's height. */
  [data-testid="stElementContainer"]:has(> [data-testid="stHtml"] > script:only-child) { display: none; }
</style>
"""

# A chart wider than a phone's screen scrolls in its own frame (BASE_CSS), as does a wide table, and a frame that
# scrolls must be reachable by keyboard (WCAG 2.1.1): one with nothing
# focusable inside is given tabindex=0, so Tab reaches it and the arrow keys scroll it. CSS cannot set tabindex,
# so a few lines of script do it, for frames that scroll now and again whenever the page changes (a rerun redraws
# its charts) or the window is resized. Installed once a browser tab; a constant with nothing a user typed in it.
FOCUSABLE_FRAMES = """
<script>
(() => {
  if (window.__chartFramesFocusable) return;
  window.__chartFramesFocusable = true;
  const FRAMES = '[data-testid="stVegaLiteChart"], [data-testid="stMarkdownContainer"]:has(> table)';
  const mark = () => {
    for (const frame of document.querySelectorAll(FRAMES)) {
      const scrolls = frame.scrollWidth > frame.clientWidth + 1;
      if (scrolls && !frame.hasAttribute('tabindex')) {
        frame.tabIndex = 0;
        frame.dataset.scrollFrame = 'true';
      } else if (!scrolls && frame.dataset.scrollFrame) {
        frame.removeAttribute('tabindex');
        delete frame.dataset.scrollFrame;
      }
    }
  };
  let queued = false;
  const soon = () => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; mark(); }); }
  };
  new MutationObserver(soon).observe(document.body, {childList: true, subtree: true});
  window.addEventListener('resize', soon);
  soon();
})();
</script>
"""

CSS = """
<style>
  /* Presenter mode: type and charts readable from the back of a room. */
  .stMainBlockContainer { max-width: 100%; padding-top: 2rem; }
  .stMainBlockContainer p, .stMainBlockContainer li { font-size: 1.45rem; line-height: 1.5; }
  .stMainBlockContainer h1 { font-size: 3.2rem; }
  .stMainBlockContainer h2, .stMainBlockContainer h3 { font-size: 2.2rem; }
  .stMainBlockContainer [data-testid="stCaptionContainer"] { font-size: 1.2rem; }
  /* Tables (ui.drawing.tables: Markdown tables, also when presenting), formulas and code set on their own, and the
     value a box shows (the Query row): as large as the prose around them, no smaller than 20 px. */
  .stMainBlockContainer [data-testid="stMarkdownContainer"] table :is(th, td) { font-size: 1.3rem; }
  .stMainBlockContainer [data-testid="stMarkdownContainer"] .katex-display { font-size: 1.3rem; }
  .stMainBlockContainer [data-testid="stCode"] code { font-size: 1.25rem; }
  .stMainBlockContainer :is(input, textarea) { font-size: 1.3rem; }
  /* a metric's value is set in a paragraph: without its own rule it took the prose's size, smaller than without
     presenter mode (the projector's count of answers) */
  .stMainBlockContainer [data-testid="stMetricValue"], .stMainBlockContainer [data-testid="stMetricValue"] p {
    font-size: 2.6rem; }
  .stMainBlockContainer :is(p, li) code { font-size: 0.9em; }
  .stMainBlockContainer button p { font-size: 1.3rem; }
  /* A chart is laid out to fit a projector's column (COLUMN_PX); with the sidebar opened beside it, the column
     is narrower, and a chart wider than it scrolls in its own frame, which FOCUSABLE_FRAMES lets a keyboard reach. */
  [data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
</style>
"""


def presenting() -> bool:
    """True in presenter mode: pages show one idea per screen and hide the secondary material."""
    return bool(st.session_state.get(KEY, False))


def chart_scale() -> float:
    """Cells grow by half in presenter mode."""
    return 1.5 if presenting() else 1.0


def apply_style() -> None:
    """Readable captions on every page, scrolling chart frames that a keyboard reaches, and the page's type
    enlarged when presenting (constants: nothing a user typed is in them)."""
    st.html(BASE_CSS)
    st.sidebar.html(FOCUSABLE_FRAMES, unsafe_allow_javascript=True)
    if presenting():
        st.html(CSS)

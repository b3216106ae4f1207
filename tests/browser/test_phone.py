"""A phone (390 x 844, an iPhone 12 to 15 in portrait): no page is wider than the screen, a chart frame that
scrolls can be reached by keyboard, and presenter mode leaves the Share button within reach.

A page wider than the viewport scrolls sideways as a whole, sidebar toggle and text included; a wide chart
must fit or scroll inside its own frame instead (ui/state/presenter.py BASE_CSS). Vega draws a chart after
the script has finished, so each check first waits until every chart holds its svg or canvas. What it
needs and how it skips without it: tests/browser/harness.py; one server for the module, one browser.
"""

from __future__ import annotations

import re

import pytest

from lessons import COURSE
from tests.browser.harness import CHART, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, expect, wait_until_drawn
from ui.frame import glossary

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PHONE = {"width": 390, "height": 844}
PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH]  # "" is the home page
# The page's width: the document's, and that of Streamlit's main area, which scrolls by itself (a page can be
# exactly as wide as the screen while its main area scrolls sideways).
WIDTHS = """() => [Math.max(document.documentElement.scrollWidth,
                            ...[...document.querySelectorAll('[data-testid="stMain"]')].map(m => m.scrollWidth)),
                   window.innerWidth]"""
# What is wider than the viewport, for the failure message: the widest elements that stick out on the right.
TOO_WIDE = """() => {
    const w = window.innerWidth;
    return [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > w + 1)
        .map(e => `${e.tagName.toLowerCase()}${e.dataset.testid ? '[' + e.dataset.testid + ']' : ''}`
                  + ` right=${Math.round(e.getBoundingClientRect().right)}`)
        .slice(0, 8);
}"""
# Each chart: drawn, inside the viewport, and, when its drawing is wider than its frame, the frame scrolls.
CHARTS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(c => {
    const drawing = c.querySelector('svg.marks, canvas.marks');
    const style = getComputedStyle(c);
    return {drawn: !!drawing, drawing: drawing ? Math.round(drawing.getBoundingClientRect().width) : 0,
            frame: c.clientWidth, scrolls: c.scrollWidth > c.clientWidth + 1, focusable: c.tabIndex >= 0,
            overflow: style.overflowX, right: Math.round(c.getBoundingClientRect().right)};
})"""


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


# Every frame that scrolls can be focused (ui/state/presenter.py FOCUSABLE_FRAMES marks them once a chart is drawn)
SCROLLING_FRAMES_FOCUSABLE = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
    .filter(c => c.scrollWidth > c.clientWidth + 1).every(c => c.tabIndex >= 0)"""


@pytest.mark.parametrize("path", PAGES, ids=[p or "home" for p in PAGES])
def test_no_page_is_wider_than_a_phone(server, phone, path):
    phone.goto(f"{server.url}/{path}")
    wait_until_drawn(phone)
    phone.wait_for_function(SCROLLING_FRAMES_FOCUSABLE, timeout=RERUN_TIMEOUT_MS)
    width, inner = phone.evaluate(WIDTHS)
    assert width <= inner, f"{path or 'home'}: the page is {width} px wide on a {inner} px screen: " \
                           f"{phone.evaluate(TOO_WIDE)}"
    for chart in phone.evaluate(CHARTS):
        assert chart["drawn"], f"{path or 'home'}: a chart was not drawn: {chart}"
        assert chart["right"] <= inner + 1, f"{path or 'home'}: a chart sticks out of the screen: {chart}"
        if chart["drawing"] > chart["frame"] + 1:  # wider than its frame: it must scroll there, not be cut off
            assert chart["scrolls"] and chart["overflow"] in ("auto", "scroll"), \
                f"{path or 'home'}: a wide chart neither fits nor scrolls in its frame: {chart}"
        if chart["scrolls"]:  # a keyboard must reach what scrolls (WCAG 2.1.1)
            assert chart["focusable"], f"{path or 'home'}: a scrolling chart frame cannot be focused: {chart}"


def test_a_wide_chart_scrolls_in_its_own_frame(server, phone):
    """The multi-head page's grid of heads is wider than a phone: its frame scrolls and shows the rest, and a
    keyboard reaches it: the frame takes the focus (as Tab gives it), and the arrow keys scroll it."""
    phone.goto(f"{server.url}/multi-head")
    wait_until_drawn(phone)
    wide = [i for i, c in enumerate(phone.evaluate(CHARTS)) if c["drawing"] > c["frame"] + 1]
    if not wide:
        pytest.skip("no chart on the page is wider than a phone's screen")
    frame = phone.locator(CHART).nth(wide[0])
    # by keyboard: the frame takes the focus and the arrow key scrolls it
    phone.wait_for_function(SCROLLING_FRAMES_FOCUSABLE, timeout=RERUN_TIMEOUT_MS)
    frame.focus()
    expect(frame).to_be_focused()
    phone.keyboard.press("ArrowRight")
    phone.wait_for_function("c => c.scrollLeft > 0", arg=frame.element_handle(), timeout=RERUN_TIMEOUT_MS)
    width, inner = phone.evaluate(WIDTHS)
    assert width <= inner


def test_presenter_mode_keeps_the_share_button(server, browser):
    """Switching presenter mode on leaves the sidebar open with its Share button; a present=true link opens
    with the sidebar folded, and one click on its arrow brings Share back."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{server.url}/qkv")
        wait_until_drawn(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        share = sidebar.get_by_role("button", name="Share this view")
        expect(share).to_be_visible()
        sidebar.get_by_text("Presenter mode", exact=True).click()  # its label: the switch itself is covered
        page.wait_for_url(re.compile(r"present=true"), timeout=RERUN_TIMEOUT_MS)
        wait_until_drawn(page)
        page.wait_for_timeout(1000)  # a fold of the sidebar would be animated after the run
        expect(sidebar.get_by_role("switch", name="Presenter mode")).to_be_checked()
        expect(sidebar).to_be_visible()
        expect(share).to_be_in_viewport()

    finally:
        context.close()
    # the link opened elsewhere (a student's laptop, the projector): a browser of its own
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{server.url}/qkv?present=true")
        wait_until_drawn(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        expect(sidebar).to_be_hidden()
        page.locator('[data-testid="stExpandSidebarButton"]').first.click()
        share = sidebar.get_by_role("button", name="Share this view")
        expect(share).to_be_in_viewport(timeout=RERUN_TIMEOUT_MS)
    finally:
        context.close()

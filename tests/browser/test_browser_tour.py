"""A user's tour in headless Chromium: a long prompt keeps the layers x heads grid's labels readable, the
characters inside an emoji are named where they would show nothing, and no page asks anything of a
server other than the app's own (the app must work offline).

What it needs and how it skips without it: tests/browser/harness.py.
"""

from __future__ import annotations

import itertools
from urllib.parse import quote, urlparse

import pytest

from lessons import COURSE
from tests.browser.harness import EXCEPTION, IDLE, PAGE_TIMEOUT_MS, expect
from ui.drawing.charts import MIN_LABEL_PX

# These tests measure where each axis label of the grid was drawn. The maps are drawn as svg here, laid out exactly as
# on the canvas a student sees, so that every label is an element to measure (conftest.py).
CHART_RENDERER = "svg"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

URL_PATHS = {lesson.url_path for lesson in COURSE}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
LONG_PROMPT = "abcdefghijklmnopqrstuvwxyz"  # 26 characters: the grid's labels were 6 px type, letters 4 px high


@pytest.fixture
def page(browser):
    """A tab that records every address it asks for and lets none leave the machine (as offline)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.asked = []
    context.on("request", lambda request: context.asked.append(request.url))
    context.route(lambda url: not local(url), lambda route: route.abort())
    tab = context.new_page()
    tab.on("websocket", lambda ws: context.asked.append(ws.url))
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def local(url: str) -> bool:
    """An address that needs no network: on this machine, or data carried in the address itself."""
    parts = urlparse(url)
    return parts.scheme in ("data", "blob", "about") or parts.hostname in LOCAL_HOSTS


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)


# The labels Vega drew (it hides those it leaves out with opacity 0) on each axis of the chart whose text
# holds `title`, once every axis shows at least `least`: [[font size in px, top, bottom, left, right] per
# label] per axis; null before then.
DRAWN_LABELS = """([title, least]) => {
    const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .find(c => c.textContent.includes(title));
    if (!chart) return null;
    const axes = [...chart.querySelectorAll('.role-axis-label')].map(axis =>
        [...axis.querySelectorAll('text')].filter(t => t.getAttribute('opacity') !== '0').map(t => {
            const box = t.getBoundingClientRect();
            return [parseFloat(getComputedStyle(t).fontSize), box.top, box.bottom, box.left, box.right];
        }));
    return axes.length >= 2 && axes.every(labels => labels.length >= least) ? axes : null;
}"""


def overlap(a: list[float], b: list[float]) -> bool:
    """Two labels [size, top, bottom, left, right] whose centres are less than a type size apart both ways
    (a text's box is its line's, taller than its letters: neighbours' boxes touch without their letters)."""
    size = min(a[0], b[0])
    return abs((a[1] + a[2]) - (b[1] + b[2])) / 2 < size and abs((a[3] + a[4]) - (b[3] + b[4])) / 2 < size


def test_long_prompt_keeps_the_grid_labels_readable(server, page):
    """26 characters on 6 px cells: the labels stay at MIN_LABEL_PX or more, every other one left out, and
    those drawn do not overlap; the grid stays within the page."""
    open_page(page, f"{server.url}/model?fm_prompt={quote(LONG_PROMPT)}")
    # every other label of 26 drawn on every axis of the grid
    axes = page.wait_for_function(DRAWN_LABELS, arg=["layers x", len(LONG_PROMPT) // 2],
                                  timeout=PAGE_TIMEOUT_MS).json_value()
    for labels in axes:
        assert min(size for size, *_ in labels) >= MIN_LABEL_PX, labels
        assert not any(overlap(a, b) for a, b in itertools.pairwise(labels)), labels
    width = page.locator('[data-testid="stVegaLiteChart"]', has_text="layers x").locator("svg").first.evaluate(
        "svg => svg.getBoundingClientRect().width")
    assert width <= 1100, width
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_characters_inside_an_emoji_are_named(server, page):
    """The joiner inside 👩‍💻 and the variation selector of ❤️ draw nothing: the page names them."""
    open_page(page, f"{server.url}/model?fm_prompt={quote('👩‍💻 ❤️ ok')}")
    warning = page.locator('[data-testid="stAlert"]', has_text="not in the model's vocabulary")
    expect(warning.locator("code", has_text="U+200D")).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    expect(warning.locator("code", has_text="U+FE0F")).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    # every label of the grid holds something to see
    axes = page.wait_for_function(DRAWN_LABELS, arg=["layers x", 1], timeout=PAGE_TIMEOUT_MS).json_value()
    blank = page.locator('[data-testid="stVegaLiteChart"]', has_text="layers x").locator(
        ".role-axis-label text").evaluate_all("ts => ts.filter(t => !t.textContent.trim()).length")
    assert axes and blank == 0


def test_no_request_leaves_the_machine(server, page):
    """The home page, a lesson reached from it and a lesson opened by its link ask only the app's server
    (the page icon was fetched from a font server, and failed offline)."""
    open_page(page, server.url)
    icon = "() => (document.querySelector(\"link[rel='shortcut icon']\") || {}).href || ''"
    page.wait_for_function(f"() => ({icon})().startsWith('data:')", timeout=PAGE_TIMEOUT_MS)  # the app's own icon
    lessons = COURSE
    first, last = lessons[0], lessons[-1]
    page.locator('[data-testid="stSidebarNav"]').get_by_text(first.title, exact=True).click()
    expect(page.locator("h1", has_text=first.title)).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)
    open_page(page, f"{server.url}/{last.url_path}")
    expect(page.locator("h1", has_text=last.title)).to_have_count(1, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function(f"() => ({icon})().startsWith('data:')", timeout=PAGE_TIMEOUT_MS)
    asked = page.context.asked
    assert asked and any(urlparse(u).hostname in LOCAL_HOSTS for u in asked)
    assert [u for u in asked if not local(u)] == []

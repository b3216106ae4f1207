"""The real app in headless Chromium: deep links on a fresh server, a keyboard-driven slider, hostile links.

What it needs and how it skips without it: tests/browser/harness.py.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from lessons import COURSE
from lessons.masking import mistakes
from tests.browser.harness import (
    CHART,
    EXCEPTION,
    PAGE_TIMEOUT_MS,
    RERUN_TIMEOUT_MS,
    Server,
    chart,
    expect,
    serve,
    stop_all,
    wait_for_cells,
    wait_until_drawn,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# The maps of `server` are drawn as svg, laid out as on the canvas a student sees (conftest.py): a keyboard move is
# checked by counting each map's cells and reading its shape line, which a canvas keeps as pixels. The fresh
# servers of the deep-link tests draw on a canvas, as a student's does.
CHART_RENDERER = "svg"

LESSONS = COURSE


@pytest.fixture(scope="module")
def fresh_servers():
    """One server per lesson, none of which has served anything yet (started together to save time)."""
    servers = dict(zip([lesson.url_path for lesson in LESSONS], serve(Server, len(LESSONS))))
    try:
        yield servers
    finally:
        stop_all(servers.values())


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    tab.dialogs = []  # every alert/confirm/prompt the page tries to open
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    try:
        yield tab
    finally:
        context.close()


# ---- (a) deep links on a fresh server ---------------------------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.url_path for lesson in LESSONS])
def test_deep_link_is_the_first_request(fresh_servers, page, lesson):
    """/<page> as the very first request a server gets: the lesson, with the app around it, no error."""
    srv = fresh_servers[lesson.url_path]
    page.goto(f"{srv.url}/{lesson.url_path}")
    wait_until_drawn(page)
    expect(page.locator("h1").first).to_contain_text(lesson.title, ignore_case=True)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    # the entry script ran: the navigation lists the home page and the lesson
    nav = page.locator('[data-testid="stSidebarNav"]')
    expect(nav.get_by_text("Home", exact=True)).to_have_count(1)  # exact: a Material icon is the text "home"
    expect(nav.get_by_text(lesson.title, exact=True)).to_have_count(1)
    assert not page.dialogs


# ---- (b) a slider moved with the keyboard redraws the charts ----------------------------------------


def test_keyboard_slider_redraws_the_chart(server, page):
    page.goto(f"{server.url}/qkv")
    wait_until_drawn(page)
    q_title = "Q, K, V"  # Q, K and V: the three panels of one chart
    wait_for_cells(page, q_title, 7, 8, maps=3)  # T = 7 tokens, d_k = 8
    before = chart(page, q_title).screenshot()
    assert "d_k" not in page.url

    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="d_k (query/key size)")
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**d_k=9**", timeout=RERUN_TIMEOUT_MS)
    wait_for_cells(page, q_title, 7, 9, maps=3)
    assert chart(page, q_title).screenshot() != before

    slider.focus()  # the run just ended may have drawn the slider again
    page.keyboard.press("End")
    page.wait_for_url("**d_k=64**", timeout=RERUN_TIMEOUT_MS)
    wait_for_cells(page, q_title, 7, 64, maps=3)  # the run for d_k = 64 has begun, so the next wait is for its end
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    expect(slider).to_have_attribute("aria-valuetext", "64")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    # the scores keep their (T, T) shape whatever d_k is
    wait_for_cells(page, "scores = Q K", 7, 7)

    # the URL it wrote is a working link: opened in a new tab, it shows the same view
    other = page.context.new_page()
    other.set_default_timeout(PAGE_TIMEOUT_MS)
    other.goto(page.url)
    wait_until_drawn(other)
    wait_for_cells(other, q_title, 7, 64, maps=3)
    other.close()


# ---- (c) an aside, shut until opened ----------------------------------------------------------------


def test_an_aside_opens_from_the_keyboard_and_stays_open_in_its_link(server, page):
    """Masking's four mistakes are shut until opened: Enter on the aside's summary draws them (its 7 maps on
    screen), the address bar says so, a reload keeps them open, and Enter again shuts them and clears the link."""
    heading = page.get_by_role("heading", name="Mistake 1: masking after the softmax")
    aside = page.locator('[data-testid="stExpander"]').filter(has_text=mistakes.TITLE)
    page.goto(f"{server.url}/masking")
    wait_until_drawn(page)
    expect(heading).to_have_count(0)
    summary = aside.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{mistakes.OPEN_KEY}=true**", timeout=RERUN_TIMEOUT_MS)
    expect(heading).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(aside.locator(f"{CHART} :is(canvas, svg.marks)")).to_have_count(7, timeout=RERUN_TIMEOUT_MS)
    expect(page.locator(EXCEPTION)).to_have_count(0)

    page.reload()
    wait_until_drawn(page)
    expect(heading).to_be_visible()
    aside.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(heading).to_have_count(0, timeout=RERUN_TIMEOUT_MS)
    page.wait_for_function(f"() => !location.search.includes({mistakes.OPEN_KEY!r})", timeout=RERUN_TIMEOUT_MS)


# ---- (d) a hostile link -----------------------------------------------------------------------------


HOSTILE = {"d_k": "99999", "text": "<img src=x onerror=alert(1)>", "heads": "7"}


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS if lesson.url_path in ("qkv", "multi-head")],
                         ids=lambda lesson: lesson.url_path)
def test_hostile_link(server, page, lesson):
    query = "&".join(f"{k}={quote(v)}" for k, v in HOSTILE.items())
    page.goto(f"{server.url}/{lesson.url_path}?{query}")
    wait_until_drawn(page)
    expect(page.locator(CHART).first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    # the unusable values are reported, and the user's text is shown as text
    if lesson.url_path == "qkv":
        expect(page.get_by_text("The link set d_k to 99999")).to_have_count(1)
        expect(page.locator("code", has_text="img").first).to_be_visible()
    else:
        expect(page.get_by_text("The link set heads to 7")).to_have_count(1)
    # the text reached the text box verbatim
    expect(page.locator('[data-testid="stSidebar"] textarea')).to_have_value(HOSTILE["text"])
    # What must not happen has no event to wait for: an injected onerror handler would have fired by now
    # (the page is drawn), and this pause gives a late one its chance.
    page.wait_for_timeout(500)
    assert not page.dialogs
    expect(page.locator('img[src="x"]')).to_have_count(0)
    assert page.evaluate("() => [...document.images].filter(i => i.getAttribute('src') === 'x').length") == 0


# ---- (d) health -------------------------------------------------------------------------------------


def test_health(server):
    assert server.health() == "ok"
    assert server.proc.poll() is None

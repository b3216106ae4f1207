"""A phone (390 x 844, an iPhone 12 to 15 in portrait): no page is wider than the screen, a chart frame that
scrolls can be reached by keyboard, and presenter mode leaves the Share button within reach.

A page wider than the viewport scrolls sideways as a whole, sidebar toggle and text included; a wide chart
must fit or scroll inside its own frame instead (ui/state/presenter.py BASE_CSS). Vega draws a chart after
the script has finished, so each check first waits until every chart holds its svg or canvas. What it
needs and how it skips without it: tests/browser/harness.py; one server for the module, one browser.
"""

from __future__ import annotations

import contextlib
import re

import pytest

from lessons import COURSE
from tests.browser.harness import CHART, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, expect, wait_until_drawn
from ui.frame import glossary

# These tests measure where each legend and label was drawn at a phone's width. The maps are drawn as svg here, laid
# out exactly as on the canvas a student sees, so that every label is an element to measure (conftest.py).
CHART_RENDERER = "svg"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# A phone's browser says it is one in its User-Agent ("Mobile"): a grid of maps is laid out for a phone by it.
PHONE_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 "
               "Mobile Safari/537.36")
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
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True, has_touch=True,
                                  user_agent=PHONE_AGENT)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


# Every frame that scrolls, a chart's or a table's, can be focused (ui/state/presenter.py FOCUSABLE_FRAMES marks them
# once a chart is drawn)
SCROLLING_FRAMES_FOCUSABLE = """() => [...document.querySelectorAll(
        '[data-testid="stVegaLiteChart"], [data-testid="stMarkdownContainer"]:has(> table)')]
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
    """QKV's rows of "bank" are wider than a phone (a grid of maps is one map wide there): its frame scrolls and
    shows the rest, and a keyboard reaches it: the frame takes the focus (as Tab gives it), and the arrow keys
    scroll it."""
    phone.goto(f"{server.url}/qkv")
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


# ---- legends, grids, the main control, and presenter mode's tables ------------------------------------------

# Each visible chart's colour legend against its frame: a legend cut by the frame showed "1 / 0 / 0" for 0, 0.5, 1.
LEGENDS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].filter(c => c.offsetParent)
    .flatMap(c => { const f = c.getBoundingClientRect();
        return [...c.querySelectorAll('g.role-legend')].map(l => { const r = l.getBoundingClientRect();
            return {left: r.left - f.left, right: f.right - r.right, labels: [...l.querySelectorAll('text')]
                    .map(t => t.textContent), chart: c.textContent.slice(0, 40)}; }); })"""

@pytest.mark.parametrize("path", ["qkv", "multi-head", "model", "training"])
def test_no_legend_is_cut_by_its_frame_on_a_phone(server, phone, path):
    phone.goto(f"{server.url}/{path}")
    wait_until_drawn(phone)
    legends = phone.evaluate(LEGENDS)
    assert legends, f"{path}: no chart with a colour legend is shown"
    for legend in legends:
        assert legend["left"] >= -1 and legend["right"] >= -1, f"{path}: a legend is cut by its frame: {legend}"
    weights = [legend["labels"] for legend in legends if legend["labels"][:1] == ["0"]]
    assert ["0", "0.5", "1"] in weights, f"{path}: no weights legend reads 0, 0.5, 1: {legends}"


def test_a_grid_of_maps_reflows_on_a_phone(server, phone):
    """Multi-head's four maps stand four to a row on a wide screen; on a phone they stand two to a row, all four
    inside the screen, so a student compares the heads without scrolling sideways (ui.sections.views.grid_layout)."""
    phone.goto(f"{server.url}/multi-head?heads=4")
    wait_until_drawn(phone)
    grid = phone.locator(f'{CHART}[aria-label^="Grid of heatmaps, Attention weights, one map per head"]')
    expect(grid).to_have_count(1)
    expect(grid).to_be_visible()
    expect(grid).not_to_have_attribute("data-scroll-frame", re.compile(".*"))
    fits = grid.evaluate("""frame => ({drawing: frame.scrollWidth, frame: frame.clientWidth,
                                       right: frame.getBoundingClientRect().right, screen: window.innerWidth})""")
    assert fits["drawing"] <= fits["frame"] + 1 and fits["right"] <= fits["screen"], fits
    # two rows of two maps: taller than wide
    box = grid.bounding_box()
    assert box["height"] > box["width"], box


@contextlib.contextmanager
def desktop(browser, width: int = 1400, height: int = 1000):
    """A tab of a desktop browser (its own context) at this size, closed after."""
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def test_a_wide_screen_keeps_the_wide_grid(server, browser):
    """The same link on a desktop browser: the grid as wide as the page lays it out, far wider than a phone's
    column (the phone's layout is the phone's alone)."""
    with desktop(browser) as tab:
        tab.goto(f"{server.url}/multi-head?heads=4")
        wait_until_drawn(tab)
        grid = tab.locator(f'{CHART}[aria-label^="Grid of heatmaps, Attention weights, one map per head"]')
        expect(grid).to_be_visible()
        box = grid.bounding_box()
        assert box["width"] > 2 * PHONE["width"], box


PANEL_PAGES = ["qkv", "qkv?weights=trained", "multi-head", "qkv?d_k=16", "qkv?d_k=64"]
PANELS = f'{CHART}[aria-label^="Heatmaps titled "]'  # maps of one shape as the panels of one chart
# each chart of panels: its drawing's width, its frame's and the main column's (inside its padding)
PANEL_WIDTHS = """charts => charts.map(c => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const style = getComputedStyle(main);
    return {drawing: Math.round(c.querySelector('svg.marks, canvas.marks').getBoundingClientRect().width),
            column: Math.round(main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)),
            box: c.getBoundingClientRect().height};
})"""


@pytest.mark.parametrize("path", PANEL_PAGES)
def test_maps_drawn_as_panels_stand_one_a_row_on_a_phone(server, phone, path):
    """QKV's W_Q, W_K, W_V and Q, K, V, and Multi-head's Q, K, V of a head: one chart each (ui.drawing.panels),
    whose panels stand one under another on a phone, inside its column, whatever d_k and the labels."""
    phone.goto(f"{server.url}/{path}")
    wait_until_drawn(phone)
    charts = phone.locator(PANELS)
    expect(charts.first).to_be_visible()
    for fit in charts.evaluate_all(PANEL_WIDTHS):
        assert fit["drawing"] <= fit["column"], f"{path}: {fit}"
        assert fit["box"] > fit["drawing"], f"{path}: three panels one under another are taller than wide: {fit}"


@pytest.mark.parametrize("path", PANEL_PAGES)
def test_maps_drawn_as_panels_fit_a_desktop_column(server, browser, path):
    """At 1280 x 720, the sidebar open, each chart of panels fits the main column (ui.drawing.panels.layout's
    measures of a panel are Chromium's), three to a row where their cells have room (QKV's defaults)."""
    with desktop(browser, 1280, 720) as tab:
        tab.goto(f"{server.url}/{path}")
        wait_until_drawn(tab)
        charts = tab.locator(PANELS)
        expect(charts.first).to_be_visible()
        fits = charts.evaluate_all(PANEL_WIDTHS)
        assert all(fit["drawing"] <= fit["column"] for fit in fits), f"{path}: {fits}"
        if path == "qkv":  # at the defaults each chart's three panels stand side by side: wider than tall
            assert all(fit["drawing"] > fit["box"] for fit in fits), fits


def test_the_main_control_and_its_chart_are_in_view_together_on_a_phone(server, phone):
    """Multi-head is about heads: on a phone, with the sidebar folded, the heads slider is on screen beside the
    maps of the heads, and moving it (by keyboard) changes them, its value kept in the link."""
    phone.goto(f"{server.url}/multi-head")
    wait_until_drawn(phone)
    expect(phone.locator('[data-testid="stExpandSidebarButton"]').first).to_be_visible()  # the sidebar is folded
    slider = phone.get_by_role("slider", name="Heads (divisors of d_model)")
    control = phone.locator('[data-testid="stSidebar"] .st-key-heads')  # the input itself is drawn 0 px high
    grid = phone.locator(CHART, has_text="head 2").locator("visible=true").first
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_in_viewport()
    expect(control).to_be_in_viewport()
    expect(phone.locator(CHART, has_text="head 3")).to_have_count(0)
    slider.focus()
    phone.keyboard.press("ArrowRight")  # the divisors of 16: 1, 2, 4, ...
    phone.wait_for_url(re.compile(r"heads=4"), timeout=RERUN_TIMEOUT_MS)
    grid = phone.locator(CHART, has_text="head 4").locator("visible=true").first
    expect(grid).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_in_viewport()
    expect(control).to_be_in_viewport()
    # opened, the sidebar shows every control again, the heads slider among them
    phone.locator('[data-testid="stExpandSidebarButton"]').first.click()
    sidebar = phone.locator('[data-testid="stSidebar"]')
    expect(sidebar.locator(".st-key-seed")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(sidebar.get_by_role("button", name="Share this view")).to_be_visible()


IN_REACH = [("qkv", "d_k"), ("scaling", "d_k"), ("masking", "d_k"), ("communication", "d_k"),
            ("training", "tr_steps"), ("bigram", "bg_alpha"), ("tiles", "tl_block")]


@pytest.mark.parametrize(("path", "key"), IN_REACH, ids=[path for path, _ in IN_REACH])
def test_each_lesson_keeps_its_main_control_in_reach_on_a_phone(server, phone, path, key):
    """With the sidebar folded, the lesson's main control is on screen wherever the student has scrolled to, and
    the sidebar's other controls are not (they wait in the opened sidebar)."""
    phone.goto(f"{server.url}/{path}")
    wait_until_drawn(phone)
    expect(phone.locator('[data-testid="stExpandSidebarButton"]').first).to_be_visible()
    control = phone.locator(f'[data-testid="stSidebar"] .st-key-{key}')
    expect(control).to_be_in_viewport()
    phone.locator(CHART).last.scroll_into_view_if_needed()
    expect(control).to_be_in_viewport()
    expect(phone.locator('[data-testid="stSidebar"] .st-key-seed')).to_be_hidden()


TABLE = '[data-testid="stMarkdownContainer"] > table'  # a table of numbers (ui/drawing/tables.py)
# Every table cell's type size, and the interactive tables' count (drawn on a canvas no page style reaches)
TABLE_TYPE = """() => {
    const main = document.querySelector('.stMainBlockContainer');
    return {cells: [...main.querySelectorAll('""" + TABLE + """ :is(td, th)')]
                .filter(c => c.offsetParent && c.textContent.trim()).map(c => parseFloat(getComputedStyle(c).fontSize)),
            canvases: main.querySelectorAll('[data-testid="stDataFrame"]').length}; }"""
# The type of the Query row box's value (a box one can type in to search the tokens: its input shows the value)
QUERY_VALUE = """() => [...document.querySelectorAll('.stMainBlockContainer .st-key-query input')]
    .map(e => [e.value, parseFloat(getComputedStyle(e).fontSize)])"""
# The page's column (its right edge, less its padding) and what of each chart is drawn past it
PAST_THE_COLUMN = """() => { const main = document.querySelector('.stMainBlockContainer');
    const right = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
    return [...main.querySelectorAll('[data-testid="stVegaLiteChart"], """ + TABLE + """')]
        .filter(c => c.offsetParent)
        .map(c => ({past: Math.round(c.getBoundingClientRect().right - right), what: c.textContent.slice(0, 40)}))
        .filter(c => c.past > 1); }"""


@pytest.mark.parametrize("path", ["qkv", "circuit", "model"])
def test_presenter_tables_read_from_the_back_of_a_room(server, browser, path):
    """At 1280 x 720 in presenter mode every table's cells are 20 px or more (the worked example on QKV, the
    knockout and share tables on the circuit, the guess table on the full model), the Query row shows its value as
    large, and nothing is wider than the page's column (the full model's layers x heads grid was 49 px wider)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.url}/{path}?present=true")
        wait_until_drawn(page)
        expect(page.locator(f"{TABLE} td").first).to_be_visible(timeout=RERUN_TIMEOUT_MS)
        tables = page.evaluate(TABLE_TYPE)
        assert tables["canvases"] == 0, f"{path}: {tables['canvases']} canvas tables in presenter mode"
        assert min(tables["cells"]) >= 20, f"{path}: table cells of {min(tables['cells'])} px: {tables['cells']}"
        if path == "qkv":
            shown = page.evaluate(QUERY_VALUE)
            assert shown and all(size >= 20 for _, size in shown), f"the Query row's value: {shown}"
        assert page.evaluate(PAST_THE_COLUMN) == [], f"{path}: wider than the column: {page.evaluate(PAST_THE_COLUMN)}"
        assert errors == []
    finally:
        context.close()


def opening_words(path: str) -> str:
    """The first words of the lesson's Simple idea, as the page shows them."""
    from tools.reading_level import plain
    from ui.frame import prose

    lesson = next(lesson for lesson in COURSE if lesson.url_path == path)
    return " ".join(plain(prose.simple_parts(lesson.name)["idea"]).split()[:5])


@pytest.mark.parametrize("path", [lesson.url_path for lesson in COURSE])
def test_the_simple_level_reads_on_a_phone_in_the_dark(server, browser, path):
    """Each lesson's Simple text (lessons/<lesson>/simple.md) as a student alone at night opens it: every chart
    drawn, nothing wider than the screen, no script error or traceback, and axe finds no serious violation."""
    from tests.browser.axe_check import STILL, report, serious_violations
    from tests.browser.harness import EXCEPTION

    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, color_scheme="dark",
                                  reduced_motion="reduce")
    errors: list[str] = []
    try:
        context.add_init_script(STILL)
        tab = context.new_page()
        tab.set_default_timeout(PAGE_TIMEOUT_MS)
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(f"{server.url}/{path}?level=simple")
        wait_until_drawn(tab)
        expect(tab.get_by_text(opening_words(path), exact=False).first).to_be_visible()  # the Simple text
        expect(tab.locator(EXCEPTION)).to_have_count(0)
        width, inner = tab.evaluate(WIDTHS)
        assert width <= inner, f"{path}: the page is {width} px wide on a {inner} px screen"
        assert all(chart["drawn"] for chart in tab.evaluate(CHARTS)), f"{path}: a chart was not drawn"
        serious = serious_violations(tab)
        assert not serious, f"{path} at Simple:\n{report(serious)}"
        assert not errors, errors
    finally:
        context.close()

"""What a student sees in Chromium: every chart drawn, no JavaScript error, a click on a row of the weights
picking that query, links and pasted text corrected in the address bar and the box, in light and dark themes.

AppTest sees the specs the server sends, never whether Vega could draw them: a spec whose selection
Vega cannot resolve passes every AppTest test and draws a blank box here. Vega draws after the script
has finished, so every check waits for what it asserts (Playwright's expect, wait_for_function).
What it needs and how it skips without it: tests/browser/harness.py.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from lessons import COURSE
from tests.browser.harness import (
    EXCEPTION,
    IDLE,
    PAGE_TIMEOUT_MS,
    RERUN_TIMEOUT_MS,
    PlaywrightTimeout,
    expect,
    wait_until_drawn,
)
from ui.drawing.colours import contrast
from ui.state.controls import DEFAULT_TEXT, MAX_TEXT_CHARS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

LESSONS = {lesson.url_path: lesson for lesson in COURSE}
PAGES = ["", *LESSONS]  # "" is the home page
THEMES = ("light", "dark")
CHART = '[data-testid="stVegaLiteChart"]'
CELL = 'path[aria-roledescription="rect mark"]'
CAPTION = '[data-testid="stCaptionContainer"]'
# Pages whose weights map a student clicks, and the title that map carries.
CLICKABLE = {"qkv": "softmax(Q Kᵀ / √d_k)", "scaling": "weights: click a row",
             "masking": "weights with the causal mask", "multi-head": "weights: click a row"}
# One link per page with settings other than the defaults, as a teacher would share it.
SHARED = {
    "": "",
    "qkv": "text=the+dog+saw+a+small+cat&d_k=12&seed=3&query=saw",
    "scaling": "d_k=100&attn_temp=0.5&seed=2&scaling_on=false&query=cat",
    "masking": "masking_pos=2&masking_word=fish&seed=4&query=sat",
    "multi-head": "heads=4&mh_head=2&mh_causal=true&query=on",
    "communication": "comm_keep=0.8&comm_positions=true&comm_shuffle=5&weights=trained",
    "block": "block_prompt=def+f(x):+return+x&block_layer=2&block_pos=5&block_depth=24&seed=3",
    "tiles": "tl_block=3&tl_step=2&tl_causal=false",
    "bigram": "bg_top=20&bg_alpha=0.5&bg_length=50",
    "model": "fm_prompt=def+f(x):&fm_top_k=5&fm_top_p=0.8&fm_n_chars=40&fm_hv_layer=layer+2",
    "circuit": "ci_length=12",
    "training": "present=true",
    "ladder": "ld_unit=bits&ld_rung=more+blocks&ld_gap_rung=%2B+residuals&ld_prompt=def+f(x):+return+x",
}
# Streamlit's frontend asks for these under the page's own path before it tries the root; the 404s are
# its own probing, logged by the browser as failed loads, not an error of the app.
PROBES = re.compile(r"/_stcore/(health|host-config)$")
SUBTITLE = "g.role-title-subtitle text"


class Tab:
    """A page in a fresh browser context of the given theme (the app follows the system's), with every
    uncaught error and console error it logs."""

    def __init__(self, browser, theme: str = "light", width: int = 1400, height: int = 1000):
        self.context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=theme)
        self.page = self.context.new_page()
        self.page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.page.on("console", self._console)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        if message.text.startswith("Failed to load resource") and PROBES.search(message.location.get("url", "")):
            return
        self.errors.append(f"console: {message.text} ({message.location.get('url', '')})")

    def open(self, url: str) -> Tab:
        self.page.goto(url)
        settle(self.page)
        return self

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tabs(browser):
    opened: list[Tab] = []

    def make(theme: str = "light", **size) -> Tab:
        opened.append(Tab(browser, theme, **size))
        return opened[-1]

    yield make
    for tab in opened:
        tab.close()


def settle(page) -> None:
    """The page shows its title and then the script has finished. In that order: before the first run
    starts the app also says it is not running."""
    page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)


def wait_for_every_chart(page) -> int:
    """Wait until every chart on the page holds an svg or a canvas; fail naming those still blank."""
    try:
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                    .every(c => c.querySelector('svg, canvas'))""", timeout=RERUN_TIMEOUT_MS)
    except Exception as timeout:
        blank = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
            .filter(c => !c.querySelector('svg, canvas'))
            .map(c => c.getAttribute('aria-label') || c.textContent.slice(0, 80))""")
        raise AssertionError(f"charts never drawn: {blank}") from timeout
    return page.locator(CHART).count()


def assert_clean(tab: Tab) -> None:
    expect(tab.page.locator(EXCEPTION)).to_have_count(0)
    assert not tab.errors, tab.errors


def background(page) -> tuple[int, int, int]:
    css = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
    return tuple(int(v) for v in re.findall(r"\d+", css)[:3])


def query_of(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query, keep_blank_values=True)


# ---- every chart draws, no error ---------------------------------------------------------------------


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("path", PAGES, ids=[p or "home" for p in PAGES])
def test_every_chart_draws_at_the_defaults(server, tabs, path, theme):
    tab = tabs(theme).open(f"{server.url}/{path}")
    luminance_ok = (sum(background(tab.page)) > 600) == (theme == "light")
    assert luminance_ok, (theme, background(tab.page))  # the theme asked for is the one drawn
    if path in CLICKABLE or path in ("model", "bigram", "tiles"):  # a lesson with matrices draws charts
        expect(tab.page.locator(CHART).first).to_be_attached(timeout=RERUN_TIMEOUT_MS)
    wait_for_every_chart(tab.page)
    assert_clean(tab)


@pytest.mark.parametrize("path", PAGES, ids=[p or "home" for p in PAGES])
def test_every_chart_draws_at_a_shared_link(server, tabs, path):
    tab = tabs("dark").open(f"{server.url}/{path}?{SHARED[path]}")
    wait_for_every_chart(tab.page)
    assert_clean(tab)


# ---- a click on a row picks that query -------------------------------------------------------------


def weights_map(page, path: str):
    return page.locator(CHART, has_text=CLICKABLE[path]).first


# What is under the pointer at each click (the heatmap cell's label where there is one), so that a click that
# picked nothing can say where it landed.
RECORD_CLICKS = """() => {
    if (window.clicksSeen) return;
    window.clicksSeen = [];
    document.addEventListener('click', e => window.clicksSeen.push(document.elementsFromPoint(e.clientX, e.clientY)
        .map(el => el.getAttribute && el.getAttribute('aria-label')).find(Boolean) || e.target.tagName), true);
}"""
# An element's box is the same in two readings at least two animation frames and 100 ms apart.
STILL = """el => new Promise(done => {
    const box = () => JSON.stringify(el.getBoundingClientRect());
    const first = box();
    setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => done(box() === first))), 100);
})"""


def click_row(page, path: str, label: str) -> None:
    """Click the middle of the first cell of row `label` in the page's weights map, as a mouse does (the
    cell's number sits on top of it and takes the click, as it does for a student).

    A click goes to a point on the screen, so first nothing may still move the cell away from it: the page
    drawn (harness.wait_until_drawn: every chart, no skeleton, every font), then the cell's box unchanged
    over 100 ms. (Under load a click read its box too early and landed one row above: the map had moved.)"""
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    cell = weights_map(page, path).locator(f'{CELL}[aria-label*="query: {label};"]').first
    cell.evaluate("c => c.scrollIntoView({block: 'center'})")
    page.wait_for_function(STILL, arg=cell.element_handle(), timeout=RERUN_TIMEOUT_MS)
    box = cell.bounding_box()
    page.evaluate(RECORD_CLICKS)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def pick_by_click(page, path: str, label: str, in_link: str | None = None) -> None:
    """Click row `label` of the weights map and wait until the link carries it (as `in_link`, a pattern of the
    query's value in the address, when it is not the label itself); a click that picked nothing says where it
    landed."""
    click_row(page, path, label)
    try:
        page.wait_for_url(re.compile(rf"[?&]query={in_link or re.escape(label)}(&|$)"), timeout=RERUN_TIMEOUT_MS)
    except PlaywrightTimeout:
        raise AssertionError(f"a click on row {label!r} did not pick it: the address is {page.url}; the clicks "
                             f"landed on {page.evaluate('() => window.clicksSeen')}") from None


# The query label of the row outlined in red on the weights map, or null: an expression of `selector` (the map's title)
# and `cell` (its cells' selector).
OUTLINED_JS = """(() => {
    const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .find(c => c.textContent.includes(selector));
    const red = chart && [...chart.querySelectorAll(cell)].find(p => p.getAttribute('stroke') === '#ff4b4b');
    const m = red && red.getAttribute('aria-label').match(/query: ([^;]*);/);
    return m ? m[1] : null;
})()"""


def outlined_row(page, path: str) -> str | None:
    """The query label of the row outlined in red on the weights map, or None."""
    return page.evaluate("([selector, cell]) => " + OUTLINED_JS, [CLICKABLE[path], CELL])


def expect_query(page, path: str, label: str) -> None:
    """The page works out `label`: its explanation says so, its row is outlined, the link carries it."""
    expect(page.locator(CAPTION, has_text=f"The output of the query {label},")).to_have_count(1,
                                                                                               timeout=RERUN_TIMEOUT_MS)
    page.wait_for_function(
        """([selector, cell, label]) => {
            const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                .find(c => c.textContent.includes(selector));
            return chart && [...chart.querySelectorAll(cell)].some(p =>
                p.getAttribute('stroke') === '#ff4b4b' && p.getAttribute('aria-label').includes(`query: ${label};`));
        }""", arg=[CLICKABLE[path], CELL, label], timeout=RERUN_TIMEOUT_MS)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("path", list(CLICKABLE))
def test_a_click_on_a_row_picks_that_query(server, tabs, path, theme):
    tab = tabs(theme).open(f"{server.url}/{path}")
    page = tab.page
    wait_for_every_chart(page)
    last = DEFAULT_TEXT.split()[-1]
    expect_query(page, path, last)  # the last token until something else is picked
    pick_by_click(page, path, "cat")
    expect_query(page, path, "cat")
    if path == "qkv":  # the worked example follows: row 1 of the scores, written out
        expect(page.get_by_text("row 1 of the scores heatmap", exact=False)).to_have_count(1)
    expect(page.get_by_role("combobox", name="Query row")).to_have_value("cat")  # the box follows the click
    # a second click on another row, then back on the first: both count
    pick_by_click(page, path, "sat")
    expect_query(page, path, "sat")
    pick_by_click(page, path, "cat")
    expect_query(page, path, "cat")
    wait_for_every_chart(page)
    assert_clean(tab)


def test_a_click_outlines_its_row_before_the_server_has_heard_of_it(server, tabs):
    """The outline moves in the browser, not after a round trip: with every message to the server held back once the
    page is drawn, a click on a row still outlines that row at once, and the page (its link, its box) has not
    moved."""
    tab = tabs()
    held = {"on": False}

    def through(socket) -> None:  # the page's websocket, forwarded both ways until `held` is set
        upstream = socket.connect_to_server()
        socket.on_message(lambda message: None if held["on"] else upstream.send(message))
        upstream.on_message(socket.send)

    tab.page.route_web_socket(re.compile(r"/_stcore/stream"), through)
    tab.open(f"{server.url}/qkv")
    page = tab.page
    wait_for_every_chart(page)
    expect_query(page, "qkv", DEFAULT_TEXT.split()[-1])
    held["on"] = True
    click_row(page, "qkv", "cat")
    page.wait_for_function("([selector, cell]) => " + OUTLINED_JS + "=== 'cat'", arg=[CLICKABLE["qkv"], CELL],
                           timeout=RERUN_TIMEOUT_MS)
    assert "query" not in query_of(page)  # no rerun: the server was never told
    expect(page.get_by_role("combobox", name="Query row")).to_have_value(DEFAULT_TEXT.split()[-1])
    assert_clean(tab)


@pytest.mark.parametrize("theme", THEMES)
def test_a_click_in_presenter_mode(server, tabs, theme):
    """On a projector: large cells and type, the sidebar folded; the map still draws and a click still picks."""
    tab = tabs(theme).open(f"{server.url}/masking?present=true")
    page = tab.page
    wait_for_every_chart(page)
    pick_by_click(page, "masking", "sat")
    expect_query(page, "masking", "sat")
    assert query_of(page).get("present") == ["true"]
    assert_clean(tab)


def test_a_link_opens_with_that_query_worked_by_hand(server, tabs):
    tab = tabs().open(f"{server.url}/qkv?query=cat")
    expect_query(tab.page, "qkv", "cat")
    expect(tab.page.get_by_text("row 1 of the scores heatmap", exact=False)).to_have_count(1)
    assert query_of(tab.page).get("query") == ["cat"]
    assert_clean(tab)


def test_the_keyboard_picks_the_query(server, tabs):
    """No mouse: Tab to the Query row box, type a token, Enter. The link and the explanation follow."""
    tab = tabs().open(f"{server.url}/scaling")
    page = tab.page
    wait_for_every_chart(page)
    box = page.get_by_role("combobox", name="Query row")
    box.focus()
    page.keyboard.type("warm")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"[?&]query=warm(&|$)"), timeout=RERUN_TIMEOUT_MS)
    expect_query(page, "scaling", "warm")
    assert_clean(tab)


def test_a_repeated_token_is_picked_by_its_position(server, tabs):
    tab = tabs().open(f"{server.url}/qkv?text=the+cat+and+the+dog")
    page = tab.page
    wait_for_every_chart(page)
    pick_by_click(page, "qkv", "the (3)", in_link=r"the(\+|%20)%283%29")
    expect_query(page, "qkv", "the (3)")
    other = Tab(page.context.browser).open(page.url)  # the link as a student opens it
    try:
        expect_query(other.page, "qkv", "the (3)")
    finally:
        other.close()


# ---- what the theme does to chart text -----------------------------------------------------------------


@pytest.mark.parametrize("theme", THEMES)
def test_chart_subtitles_read_on_the_theme(server, tabs, theme):
    """The shape line under each chart's title reads at 4.5:1 or more on the page's background."""
    tab = tabs(theme).open(f"{server.url}/qkv")
    page = tab.page
    wait_for_every_chart(page)
    expect(page.locator(SUBTITLE).first).to_be_attached(timeout=RERUN_TIMEOUT_MS)
    fills = page.eval_on_selector_all(SUBTITLE, "ts => ts.map(t => getComputedStyle(t).fill)")
    assert fills
    ground = background(page)
    for fill in fills:
        rgb = tuple(int(v) for v in re.findall(r"\d+", fill)[:3])
        assert contrast(rgb, ground) >= 4.5, (theme, fill, ground)


# ---- corrected links and texts: the address bar and the box say what the page uses --------------------


@pytest.mark.parametrize(("link", "wanted", "note"), [
    ("qkv?d_k=-5&seq_len=abc&seed=1e99", {"d_k": ["1"], "seed": ["999"]}, "The link set d_k to -5"),
    ("scaling?d_k=99999", {"d_k": ["512"]}, "The link set d_k to 99999"),
    ("masking?masking_pos=99", {"masking_pos": ["31"]}, "The link set masking_pos to 99"),
    ("qkv?seed=5&seed=7", {"seed": ["7"]}, None),
    ("qkv?query=nothing", {}, "The link asked for query"),
], ids=["qkv-three-bad", "scaling-d_k", "masking-pos", "qkv-seed-twice", "qkv-unknown-query"])
def test_a_corrected_link_shows_in_the_address_bar(server, tabs, link, wanted, note):
    tab = tabs().open(f"{server.url}/{link}")
    page = tab.page
    if note:
        expect(page.get_by_text(note, exact=False)).to_have_count(1, timeout=RERUN_TIMEOUT_MS)
    keys = {key for key in parse_qs(urlsplit(link).query, keep_blank_values=True)}
    page.wait_for_function(
        """([keys, wanted]) => {
            const q = new URLSearchParams(location.search);
            return keys.every(k => JSON.stringify(q.getAll(k)) === JSON.stringify(wanted[k] || []));
        }""", arg=[sorted(keys), wanted], timeout=RERUN_TIMEOUT_MS)
    # the address bar is a working link: opened afresh it gives the same link back, with no note
    again = Tab(page.context.browser).open(page.url)
    try:
        expect(again.page.locator('[data-testid="stAlert"]', has_text="The link")).to_have_count(0)
        assert {k: v for k, v in query_of(again.page).items() if k in keys} == wanted
        assert_clean(again)
    finally:
        again.close()
    assert_clean(tab)


def test_pasting_past_the_limit_keeps_the_first_part_and_says_so(server, tabs):
    tab = tabs().open(f"{server.url}/qkv")
    page = tab.page
    wait_for_every_chart(page)
    box = page.locator('[data-testid="stSidebar"] textarea').first
    long_text = ("attention " * 500).strip()  # 4,999 characters
    box.fill(long_text)
    box.press("Tab")  # the box sends its text when it loses focus
    expect(page.get_by_text(f"was {len(long_text):,} characters long", exact=False)).to_have_count(
        1, timeout=RERUN_TIMEOUT_MS)
    expect(box).to_have_value(long_text[:MAX_TEXT_CHARS], timeout=RERUN_TIMEOUT_MS)
    wait_for_every_chart(page)
    assert_clean(tab)


@pytest.mark.parametrize(("path", "label"), [("model", "Prompt"), ("masking", "Replacement word"),
                                            ("communication", "Sentence 1")])
def test_a_long_paste_into_a_short_box(server, tabs, path, label):
    tab = tabs().open(f"{server.url}/{path}")
    page = tab.page
    box = page.get_by_label(label, exact=True)
    long_text = "x" * 5000
    box.fill(long_text)
    box.press("Enter")  # a one-line box sends its text on Enter
    expect(page.get_by_text("was 5,000 characters long", exact=False)).to_have_count(1, timeout=RERUN_TIMEOUT_MS)
    expect(box).not_to_have_value(long_text, timeout=RERUN_TIMEOUT_MS)  # the box shows what is kept
    kept = box.input_value()
    assert 0 < len(kept) < 5000 and kept == long_text[:len(kept)], len(kept)
    assert_clean(tab)

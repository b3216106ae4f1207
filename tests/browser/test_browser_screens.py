"""Screenshots of every page at 1920 x 1080, light and dark theme, presenter mode off and on, for a person
to look through (what a class sees on a projector). Written to $SCREENS_DIR (default tests/screens/).

Each picture is the whole page: the window is 1920 wide and, once the page is drawn, as tall as its
content. Besides writing the pictures, each page is checked for what a screenshot would show wrong: an
exception, and (presenter mode) chart text smaller than 18 px.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lessons import COURSE
from tests.apptest_helpers import ROOT
from tests.browser.harness import (
    EXCEPTION,
    PAGE_TIMEOUT_MS,
    RERUN_TIMEOUT_MS,
    Server,
    expect,
    serve,
    stop_all,
    wait_until_drawn,
)
from ui.drawing.charts import RENDERER_ENV

# These tests measure the type size of every label drawn. The maps are drawn as svg here, laid out exactly as on the
# canvas a student sees, so that every label is an element to measure (conftest.py).
CHART_RENDERER = "svg"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SCREENS = Path(os.environ.get("SCREENS_DIR", ROOT / "tests" / "screens"))
WIDTH, HEIGHT, MAX_HEIGHT = 1920, 1080, 16_000
PAGES = [("home", "")] + [(lesson.url_path, lesson.url_path) for lesson in COURSE]
THEMES = ("light", "dark")


@pytest.fixture(scope="module")
def themed_servers():
    """The app as `streamlit run streamlit_app.py --theme.base <theme>` starts it, one server a theme."""
    env = {RENDERER_ENV: CHART_RENDERER}
    servers = {theme: serve(lambda port, theme=theme: Server(port, ("--theme.base", theme), env))[0]
               for theme in THEMES}
    try:
        yield servers
    finally:
        stop_all(servers.values())


SMALLEST_CHART_TEXT = """() => {
    const sizes = [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg text')]
        .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
        .map(t => parseFloat(getComputedStyle(t).fontSize) || parseFloat(t.getAttribute('font-size')));
    return sizes.length ? Math.min(...sizes) : null;
}"""

CONTENT_HEIGHT = """() => Math.max(document.body.scrollHeight,
    ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"], section')]
        .map(e => e.scrollHeight))"""

# The layout has settled at the window's new size: the charts' drawn sizes and the content's height read the same
# over a few animation frames in a row (a chart sized to its container is drawn again by Vega after the resize).
SETTLED = """timeoutMs => new Promise(resolve => {
    const deadline = performance.now() + timeoutMs;
    const shape = () => JSON.stringify([window.innerHeight, document.body.scrollHeight,
        ...[...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks, '
                                         + '[data-testid="stVegaLiteChart"] canvas.marks')]
            .map(c => { const r = c.getBoundingClientRect(); return [r.width, r.height]; })]);
    let last = shape(), same = 0;
    const frame = () => {
        const now = shape();
        same = now === last ? same + 1 : 0;
        last = now;
        if (same >= 5) resolve(true);
        else if (performance.now() > deadline) resolve(false);
        else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
})"""


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize(("name", "path"), PAGES, ids=[name for name, _ in PAGES])
def test_screenshot(themed_servers, browser, theme, present, name, path):
    srv = themed_servers[theme]
    # With a light and a dark theme configured, the browser's colour scheme picks one (--theme.base does not)
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, color_scheme=theme)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        tab.goto(f"{srv.url}/{path}" + ("?present=true" if present else ""))
        wait_until_drawn(tab)  # every chart drawn by Vega, not only the script run ended
        expect(tab.locator(EXCEPTION)).to_have_count(0)
        if present and name != "home":
            smallest = tab.evaluate(SMALLEST_CHART_TEXT)
            assert smallest is not None, "no chart text found on a lesson page"
            assert smallest >= 18, f"chart text of {smallest} px in presenter mode"
        height = min(MAX_HEIGHT, int(tab.evaluate(CONTENT_HEIGHT)))
        tab.set_viewport_size({"width": WIDTH, "height": max(HEIGHT, height)})
        tab.wait_for_function("h => window.innerHeight === h", arg=max(HEIGHT, height), timeout=RERUN_TIMEOUT_MS)
        assert tab.evaluate(SETTLED, RERUN_TIMEOUT_MS), "the layout did not settle after the resize"
        wait_until_drawn(tab, RERUN_TIMEOUT_MS)
        SCREENS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENS / f"{name}-{theme}-{'presenter' if present else 'normal'}.png"))
    finally:
        context.close()

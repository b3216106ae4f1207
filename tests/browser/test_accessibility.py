"""axe-core in Chromium on every page, light and dark: no serious or critical WCAG 2.1 A/AA violation.

What a screen reader or a low-vision student meets: every chart named by a text of what it shows (Vega's
marks with no name of their own hidden), captions and chart labels at 4.5:1 or more. axe needs the page
as drawn, so each check first waits until every chart holds its svg or canvas (Vega draws after the script
has finished). Same requirements as tests/browser/test_browser.py, plus the axe-playwright-python package
(requirements-dev.txt); one server for the module on a loopback port in 9500-9599, one browser.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")

try:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

_missing = [what for what, gone in (("playwright and axe-playwright-python", sync_playwright is None),
                                    (CHROMIUM, not Path(CHROMIUM).exists())) if gone]
if _missing:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {', '.join(_missing)} is missing", pytrace=False)
    pytest.skip(f"browser tests need {', '.join(_missing)}", allow_module_level=True)

from lessons import COURSE  # noqa: E402
from tests.browser.test_browser import CHROMIUM_ARGS, IDLE, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, Server  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PORTS = range(9500, 9600)
PAGES = ["", *(lesson.url_path for lesson in COURSE)]  # "" is the home page
THEMES = ("light", "dark")
WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
SERIOUS = ("serious", "critical")
EVERY_CHART_DRAWN = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                         .every(c => c.querySelector('svg, canvas'))"""
# Colours are read as drawn: a theme applied after the first paint (dark) fades its colours in, and axe
# measured text halfway through that fade. Wait until no finite animation or transition is running.
SETTLED = """() => document.getAnimations().every(a => a.playState !== 'running'
                                                 || a.effect.getComputedTiming().endTime === Infinity)"""


def free_port() -> int:
    import socket

    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS}")


@pytest.fixture(scope="module")
def server():
    srv = Server(free_port())
    try:
        yield srv.wait_ready()
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def report(violations: list[dict]) -> str:
    """Each serious violation: its rule, how many nodes, and the first few of them as HTML."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {len(v['nodes'])} nodes; {v['help']}")
        lines += [f"    {node['html'][:200]}" for node in v["nodes"][:3]]
    return "\n".join(lines)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("path", PAGES, ids=[p or "home" for p in PAGES])
def test_no_serious_accessibility_violation(server, browser, path, theme):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=theme)
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{server.url}/{path}")
        page.wait_for_selector("h1")  # the title first: before its first run the app is also "notRunning"
        page.wait_for_selector(IDLE)
        page.wait_for_function(EVERY_CHART_DRAWN, timeout=RERUN_TIMEOUT_MS)
        page.wait_for_function(SETTLED, timeout=RERUN_TIMEOUT_MS)
        result = Axe().run(page, options=WCAG_21_AA)
        serious = [v for v in result.response["violations"] if v["impact"] in SERIOUS]
        assert not serious, f"{path or 'home'} ({theme}):\n{report(serious)}"
    finally:
        context.close()

"""axe-core in Chromium on every page, light and dark, and in presenter mode: no serious or critical WCAG 2.1
A/AA violation, and headings in order.

What a screen reader or a low-vision student meets: every chart named by a text of what it shows (Vega's
marks with no name of their own hidden), captions and chart labels at 4.5:1 or more, every scrolling region
reachable by keyboard. axe needs the page as drawn, so each check first waits until every chart holds its svg
or canvas (Vega draws after the script has finished).

axe reads colours as they are at that instant. The dark theme is applied after the first paint and Streamlit
fades colours in with CSS transitions, so on a busy machine axe read text halfway through a fade (a grey
between the two themes) and reported contrast that no student sees. The test page therefore asks for reduced
motion and switches CSS transitions and animations off before any script of the page runs (a style sheet
added at document start), and waits until the colours of every element are the same in two readings 0.3 s
apart. What it needs: what tests/browser/harness.py says, plus the axe-playwright-python package
(requirements-dev.txt); one server for the module, one browser.
"""

from __future__ import annotations

import os

import pytest

from lessons import COURSE
from tests.browser.harness import PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, wait_until_drawn
from ui.frame import glossary

try:
    from axe_playwright_python.sync_playwright import Axe
except ImportError:  # pragma: no cover - depends on the machine
    Axe = None

if Axe is None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail("REQUIRE_BROWSER=1 but axe-playwright-python is missing", pytrace=False)
    pytest.skip("the accessibility test needs axe-playwright-python", allow_module_level=True)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH]  # "" is the home page
THEMES = ("light", "dark")
# Every page in both themes, and every lesson in presenter mode (larger type, charts with cells half as large
# again: a chart wider than its column scrolls in its own frame, which must then be reachable by keyboard).
CHECKS = [(path, theme) for path in PAGES for theme in THEMES] + [
    (f"{path}?present=true", "light") for path in PAGES if path]
# Headings in order (h1, then h2, never h1 then h3) is axe's best-practice rule, not a WCAG tag, and only
# "moderate": a screen reader's outline of the page skips a level. It is held as strictly as the serious rules.
HELD_RULES = ("heading-order",)
WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
              "rules": {rule: {"enabled": True} for rule in HELD_RULES},
              "resultTypes": ["violations"]}
# axe's violations, cut down in the page to what a report needs. Its whole result (every node that passed, with
# its HTML) for the full-model lesson's grid of charts was large enough to bring down Playwright's connection.
RUN_AXE = """options => axe.run(document, options).then(results => results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => ({html: n.html.slice(0, 300)}))})))"""
SERIOUS = ("serious", "critical")
# Injected before the page's own scripts: no transition or animation runs, so every colour is final at once.
STILL = """(() => {
    const style = document.createElement('style');
    style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
    (document.head || document.documentElement).appendChild(style);
})();"""
# Every element's colours as one string; the page has settled when two readings 0.3 s apart are equal.
SAME_COLOURS_TWICE = """() => {
    const now = [...document.querySelectorAll('body *')].map(e => {
        const s = getComputedStyle(e);
        return s.color + s.backgroundColor + s.opacity + s.fill;
    }).join('|');
    const same = now === window.__colours;
    window.__colours = now;
    return same;
}"""


def page_id(path: str) -> str:
    return (path or "home").replace("?present=true", "-presenter")


def report(violations: list[dict]) -> str:
    """Each violation held: its rule, how many nodes, and the first few of them as HTML."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {len(v['nodes'])} nodes; {v['help']}")
        lines += [f"    {node['html'][:200]}" for node in v["nodes"][:3]]
    return "\n".join(lines)


@pytest.mark.parametrize(("path", "theme"), CHECKS, ids=[f"{page_id(p)}-{t}" for p, t in CHECKS])
def test_no_serious_accessibility_violation(server, browser, path, theme):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme=theme,
                                  reduced_motion="reduce")
    try:
        context.add_init_script(STILL)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{server.url}/{path}")
        wait_until_drawn(page)
        page.wait_for_function(SAME_COLOURS_TWICE, timeout=RERUN_TIMEOUT_MS, polling=300)
        page.evaluate(Axe().axe_script)  # axe-core, as the package ships it
        serious = [v for v in page.evaluate(RUN_AXE, WCAG_21_AA) if v["impact"] in SERIOUS or v["id"] in HELD_RULES]
        assert not serious, f"{page_id(path)} ({theme}):\n{report(serious)}"
    finally:
        context.close()

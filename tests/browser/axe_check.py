"""axe-core in a Playwright page: the WCAG 2.1 A/AA rules (and headings in order), the serious and critical
violations only, with the waits that make its colour readings true (see tests/browser/test_accessibility.py).
Importing this skips the importing test module when axe-playwright-python is missing, unless REQUIRE_BROWSER=1."""

from __future__ import annotations

import os

import pytest

from tests.browser.harness import RERUN_TIMEOUT_MS

try:
    from axe_playwright_python.sync_playwright import Axe
except ImportError:  # pragma: no cover - depends on the machine
    Axe = None

if Axe is None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail("REQUIRE_BROWSER=1 but axe-playwright-python is missing", pytrace=False)
    pytest.skip("the accessibility test needs axe-playwright-python", allow_module_level=True)

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
# A document can still be empty when this runs (a frame being made): then the style goes in once it has parsed.
# Streamlit fades the elements of a running script, but only after 0.5 s (a 1 s transition that waits 0.5 s), so a
# part of the page that refreshes itself in a few tens of milliseconds never fades for a student; with transitions
# off it would fade at once on every refresh, and axe would read its text half-transparent. So stale stays opaque.
STILL = """(() => {
    const still = () => {
        const style = document.createElement('style');
        style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }'
            + ' [data-stale="true"] { opacity: 1 !important; }';
        (document.head || document.documentElement).appendChild(style);
    };
    if (document.documentElement) still(); else document.addEventListener('DOMContentLoaded', still);
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


def report(violations: list[dict]) -> str:
    """Each violation held: its rule, how many nodes, and the first few of them as HTML."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {len(v['nodes'])} nodes; {v['help']}")
        lines += [f"    {node['html'][:200]}" for node in v["nodes"][:3]]
    return "\n".join(lines)



def serious_violations(page) -> list[dict]:
    """axe's serious and critical violations (and the held rules') on the page as it is drawn now, once its
    colours have settled. The page's context should have had STILL added as an init script."""
    page.wait_for_function(SAME_COLOURS_TWICE, timeout=RERUN_TIMEOUT_MS, polling=300)
    page.evaluate(Axe().axe_script)  # axe-core, as the package ships it
    return [v for v in page.evaluate(RUN_AXE, WCAG_21_AA) if v["impact"] in SERIOUS or v["id"] in HELD_RULES]

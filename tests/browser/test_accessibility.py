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

import pytest

from lessons import COURSE
from lessons.masking import mistakes as masking_mistakes
from lessons.scaling import mistake as scaling_mistake
from tests.browser.axe_check import STILL, report, serious_violations
from tests.browser.harness import PAGE_TIMEOUT_MS, wait_until_drawn
from ui.frame import glossary

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# "" is the home page; "class" the class page's start (its views in a class: test_browser_class_mode.py)
PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH, "class"]
THEMES = ("light", "dark")
DESK, PHONE = {"width": 1400, "height": 1000}, {"width": 390, "height": 844}
# Every page in both themes, and every lesson in presenter mode (larger type, charts with cells half as large
# again: a chart wider than its column scrolls in its own frame, which must then be reachable by keyboard).
CHECKS = [(path, theme, DESK) for path in PAGES for theme in THEMES] + [
    (f"{path}?present=true", "light", DESK) for path in PAGES if path]
# On a phone, in the dark: the lessons whose main control sits on the strip along the bottom edge, and those whose
# grids of maps are laid out again one under another (a page of its own at that width)
PHONE_PAGES = ["multi-head", "bigram", "block", "circuit", "tiles", "model", "training", "ladder"]
CHECKS += [(path, "dark", PHONE) for path in PHONE_PAGES]
# The lessons' asides, shut when a page is first opened, opened by their link (ui.state.controls.aside)
ASIDES = [f"masking?{masking_mistakes.OPEN_KEY}=true", f"scaling?{scaling_mistake.OPEN_KEY}=true"]
CHECKS += [(path, theme, DESK) for path in ASIDES for theme in THEMES] + [(ASIDES[0], "dark", PHONE)]


def check_id(path: str, theme: str, viewport: dict) -> str:
    page = (path or "home").replace("?present=true", "-presenter").replace("?", "-").replace("=true", "")
    return page + f"-{theme}" + ("-phone" if viewport is PHONE else "")


@pytest.mark.parametrize(("path", "theme", "viewport"), CHECKS, ids=[check_id(*c) for c in CHECKS])
def test_no_serious_accessibility_violation(server, browser, path, theme, viewport):
    context = browser.new_context(viewport=viewport, color_scheme=theme, reduced_motion="reduce")
    try:
        context.add_init_script(STILL)
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.goto(f"{server.url}/{path}")
        wait_until_drawn(page)
        serious = serious_violations(page)
        assert not serious, f"{check_id(path, theme, viewport)}:\n{report(serious)}"
    finally:
        context.close()

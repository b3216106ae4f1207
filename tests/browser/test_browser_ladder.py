"""The Ladder page in Chromium: a rung trained live, a few steps a tick on the page's own timer, lands on its
shipped curve, with no JavaScript error, and its chart keeps drawing as it is updated in place.

The server is the module's own (tests/browser/conftest.py)."""

from __future__ import annotations

import re

import pytest

from lessons import COURSE
from tests.browser.harness import CHART, EXCEPTION, PAGE_TIMEOUT_MS, expect, wait_until_drawn

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LADDER = COURSE.lesson("ladder").url_path
TRAINED_MS = 180_000  # 200 steps of one head take a few seconds alone; a busy machine and its first imports, more


def test_a_rung_trained_live_lands_on_its_shipped_curve(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}/{LADDER}?ld_train_steps=200")
        wait_until_drawn(page)
        expect(page.get_by_text("Press Train to train it again for 200 steps with seed 0.")).to_be_visible()
        page.get_by_role("button", name="Train", exact=True).click()
        same = page.get_by_text(re.compile(r"At step 200, your run's validation loss is [\d.]+ and the shipped "
                                           r"run's was [\d.]+: the same\."))
        expect(same).to_be_visible(timeout=TRAINED_MS)
        chart = page.locator(CHART).filter(has_text="your run").first
        expect(chart.locator("svg, canvas").first).to_be_attached()
        expect(page.locator(EXCEPTION)).to_have_count(0)
        assert not errors, errors
    finally:
        context.close()

"""Scaling's temperature τ is the weights map's own slider (ui.drawing.softmax): in Chromium, a move of it from the
keyboard reprints the map already drawn with the weights core computes at the new τ, before and without a new
chart; the page then puts τ in the link and in its words, and the link opens the same map.
What it needs and how it skips without it: tests/browser/harness.py."""

from __future__ import annotations

import pytest

from core.sampling import probs_from_logits
from core.tokenize import word_tokens
from lessons.scaling import maths
from tests.browser.harness import EXCEPTION, RERUN_TIMEOUT_MS, chart, expect, wait_until_drawn
from ui.state.controls import DEFAULT_TEXT

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SLIDER = "Attention temperature τ"


def printed(tau: float) -> list[str]:
    """The weights map's numbers at the page's defaults and τ, row by row, as core computes them."""
    tokens = word_tokens(DEFAULT_TEXT, 7)
    view = maths.scaling_view(tokens, 16, 64, 0, True, 1.0, 64)
    return [f"{w:.2f}" for w in probs_from_logits(view["logits"], tau).ravel()]


def test_a_move_of_tau_reprints_the_map_drawn_and_the_link_keeps_it(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}/scaling")
        wait_until_drawn(page)
        view = chart(page, "weights: click a row").first
        numbers = view.locator("g.mark-text.role-mark text")
        slider = view.get_by_role("slider", name=SLIDER)
        expect(slider).to_have_value("1", timeout=RERUN_TIMEOUT_MS)
        expect(numbers).to_have_text(printed(1.0), timeout=RERUN_TIMEOUT_MS)
        rule = page.get_by_text("The weights are the softmax of the scores")
        expect(rule).to_contain_text("τ = 1.00")
        view.locator("svg.marks").evaluate("svg => { svg.dataset.drawnBefore = 'yes'; }")

        slider.focus()
        for _ in range(4):
            page.keyboard.press("ArrowLeft")  # 1 → 0.8, a step of 0.05 at a time
        expect(numbers).to_have_text(printed(0.8), timeout=RERUN_TIMEOUT_MS)
        page.wait_for_url("**attn_temp=0.8**", timeout=RERUN_TIMEOUT_MS)
        expect(rule).to_contain_text("τ = 0.80", timeout=RERUN_TIMEOUT_MS)
        # the very svg drawn before: the browser reprinted it, and the page's rerun kept the chart
        expect(view.locator("svg.marks[data-drawn-before='yes']")).to_have_count(1)
        expect(numbers).to_have_text(printed(0.8))

        slider.fill("0")  # the coldest: one key per row
        expect(page.get_by_text("Temperature 0 stands for the limit")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
        expect(numbers).to_have_text(printed(0.0))

        page.goto(f"{server.url}/scaling?attn_temp=0.8")  # the link, opened again: the same map
        wait_until_drawn(page)
        view = chart(page, "weights: click a row").first
        expect(view.get_by_role("slider", name=SLIDER)).to_have_value("0.8", timeout=RERUN_TIMEOUT_MS)
        expect(view.locator("g.mark-text.role-mark text")).to_have_text(printed(0.8), timeout=RERUN_TIMEOUT_MS)
        expect(page.locator(EXCEPTION)).to_have_count(0)
        assert errors == []
    finally:
        context.close()

"""The head view's switches are the chart's own check boxes (ui.state.chart_controls): in Chromium, a box
unticked from the keyboard hides that head's lines in the chart already drawn, and the page then puts the switch in
the link and says in its caption where the heads still shown read; the link opens the same view.
What it needs and how it skips without it: tests/browser/harness.py."""

from __future__ import annotations

import pytest

from lessons.full_model.head_view import HEAD_COLOURS
from tests.browser.harness import EXCEPTION, RERUN_TIMEOUT_MS, chart, expect, wait_until_drawn

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

BOXES = ".vega-bindings input[type=checkbox]"
CAPTION = '[data-testid="stCaptionContainer"]'


def lines_of(view, head: int):
    """Head `head`'s (0-based) lines in the head view's svg: its rules drawn in its colour."""
    return view.locator(f'g.mark-rule line[stroke="{HEAD_COLOURS[head]}"]')


def test_a_head_s_box_hides_its_lines_in_the_chart_drawn_and_the_link_keeps_it(server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server.url}/model")
        wait_until_drawn(page)
        view = chart(page, "Head view").first
        boxes = view.locator(BOXES)
        expect(boxes).to_have_count(4, timeout=RERUN_TIMEOUT_MS)
        assert view.locator(".vega-bind-name").all_inner_texts() == ["head 1", "head 2", "head 3", "head 4"]
        assert all(boxes.nth(h).is_checked() for h in range(4))
        expect(lines_of(view, 1).first).to_be_attached(timeout=RERUN_TIMEOUT_MS)
        others = [lines_of(view, h).count() for h in (0, 2, 3)]
        caption = page.locator(CAPTION, has_text="From the last character")
        expect(caption).to_contain_text("head 2 →")
        view.locator("svg.marks").evaluate("svg => { svg.dataset.drawnBefore = 'yes'; }")

        boxes.nth(1).focus()
        page.keyboard.press("Space")
        expect(lines_of(view, 1)).to_have_count(0, timeout=RERUN_TIMEOUT_MS)
        page.wait_for_url("**fm_hv_head2=false**", timeout=RERUN_TIMEOUT_MS)
        expect(caption).not_to_contain_text("head 2 →", timeout=RERUN_TIMEOUT_MS)
        expect(caption).to_contain_text("head 1 →")
        assert [lines_of(view, h).count() for h in (0, 2, 3)] == others  # the other heads as they were
        # the very svg drawn before: the browser drew the change itself, and the page's rerun kept the chart
        expect(view.locator("svg.marks[data-drawn-before='yes']")).to_have_count(1)
        assert not boxes.nth(1).is_checked() and boxes.nth(2).is_checked()

        page.goto(page.url)  # the link, opened again: the same view
        wait_until_drawn(page)
        view = chart(page, "Head view").first
        expect(view.locator(BOXES)).to_have_count(4, timeout=RERUN_TIMEOUT_MS)
        assert [view.locator(BOXES).nth(h).is_checked() for h in range(4)] == [True, False, True, True]
        expect(lines_of(view, 0).first).to_be_attached(timeout=RERUN_TIMEOUT_MS)
        assert lines_of(view, 1).count() == 0
        expect(page.locator(EXCEPTION)).to_have_count(0)
        assert errors == []
    finally:
        context.close()

"""The Training page in Chromium: a pasted text is there after a visit to another page (the sidebar), and a
trained run opens, by its link, in a browser context that never trained it (the server's database holds it).

The server is the module's own (tests/browser/conftest.py); its database is the test session's SQLite file
(tests/conftest.py), so a run stored here is read back through the app, as a student's classmate would."""

from __future__ import annotations

import re

import pytest

from lessons import COURSE
from tests.browser.harness import PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, expect, wait_until_drawn

FAST = "tr_layers=1&tr_steps=50"
FULL, TRAINING = COURSE.lesson("full_model").url_path, COURSE.lesson("training").url_path
TEXT = "The quick brown fox jumps over the lazy dog. A stitch in time saves nine. " * 20
SAVED_MS = 120_000  # 50 steps train in about a second; a busy machine's first run imports and builds more


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()


def sidebar_link(page, title: str):
    return page.locator('[data-testid="stSidebarNav"] a').filter(has_text=re.compile(re.escape(title)))


def trained_run(page, server, data: str) -> str:
    """Train a short run on `data`; the id it is kept under, as the page states it."""
    page.goto(f"{server.url}/{TRAINING}?tr_data={data}&{FAST}")
    wait_until_drawn(page)
    page.get_by_role("button", name="Train", exact=True).click()
    kept = page.get_by_text(re.compile(r"Kept on this server for 7 days .* as run [A-Za-z0-9]{8}"))
    expect(kept).to_be_visible(timeout=SAVED_MS)
    return re.search(r"as run ([A-Za-z0-9]{8})", kept.inner_text()).group(1)


def test_a_pasted_text_is_there_after_leaving_the_page_and_coming_back(server, tab):
    tab.goto(f"{server.url}/{TRAINING}?tr_data=text&{FAST}")
    wait_until_drawn(tab)
    box = tab.get_by_label("Paste some text to train on")
    box.fill(TEXT)
    box.press("Control+Enter")  # a text area sends its text on Ctrl+Enter (or when it loses focus)
    expect(tab.get_by_text(re.compile(r"Ready: [\d,]+ characters"))).to_be_visible()
    sidebar_link(tab, "Full model").click()
    expect(tab).to_have_url(re.compile(rf"/{FULL}\b"), timeout=RERUN_TIMEOUT_MS)  # a busy server answers late
    wait_until_drawn(tab)
    sidebar_link(tab, "Training").click()
    expect(tab).to_have_url(re.compile(rf"/{TRAINING}\b"), timeout=RERUN_TIMEOUT_MS)
    wait_until_drawn(tab)
    expect(tab.get_by_label("Paste some text to train on")).to_have_value(TEXT.strip("\n"))
    tab.get_by_role("button", name="Train", exact=True).click()
    expect(tab.get_by_text(re.compile(r"Saved in this session as “your text"))).to_be_visible(timeout=SAVED_MS)
    expect(tab.get_by_text("The text is empty")).to_have_count(0)


def test_a_trained_run_opens_from_its_link_in_a_browser_that_never_trained_it(server, browser, tab):
    run_id = trained_run(tab, server, "copy")
    tab.get_by_role("link", name="Open the Full model page").click()
    expect(tab).to_have_url(re.compile(rf"/{FULL}\?.*fm_model=run%3A{run_id}"), timeout=RERUN_TIMEOUT_MS)
    expect(tab.get_by_text(re.compile("This model was trained on the copy task"))).to_be_visible()

    elsewhere = browser.new_context(viewport={"width": 1280, "height": 900})  # no cookies, no session
    try:
        other = elsewhere.new_page()
        other.set_default_timeout(PAGE_TIMEOUT_MS)
        other.goto(f"{server.url}/{FULL}?fm_model=run:{run_id}&fm_prompt=ABCDEFGH%7C")
        wait_until_drawn(other)
        expect(other.get_by_text(re.compile("This model was trained on the copy task"))).to_be_visible()
        expect(other.get_by_text(re.compile(rf"kept on this server as run {run_id}"))).to_be_visible()
        expect(other.locator('[data-testid="stException"]')).to_have_count(0)
    finally:
        elsewhere.close()

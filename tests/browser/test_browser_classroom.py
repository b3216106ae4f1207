"""Classroom features in headless Chromium: a shared presenter link, a real CSV download, the lesson path.

What it needs and how it skips without it: tests/browser/harness.py.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from lessons import COURSE
from lessons.qkv.maths import average_or_attend
from tests.browser.harness import (
    CHART,
    EXCEPTION,
    PAGE_TIMEOUT_MS,
    RERUN_TIMEOUT_MS,
    chart,
    expect,
    wait_until_drawn,
)
from ui.drawing.charts import unique_labels

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

URL_PATHS = {lesson.url_path for lesson in COURSE}


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def open_page(page, url: str) -> None:
    page.goto(url)
    wait_until_drawn(page)


def no_exception(page) -> None:
    """Only once the page is in its final state: an exception box drawn later would be missed."""
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_shared_presenter_link(server, page):
    """What thirty laptops (or a projector) see when the teacher's link says present=true."""
    open_page(page, f"{server.url}/scaling?present=true&d_k=512&scaling_on=false")
    title = page.locator("h1").first
    expect(title).to_be_visible()
    expect(title).to_contain_text("Scaling")
    # the sidebar starts collapsed: only its expand button is on screen
    sidebar = page.locator('[data-testid="stSidebar"]')
    expand = page.locator('[data-testid="stExpandSidebarButton"]')
    expect(expand).to_be_visible()
    expect(sidebar).to_be_hidden()
    # large type: the presenter stylesheet is in effect on the lesson's paragraphs
    paragraph = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p').first
    expect(paragraph).to_be_visible()
    size = paragraph.evaluate("p => parseFloat(getComputedStyle(p).fontSize)")
    assert size > 20, size
    # the link's settings are in effect: d_k = 512, the division switched off
    main = page.locator('[data-testid="stMainBlockContainer"]')
    expect(main.get_by_text("scaling switched off", exact=False).first).to_be_visible()
    expect(main.get_by_text("with d_k = 512", exact=False).first).to_be_visible()
    expect(chart(page, "scores before the softmax: Q Kᵀ (not scaled)")).to_have_count(1)
    # the secondary material is hidden (the page is drawn: it would be there by now)
    expect(page.get_by_text("Show the code")).to_have_count(0)
    expect(page.get_by_text("Export the matrices on this page", exact=False)).to_have_count(0)
    no_exception(page)
    # the sidebar still opens on demand, with presenter mode switched on
    expand.first.click()
    toggle = sidebar.get_by_role("switch", name="Presenter mode")
    expect(toggle).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(toggle).to_be_checked()


def test_export_csv_download(server, page):
    """Open the export panel, click CSV: the browser receives the first matrix as a file (the opening section's
    rows of "bank": the running average and the trained head, (2, T)).
    The panel is filled only while open: the click on its label reruns the page, which then draws the buttons."""
    open_page(page, f"{server.url}/qkv")
    expect(page.locator(CHART).first).to_be_visible()
    panel = page.locator('[data-testid="stExpander"]', has_text="Export the matrices on this page")
    expect(panel).to_have_count(1)
    expect(panel.get_by_role("button", name="CSV", exact=True)).to_have_count(0)  # closed: nothing drawn inside
    panel.locator("summary").click()
    button = panel.get_by_role("button", name="CSV", exact=True)
    expect(button).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(panel.get_by_text("matrices on this page.", exact=False)).to_have_count(1, timeout=RERUN_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)  # the run that drew the button has ended
    with page.expect_download(timeout=30_000) as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "the-row-of-bank-sentence-1.csv"
    raw = Path(download.path()).read_text(encoding="utf-8")
    df = pd.read_csv(io.StringIO(raw), index_col=0)
    first = average_or_attend()["sentences"][0]
    assert df.shape == (2, len(first["tokens"]))
    assert df.index[0] == "average" and list(df.columns) == unique_labels(first["tokens"])
    assert df.notna().all().all()
    assert abs(df.to_numpy()[0].sum() - 1) < 1e-3 and abs(df.to_numpy()[1].sum() - 1) < 1e-3  # rows of weights
    no_exception(page)  # the button does not rerun the page (on_click="ignore"): what is drawn is final


def test_export_png_is_made_then_saved_from_the_keyboard(server, page):
    """PNG takes two presses: the first makes the file (the panel reruns), the Save PNG button that appears
    under it downloads it. From the keyboard: the focus stays on PNG through its rerun, and Tab reaches Save.
    The file is a PNG of the first matrix, named after it."""
    open_page(page, f"{server.url}/qkv")
    expect(page.locator(CHART).first).to_be_visible()
    panel = page.locator('[data-testid="stExpander"]', has_text="Export the matrices on this page")
    panel.locator("summary").click()
    make = panel.get_by_role("button", name="PNG", exact=True)
    expect(make).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    make.focus()
    page.keyboard.press("Enter")
    save = panel.get_by_role("button", name="Save PNG")
    expect(save).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    expect(make).to_be_focused()
    page.keyboard.press("Tab")
    expect(save).to_be_focused()
    with page.expect_download(timeout=30_000) as info:
        page.keyboard.press("Enter")
    download = info.value
    assert download.suggested_filename == "the-row-of-bank-sentence-1.png"  # the opening's first map
    assert Path(download.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    expect(panel.locator('[data-testid="stAlert"]')).to_have_count(0)
    no_exception(page)


def test_next_link_keeps_the_settings(server, page):
    """Follow the lesson path from Scaling to Masking: the same sentence and d_k, and charts, not 'no tokens'."""
    open_page(page, f"{server.url}/scaling?text=red+green+blue&d_k=40")
    page.get_by_text("Next: Masking", exact=False).first.click()
    page.wait_for_url("**/masking**", timeout=PAGE_TIMEOUT_MS)
    expect(page.locator("h1").first).to_contain_text("Masking", timeout=PAGE_TIMEOUT_MS)
    wait_until_drawn(page)  # the Masking run has begun (its title is up), so this waits for its end
    expect(page.locator(CHART).first).to_be_visible()
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.locator("textarea")).to_have_value("red green blue")
    expect(sidebar.get_by_role("slider", name="d_k (query/key size)")).to_have_attribute("aria-valuetext", "40")
    expect(page.locator('[data-testid="stAlert"]', has_text="There are no tokens")).to_have_count(0)
    no_exception(page)

"""The export panel in headless Chromium: Full model offers what its page shows, and a file is the matrix, not
the page's interaction (no "click a row", no outlined row).

What it needs and how it skips without it: tests/browser/harness.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.harness import CHART, EXCEPTION, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, expect, wait_until_drawn

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PANEL = "Export the matrices on this page"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        yield tab
    finally:
        context.close()


def open_panel(page, url: str):
    """The page with its export panel opened by a click on its label (the run that fills it has ended)."""
    page.goto(url)
    wait_until_drawn(page)
    expect(page.locator(CHART).first).to_be_visible()
    panel = page.locator('[data-testid="stExpander"]', has_text=PANEL)
    panel.locator("summary").click()
    expect(panel.get_by_role("button", name="CSV", exact=True)).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    return panel


def options(page, panel) -> list[str]:
    """The matrix picker's choices, as its open list shows them (closed again after)."""
    panel.locator('[data-testid="stSelectbox"]').click()
    listed = page.get_by_role("option")
    expect(listed.first).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    names = listed.all_inner_texts()
    page.keyboard.press("Escape")
    expect(listed).to_have_count(0)
    return names


def pick(page, panel, starts: str) -> None:
    """Choose the matrix whose name starts with `starts`, typed into the picker as a student may: typing opens the
    list whatever state it was in (a click toggles it, so a click that lands while it closes leaves it shut)."""
    box = panel.get_by_role("combobox", name="Matrix")
    box.click()
    box.press_sequentially(starts)
    option = page.get_by_role("option").filter(has_text=re.compile(rf"^\d+\. {re.escape(starts)}")).first
    expect(option).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    option.click()
    expect(panel.get_by_role("combobox", name="Matrix")).to_have_value(re.compile(rf"^\d+\. {re.escape(starts)}"),
                                                                       timeout=RERUN_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)


def made_and_saved(page, panel, kind: str):
    """Press PNG or SVG, then the Save button that appears under it: the browser's download."""
    panel.get_by_role("button", name=kind.upper(), exact=True).click()
    save = panel.get_by_role("button", name=f"Save {kind.upper()}")
    expect(save).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    wait_until_drawn(page, RERUN_TIMEOUT_MS)
    with page.expect_download(timeout=30_000) as info:
        save.click()
    return info.value


def test_full_model_exports_what_it_shows(server, page):
    """The bars, every map of the grid, the head view, the knockout table and the positions are in the picker;
    a map of the grid saves as a PNG named after it."""
    panel = open_panel(page, f"{server.url}/model")
    names = options(page, panel)
    wanted = ["P(next | prompt), temperature 1", "Attention, layer 1 · head 1", "Attention, layer 2 · head 4",
              "Layer 1: each character (left) and what it reads (right)", "All heads · P(next character)",
              "Head off · P(next character)", "Knockout cost (nats, zero mode)", "Sinusoidal positional encoding"]
    shown = [re.sub(r"^\d+\. ", "", name) for name in names]
    assert [name for name in shown if name in wanted] == wanted, names
    expect(panel.get_by_text(f"{len(names)} matrices on this page.")).to_have_count(1)
    pick(page, panel, "Attention, layer 2 · head 4")
    download = made_and_saved(page, panel, "png")
    assert download.suggested_filename == "attention-layer-2-head-4.png"
    assert Path(download.path()).read_bytes()[:8] == PNG
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_a_file_has_no_click_hint_and_no_outlined_row(server, page):
    """QKV's weights say "click a row" and outline the picked row in red on the page; their SVG says neither, and
    is named with the symbols spelled out."""
    panel = open_panel(page, f"{server.url}/qkv")
    on_page = page.locator(CHART).filter(has_text="softmax(Q Kᵀ / √d_k): click a row")
    expect(on_page).to_have_count(1)
    names = options(page, panel)
    assert not any("click" in name for name in names), names
    pick(page, panel, "softmax(Q Kᵀ / √d_k)")
    download = made_and_saved(page, panel, "svg")
    assert download.suggested_filename == "softmax-q-kt-sqrt-d-k.svg"
    svg = Path(download.path()).read_text(encoding="utf-8")
    assert "softmax(Q Kᵀ / √d_k)" in svg and "click" not in svg
    assert "rgb(255, 75, 75)" not in svg and "#ff4b4b" not in svg.lower()
    expect(page.locator(EXCEPTION)).to_have_count(0)

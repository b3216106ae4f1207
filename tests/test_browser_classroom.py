"""Classroom features in headless Chromium: a shared presenter link, a real CSV download, the lesson path.

Same requirements as tests/test_browser.py (Debian's Chromium and playwright; skipped without them
unless REQUIRE_BROWSER=1), with its own server on a loopback port in 9200-9299.
"""

from __future__ import annotations

import io
import os
import socket
from pathlib import Path

import pandas as pd
import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

_missing = [what for what, gone in (("playwright", sync_playwright is None),
                                    (CHROMIUM, not Path(CHROMIUM).exists())) if gone]
if _missing:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {', '.join(_missing)} is missing", pytrace=False)
    pytest.skip(f"browser tests need {', '.join(_missing)}", allow_module_level=True)

from tests.test_browser import CHROMIUM_ARGS, EXCEPTION, IDLE, PAGE_TIMEOUT_MS, Server  # noqa: E402
from ui.charts import unique_labels  # noqa: E402
from ui.controls import DEFAULT_TEXT  # noqa: E402
from ui.nav import available  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

PORTS = range(9200, 9300)
URL_PATHS = {lesson.url_path for lesson in available()}
TOKENS = DEFAULT_TEXT.split()


def free_port() -> int:
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
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)


def no_exception(page) -> None:
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()


@pytest.mark.skipif("scaling" not in URL_PATHS, reason="no scaling page")
def test_shared_presenter_link(server, page):
    """What thirty laptops (or a projector) see when the teacher's link says present=true."""
    open_page(page, f"{server.url}/scaling?present=true&d_k=512&scaling_on=false")
    title = page.locator("h1").first
    assert title.is_visible() and "Scaling" in title.inner_text()
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_attribute("aria-expanded") == "false" or not sidebar.is_visible()
    assert page.locator('[data-testid="stExpandSidebarButton"]').is_visible()
    # large type: the presenter stylesheet is in effect on the lesson's paragraphs
    size = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p').first.evaluate(
        "p => parseFloat(getComputedStyle(p).fontSize)")
    assert size > 20, size
    # the link's settings are in effect: d_k = 512, the division switched off
    main = page.locator('[data-testid="stMainBlockContainer"]')
    page.wait_for_selector("text=scaling switched off")
    assert main.get_by_text("with d_k = 512", exact=False).count() >= 1
    assert main.get_by_text("logits Q Kᵀ (not scaled)", exact=False).count() >= 1 or \
        page.locator('[data-testid="stVegaLiteChart"]', has_text="not scaled").count() >= 1
    # the secondary material is hidden
    assert page.get_by_text("Show the code").count() == 0
    assert page.get_by_text("Export the matrices on this page", exact=False).count() == 0
    no_exception(page)
    # the sidebar still opens on demand, with presenter mode switched on
    page.locator('[data-testid="stExpandSidebarButton"]').first.click()
    toggle = sidebar.get_by_role("switch", name="Presenter mode")
    toggle.wait_for(state="visible", timeout=10_000)
    assert toggle.is_checked()


@pytest.mark.skipif("qkv" not in URL_PATHS, reason="no QKV page")
def test_export_csv_download(server, page):
    """Open the export panel, click CSV: the browser receives the first matrix (X, T x d_model) as a file.
    The panel is filled only while open: the click on its label reruns the page, which then draws the buttons."""
    open_page(page, f"{server.url}/qkv")
    page.wait_for_selector('[data-testid="stVegaLiteChart"]')
    panel = page.locator('[data-testid="stExpander"]', has_text="Export the matrices on this page")
    assert panel.get_by_role("button", name="CSV", exact=True).count() == 0  # closed: nothing drawn inside
    panel.locator("summary").click()
    button = panel.get_by_role("button", name="CSV", exact=True)
    button.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
    assert panel.get_by_text("matrices on this page.", exact=False).count() == 1  # the count, inside
    with page.expect_download(timeout=30_000) as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "x.csv"
    raw = Path(download.path()).read_text(encoding="utf-8")
    df = pd.read_csv(io.StringIO(raw), index_col=0)
    assert df.shape == (len(TOKENS), 16)  # T x d_model at the defaults
    assert list(df.index) == unique_labels(TOKENS)
    assert list(df.columns) == [f"d{j}" for j in range(16)]
    assert df.notna().all().all()
    no_exception(page)


@pytest.mark.skipif(not {"scaling", "masking"} <= URL_PATHS, reason="needs the scaling and masking pages")
def test_next_link_keeps_the_settings(server, page):
    """Follow the lesson path from Scaling to Masking: the same sentence and d_k, and charts, not 'no tokens'."""
    open_page(page, f"{server.url}/scaling?text=red+green+blue&d_k=40")
    page.get_by_text("Next: Masking", exact=False).first.click()
    page.wait_for_selector("h1:has-text('Masking')", timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stVegaLiteChart"]', timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.locator("textarea").input_value() == "red green blue"
    slider = sidebar.get_by_role("slider", name="d_k (query/key size)")
    assert slider.get_attribute("aria-valuetext") == "40"
    assert page.locator('[data-testid="stAlert"]', has_text="There are no tokens").count() == 0
    no_exception(page)

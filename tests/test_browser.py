"""The real app in headless Chromium: deep links on a fresh server, a keyboard-driven slider, hostile links.

AppTest runs a page's script; it does not run Streamlit's server, its routing, the URL binding in the
browser or Vega's rendering. These tests do. They need Debian's Chromium and the playwright package;
without them the module is skipped, unless REQUIRE_BROWSER=1 (CI), where that is a failure.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.apptest_helpers import ROOT
from ui.nav import available

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
PORTS = range(8800, 8900)
START_TIMEOUT_S = 60
PAGE_TIMEOUT_MS = 60_000  # a first page view on a fresh server imports numpy, pandas and altair
RERUN_TIMEOUT_MS = 20_000

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

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

LESSONS = available()
CHART = '[data-testid="stVegaLiteChart"]'
CELL = 'path[aria-roledescription="rect mark"]'  # one per heatmap cell in Vega's SVG renderer
EXCEPTION = '[data-testid="stException"]'


# ---- servers ----------------------------------------------------------------------------------------


def free_ports(n: int) -> list[int]:
    """n loopback ports in 8800-8899 that nothing listens on now."""
    found = []
    for port in PORTS:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        found.append(port)
        if len(found) == n:
            return found
    raise RuntimeError(f"fewer than {n} free ports in {PORTS}")


class Server:
    """`streamlit run streamlit_app.py` on a loopback port, as a user starts it."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"streamlit-{port}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def health(self) -> str:
        with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=5) as response:
            return response.read().decode()

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.output()}")
            with contextlib.suppress(OSError):
                if self.health() == "ok":
                    return self
            time.sleep(0.2)
        raise RuntimeError(f"streamlit did not answer on {self.url} within {timeout} s:\n{self.output()}")

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def server():
    srv = Server(free_ports(1)[0])
    try:
        yield srv.wait_ready()
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def fresh_servers():
    """One server per lesson, none of which has served anything yet (started together to save time)."""
    ports = free_ports(len(LESSONS) + 1)[1:]  # leave the first free port to `server`
    servers = {lesson.url_path: Server(port) for lesson, port in zip(LESSONS, ports)}
    try:
        for srv in servers.values():
            srv.wait_ready()
        yield servers
    finally:
        for srv in servers.values():  # ask all to stop first, then wait for each
            srv.proc.terminate()
        for srv in servers.values():
            srv.stop()


# ---- browser ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        # launch() gives every browser a fresh temporary profile
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    tab.dialogs = []  # every alert/confirm/prompt the page tries to open
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    try:
        yield tab
    finally:
        context.close()


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # the hook Streamlit's own e2e tests use


def wait_until_drawn(page) -> None:
    """The script run has finished: the app says it is not running, and a title is shown."""
    page.wait_for_selector(IDLE, timeout=PAGE_TIMEOUT_MS)
    page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)


def chart(page, title: str):
    return page.locator(CHART, has_text=title)


def cell_count(page, title: str) -> int:
    return chart(page, title).locator(CELL).count()


def wait_for_cells(page, title: str, n: int) -> None:
    page.wait_for_function(
        """([title, n]) => {
            const c = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                .find(e => e.textContent.includes(title));
            return c && c.querySelectorAll('path[aria-roledescription="rect mark"]').length === n;
        }""", arg=[title, n], timeout=RERUN_TIMEOUT_MS)


# ---- (a) deep links on a fresh server ---------------------------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.url_path for lesson in LESSONS])
def test_deep_link_is_the_first_request(fresh_servers, page, lesson):
    """/<page> as the very first request a server gets: the lesson, with the app around it, no error."""
    srv = fresh_servers[lesson.url_path]
    page.goto(f"{srv.url}/{lesson.url_path}")
    wait_until_drawn(page)
    h1 = page.locator("h1").first.inner_text()
    assert lesson.title.lower() in h1.lower(), (lesson.title, h1)
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()
    assert page.get_by_text("Page not found").count() == 0
    # the entry script ran: the navigation lists the home page and the lesson
    nav = page.locator('[data-testid="stSidebarNav"]')
    assert nav.get_by_text("Home", exact=True).count() == 1  # exact: a Material icon is the text "home"
    assert nav.get_by_text(lesson.title, exact=True).count() == 1
    assert not page.dialogs


# ---- (b) a slider moved with the keyboard redraws the charts ----------------------------------------


@pytest.mark.skipif(not any(lesson.url_path == "qkv" for lesson in LESSONS), reason="no QKV page")
def test_keyboard_slider_redraws_the_chart(server, page):
    page.goto(f"{server.url}/qkv")
    wait_until_drawn(page)
    q_title = "Q: what each token asks"
    wait_for_cells(page, q_title, 7 * 8)  # T = 7 tokens, d_k = 8
    before = chart(page, q_title).screenshot()
    assert "d_k" not in page.url

    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="d_k (query/key size)")
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**d_k=9**", timeout=RERUN_TIMEOUT_MS)
    wait_for_cells(page, q_title, 7 * 9)
    assert chart(page, q_title).get_by_text("d8", exact=True).count() >= 1  # a new column label
    assert chart(page, q_title).screenshot() != before

    page.keyboard.press("End")
    page.wait_for_url("**d_k=64**", timeout=RERUN_TIMEOUT_MS)
    wait_for_cells(page, q_title, 7 * 64)
    wait_until_drawn(page)
    assert slider.get_attribute("aria-valuetext") == "64"
    assert page.locator(EXCEPTION).count() == 0
    # the scores keep their (T, T) shape whatever d_k is
    assert cell_count(page, "scores = Q K") == 7 * 7

    # the URL it wrote is a working link: opened in a new tab, it shows the same view
    other = page.context.new_page()
    other.goto(page.url)
    wait_until_drawn(other)
    wait_for_cells(other, q_title, 7 * 64)
    other.close()


# ---- (c) a hostile link -----------------------------------------------------------------------------


HOSTILE = {"d_k": "99999", "text": "<img src=x onerror=alert(1)>", "heads": "7"}


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS if lesson.url_path in ("qkv", "multi-head")],
                         ids=lambda lesson: lesson.url_path)
def test_hostile_link(server, page, lesson):
    query = "&".join(f"{k}={quote(v)}" for k, v in HOSTILE.items())
    page.goto(f"{server.url}/{lesson.url_path}?{query}")
    wait_until_drawn(page)
    page.wait_for_selector(CHART, timeout=PAGE_TIMEOUT_MS)
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()
    # the unusable values are reported, and the user's text is shown as text
    if lesson.url_path == "qkv":
        assert page.get_by_text("The link set d_k to 99999").count() == 1
        assert page.locator("code", has_text="img").count() >= 1
    else:
        assert page.get_by_text("The link set heads to 7").count() == 1
    page.wait_for_timeout(500)  # give an injected onerror handler the chance to fire
    assert not page.dialogs
    assert page.locator('img[src="x"]').count() == 0
    assert page.evaluate("() => [...document.images].filter(i => i.getAttribute('src') === 'x').length") == 0
    # the text reached the text box verbatim
    box = page.locator('[data-testid="stSidebar"] textarea')
    assert box.input_value() == HOSTILE["text"]


# ---- (d) health -------------------------------------------------------------------------------------


def test_health(server):
    assert server.health() == "ok"
    assert server.proc.poll() is None

"""What every browser test module shares: Chromium and Playwright (or a skip), servers, and waits.

AppTest runs a page's script; it does not run Streamlit's server, its routing, the URL binding in the
browser or Vega's rendering. The browser tests do. They need Debian's Chromium and the playwright package;
without them importing this module skips the test module that imports it, unless REQUIRE_BROWSER=1 (CI),
where that is a failure. tests/browser/conftest.py holds the fixtures built from it: one server and one
browser per test module.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.streamlit_client import owns_port
from tests.apptest_helpers import ROOT

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
# Servers take a random free port here, and another if a test run beside this one took it first.
PORTS = range(8800, 9800)
START_TIMEOUT_S = 120  # servers started together share the cores while they import
# Bounds for what a busy machine may take (each wait ends as soon as its condition holds): a first page view on a
# fresh server imports numpy, pandas and altair; on two shared cores either took over 60 s at times.
PAGE_TIMEOUT_MS = 120_000
RERUN_TIMEOUT_MS = 60_000

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

_missing = [what for what, gone in (("playwright", sync_playwright is None),
                                    (CHROMIUM, not Path(CHROMIUM).exists())) if gone]
if _missing:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {', '.join(_missing)} is missing", pytrace=False)
    pytest.skip(f"browser tests need {', '.join(_missing)}", allow_module_level=True)

__all__ = ["PlaywrightTimeout", "expect", "sync_playwright"]  # re-exported: the test modules import them from here

CHART = '[data-testid="stVegaLiteChart"]'
CELL = 'path[aria-roledescription="rect mark"]'  # one per heatmap cell in Vega's SVG renderer
EXCEPTION = '[data-testid="stException"]'


# ---- servers ----------------------------------------------------------------------------------------


def free_ports(n: int, ports: range = PORTS, exclude: set[int] = frozenset()) -> list[int]:
    """n loopback ports in `ports` that nothing listens on now, tried in random order: test runs side by side on
    one machine pick from the same ranges. Free now is not free later: Server.wait_ready notices a port taken
    in between, and serve() starts that server again elsewhere."""
    found = []
    for port in random.sample(list(ports), len(ports)):
        if port in exclude:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        found.append(port)
        if len(found) == n:
            return found
    raise RuntimeError(f"fewer than {n} free ports in {ports}")


class PortTaken(RuntimeError):
    """Another process bound the server's port between the check and the server's own bind."""


class Server:
    """`streamlit run streamlit_app.py` on a loopback port, as a user starts it (extra: more flags, e.g. a theme;
    env: more environment, e.g. the class mode's database)."""

    def __init__(self, port: int, extra: tuple[str, ...] = (), env: dict[str, str] | None = None):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"streamlit-{port}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", *extra],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )

    def health(self) -> str:
        with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=5) as response:
            return response.read().decode()

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> Server:
        """Healthy, and on its own socket: an "ok" from whatever else took the port does not count."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                output = self.output()
                kind = PortTaken if re.search(r"is not available|already in use", output) else RuntimeError
                raise kind(f"streamlit exited with {self.proc.returncode}:\n{output}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.health() == "ok" and owns_port(self.proc.pid, self.port):
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


def serve(make: Callable[[int], Server], n: int = 1, ports: range = PORTS, attempts: int = 3) -> list[Server]:
    """n ready servers, make(port) each, started together (a fresh server spends its first seconds importing).
    One that lost its port to another process is started again on another port."""
    servers = [make(port) for port in free_ports(n, ports)]
    try:
        for i in range(n):
            for attempt in range(attempts):
                try:
                    servers[i].wait_ready()
                    break
                except PortTaken:
                    if attempt == attempts - 1:
                        raise
                    servers[i].stop()
                    servers[i] = make(free_ports(1, ports, exclude={s.port for s in servers})[0])
        return servers
    except BaseException:
        stop_all(servers)
        raise


def one_server(make: Callable[[int], Server] = Server) -> Iterator[Server]:
    """A ready server for the length of a fixture, stopped after it."""
    (srv,) = serve(make)
    try:
        yield srv
    finally:
        srv.stop()


def stop_all(servers) -> None:
    for srv in servers:  # ask all to stop first, then wait for each
        srv.proc.terminate()
    for srv in servers:
        srv.stop()


# ---- browser ----------------------------------------------------------------------------------------


def chromium() -> Iterator:
    """Debian's Chromium through Playwright, headless, for the length of a fixture. launch() gives every
    browser a fresh temporary profile."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# ---- waits ------------------------------------------------------------------------------------------


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # the hook Streamlit's own e2e tests use

# The page as a user sees it once everything has arrived. Each condition closes a gap of its own:
# - "notRunning" is also the state between the websocket opening and the run starting (and, after an action,
#   between the action and the run it asks for); a title together with it means the run that drew the title
#   has ended, since the frontend handles the messages in order (start, elements, end);
# - a lazily loaded element (a chart, a table, a page link) is a skeleton for a while after the run has ended;
# - Vega draws a chart into its container after that: it is on screen once its svg (or canvas) is there;
# - a font is fetched when text first needs it (italic, code): until it has come the text above a chart may still
#   re-flow and move the chart.
DRAWN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED'
        || !app.querySelector('h1') || app.querySelector('[data-testid="stSkeleton"]')
        || document.fonts.status !== 'loaded') return false;
    return [...app.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .every(c => c.querySelector('svg.marks, canvas.marks'));
}"""
NOT_DRAWN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return {script: app && app.dataset.testScriptState, connection: app && app.dataset.testConnectionState,
            title: !!document.querySelector('h1'),
            skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length, fonts: document.fonts.status,
            undrawn_charts: [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                .filter(c => !c.querySelector('svg.marks, canvas.marks')).map(c => c.textContent.slice(0, 80))};
}"""


def wait_until_drawn(page, timeout: float = PAGE_TIMEOUT_MS) -> None:
    """The script run has ended and its page is on screen: a title, no skeleton, every chart drawn by Vega.

    Sound after page.goto(). After an action (a key press, a click), first wait for something only the new run
    shows (a new URL, new content): until that run starts, the previous run's finished page passes this too."""
    try:
        page.wait_for_function(DRAWN, timeout=timeout, polling=100)
    except PlaywrightTimeout:
        raise AssertionError(f"the page was not drawn within {timeout / 1000:.0f} s: "
                             f"{page.evaluate(NOT_DRAWN)}") from None


def chart(page, title: str):
    """The charts whose name (the description a screen reader reads: a canvas has no text of its own) or text
    holds `title`."""
    quoted = title.replace("\\", "\\\\").replace('"', '\\"')
    return page.locator(f'{CHART}[aria-label*="{quoted}"]').or_(page.locator(CHART, has_text=title))


def wait_for_cells(page, title: str, rows: int, cols: int, maps: int = 1) -> None:
    """The first chart titled `title` is drawn as a map of rows x cols cells (maps: as that many, the panels of one
    chart: ui.drawing.panels), and the grey line under its title says that shape. Vega's svg only (a module whose
    server draws its maps as svg: CHART_RENDERER, conftest.py): there each cell is an element. Neither the shape
    nor the counts are in a map's name (ui.drawing.alt_text), and a map of a new shape whose cells keep their size
    is the view drawn before, its rows swapped (ui.drawing.render.heading)."""
    drawn = page.locator(CHART, has=page.locator("g.role-title-text text", has_text=title)).first
    expect(drawn.locator(CELL)).to_have_count(rows * cols * maps, timeout=RERUN_TIMEOUT_MS)
    expect(drawn.locator("g.role-title-subtitle text", has_text=f"shape ({rows}, {cols})")).to_have_count(
        1, timeout=RERUN_TIMEOUT_MS)

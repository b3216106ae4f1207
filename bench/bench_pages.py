"""Time every lesson page per rerun: through AppTest at its defaults and its largest settings, then through
the real server and a real browser for the QKV page.

Run from the repository root:  python bench/bench_pages.py  [--reruns 7] [--server-reruns 15] [--no-server]

Section 1 (AppTest): for every page in ui.nav.available(), run it once, read its sidebar sliders from the
AppTest tree, and time reruns triggered by moving one slider (the seed, else the first free one) to a new
value with set_value(...).run(): once at the defaults, once at the largest settings (seq_len, d_model,
d_k and heads at the top of their ranges, where the page has them, with a text long enough to fill
seq_len). One warm-up rerun, then median and p90 (nearest rank) of --reruns reruns, in milliseconds.

Section 2 (server): `streamlit run streamlit_app.py` on a loopback port, the QKV page in headless Chromium,
the seed slider moved with the keyboard; each rerun is timed from the key press until the app is idle
again and the scores heatmap shows new numbers. Also reports the server process's CPU time per rerun.
AppTest runs only the script; the server adds message handling, its post-run work and the browser's
drawing (MEASURED.md), so the two sections are expected to differ.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from ui.nav import available  # noqa: E402

# Settings taken to the top of their range for the "largest" column, in this order (heads after
# d_model: its options are the divisors of d_model).
LARGEST = ("d_model", "heads", "seq_len", "d_k")
TRIGGERS = ("seed", "temp")  # moved to time a rerun; otherwise the first slider not in LARGEST
LONG_TEXT = " ".join(f"word{i}" for i in range(64))
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]


def p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} (p90 {p90(samples):.0f})"


# ---- section 1: AppTest -----------------------------------------------------------------------------


def sidebar_widget(at: AppTest, key: str):
    """The sidebar slider or select slider with this key, or None."""
    for kind in ("slider", "select_slider"):
        for widget in getattr(at.sidebar, kind):
            if widget.key == key:
                return widget
    return None


def top_of(widget):
    """The largest value a slider or a (numeric) select slider offers."""
    if widget.type == "select_slider":
        top = max(widget.options, key=float)
        return int(top) if float(top).is_integer() else float(top)
    return type(widget.value)(widget.max)


def go_largest(at: AppTest) -> dict:
    """Move every LARGEST setting the page has to its maximum; returns what was set."""
    chosen = {}
    if any(box.key == "text" for box in at.sidebar.text_area):
        at.sidebar.text_area(key="text").set_value(LONG_TEXT).run()
    for key in LARGEST:
        widget = sidebar_widget(at, key)
        if widget is None:
            continue
        widget.set_value(top_of(widget)).run()
        if at.exception:
            raise RuntimeError(f"{key}={top_of(widget)}: {at.exception[0].message}")
        chosen[key] = sidebar_widget(at, key).value
    return chosen


def trigger_values(widget, n: int) -> list:
    """n distinct values for the trigger slider, each different from the last (a fresh cache key each time)."""
    lo, hi, now = widget.min, widget.max, widget.value
    integer = isinstance(now, int)
    span = hi - lo
    values = []
    for i in range(1, n + 1):
        v = lo + (now - lo + i * max(span / (n + 2), 1 if integer else 0.05)) % span if span else now
        values.append(round(v) if integer else round(v, 2))
    return values


def time_reruns(at: AppTest, reruns: int) -> tuple[list[float], str]:
    trigger = next((sidebar_widget(at, k) for k in TRIGGERS if sidebar_widget(at, k) is not None), None)
    if trigger is None:
        trigger = next(w for w in at.sidebar.slider if w.key not in LARGEST)
    key = trigger.key
    times = []
    for i, value in enumerate(trigger_values(trigger, reruns + 1)):
        widget = sidebar_widget(at, key)
        start = time.perf_counter()
        widget.set_value(value).run()
        elapsed = time.perf_counter() - start
        if at.exception:
            raise RuntimeError(f"{key}={value}: {at.exception[0].message}")
        if i:  # the first is the warm-up
            times.append(1000 * elapsed)
    return times, key


def bench_page(path: str, largest: bool, reruns: int) -> tuple[list[float], str, dict]:
    at = AppTest.from_file(str(ROOT / path), default_timeout=120).run()
    if at.exception:
        raise RuntimeError(f"{path}: {at.exception[0].message}")
    chosen = go_largest(at) if largest else {}
    times, key = time_reruns(at, reruns)
    return times, key, chosen


def section_apptest(reruns: int) -> list[float]:
    print(f"## AppTest: ms per rerun, median (p90) of {reruns} reruns after one warm-up\n")
    print("| page | defaults ms | largest ms | rerun by | largest settings |")
    print("|---|---|---|---|---|")
    qkv_defaults: list[float] = []
    for lesson in available():
        defaults, key, _ = bench_page(lesson.path, largest=False, reruns=reruns)
        top, _, chosen = bench_page(lesson.path, largest=True, reruns=reruns)
        settings = ", ".join(f"{k}={v}" for k, v in chosen.items()) or "(none of seq_len, d_model, d_k, heads)"
        print(f"| {lesson.title} | {ms(defaults)} | {ms(top)} | {key} | {settings} |", flush=True)
        if lesson.url_path == "qkv":
            qkv_defaults = defaults
    return qkv_defaults


# ---- section 2: the real server ---------------------------------------------------------------------


def free_port() -> int:
    for port in range(8800, 8900):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 8800-8899")


@contextlib.contextmanager
def streamlit_server():
    port = free_port()
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"streamlit exited:\n{log.read().decode(errors='replace')[-3000:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
                if r.read() == b"ok":
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer on {url} within 60 s")
            time.sleep(0.2)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CHANGED = """([title, before]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .find(e => e.textContent.includes(title));
    const cell = chart && chart.querySelector('path[aria-roledescription="rect mark"]');
    return !!cell && cell.getAttribute('aria-label') !== before;
}"""
FIRST_CELL = """(title) => {
    const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .find(e => e.textContent.includes(title));
    const cell = chart && chart.querySelector('path[aria-roledescription="rect mark"]');
    return cell ? cell.getAttribute('aria-label') : null;
}"""


def section_server(reruns: int, apptest_qkv: list[float]) -> None:
    print(f"\n## Real server + Chromium: QKV page at its defaults, {reruns} seed moves by keyboard\n")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: the playwright package is not installed")
        return
    if not Path(CHROMIUM).exists():
        print(f"skipped: no browser at {CHROMIUM}")
        return
    title = "scores = Q K"
    with streamlit_server() as (url, pid), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/qkv")
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
        page.wait_for_function(f"() => ({FIRST_CELL})({title!r}) !== null", timeout=60_000)
        slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="Random seed")
        slider.focus()
        latencies, cpu = [], 0.0
        for i in range(reruns + 2):  # two warm-up moves
            before = page.evaluate(FIRST_CELL, title)
            cpu_before = cpu_seconds(pid)
            start = time.perf_counter()
            page.keyboard.press("ArrowRight")  # seed + 1: new numbers in every chart, never cached yet
            page.wait_for_function(CHANGED, arg=[title, before], timeout=30_000)
            elapsed = time.perf_counter() - start
            if i >= 2:
                latencies.append(1000 * elapsed)
                cpu += cpu_seconds(pid) - cpu_before
        browser.close()
    print("| measured | ms per rerun, median (p90) |")
    print("|---|---|")
    if apptest_qkv:
        print(f"| AppTest, script only (section 1) | {ms(apptest_qkv)} |")
    print(f"| key press -> idle and redrawn, in Chromium | {ms(latencies)} |")
    print(f"| server CPU per rerun (mean) | {1000 * cpu / reruns:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=7, help="timed AppTest reruns per page and setting")
    parser.add_argument("--server-reruns", type=int, default=15, help="timed reruns through the real server")
    parser.add_argument("--no-server", action="store_true", help="skip the real-server section")
    args = parser.parse_args()
    print(f"# Attention Lab page benchmark: Python {platform.python_version()}, Streamlit {streamlit.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}\n")
    qkv = section_apptest(args.reruns)
    if not args.no_server:
        section_server(args.server_reruns, qkv)


if __name__ == "__main__":
    main()

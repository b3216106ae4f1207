"""Server CPU and bytes sent per rerun for every lesson page, through the real Streamlit server.

Run from the repository root:  python bench/bench_pages.py  [--server-reruns 20] [--settle-ms 30] [--page qkv]
                                                            [--compare CHECKOUT [--turns 8]]
                                                            [--apptest [--reruns 7]] [--browser] [--no-server]

The default run starts one server (`streamlit run streamlit_app.py` on a loopback port, the project's own
.streamlit/config.toml) and drives it with bench/streamlit_client.py, which speaks Streamlit's websocket
protocol as the browser does. For every lesson in lessons.COURSE, twice:

- at its defaults: the page opened with no query string;
- at its largest settings: opened with a query string that sets each of d_model, heads, seq_len and d_k the
  page has to the top of its slider (in that order: heads offers the divisors of d_model, so the page is
  opened again after each setting to read the next slider's range), plus text= a 64-word text where the
  page has a seq_len slider, so seq_len is filled.

Each page is opened once before timing (the first visit imports modules and fills caches). A rerun is a move
of the "seed" slider (else a temperature, else the first slider that is not one of the largest settings) to a value
not used before for that page, so no cached result hides the work; 2 warm-up moves, then --server-reruns timed
ones. Server CPU per rerun is the server process's user + system CPU time (psutil) read before the move and
--settle-ms after its script_finished message, so the work Streamlit does after the run lands in the same
move. The kernel counts CPU in clock ticks (10 ms on Linux), so one move's figure is a multiple of a tick: the
mean (total CPU over the timed moves / their number) is the precise figure and the table's headline; median
and p90 (nearest rank) of the single moves follow it. KB is the median size of the ForwardMsgs a move sends
(websocket payloads, KiB); latency is the median time from sending the move to script_finished, as the client
sees it. A page that shows an exception is reported in its row; it exits 0 either way (the budget a lesson is
held to, per move and against a bare page's move, is bench/budget.py's). The server's own idle CPU (over 2 s)
is printed first: it is in every figure.

--compare CHECKOUT measures instead this checkout against another one (`git worktree add /tmp/base HEAD~1`, say),
both served at once with the same Python: each page at its defaults is moved 5 times on one server, then 5
times on the other, --turns times each, the order flipped every turn, and the table gives each side's mean CPU
per move and their ratio. On a shared machine whose load drifts by tens of percent within minutes, this
measures a change of a few percent that two separate runs cannot.

--apptest adds the older measurement through Streamlit's AppTest (the script alone, no server; median and
p90 of --reruns reruns); --browser adds one through headless Chromium on the QKV page (Playwright, Debian's
/usr/bin/chromium, override with CHROMIUM_PATH): seed moves by key press, timed until the heatmap redraws.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import streamlit  # noqa: E402

from bench.machine import Watch, event_loop  # noqa: E402
from bench.streamlit_client import Render, Server, Session, SliderInfo, cpu_seconds  # noqa: E402
from lessons import COURSE  # noqa: E402
from ui.frame.nav import Lesson  # noqa: E402

# Settings taken to the top of their range for the "largest" column, in this order (heads after
# d_model: its options are the divisors of d_model).
LARGEST = ("d_model", "heads", "seq_len", "d_k")
TRIGGERS = ("seed", "attn_temp", "sample_temp")  # moved to time a rerun; otherwise the first slider not in LARGEST
LONG_TEXT = " ".join(f"word{i}" for i in range(64))
WARMUP_MOVES = 2
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]


def p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} (p90 {p90(samples):.0f})"


# ---- the real server (the default run) ----------------------------------------------------------------


@dataclass
class Measured:
    """One page at one setting: per timed move, the server's CPU, the bytes sent and the latency."""

    cpu_ms: list[float] = field(default_factory=list)
    kb: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    trigger: str = ""
    settings: dict[str, str] = field(default_factory=dict)  # the largest settings as the page shows them
    errors: dict[str, list[str]] = field(default_factory=dict)  # problem -> where (exceptions, failures)
    notes: list[str] = field(default_factory=list)

    def error(self, problem: str, where: str = "") -> None:
        self.errors.setdefault(problem, []).append(where)

    @property
    def cpu_mean(self) -> float:
        return sum(self.cpu_ms) / len(self.cpu_ms) if self.cpu_ms else math.nan

    def cpu_cell(self) -> str:
        if not self.cpu_ms:
            return "**no data**"
        return f"**{self.cpu_mean:.0f}** ({statistics.median(self.cpu_ms):.0f}, {p90(self.cpu_ms):.0f})"

    def kb_cell(self) -> str:
        return f"{statistics.median(self.kb):.0f}" if self.kb else "-"

    def latency_cell(self) -> str:
        return f"{statistics.median(self.latency_ms):.0f}" if self.latency_ms else "-"


def shown(slider: SliderInfo) -> str:
    value = slider.value[0] if len(slider.value) == 1 else slider.value
    return f"{int(value)}" if isinstance(value, float) and value.is_integer() else str(value)


def top_of(slider: SliderInfo) -> str:
    """The largest value a slider offers, as a URL would carry it."""
    if slider.kind == "select_slider":
        return max(slider.options, key=float)
    return str(int(slider.max)) if slider.integer else str(slider.max)


def check(render: Render, out: Measured, where: str) -> None:
    """Record the exceptions a render showed (and a run that did not finish normally)."""
    for e in render.exceptions:
        out.error(f"EXCEPTION: {e}", where)
    if render.status not in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"):
        out.error(f"ERROR: script {render.status}", where)


async def open_page(url: str, page: str, query: str = "") -> Render:
    session, render = await Session.open(url, page, query)
    await session.close()
    return render


async def largest_query(url: str, lesson: Lesson, render: Render) -> str:
    """The query string that puts every LARGEST slider the page has at its top. After each setting the page
    is opened again with the query so far, since a later slider's range may depend on it (heads on d_model)."""
    params: dict[str, str] = {}
    if "seq_len" in render.sliders:
        params["text"] = LONG_TEXT
    for i, key in enumerate(LARGEST):
        if key not in render.sliders:
            continue
        params[key] = top_of(render.sliders[key])
        if any(later in render.sliders for later in LARGEST[i + 1:]):
            render = await open_page(url, lesson.url_path, urlencode(params))
    return urlencode(params)


def trigger_of(render: Render) -> SliderInfo | None:
    for key in TRIGGERS:
        if key in render.sliders:
            return render.sliders[key]
    return next((s for key, s in render.sliders.items() if key not in LARGEST), None)


def fresh_values(slider: SliderInfo, n: int, used: set) -> tuple[list, str]:
    """n values for the trigger, spread over its range, none used before for this page (while there are
    enough; else they repeat, and the note says so)."""
    grid = [v for v in slider.values() if v not in used]
    if len(grid) >= n:
        return [grid[int(i * len(grid) / n)] for i in range(n)], ""
    if len(grid) < 2:
        grid = [v for v in slider.values() if v not in slider.value]
    values = [grid[i % len(grid)] for i in range(n)]
    return values, f"{slider.key} has only {len(grid)} fresh values: some reruns may be cached"


async def measure(url: str, pid: int, lesson: Lesson, query: str, reruns: int, settle: float,
                  used: set) -> Measured:
    out = Measured()
    session, render = await Session.open(url, lesson.url_path, query)
    try:
        check(render, out, "on opening")
        out.settings = {key: shown(render.sliders[key]) for key in LARGEST if key in render.sliders}
        slider = trigger_of(render)
        if slider is None:
            out.error("ERROR: no slider to move")
            return out
        out.trigger = slider.key
        used.update(slider.value)
        values, note = fresh_values(slider, WARMUP_MOVES + reruns, used)
        used.update(values)
        if note:
            out.notes.append(note)
        for i, value in enumerate(values):
            before = cpu_seconds(pid)
            render = await session.move(slider, value)
            await asyncio.sleep(settle)
            cpu = cpu_seconds(pid) - before
            check(render, out, f"{slider.key}={value}")
            slider = render.sliders.get(slider.key, slider)
            if i >= WARMUP_MOVES:
                out.cpu_ms.append(1000 * cpu)
                out.kb.append(render.bytes / 1024)
                out.latency_ms.append(1000 * render.latency_s)
    finally:
        await session.close()
    return out


async def bench_lesson(url: str, pid: int, lesson: Lesson, reruns: int, settle: float) -> dict[str, Measured]:
    used: set = set()  # trigger values this page has been moved to: each move gets a fresh one
    results = {}
    try:
        first = await open_page(url, lesson.url_path)  # the warm-up visit
        results["defaults"] = await measure(url, pid, lesson, "", reruns, settle, used)
        query = await largest_query(url, lesson, first)
        results["largest"] = largest = await measure(url, pid, lesson, query, reruns, settle, used)
        asked = {key: value for key, value in parse_qsl(query) if key in LARGEST}
        for key, value in asked.items():
            if float(largest.settings.get(key, "nan")) != float(value):
                largest.error(f"ERROR: the link asked for {key}={value}; the page shows "
                              f"{largest.settings.get(key, 'no such slider')}")
    except Exception as err:  # a timeout, a dropped connection: say so in the row and go on
        for setting in ("defaults", "largest"):
            results.setdefault(setting, Measured()).error(f"ERROR: {type(err).__name__}: {err}")
    return results


def row(lesson: Lesson, results: dict[str, Measured]) -> str:
    cells = [f"{lesson.title} (`{lesson.url_path}`)"]
    for setting in ("defaults", "largest"):
        m = results[setting]
        cells += [m.cpu_cell(), m.kb_cell(), m.latency_cell()]
    largest = results["largest"]
    settings = ", ".join(f"{k}={v}" for k, v in largest.settings.items()) or "(none of d_model, heads, seq_len, d_k)"
    if "seq_len" in largest.settings:
        settings += ", text=64 words"
    cells += [results["defaults"].trigger or largest.trigger or "-", settings]
    problems = []
    for setting, m in results.items():
        for problem, wheres in m.errors.items():
            kind, message = problem.split(": ", 1)
            runs = [w for w in wheres if w]
            where = f" ({runs[0]}{f' and {len(runs) - 1} more runs' if len(runs) > 1 else ''})" if runs else ""
            problems.append(f"**{kind} at {setting}**: {message[:250]}{where}")
    problems += [f"note ({setting}): {n}" for setting, m in results.items() for n in m.notes]
    if problems:
        cells[-1] += "<br>" + "<br>".join(p.replace("|", "\\|").replace("\n", " ") for p in problems)
    return "| " + " | ".join(cells) + " |"


async def section_server(lessons: list[Lesson], reruns: int, settle_ms: float) -> None:
    settle = settle_ms / 1000
    with Server.start(until_warm=True) as server:
        before = cpu_seconds(server.pid)
        await asyncio.sleep(2)
        idle = (cpu_seconds(server.pid) - before) / 2
        print(f"## Real server: CPU and bytes per rerun, {reruns} timed moves after {WARMUP_MOVES} warm-up moves\n")
        print(f"Server at {server.url}, pid {server.pid}; idle it used {1000 * idle:.0f} ms CPU per second. "
              f"CPU is read before each move and {settle_ms:.0f} ms after its script_finished. CPU ms: "
              "**mean** (total / moves, the precise figure) then median and p90 of single moves (10 ms ticks). "
              "KB: median bytes sent per move. Latency: median ms from the move to script_finished.\n")
        print("| page | defaults: CPU ms mean (median, p90) | KB | latency ms "
              "| largest: CPU ms mean (median, p90) | KB | latency ms | moved | largest settings |")
        print("|---|---|---|---|---|---|---|---|---|")
        for lesson in lessons:
            results = await bench_lesson(server.url, server.pid, lesson, reruns, settle)
            print(row(lesson, results), flush=True)


# ---- optional: two checkouts side by side (--compare) ---------------------------------------------------


async def compare_lesson(servers: dict[str, Server], lesson: Lesson, turns: int, block: int,
                         settle: float) -> dict[str, list[float]]:
    """The same page at its defaults on every server, moved in turns: `block` moves on one, then on the
    next, `turns` times (the order flips each turn), so a change in the machine's load between the turns
    falls on both. Returns each server's CPU ms per move, one figure per turn."""
    sessions = {}
    for name, server in servers.items():
        session, render = await Session.open(server.url, lesson.url_path)
        slider = trigger_of(render)
        if slider is None:
            await session.close()
            raise RuntimeError(f"{lesson.url_path} has no slider to move")
        sessions[name] = session, slider
    try:
        first = next(iter(sessions.values()))[1]  # every server draws the same page, so the same slider
        values, _ = fresh_values(first, WARMUP_MOVES + turns * block, set(first.value))
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        for session, slider in sessions.values():  # the same warm-up moves on every server
            for value in values[:WARMUP_MOVES]:
                await session.move(slider, value)
        for turn in range(turns):
            moves = values[WARMUP_MOVES + turn * block:WARMUP_MOVES + (turn + 1) * block]
            for name in (list(servers) if turn % 2 == 0 else list(servers)[::-1]):
                session, slider = sessions[name]
                before = cpu_seconds(servers[name].pid)
                for value in moves:
                    await session.move(slider, value)
                await asyncio.sleep(settle)
                cpu[name].append(1000 * (cpu_seconds(servers[name].pid) - before) / len(moves))
        return cpu
    finally:
        for session, _ in sessions.values():
            await session.close()


async def section_compare(lessons: list[Lesson], other: Path, turns: int, block: int, settle_ms: float) -> None:
    """This checkout against another (e.g. `git worktree add /tmp/base HEAD~1`), both served at once."""
    servers = {"this": Server.start(until_warm=True), "other": Server.start(root=other, until_warm=True)}
    try:
        print(f"## This checkout against {other}: server CPU ms per move at the defaults\n")
        print(f"Both servers run at once; each page is moved {block} times on one, then on the other, "
              f"{turns} turns each (order flipped every turn), so the machine's load falls on both alike.\n")
        print("| page | this: mean | other: mean | this / other |")
        print("|---|---|---|---|")
        for lesson in lessons:
            cpu = await compare_lesson(servers, lesson, turns, block, settle_ms / 1000)
            this, that = statistics.mean(cpu["this"]), statistics.mean(cpu["other"])
            print(f"| {lesson.title} (`{lesson.url_path}`) | {this:.1f} | {that:.1f} | {this / that:.2f} |",
                  flush=True)
    finally:
        for server in servers.values():
            server.stop()


# ---- optional: AppTest (the script alone) ------------------------------------------------------------


def sidebar_widget(at, key: str):
    """The sidebar slider or select slider with this key, or None."""
    for kind in ("slider", "select_slider"):
        for widget in getattr(at.sidebar, kind):
            if widget.key == key:
                return widget
    return None


def apptest_top(widget):
    """The largest value a slider or a (numeric) select slider offers."""
    if widget.type == "select_slider":
        top = max(widget.options, key=float)
        return int(top) if float(top).is_integer() else float(top)
    return type(widget.value)(widget.max)


def go_largest(at) -> dict:
    """Move every LARGEST setting the page has to its maximum; returns what was set."""
    chosen = {}
    if any(box.key == "text" for box in at.sidebar.text_area):
        at.sidebar.text_area(key="text").set_value(LONG_TEXT).run()
    for key in LARGEST:
        widget = sidebar_widget(at, key)
        if widget is None:
            continue
        widget.set_value(apptest_top(widget)).run()
        if at.exception:
            raise RuntimeError(f"{key}={apptest_top(widget)}: {at.exception[0].message}")
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


def time_reruns(at, reruns: int) -> tuple[list[float], str]:
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


def apptest_page(path: str, largest: bool, reruns: int) -> tuple[list[float], str, dict]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / path), default_timeout=120).run()
    if at.exception:
        raise RuntimeError(f"{path}: {at.exception[0].message}")
    chosen = go_largest(at) if largest else {}
    times, key = time_reruns(at, reruns)
    return times, key, chosen


def section_apptest(lessons: list[Lesson], reruns: int) -> None:
    print(f"\n## AppTest (the script alone, no server): ms per rerun, median (p90) of {reruns} reruns "
          "after one warm-up\n")
    print("| page | defaults ms | largest ms | rerun by | largest settings |")
    print("|---|---|---|---|---|")
    for lesson in lessons:
        try:
            defaults, key, _ = apptest_page(lesson.path, largest=False, reruns=reruns)
            top, _, chosen = apptest_page(lesson.path, largest=True, reruns=reruns)
        except Exception as err:
            print(f"| {lesson.title} | **EXCEPTION**: {str(err)[:200]} | | | |", flush=True)
            continue
        settings = ", ".join(f"{k}={v}" for k, v in chosen.items()) or "(none of seq_len, d_model, d_k, heads)"
        print(f"| {lesson.title} | {ms(defaults)} | {ms(top)} | {key} | {settings} |", flush=True)


# ---- optional: headless Chromium on the QKV page --------------------------------------------------------


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


def section_browser(reruns: int) -> None:
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
    with Server.start(until_warm=True) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/qkv")
        page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=60_000)
        page.wait_for_function(f"() => ({FIRST_CELL})({title!r}) !== null", timeout=60_000)
        slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="Random seed")
        slider.focus()
        latencies, cpu = [], 0.0
        for i in range(reruns + WARMUP_MOVES):
            before = page.evaluate(FIRST_CELL, title)
            cpu_before = cpu_seconds(server.pid)
            start = time.perf_counter()
            page.keyboard.press("ArrowRight")  # seed + 1: new numbers in every chart, never cached yet
            page.wait_for_function(CHANGED, arg=[title, before], timeout=30_000)
            elapsed = time.perf_counter() - start
            if i >= WARMUP_MOVES:
                latencies.append(1000 * elapsed)
                cpu += cpu_seconds(server.pid) - cpu_before
        browser.close()
    print("| measured | ms per rerun |")
    print("|---|---|")
    print(f"| key press -> idle and redrawn, in Chromium, median (p90) | {ms(latencies)} |")
    print(f"| server CPU per rerun (mean) | {1000 * cpu / reruns:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-reruns", type=int, default=20, help="timed moves per page and setting (20)")
    parser.add_argument("--settle-ms", type=float, default=30,
                        help="wait after script_finished before reading the server's CPU time (30)")
    parser.add_argument("--page", action="append", default=[], metavar="URL_PATH",
                        help="only this page (its url path, e.g. qkv); may be repeated")
    parser.add_argument("--no-server", action="store_true", help="skip the real-server table")
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="instead: this checkout against another one, served side by side, moves in turns")
    parser.add_argument("--turns", type=int, default=8, help="with --compare: turns per server (8) of 5 moves")
    parser.add_argument("--apptest", action="store_true", help="also time every page through AppTest")
    parser.add_argument("--reruns", type=int, default=7, help="timed AppTest reruns per page and setting (7)")
    parser.add_argument("--browser", action="store_true", help="also time the QKV page in headless Chromium")
    args = parser.parse_args()
    lessons = [lesson for lesson in COURSE if not args.page or lesson.url_path in args.page]
    if not lessons:
        parser.error(f"no such page: {args.page}; pages: {[lesson.url_path for lesson in COURSE]}")
    print(f"# Attention Lab page benchmark: Python {platform.python_version()}, Streamlit {streamlit.__version__}, "
          f"{os.cpu_count()} CPUs, {platform.machine()}, load average {psutil.getloadavg()[0]:.2f}, "
          f"event loop {event_loop()}\n")
    watch = Watch()
    if args.compare:
        asyncio.run(section_compare(lessons, args.compare.resolve(), args.turns, 5, args.settle_ms))
    elif not args.no_server:
        asyncio.run(section_server(lessons, args.server_reruns, args.settle_ms))
    if args.apptest:
        section_apptest(lessons, args.reruns)
    if args.browser:
        section_browser(args.server_reruns)
    print(f"\n{watch.line()}")


if __name__ == "__main__":
    main()

"""What a slider move costs each lesson in a browser, as a multiple of a bare page's move in the same run.

Run from the repository root:  python bench/browser_moves.py [--check] [--page qkv] [--moves 5] [--root CHECKOUT]
                                                             [--base REV] [--json FILE] [--slider PATTERN]

bench/budget.py holds the server's side of a move; this holds the browser's. A student's move is done when the
page has stopped changing, and most of that time is Chromium's: Vega building a new view for every chart whose
spec changed, and the SVG it draws (12-18 charts, thousands of DOM nodes on a lesson page). The server cannot
see it, nor can AppTest or the websocket client. Wall-clock times move with the machine, so each lesson is
measured against a yardstick served in the same run, on the same Python, in the same browser: a bare page of
one slider and one 7x7 heatmap in a live part (bench/bare_chart_page.py). A lesson "at 8x" takes eight bare moves
a move.

Servers (`streamlit run`, loopback ports, the project's .streamlit/config.toml, as bench/streamlit_client.py
starts them): the app (of this checkout, or of --root CHECKOUT, e.g. a `git worktree` of an older commit), the
bare page (always this checkout's), and with --base REV also the app of REV in a temporary `git worktree`,
measured in the same run, the two apps in turns (the order flipped every lesson), so both share the machine's
drift. The app's server is ready once its own warm-up has ended (its log says `warmed N pages`).

Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) through Playwright, headless, viewport 1400x1000, one
context per server. For each lesson of lessons.COURSE:

- the page is opened (the first view of it in this browser: it warms what later moves reuse) and waited for until
  the script has finished, no skeleton is left and every [data-testid="stVegaLiteChart"] holds Vega's svg or
  canvas;
- a slider whose move redraws a chart is picked: the one --slider names first, then the random seed, then d_k, then
  a temperature, then the others in page order, each with room for every move in one direction (a slider at the end
  of its range moves nowhere); the first move of a candidate is the test, and the first whose move changed a
  chart's DOM is kept;
- after one more warm-up move, --moves timed moves, each with the arrow key toward the far end of the range, so
  each move reaches a value the slider has not had on this page (no cached result hides the work);
- a move is timed in the page: from the key press (a keydown listener) to the last change, a DOM mutation (a
  MutationObserver on the whole document: child lists, attributes, text) or a chart's canvas painted again (a
  chart updated in place on a canvas changes no element), once the page has been quiet for 400 ms
  after a chart changed, with no run going on and every chart drawn (at most 15 s).
  Its mutation records are counted, and the chart SVGs or canvases removed (Vega building a new view);
- after the moves: the elements on the page (document.getElementsByTagName('*')), any exception box
  ([data-testid="stException"]) and any uncaught JavaScript error (Playwright's pageerror).

Before each lesson the bare page is moved 3 times (its seed slider, one step up each); the yardstick is the median
of all its moves over the run. Each lesson's figure is the median of its moves.

The table gives each lesson's seconds a move, that as a multiple of the bare move, DOM mutations a move and that
as a multiple, chart views replaced a move and DOM elements. With --check the run exits 1 when a lesson is past its
budget (bench/browser_budgets.toml: a multiple of the bare move's time and of its mutations, never seconds), has
no budget, or showed an exception or a JavaScript error; a lesson found wrong is measured once more, on fresh
servers and a fresh browser, and fails only if the second run agrees.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import Watch  # noqa: E402
from bench.streamlit_client import Server  # noqa: E402
from lessons import COURSE  # noqa: E402

BUDGETS = Path(__file__).with_name("browser_budgets.toml")
BARE_SCRIPT = "bench/bare_chart_page.py"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}
QUIET_MS = 400  # a move has ended once the DOM has not changed for this long
MOVE_TIMEOUT_MS = 15_000
LATE_MS = 3_000  # a move that changed no chart and showed no run has ended once quiet this long after the key
PAGE_TIMEOUT_MS = 120_000  # a first view on a busy machine imports and draws a lot
WARM_MOVES = 1  # after the move that tested the slider, before the timed ones
BARE_MOVES = 3  # before each lesson
MAX_CANDIDATES = 6  # sliders tried for one that redraws a chart
# The sliders tried first: the random weights (every chart of an attention lesson), the key size, a temperature.
PREFERRED = (re.compile(r"^Random seed$"), re.compile(r"\bd_k\b"), re.compile(r"temperature|τ", re.I))
SKIPPED = {"glossary"}

# ---- in the page ------------------------------------------------------------------------------------

# The page as a user sees it: the run has ended, nothing is a skeleton, every chart is drawn by Vega.
DRAWN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED'
        || !app.querySelector('h1') || app.querySelector('[data-testid="stSkeleton"]')) return false;
    return [...app.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .every(c => c.querySelector('svg.marks, canvas.marks'));
}"""
# One observer for the page's life; an arrow key arms it (capturing, so before the slider handles the key).
OBSERVE = """() => {
    if (window.benchMoves) return;
    const w = window.benchMoves = {armed: false, start: 0, last: 0, count: 0, replaced: 0, paints: 0, chart: false,
                                   ran: false};
    document.addEventListener('keydown', e => {
        if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
        Object.assign(w, {armed: true, start: performance.now(), last: 0, count: 0, replaced: 0, paints: 0,
                          chart: false, ran: false});
    }, true);
    // A chart drawn on a canvas and updated in place changes no element: its paint is the change. Vega's canvas
    // renderer clears the canvas before each paint, so a clear in a chart counts as a change of that chart.
    const clear = CanvasRenderingContext2D.prototype.clearRect;
    CanvasRenderingContext2D.prototype.clearRect = function (...args) {
        if (w.armed && this.canvas.closest && this.canvas.closest('[data-testid="stVegaLiteChart"]')) {
            w.last = performance.now();
            w.chart = true;
            w.paints++;
        }
        return clear.apply(this, args);
    };
    new MutationObserver(records => {
        if (!w.armed) return;
        w.last = performance.now();
        w.count += records.length;
        for (const r of records) {
            // the value before the change too: a run that began and ended within one batch shows only there
            if (r.attributeName === 'data-test-script-state'
                && (r.oldValue === 'running' || r.target.dataset.testScriptState === 'running')) w.ran = true;
            if (!w.chart) {
                const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
                if (el && el.closest('[data-testid="stVegaLiteChart"]')) w.chart = true;
            }
            for (const n of r.removedNodes)
                if (n.nodeType === 1 && n.matches('svg.marks, canvas.marks')) w.replaced++;
        }
    }).observe(document, {childList: true, subtree: true, attributes: true, attributeOldValue: true,
                                  characterData: true});
}"""
# The move has ended: the DOM has changed since the key press and then been quiet for `quiet` ms, no run is going
# on, every chart is drawn, and the move's run has shown: a chart changed (a timed move, of a slider that redraws a
# chart, waits for that), or else the script state changed, or else `late` ms have passed since the key press.
# (The state attribute is not proof enough alone: a quick run's start and end can reach the page in one render,
# which then leaves it as it was.)
SETTLED = """([quiet, chart, late]) => {
    const w = window.benchMoves, app = document.querySelector('[data-testid="stApp"]'), now = performance.now();
    if (!w || !w.armed || !(w.count || w.paints) || !app || app.dataset.testScriptState !== 'notRunning'
        || now - w.last < quiet || app.querySelector('[data-testid="stSkeleton"]')) return false;
    if (!(chart ? w.chart : w.chart || w.ran || now - w.start > late)) return false;
    return [...app.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .every(c => c.querySelector('svg.marks, canvas.marks'));
}"""
# What a move that did not settle left behind (and the observer disarmed).
UNSETTLED = """() => {
    const w = window.benchMoves, app = document.querySelector('[data-testid="stApp"]');
    w.armed = false;
    return {mutations: w.count, ran: w.ran, quiet_ms: Math.round(performance.now() - w.last),
            script: app && app.dataset.testScriptState, connection: app && app.dataset.testConnectionState,
            value: document.activeElement && document.activeElement.value,
            skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
            undrawn: [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                .filter(c => !c.querySelector('svg.marks, canvas.marks')).length};
}"""
TAKE = """() => {
    const w = window.benchMoves;
    w.armed = false;
    return {ms: w.last - w.start, mutations: w.count, replaced: w.replaced, chart: w.chart};
}"""
SLIDERS = """() => [...document.querySelectorAll('[data-testid="stSlider"]')]
    .map(s => [...s.querySelectorAll('input[type=range]')])
    .filter(inputs => inputs.length === 1 && !inputs[0].disabled)
    .map(([i]) => ({label: i.getAttribute('aria-label') || '', value: +i.value, min: +i.min, max: +i.max,
                    step: +i.step || 1}))"""
PAGE_STATE = """() => ({nodes: document.getElementsByTagName('*').length,
    charts: document.querySelectorAll('[data-testid="stVegaLiteChart"]').length,
    exceptions: [...document.querySelectorAll('[data-testid="stException"]')].map(e => e.innerText.slice(0, 200))})"""


# ---- figures (no browser) ---------------------------------------------------------------------------


@dataclass
class Slider:
    label: str
    value: float
    min: float
    max: float
    step: float

    def room(self) -> tuple[int, int]:
        """Steps left to the bottom and to the top of the range."""
        return (round((self.value - self.min) / self.step), round((self.max - self.value) / self.step))

    def key(self) -> str:
        """The arrow toward the far end of the range."""
        down, up = self.room()
        return "ArrowRight" if up >= down else "ArrowLeft"


def candidates(sliders: list[Slider], moves: int, preferred: tuple[re.Pattern, ...] = PREFERRED) -> list[Slider]:
    """The sliders with room for `moves` moves in one direction, the preferred ones first (in their order), then
    the others in page order."""
    roomy = [s for s in sliders if max(s.room()) >= moves]

    def rank(s: Slider) -> int:
        return next((i for i, pattern in enumerate(preferred) if pattern.search(s.label)), len(preferred))

    return sorted(roomy, key=rank)  # sorted is stable: page order within a rank


@dataclass
class Moves:
    """One page's timed moves."""

    slider: str = ""
    seconds: list[float] = field(default_factory=list)
    mutations: list[int] = field(default_factory=list)
    replaced: list[int] = field(default_factory=list)  # chart views (svg or canvas) removed by the move
    nodes: int = 0  # DOM elements after the moves
    charts: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, move: dict) -> None:
        self.seconds.append(move["ms"] / 1000)
        self.mutations.append(move["mutations"])
        self.replaced.append(move["replaced"])

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds) if self.seconds else math.nan

    @property
    def median_mutations(self) -> float:
        return statistics.median(self.mutations) if self.mutations else math.nan

    @property
    def median_replaced(self) -> float:
        return statistics.median(self.replaced) if self.replaced else math.nan


def ratio(value: float, bare: float) -> float:
    return value / bare if bare > 0 else math.nan


def verdicts(page: str, moves: Moves, bare: Moves, budget: dict | None) -> list[str]:
    """What is wrong with one lesson's figures: a problem seen, no budget, past its budget."""
    found = [f"{page}: {p}" for p in moves.problems[:3]]
    if budget is None:
        return [*found, f"{page}: no budget in {BUDGETS.name} (a new lesson gets one when it lands)"]
    for what, value, yard in (("time", moves.median_s, bare.median_s),
                              ("mutations", moves.median_mutations, bare.median_mutations)):
        limit, measured = budget.get(what), ratio(value, yard)
        if limit is None:
            found.append(f"{page}: no {what} budget in {BUDGETS.name}")
        elif not measured <= limit:  # a nan (no move measured) fails too
            found.append(f"{page}: {what} {measured:.1f}x a bare move, past its budget of {limit:g}x")
    return found


def load_budgets(path: Path = BUDGETS) -> dict:
    return tomllib.loads(path.read_text()) if path.exists() else {}


def table(results: dict[str, dict[str, Moves]], bare: Moves, limits: dict) -> str:
    """One row per lesson and app (with --base: the base's row under this one's, then their ratio)."""
    lines = ["| lesson | app | slider | move → redrawn, median s | x bare | DOM mutations a move | x bare "
             "| chart views replaced a move | DOM elements | charts | budget: x bare (time / mutations) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for page, by_app in results.items():
        budget = limits.get(page)
        limit = f"{budget.get('time', 'none')} / {budget.get('mutations', 'none')}" if budget else "none"
        for app, m in by_app.items():
            lines.append(f"| {page} | {app} | {m.slider or '-'} | {m.median_s:.2f} "
                         f"| **{ratio(m.median_s, bare.median_s):.1f}** | {m.median_mutations:.0f} "
                         f"| {ratio(m.median_mutations, bare.median_mutations):.1f} "
                         f"| {m.median_replaced:.0f} | {m.nodes} | {m.charts} | {limit if app == 'this' else ''} |")
        if len(by_app) == 2:
            this, base = by_app.values()
            lines.append(f"| {page} | this / base | | {ratio(this.median_s, base.median_s):.2f} | | "
                         f"{ratio(this.median_mutations, base.median_mutations):.2f} | | | "
                         f"{ratio(this.nodes, base.nodes):.2f} | | |")
    lines.append(f"| bare page | | Random seed | {bare.median_s:.2f} | 1 | {bare.median_mutations:.0f} | 1 "
                 f"| {bare.median_replaced:.0f} | {bare.nodes} | {bare.charts} | |")
    return "\n".join(lines)


# ---- in the browser ---------------------------------------------------------------------------------


class Tab:
    """One page in a browser context of its own, with every uncaught JavaScript error it logs."""

    def __init__(self, browser, url: str):
        self.url = url
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(f"JavaScript error: {error}"))

    def open(self, path: str = "") -> None:
        self.page.bring_to_front()
        self.page.goto(f"{self.url}/{path}")
        self.page.wait_for_selector("h1", timeout=PAGE_TIMEOUT_MS)  # before it, "notRunning" is the state too
        self.page.wait_for_function(DRAWN, timeout=PAGE_TIMEOUT_MS, polling=100)
        self.page.evaluate(OBSERVE)

    def sliders(self) -> list[Slider]:
        return [Slider(**s) for s in self.page.evaluate(SLIDERS)]

    def thumb(self, label: str):
        return self.page.locator(f'[data-testid="stSlider"] input[type=range][aria-label={json.dumps(label)}]').first

    def move(self, slider: Slider, key: str, seen: set[float], chart: bool = True) -> dict:
        """Press `key` on the slider once and wait for the page to settle (with `chart`, until a chart has
        changed); the move's figures, and the slider's new value added to `seen`. Raises TimeoutError when the
        page did not settle, ValueError when the slider did not reach a value it had not had."""
        thumb = self.thumb(slider.label)
        thumb.focus()  # the run just ended may have drawn the slider anew
        self.page.keyboard.press(key)
        try:
            self.page.wait_for_function(SETTLED, arg=[QUIET_MS, chart, LATE_MS], timeout=MOVE_TIMEOUT_MS, polling=50)
        except Exception as timeout:  # Playwright's TimeoutError
            seen_then = self.page.evaluate(UNSETTLED)
            with contextlib.suppress(Exception):  # whatever it was doing, the next move starts from a drawn page
                self.page.wait_for_function(DRAWN, timeout=PAGE_TIMEOUT_MS, polling=100)
            raise TimeoutError(f"{slider.label}: the page did not settle within {MOVE_TIMEOUT_MS / 1000:g} s "
                               f"of {key} ({seen_then})") from timeout
        move = self.page.evaluate(TAKE)
        value = float(thumb.input_value())
        if value in seen:
            raise ValueError(f"{slider.label}: {key} reached {value:g}, a value it has had")
        seen.add(value)
        return move

    def state(self) -> dict:
        return self.page.evaluate(PAGE_STATE)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.context.close()


def measure_page(tab: Tab, path: str, moves: int, preferred: tuple[re.Pattern, ...] = PREFERRED) -> Moves:
    """Open the page, pick a slider whose move redraws a chart, warm up, then `moves` timed moves."""
    out = Moves()
    errors_before = len(tab.errors)
    try:
        tab.open(path)
    except Exception as error:
        out.problems.append(f"the page was not drawn within {PAGE_TIMEOUT_MS / 1000:g} s: {error}".splitlines()[0])
        return out
    chosen, seen = None, set()
    for slider in candidates(tab.sliders(), 1 + WARM_MOVES + moves, preferred)[:MAX_CANDIDATES]:
        seen = {slider.value}
        try:
            if tab.move(slider, slider.key(), seen, chart=False)["chart"]:
                chosen = slider
                break
        except (TimeoutError, ValueError) as problem:
            out.problems.append(f"trying a slider: {problem}")
    if chosen is None:
        out.problems.append("no slider with room for every move redraws a chart")
    else:
        out.slider = chosen.label
        key = chosen.key()  # the far end from where it started: every move reaches a new value
        timeouts = 0
        for i in range(WARM_MOVES + moves):
            try:
                move = tab.move(chosen, key, seen)
            except (TimeoutError, ValueError) as problem:
                out.problems.append(str(problem))
                timeouts += 1
                if timeouts == 2:
                    break
                continue
            if i >= WARM_MOVES:
                out.add(move)
    state = tab.state()
    out.nodes, out.charts = state["nodes"], state["charts"]
    out.problems += [f"exception on the page: {e}" for e in state["exceptions"]]
    out.problems += tab.errors[errors_before:]
    return out


class Bare:
    """The yardstick: one tab on the bare page, its seed slider moved up a few times before each lesson."""

    def __init__(self, browser, url: str):
        self.tab = Tab(browser, url)
        self.total = Moves(slider="Random seed")
        self.seen: set[float] = set()
        self.slider: Slider | None = None

    def move(self, n: int = BARE_MOVES) -> None:
        if self.slider is None:
            self.tab.open()
            self.slider = self.tab.sliders()[0]
            self.seen = {self.slider.value}
            for _ in range(2):  # its first moves warm it up
                self.tab.move(self.slider, "ArrowRight", self.seen)
        self.tab.page.bring_to_front()
        for _ in range(n):
            try:
                self.total.add(self.tab.move(self.slider, "ArrowRight", self.seen))
            except (TimeoutError, ValueError) as problem:
                self.total.problems.append(str(problem))
        state = self.tab.state()
        self.total.nodes, self.total.charts = state["nodes"], state["charts"]


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """A temporary `git worktree` of `rev` (detached), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="browser-moves-base-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), rev], check=True,
                   stdout=subprocess.DEVNULL)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], check=False)


def run(pages: list[str], moves: int, roots: dict[str, Path], preferred: tuple[re.Pattern, ...] = PREFERRED
        ) -> tuple[dict[str, dict[str, Moves]], Moves]:
    """Every page on every app (`roots`: a name for each checkout), in turns, against the bare page; the sliders
    matched by `preferred` tried first."""
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        def start(**kwargs) -> Server:  # one after another: Server.start retries a port another process took
            server = Server.start(**kwargs)
            stack.callback(server.stop)
            return server

        bare_server = start(script=BARE_SCRIPT)
        apps = {name: start(root=root, until_warm=True) for name, root in roots.items()}
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        tabs = {name: Tab(browser, server.url) for name, server in apps.items()}
        bare = Bare(browser, bare_server.url)
        results: dict[str, dict[str, Moves]] = {}
        for i, page in enumerate(pages):
            order = list(tabs) if i % 2 == 0 else list(reversed(tabs))
            measured = {}
            for name in order:
                bare.move()
                measured[name] = measure_page(tabs[name], page, moves, preferred)
                print(f"  {page} ({name}): {measured[name].median_s:.2f} s, {measured[name].median_mutations:.0f} "
                      f"mutations a move ({measured[name].slider or 'no slider'})", file=sys.stderr, flush=True)
            results[page] = {name: measured[name] for name in tabs}
        bare.move()
        bare.total.problems += bare.tab.errors
    return results, bare.total


def report(results: dict, bare: Moves, limits: dict, watch: Watch, started: float) -> None:
    print(f"A bare move (one slider, one 7x7 heatmap: {BARE_SCRIPT}) took **{bare.median_s:.2f} s** "
          f"(median of {len(bare.seconds)}), {bare.median_mutations:.0f} DOM mutations.\n")
    print(table(results, bare, limits))
    print(f"\n{watch.line()}; {time.monotonic() - started:.0f} s")
    if bare.problems:
        print("The bare page: " + "; ".join(bare.problems[:3]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a lesson is past its budget")
    parser.add_argument("--page", action="append", help="only this lesson (its url path or folder); may be repeated")
    parser.add_argument("--moves", type=int, default=5, help="timed moves per lesson (5)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose lessons are measured")
    parser.add_argument("--base", metavar="REV", help="also measure REV (a temporary git worktree) in turns")
    parser.add_argument("--budgets", type=Path, default=BUDGETS, help=f"the budgets ({BUDGETS.name})")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--slider", metavar="PATTERN", help="try first the slider whose label this matches (a regular "
                        "expression, any case): to time a move other than the seed's")
    args = parser.parse_args()
    preferred = (re.compile(args.slider, re.I), *PREFERRED) if args.slider else PREFERRED
    lessons = [lesson for lesson in COURSE if lesson.name not in SKIPPED]
    pages = [lesson.url_path for lesson in lessons
             if not args.page or lesson.url_path in args.page or lesson.name in args.page]
    unknown = set(args.page or ()) - {lesson.url_path for lesson in lessons} - {lesson.name for lesson in lessons}
    if unknown or not pages:
        parser.error(f"no such lesson: {', '.join(sorted(unknown)) or args.page}")
    limits = load_budgets(args.budgets)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        roots = {"this": args.root.resolve()}
        if args.base:
            roots["base"] = stack.enter_context(worktree(args.base))
        print(f"# A slider move in Chromium against a bare page: {len(pages)} lessons, {args.moves} timed moves each"
              + (f", this checkout and {args.base} in turns" if args.base else "") + "\n")
        watch = Watch()
        results, bare = run(pages, args.moves, roots, preferred)
        report(results, bare, limits, watch, started)
        found = [v for page, by_app in results.items() for v in verdicts(page, by_app["this"], bare, limits.get(page))]
        if args.json:
            args.json.write_text(json.dumps({"bare": asdict(bare) | {"median_s": bare.median_s},
                                             "results": {p: {a: asdict(m) | {"median_s": m.median_s}
                                                             for a, m in r.items()} for p, r in results.items()}},
                                            indent=1))
        if found and args.check:
            again = sorted({v.split(":", 1)[0] for v in found}, key=pages.index)
            print("\nFound wrong in this run:\n- " + "\n- ".join(found) + f"\n\nMeasured again: {', '.join(again)}\n")
            watch, started = Watch(), time.monotonic()
            results, bare = run(again, args.moves, {"this": roots["this"]}, preferred)
            report(results, bare, limits, watch, started)
            found = [v for page, by_app in results.items()
                     for v in verdicts(page, by_app["this"], bare, limits.get(page))]
    if found:
        print("\n" + ("Found wrong, measured twice" if args.check else "Would fail --check") + ":\n- "
              + "\n- ".join(found))
        if args.check:
            sys.exit(1)
    else:
        print("\nEvery lesson is within its budget.")


if __name__ == "__main__":
    main()

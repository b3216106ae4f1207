"""What a slider move costs each lesson, as a multiple of a bare one-slider page's move, against its budget.

Run from the repository root:  python bench/budget.py [--check] [--page qkv] [--moves 24] [--root CHECKOUT]
                                                      [--json FILE]

A class on one server process shares that process's CPU: what one student's move costs, every other student
waits for. Wall-clock budgets flake on a busy machine, and a machine twice as fast halves every figure; so each
lesson is measured against a yardstick served in the same run on the same Python with the same config: a bare
page of one slider in a live part (bench/bare_page.py). A lesson "at 6x" costs the server six bare moves a move.

Two servers are started (`streamlit run`, loopback ports, the project's .streamlit/config.toml): the app (of
this checkout, or of --root CHECKOUT, e.g. a `git worktree` of an older commit) and the bare page (always this
checkout's). Each is driven by bench/streamlit_client.py, Streamlit's websocket protocol as a browser speaks
it: a control inside a live part is moved as a rerun of that part, and the browser's message cache is kept, so
the bytes are what a browser is sent. For every lesson, at its defaults and at its largest settings (as
bench/bench_pages.py sets them: d_model, heads, seq_len and d_k at the top of their sliders, a 64-word text):

- one session opens the page, then moves every slider the page has, in turn (a class moves every control, not
  only one): a warm-up round, then --moves timed moves, each to a value that slider has not had in the session
  (so no cached result hides the work: a class sharing moves costs less, never more);
- the server's CPU time (user + system, psutil) is read before each move and 30 ms after its script_finished;
  the figure is the mean over the timed moves (the kernel counts in 10 ms ticks: one move's reading is coarse,
  their sum is not);
- before each lesson, the bare page is moved 12 times; its mean over the whole run is the yardstick.

The table gives each lesson's CPU ms a move, that as a multiple of the bare move, KB sent a move (mean) and the
parts a move sends (elements and layout blocks: each a message to send and a piece for the browser to render
again), beside its budget (bench/budgets.toml). With --check the run exits 1 when a lesson is past its budget, has no
budget, or showed an exception or an error: `.ci/run` runs it so. It exits 0 otherwise, and without --check.
A lesson found wrong is measured once more, on fresh servers, and fails only if the second run finds it wrong too:
one hiccup of a shared machine (a host's pause, a collection) once put a lesson 40% past its usual figure and past
its budget in one run, while the next runs measured it well within.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_pages import LARGEST, open_page  # noqa: E402
from bench.machine import Watch, event_loop  # noqa: E402
from bench.streamlit_client import Server, Session, SliderInfo, cpu_seconds  # noqa: E402
from lessons import COURSE  # noqa: E402

BUDGETS = Path(__file__).with_name("budgets.toml")
SETTINGS = ("defaults", "largest")
LONG_TEXT = " ".join(f"word{i}" for i in range(64))
SETTLE_S = 0.03  # after script_finished: the server's own work after a run lands in its move
BARE_MOVES = 12  # bare moves before each lesson's measurement


@dataclass
class Measured:
    """One page at one setting: total CPU and bytes over the timed moves."""

    moves: int = 0
    cpu_s: float = 0.0
    kb: float = 0.0
    parts: int = 0  # elements and layout blocks sent
    problems: list[str] = field(default_factory=list)

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu_s / self.moves if self.moves else float("nan")

    @property
    def kb_per_move(self) -> float:
        return self.kb / self.moves if self.moves else float("nan")

    @property
    def parts_per_move(self) -> float:
        return self.parts / self.moves if self.moves else float("nan")


def fresh(slider: SliderInfo, used: set) -> object:
    """A value the slider has not had in this session (or, once all have, any other than its own)."""
    values = slider.values()
    unused = [v for v in values if (slider.key, v) not in used]
    pool = unused or [v for v in values if v not in slider.value] or values
    value = pool[len(pool) // 2] if not unused else pool[(len(used) * 7919) % len(pool)]  # spread over the range
    used.add((slider.key, value))
    return value


async def move_and_time(session: Session, slider: SliderInfo, value, pid: int, out: Measured | None) -> None:
    before = cpu_seconds(pid)
    try:
        render = await session.move(slider, value)
    except TimeoutError:
        raise TimeoutError(f"{slider.key}={value} (fragment {slider.fragment_id or 'none'}): no answer within "
                           f"{session.timeout:g} s") from None
    await asyncio.sleep(SETTLE_S)
    spent = cpu_seconds(pid) - before
    problems = [f"{slider.key}={value}: {e}" for e in render.exceptions]
    if render.status not in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"):
        problems.append(f"{slider.key}={value}: the run ended {render.status}")
    if out is not None:
        out.moves += 1
        out.cpu_s += spent
        out.kb += render.bytes / 1024
        out.parts += render.elements + render.blocks
        out.problems += problems


async def measure(url: str, pid: int, page: str, query: str, moves: int) -> Measured:
    """Every slider of the page in turn: a warm-up round, then `moves` timed moves."""
    out = Measured()
    session, render = await Session.open(url, page, query)
    try:
        out.problems += [f"on opening: {e}" for e in render.exceptions]
        keys = sorted(session.sliders)
        if not keys:
            out.problems.append("no slider to move")
            return out
        used: set = set()
        for i in range(len(keys) + moves):
            key = keys[i % len(keys)]
            slider = session.sliders.get(key)
            if slider is None:  # a slider a move took away (a range that now holds one value): the next one
                continue
            await move_and_time(session, slider, fresh(slider, used), pid, out if i >= len(keys) else None)
    finally:
        await session.close()
    return out


async def largest_query(url: str, page: str) -> str:
    """The query string that puts d_model, heads, seq_len and d_k, where the page has them, at their top (opened
    again after each: a later slider's range may follow an earlier one), with a 64-word text for seq_len."""
    render = await open_page(url, page)
    params: dict[str, str] = {}
    if "seq_len" in render.sliders:
        params["text"] = LONG_TEXT
    for key in LARGEST:
        if key in render.sliders:
            slider = render.sliders[key]
            params[key] = str(max(slider.values(), key=float))
            render = await open_page(url, page, "&".join(f"{k}={v}" for k, v in params.items()))
    return "&".join(f"{k}={v}" for k, v in params.items())


class Bare:
    """The yardstick: one session on the bare page, moved a few times before each lesson is measured."""

    def __init__(self, server: Server):
        self.server, self.total = server, Measured()
        self.session: Session | None = None
        self.used: set = set()

    async def move(self, n: int = BARE_MOVES) -> None:
        if self.session is None:
            self.session, _ = await Session.open(self.server.url)
            for _ in range(3):  # its first moves warm it up
                slider = self.session.sliders["seed"]
                await move_and_time(self.session, slider, fresh(slider, self.used), self.server.pid, None)
        for _ in range(n):
            slider = self.session.sliders["seed"]
            await move_and_time(self.session, slider, fresh(slider, self.used), self.server.pid, self.total)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()


def budgets() -> dict:
    return tomllib.loads(BUDGETS.read_text()) if BUDGETS.exists() else {}


def verdicts(page: str, results: dict[str, Measured], bare_ms: float, budget: dict) -> list[str]:
    """What is wrong with one lesson's figures: past its budget, no budget, an exception."""
    found = []
    for setting in SETTINGS:
        m = results[setting]
        found += [f"{page} {setting}: {p}" for p in m.problems[:3]]
        limit = budget.get(setting)
        if limit is None:
            found.append(f"{page} {setting}: no budget in {BUDGETS.name} (a new lesson gets one when it lands)")
            continue
        ratio = m.cpu_ms / bare_ms
        if not ratio <= limit["cpu"]:
            found.append(f"{page} {setting}: {ratio:.1f}x a bare move, past its budget of {limit['cpu']:g}x")
        if not m.kb_per_move <= limit["kb"]:
            found.append(f"{page} {setting}: {m.kb_per_move:.0f} KB a move, past its budget of {limit['kb']:g} KB")
    return found


async def run(pages: list[str], moves: int, root: Path) -> tuple[dict, float, Watch]:
    with Server.start(until_warm=True, root=root) as app, Server.start(script="bench/bare_page.py") as bare_server:
        bare = Bare(bare_server)
        watch = Watch()
        results: dict[str, dict[str, Measured]] = {}
        try:
            for page in pages:
                results[page] = {}
                query = {"defaults": "", "largest": await largest_query(app.url, page)}
                for setting in SETTINGS:
                    await bare.move()
                    await open_page(app.url, page, query[setting])  # a first visit fills what every later one reuses
                    results[page][setting] = await measure(app.url, app.pid, page, query[setting], moves)
            await bare.move()
        finally:
            await bare.close()
    return results, bare.total.cpu_ms, watch


def table(results: dict, bare_ms: float, limits: dict) -> str:
    lines = ["| lesson | defaults: CPU ms a move | x bare | KB | parts | largest: CPU ms a move | x bare | KB | parts "
             "| budget: x bare (defaults / largest) | budget: KB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for page, by_setting in results.items():
        cells = [page]
        for setting in SETTINGS:
            m = by_setting[setting]
            cells += [f"{m.cpu_ms:.1f}", f"**{m.cpu_ms / bare_ms:.1f}**", f"{m.kb_per_move:.0f}",
                      f"{m.parts_per_move:.0f}"]
        budget = limits.get(page, {})
        cells.append(" / ".join(f"{budget[s]['cpu']:g}" if s in budget else "none" for s in SETTINGS))
        cells.append(" / ".join(f"{budget[s]['kb']:g}" if s in budget else "none" for s in SETTINGS))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a lesson is past its budget")
    parser.add_argument("--page", action="append", help="only this lesson (its url path); may be repeated")
    parser.add_argument("--moves", type=int, default=24, help="timed moves per lesson and setting (24)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose lessons are measured")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    pages = args.page or [lesson.url_path for lesson in COURSE]
    print(f"# Slider moves against a bare page: {len(pages)} lessons, {args.moves} timed moves each at their "
          f"defaults and largest settings, event loop {event_loop()}\n")
    results, bare_ms, watch = asyncio.run(run(pages, args.moves, args.root.resolve()))
    limits = budgets()
    print(f"A bare move (bench/bare_page.py) cost **{bare_ms:.2f} ms** of server CPU.\n")
    print(table(results, bare_ms, limits))
    print(f"\n{watch.line()}")
    found = [v for page, by_setting in results.items()
             for v in verdicts(page, by_setting, bare_ms, limits.get(page, {}))]
    if args.json:
        args.json.write_text(json.dumps({"bare_ms": bare_ms, "results": {p: {s: asdict(m) for s, m in r.items()}
                                                                           for p, r in results.items()}}, indent=1))
    if found and args.check:
        again = sorted({page for page, by_setting in results.items()
                        if verdicts(page, by_setting, bare_ms, limits.get(page, {}))})
        print("\nPast the budget in this run:\n- " + "\n- ".join(found) + f"\n\nMeasured again: {', '.join(again)}\n")
        results, bare_ms, watch = asyncio.run(run(again, args.moves, args.root.resolve()))
        print(f"A bare move cost **{bare_ms:.2f} ms** of server CPU.\n\n{table(results, bare_ms, limits)}")
        print(f"\n{watch.line()}")
        found = [v for page, by_setting in results.items()
                 for v in verdicts(page, by_setting, bare_ms, limits.get(page, {}))]
    if found:
        print("\n" + ("Past the budget, measured twice" if args.check else "Would fail --check") + ":\n- "
              + "\n- ".join(found))
        if args.check:
            sys.exit(1)
    else:
        print("\nEvery lesson is within its budget.")


if __name__ == "__main__":
    main()

"""What one more element in a live part costs a slider move, in the browser and on the server, by kind of element.

Run from the repository root:  python bench/element_costs.py [--count 10] [--moves 8] [--rounds 2]
                                                             [--kinds caption,table,...]

A move reruns its live part, and Streamlit sends every element of it again, changed or not; the browser then
renders each one. This measures how much that costs per element: bench/element_page.py is a bare page (one
slider, one 7x7 heatmap) with --count more elements of one kind in its live part, served once per kind; the
seed slider is moved --moves times to new values in Chromium and each move timed as bench/browser_moves.py
times a lesson's (key press to the page's last change); then the same server is sent 60 moves one after another
by bench/streamlit_client.py and its CPU over them read (psutil). Kinds are served in turns, --rounds times, so
they share the machine's drift. Prints each kind's median move, and what one element of it adds over the bare
page, in the browser and in server CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.browser_moves import CHROMIUM, CHROMIUM_ARGS, Tab  # noqa: E402
from bench.streamlit_client import Server, Session, cpu_seconds  # noqa: E402

PAGE = "bench/element_page.py"
SERVER_MOVES = 60  # timed moves for a kind's server CPU
KINDS = ("caption_fixed", "caption", "formula", "metric", "slider", "table", "markdown_table", "chart", "lab_heatmap",
         "lab_grid", "columns", "row")


def median_move(browser, kind: str, count: int, moves: int) -> tuple[float, float]:
    """The median seconds of `moves` moves of the page with `count` elements of `kind` (none: the bare page) in the
    browser, and the server's CPU seconds a move (server_move, on the same server once the browser is done)."""
    os.environ["ELEMENTS"] = f"{kind}:{count}"  # the server's process inherits it
    with Server.start(script=PAGE) as server:
        tab = Tab(browser, server.url)
        try:
            tab.open()
            slider = tab.sliders()[0]
            seen = {slider.value}
            for _ in range(2):  # warm-up
                tab.move(slider, "ArrowRight", seen)
            browser_s = statistics.median(tab.move(slider, "ArrowRight", seen)["ms"] for _ in range(moves)) / 1000
        finally:
            tab.close()
        # in a thread of its own: Playwright's sync API keeps an event loop running in this one
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            return browser_s, thread.submit(asyncio.run, server_move(server, SERVER_MOVES)).result()


async def server_move(server: Server, moves: int) -> float:
    """The server's CPU seconds a move: `moves` moves of the seed slider, one after another, sent as the browser
    sends them (bench/streamlit_client.py) to values it has not had; the server's CPU (psutil) over all of them
    divided by their number (the kernel counts CPU in 10 ms ticks, too coarse for one move)."""
    session, _ = await Session.open(server.url)
    try:
        slider = next(iter(session.sliders.values()))
        values = iter(slider.values()[500:])  # the browser's moves went from 0 upwards
        for _ in range(2):  # warm-up
            await session.move(slider, next(values))
        cpu = cpu_seconds(server.pid)
        for _ in range(moves):
            await session.move(slider, next(values))
        return (cpu_seconds(server.pid) - cpu) / moves
    finally:
        await session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="elements of a kind on its page")
    parser.add_argument("--moves", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    kinds = ["none", *args.kinds.split(",")]
    seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
    server: dict[str, list[float]] = {kind: [] for kind in kinds}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.rounds):
            for kind in kinds:
                browser_s, server_s = median_move(browser, kind, 0 if kind == "none" else args.count, args.moves)
                seconds[kind].append(browser_s)
                server[kind].append(server_s)
        browser.close()
    bare, bare_server = statistics.median(seconds["none"]), statistics.median(server["none"])
    print(f"A move of the bare page: {bare * 1000:.0f} ms in the browser, {bare_server * 1000:.1f} ms of server CPU "
          f"(medians of {args.moves} moves, {args.rounds} rounds)\n")
    print(f"| kind | browser: a move with {args.count} of them (ms, each round) | each one adds (ms) "
          f"| server: each one adds (ms of CPU) |")
    print("|---|---|---|---|")
    for kind in kinds[1:]:
        rounds = ", ".join(f"{s * 1000:.0f}" for s in seconds[kind])
        adds = (statistics.median(seconds[kind]) - bare) * 1000 / args.count
        adds_server = (statistics.median(server[kind]) - bare_server) * 1000 / args.count
        print(f"| {kind} | {rounds} | {adds:.1f} | {adds_server:.2f} |")


if __name__ == "__main__":
    main()

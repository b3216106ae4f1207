"""What one more element in a live part costs a slider move in the browser, by kind of element.

Run from the repository root:  python bench/element_costs.py [--count 10] [--moves 8] [--rounds 2]
                                                             [--kinds caption,table,...]

A move reruns its live part, and Streamlit sends every element of it again, changed or not; the browser then
renders each one. This measures how much that costs per element: bench/element_page.py is a bare page (one
slider, one 7x7 heatmap) with --count more elements of one kind in its live part, served once per kind; the
seed slider is moved --moves times to new values in Chromium and each move timed as bench/browser_moves.py
times a lesson's (key press to the page's last change). Kinds are served in turns, --rounds times, so they
share the machine's drift. Prints each kind's median move, and what one element of it adds over the bare page.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.browser_moves import CHROMIUM, CHROMIUM_ARGS, Tab  # noqa: E402
from bench.streamlit_client import Server  # noqa: E402

PAGE = "bench/element_page.py"
KINDS = ("caption_fixed", "caption", "formula", "metric", "slider", "table", "markdown_table", "chart", "lab_heatmap")


def median_move(browser, kind: str, count: int, moves: int) -> float:
    """The median seconds of `moves` moves of the page with `count` elements of `kind` (none: the bare page)."""
    os.environ["ELEMENTS"] = f"{kind}:{count}"  # the server's process inherits it
    with Server.start(script=PAGE) as server:
        tab = Tab(browser, server.url)
        try:
            tab.open()
            slider = tab.sliders()[0]
            seen = {slider.value}
            for _ in range(2):  # warm-up
                tab.move(slider, "ArrowRight", seen)
            return statistics.median(tab.move(slider, "ArrowRight", seen)["ms"] for _ in range(moves)) / 1000
        finally:
            tab.close()


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
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(args.rounds):
            for kind in kinds:
                seconds[kind].append(median_move(browser, kind, 0 if kind == "none" else args.count, args.moves))
        browser.close()
    bare = statistics.median(seconds["none"])
    print(f"A move of the bare page: {bare * 1000:.0f} ms (medians of {args.moves} moves, {args.rounds} rounds)\n")
    print(f"| kind | a move with {args.count} of them (ms, each round) | each one adds (ms) |")
    print("|---|---|---|")
    for kind in kinds[1:]:
        rounds = ", ".join(f"{s * 1000:.0f}" for s in seconds[kind])
        print(f"| {kind} | {rounds} | {(statistics.median(seconds[kind]) - bare) * 1000 / args.count:.1f} |")


if __name__ == "__main__":
    main()

"""What a head's switch on Full model's head view costs in Chromium: from the key press to that head's lines gone from
the chart, and to the page's last change before 400 ms of quiet (the server's rerun: the caption and the link).

Run from the repository root:  python bench/head_view_switch.py [--moves 6] [--base REV]

The head view's switches are the chart's own check boxes (lessons/full_model/chart_switches.py): Vega hides the
lines before the server hears of the click. With --base REV, REV's app (a temporary `git worktree`) is measured in
turns with this one, twice each: give a commit whose switches were Streamlit toggles (10af41e) to compare the two
ways. Each move switches head 2 off (and the next one on again, untimed), by the keyboard, as a student does; the
lines are counted in the chart's svg by head 2's colour. Prints the median of each run."""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.browser_moves import CHROMIUM, CHROMIUM_ARGS, worktree  # noqa: E402
from bench.machine import Watch  # noqa: E402
from bench.streamlit_client import Server  # noqa: E402
from lessons.full_model.head_view import HEAD_COLOURS  # noqa: E402

LINES = f'g.mark-rule line[stroke="{HEAD_COLOURS[1]}"]'  # head 2's lines
# From now on: when the page last changed, and when head 2's last line left it (ms after the key press).
WATCH = """(LINES) => {
  const count = () => document.querySelectorAll(LINES).length;
  window.__last = performance.now(); window.__gone = null;
  if (window.__seen) window.__seen.disconnect();
  window.__seen = new MutationObserver(() => {
    window.__last = performance.now();
    if (window.__gone === null && count() === 0) window.__gone = performance.now();
  });
  window.__seen.observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
  window.__t0 = performance.now();
}"""


def switch_of(page):
    """Head 2's switch: the chart's check box where there is one, else a Streamlit toggle (an older commit)."""
    boxes = page.locator(".vega-bindings input[type=checkbox]")
    return boxes.nth(1) if boxes.count() else page.get_by_role("switch", name="head 2")


def measure(root: Path, moves: int, browser) -> list[tuple[float, float]]:
    """(ms to head 2's lines gone, ms to the page quiet) for each timed move of the app at root."""
    from playwright.sync_api import expect

    out = []
    with Server.start(root=root, until_warm=True) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(server.url + "/model")
            lines = page.locator(LINES)
            expect(lines.first).to_be_attached(timeout=120_000)
            time.sleep(1)
            for i in range(2 * moves + 2):  # even presses switch head 2 off; the first pair warms up
                switch = switch_of(page)
                switch.scroll_into_view_if_needed()
                switch.focus()
                time.sleep(0.3)
                page.evaluate(WATCH, LINES)
                page.keyboard.press("Space")
                off = i % 2 == 0
                if off:
                    expect(lines).to_have_count(0, timeout=60_000)
                else:
                    expect(lines.first).to_be_attached(timeout=60_000)
                while page.evaluate("performance.now() - window.__last") < 400:
                    time.sleep(0.05)
                gone, last = page.evaluate("[window.__gone - window.__t0, window.__last - window.__t0]")
                if off and i >= 2:
                    out.append((gone, last))
        finally:
            page.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=6)
    parser.add_argument("--base", metavar="REV", help="also REV's app, in turns with this one")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    watch = Watch()
    with sync_playwright() as p, (worktree(args.base) if args.base else contextlib.nullcontext()) as base:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        roots = [("this", ROOT)] + ([(args.base, base)] if base else [])
        for _ in range(2 if base else 1):
            for name, root in roots:
                moves = measure(root, args.moves, browser)
                print(f"{name:>10}: head 2's lines gone {statistics.median(g for g, _ in moves):5.0f} ms after the key "
                      f"press, the page quiet after {statistics.median(q for _, q in moves):5.0f} ms (median of "
                      f"{len(moves)} moves)", flush=True)
        browser.close()
    print(watch.line())


if __name__ == "__main__":
    main()

"""What a move of a control a chart draws itself costs in Chromium: from the key press to the chart changed, and to
the page's last change before 400 ms of quiet (the server's rerun: the words and the link).

Run from the repository root:  python bench/chart_controls.py [--case head|tau] [--moves 6] [--base REV]

Two controls are the chart's own inputs (ui/state/chart_controls.py), moved in the browser before the server hears:
- head: a head's check box under Full model's head view; a move switches head 2 off (and the next on again,
  untimed), and the chart has changed when head 2's lines, counted in its svg by their colour, are gone;
- tau: Scaling's temperature τ under the weights map (ui/drawing/softmax.py); a move is an arrow key on the slider,
  one step down or up in turn, and the chart has changed when a number printed in the map has.
With --base REV, REV's app (a temporary `git worktree`) is measured in turns with this one, twice each: give a commit
whose control was a Streamlit widget (head: 10af41e, a toggle; tau: 690dcbd, a slider above the maps) to compare the
two ways. Each move is made by the keyboard, as a student does. Prints the median of each run."""

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
WEIGHTS = "g.mark-text.role-mark text"  # the numbers printed in a map, read in the map titled "weights: click a row"
# From now on: when the page last changed, and when the chart first showed the move (ms after the key press). The
# chart is looked up again at each change: an older commit's move builds a new one.
WATCH = """([selector, title, kind]) => {
  const charts = () => Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'));
  const titled = c => Array.from(c.querySelectorAll('g.role-title-text text')).some(t => t.textContent.includes(title));
  const within = () => title ? charts().filter(titled) : [document];
  const found = () => within().flatMap(c => Array.from(c.querySelectorAll(selector)));
  const seen = () => found().map(e => e.textContent).join(' ') + ' · ' + found().length;
  const before = seen();
  const changed = kind === 'gone' ? () => found().length === 0 : () => found().length > 0 && seen() !== before;
  window.__last = performance.now(); window.__changed = null;
  if (window.__seen) window.__seen.disconnect();
  window.__seen = new MutationObserver(() => {
    window.__last = performance.now();
    if (window.__changed === null && changed()) window.__changed = performance.now();
  });
  window.__seen.observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
  window.__t0 = performance.now();
}"""


def head_switch(page):
    """Head 2's switch: the chart's check box where there is one, else a Streamlit toggle (an older commit)."""
    boxes = page.locator(".vega-bindings input[type=checkbox]")
    return boxes.nth(1) if boxes.count() else page.get_by_role("switch", name="head 2")


CASES = {  # name: (page, what shows the move, in the chart titled, how it shows, the control, the keys of a move
    # and of the next)
    "head": ("/model", LINES, "", "gone", head_switch, ("Space", "Space")),
    "tau": ("/scaling", WEIGHTS, "weights: click a row", "changed",
            lambda page: page.get_by_role("slider", name="Attention temperature τ"), ("ArrowLeft", "ArrowRight")),
}


def measure(root: Path, case: str, moves: int, browser) -> list[tuple[float, float]]:
    """(ms to the chart changed, ms to the page quiet) for each timed move of the app at root."""
    from playwright.sync_api import expect

    path, selector, title, kind, control_of, keys = CASES[case]
    out = []
    with Server.start(root=root, until_warm=True) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.goto(server.url + path)
            expect(page.locator(selector).first).to_be_attached(timeout=120_000)
            if title:
                expect(page.get_by_text(title)).to_have_count(1, timeout=120_000)
            time.sleep(1)
            for i in range(2 * moves + 2):  # even moves are timed; the first pair warms up
                control = control_of(page)
                control.scroll_into_view_if_needed()
                control.focus()
                time.sleep(0.3)
                page.evaluate(WATCH, [selector, title, kind if i % 2 == 0 else "changed"])
                page.keyboard.press(keys[i % 2])
                page.wait_for_function("window.__changed !== null", timeout=60_000)
                while page.evaluate("performance.now() - window.__last") < 400:
                    time.sleep(0.05)
                changed, last = page.evaluate("[window.__changed - window.__t0, window.__last - window.__t0]")
                if i % 2 == 0 and i >= 2:
                    out.append((changed, last))
        finally:
            page.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), default="head")
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
                moves = measure(root, args.case, args.moves, browser)
                print(f"{name:>10} · {args.case}: the chart changed {statistics.median(c for c, _ in moves):5.0f} ms "
                      f"after the key press, the page quiet after {statistics.median(q for _, q in moves):5.0f} ms "
                      f"(median of {len(moves)} moves)", flush=True)
        browser.close()
    print(watch.line())


if __name__ == "__main__":
    main()

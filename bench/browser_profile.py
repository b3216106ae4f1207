"""Where a lesson's slider move spends the browser's time: Chromium's CPU profile of a few moves, by script.

Run from the repository root:  python bench/browser_profile.py [--page multi-head] [--moves 4] [--slider LABEL]
                                                              [--root CHECKOUT] [--functions 20]

bench/browser_moves.py says how long a move takes in the browser; this says what the browser does in that time.
It serves the app as browser_moves.py does (the same server, browser and page, ready once drawn), moves one slider
(the random seed unless --slider names another) twice to warm up, then records Chromium's sampling profiler (the
DevTools protocol's Profiler domain, a sample every 0.2 ms) over --moves timed moves, each to a value the slider has
not had, and prints:

- each move's time, key press to the page's last change (as browser_moves.py times it);
- milliseconds a move of self time by script file: the page's bundles are named by what they hold (react-dom:
  React rendering elements again; emotion-styled: their styles; StreamlitMarkdown: text; embed: Vega's dataflow and
  drawing; vega-interpreter: the expressions Vega evaluates for every mark; recordbatch, Quiver: Arrow tables read),
  beside the time outside scripts ("(program)": the browser's own work, style, layout and paint among it, and
  "(idle)"), which also holds the waits between moves, so is not a move's cost alone;
- the busiest functions, by self time.

The profiler's own cost lengthens every move a little, so the times it prints are not browser_moves.py's; compare
the shares. Figures move with the machine: compare two checkouts in one session (--root).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.browser_moves import CHROMIUM, CHROMIUM_ARGS, Tab  # noqa: E402
from bench.streamlit_client import Server  # noqa: E402

SAMPLE_US = 200  # the profiler's interval
WARM_MOVES = 2
# What the profiler counts outside the page's scripts: the browser's own work and the waits between moves (each move
# ends with 0.4 s of quiet, and Playwright polls the page meanwhile), so these are not a move's cost alone.
NOT_SCRIPTS = ("(program)", "(idle)", "(garbage collector)")


def self_times(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """A CPU profile's self time in microseconds, by script file and by (function, file)."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    by_script, by_function = collections.Counter(), collections.Counter()
    for node, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node]
        script = frame["url"].rsplit("/", 1)[-1] or frame["functionName"]  # "(program)", "(idle)", "(garbage ...)"
        by_script[script] += delta
        by_function[(frame["functionName"] or "(anonymous)", script)] += delta
    return by_script, by_function


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="multi-head", help="the lesson's url path (multi-head)")
    parser.add_argument("--moves", type=int, default=4, help="moves profiled (4)")
    parser.add_argument("--slider", default="Random seed", help="the slider's label (Random seed)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout served")
    parser.add_argument("--functions", type=int, default=20, help="busiest functions printed (20)")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with Server.start(root=args.root, until_warm=True) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        tab = Tab(browser, server.url)
        tab.open(args.page)
        sliders = [s for s in tab.sliders() if s.label == args.slider]
        if not sliders:
            sys.exit(f"no slider labelled {args.slider!r} on {args.page}: "
                     f"{', '.join(s.label for s in tab.sliders())}")
        slider = sliders[0]
        seen, key = {slider.value}, slider.key()
        for _ in range(WARM_MOVES):
            tab.move(slider, key, seen)
        cdp = tab.context.new_cdp_session(tab.page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLE_US})
        cdp.send("Profiler.start")
        times = [tab.move(slider, key, seen)["ms"] for _ in range(args.moves)]
        profile = cdp.send("Profiler.stop")["profile"]
        browser.close()

    by_script, by_function = self_times(profile)
    n = len(times)
    print(f"{args.page}, {args.slider}: {n} moves of {', '.join(f'{t:.0f}' for t in times)} ms (profiled)\n")
    scripts = {k: v for k, v in by_script.items() if k not in NOT_SCRIPTS}
    in_scripts = sum(scripts.values())
    print(f"Scripts ran {in_scripts / n / 1000:.0f} ms a move; " + ", ".join(
        f"{k} {by_script[k] / n / 1000:.0f}" for k in NOT_SCRIPTS if k in by_script) + " ms a move.\n")
    print("| script | self ms a move | share of the scripts' time |\n|---|---|---|")
    for script, us in sorted(scripts.items(), key=lambda item: -item[1]):
        if us / n >= 1000:  # a millisecond a move or more
            print(f"| {script} | {us / n / 1000:.1f} | {us / in_scripts:.0%} |")
    print("\n| function | script | self ms a move |\n|---|---|---|")
    busiest = [(key, us) for key, us in by_function.most_common() if key[1] not in NOT_SCRIPTS]
    for (function, script), us in busiest[:args.functions]:
        print(f"| {function} | {script} | {us / n / 1000:.1f} |")


if __name__ == "__main__":
    main()

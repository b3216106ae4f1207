"""Soak: one session reruns every page many times on the real server; does the server's memory level off?

Run from the repository root:
    python bench/soak.py                              # 1000 reruns per page, postScriptGC false (config.toml)
    python bench/soak.py --reruns-per-page 200 --gc true
    python bench/soak.py --new-session-every 100      # sessions come and go (a class leaving, the next arriving)
    python bench/soak.py --apptest                    # the same loop through AppTest, in this process

The server is `streamlit run streamlit_app.py` on a loopback port in 9100-9199 with
`--runner.postScriptGC false` (as .streamlit/config.toml ships it: Streamlit's full gc.collect() after every
run is switched off, and this is the check that memory stays bounded without it). One client session
(bench/streamlit_client.py, Streamlit's websocket protocol) visits the pages in blocks of --block reruns,
cycling through them until each page has had --reruns-per-page reruns; each rerun moves one of the page's
sliders (in turn) to the next value of a fixed stride through its range, so new values keep arriving and
the pages' caches fill up to their max_entries. The server's RSS is read (psutil) every --sample-every
reruns.

The verdict: memory plateaus when the RSS grew by less than --plateau-pct percent over the last
--window reruns. Printed: the curve (rerun, RSS), the growth over the window, and the slope of the
second half in KB per rerun.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.load_test import DEEP_LINKS  # noqa: E402
from bench.streamlit_client import Server, Session, SliderInfo, memory  # noqa: E402

MB = 1024 * 1024
STRIDE = 37  # steps between successive values of a slider: walks its whole range in a scrambled order


def next_value(slider: SliderInfo, k: int):
    values = slider.values()
    return values[(k * STRIDE) % len(values)]


def slope_kb_per_rerun(curve: list[tuple[int, int]]) -> float:
    """Least-squares slope of RSS against reruns over the second half of the curve, in KB per rerun."""
    half = curve[len(curve) // 2:]
    if len(half) < 2:
        return float("nan")
    xs, ys = [x for x, _ in half], [y / 1024 for _, y in half]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else float("nan")


def verdict(curve: list[tuple[int, int]], window: int, plateau_pct: float) -> tuple[float, bool]:
    """Growth (percent) of RSS over the last `window` reruns, and whether it is under plateau_pct."""
    end_rerun, end_rss = curve[-1]
    start_rss = next(rss for rerun, rss in reversed(curve) if rerun <= end_rerun - window)
    growth = 100 * (end_rss - start_rss) / start_rss
    return growth, growth < plateau_pct


def print_curve(title: str, curve: list[tuple[int, int]], window: int, plateau_pct: float, elapsed: float) -> bool:
    print(f"\n{title}")
    print("| reruns | RSS MB |\n|---|---|")
    for rerun, rss in curve:
        print(f"| {rerun} | {rss / MB:.1f} |")
    growth, flat = verdict(curve, window, plateau_pct)
    first_after_warmup = curve[min(len(curve) - 1, 4)][1]
    print(f"\nRSS: start {curve[0][1] / MB:.1f} MB, after {curve[min(len(curve) - 1, 4)][0]} reruns "
          f"{first_after_warmup / MB:.1f} MB, max {max(r for _, r in curve) / MB:.1f} MB, "
          f"end {curve[-1][1] / MB:.1f} MB")
    print(f"growth over the last {window} reruns: {growth:+.2f}% "
          f"({'plateau' if flat else 'STILL GROWING'}: threshold {plateau_pct}%); "
          f"slope of the second half {slope_kb_per_rerun(curve):+.1f} KB/rerun; {elapsed:.0f} s; "
          f"load average {' '.join(f'{x:.2f}' for x in psutil.getloadavg())}")
    return flat


# ---- through the server ---------------------------------------------------------------------------------


async def soak_server(url: str, pid: int, pages: list[str], per_page: int, block: int, sample_every: int,
                      new_session_every: int) -> tuple[list[tuple[int, int]], list[str], list[float]]:
    curve = [(0, memory(pid)["rss"])]
    problems: list[str] = []
    latencies: list[float] = []
    session, render = await Session.open(url, pages[0], DEEP_LINKS.get(pages[0], ""))
    done = dict.fromkeys(pages, 0)
    rerun = 0
    try:
        while any(n < per_page for n in done.values()):
            for page in pages:
                if done[page] >= per_page:
                    continue
                if new_session_every and rerun and rerun % new_session_every == 0:
                    await session.close()
                    session, render = await Session.open(url, page, DEEP_LINKS.get(page, ""))
                else:
                    session.query = DEEP_LINKS.get(page, "")
                    render = await session.rerun(page=page)
                problems += [f"{page} (open): {e}" for e in render.exceptions]
                for _ in range(min(block, per_page - done[page])):
                    sliders = sorted(render.sliders)
                    if sliders:
                        slider = render.sliders[sliders[rerun % len(sliders)]]
                        render = await session.move(slider, next_value(slider, rerun))
                    else:
                        render = await session.rerun()
                    latencies.append(render.latency_s)
                    problems += [f"{page} rerun {rerun}: {e}" for e in render.exceptions]
                    done[page] += 1
                    rerun += 1
                    if rerun % sample_every == 0:
                        curve.append((rerun, memory(pid)["rss"]))
                        if rerun % (sample_every * 10) == 0:
                            print(f"  {rerun} reruns, RSS {curve[-1][1] / MB:.1f} MB, "
                                  f"median latency {statistics.median(latencies[-500:]):.3f} s", flush=True)
    finally:
        await session.close()
    return curve, problems, latencies


# ---- through AppTest ------------------------------------------------------------------------------------


def apptest_values(widget) -> list:
    """Every value an AppTest slider or select slider offers, as the widget takes it."""
    if widget.type == "select_slider":
        return [type(widget.value)(option) for option in widget.options]
    n = round((widget.max - widget.min) / widget.step) + 1
    return [type(widget.value)(widget.min + i * widget.step) for i in range(n)]


def soak_apptest(pages: list[str], per_page: int, block: int, sample_every: int) -> tuple[list, list[str]]:
    """The same loop with Streamlit's AppTest in this process: the script's own memory, without the server."""
    from streamlit.testing.v1 import AppTest

    from ui.frame.nav import LESSONS

    paths = {lesson.url_path: lesson.path for lesson in LESSONS}
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120).run()
    curve = [(0, memory(os.getpid())["rss"])]
    problems: list[str] = []
    done = dict.fromkeys(pages, 0)
    rerun = 0
    while any(n < per_page for n in done.values()):
        for page in pages:
            if done[page] >= per_page:
                continue
            at.switch_page(paths[page]).run()
            for _ in range(min(block, per_page - done[page])):
                sliders = sorted([*at.sidebar.slider, *at.sidebar.select_slider], key=lambda w: w.key)
                if sliders:
                    widget = sliders[rerun % len(sliders)]
                    values = apptest_values(widget)
                    widget.set_value(values[(rerun * STRIDE) % len(values)])
                at.run()
                problems += [f"{page} rerun {rerun}: {e.value}" for e in at.exception]
                done[page] += 1
                rerun += 1
                if rerun % sample_every == 0:
                    curve.append((rerun, memory(os.getpid())["rss"]))
    return curve, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns-per-page", type=int, default=1000)
    parser.add_argument("--block", type=int, default=10, help="reruns on a page before moving to the next")
    parser.add_argument("--sample-every", type=int, default=50, help="read the RSS every this many reruns")
    parser.add_argument("--pages", default=",".join(DEEP_LINKS), help="url paths (default: every lesson)")
    parser.add_argument("--gc", choices=("false", "true"), default="false", help="runner.postScriptGC")
    parser.add_argument("--new-session-every", type=int, default=0,
                        help="close the session and open a new one every this many reruns (0: one session)")
    parser.add_argument("--window", type=int, default=200, help="plateau window, in reruns")
    parser.add_argument("--plateau-pct", type=float, default=5.0)
    parser.add_argument("--apptest", action="store_true", help="run the loop through AppTest instead")
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    total = args.reruns_per_page * len(pages)
    print(f"{total} reruns over {pages}, RSS every {args.sample_every}; load average "
          f"{' '.join(f'{x:.2f}' for x in psutil.getloadavg())}", flush=True)

    start = time.monotonic()
    if args.apptest:
        curve, problems = soak_apptest(pages, args.reruns_per_page, args.block, args.sample_every)
        flat = print_curve("AppTest (this process)", curve, args.window, args.plateau_pct, time.monotonic() - start)
    else:
        with Server.start(post_script_gc=args.gc == "true") as server:
            curve, problems, latencies = asyncio.run(soak_server(
                server.url, server.pid, pages, args.reruns_per_page, args.block, args.sample_every,
                args.new_session_every))
            healthy = server.health() == "ok"
            peak = memory(server.pid).get("peak")
        title = (f"server, postScriptGC={args.gc}" + (f", a new session every {args.new_session_every} reruns"
                                                       if args.new_session_every else ", one session"))
        flat = print_curve(title, curve, args.window, args.plateau_pct, time.monotonic() - start)
        print(f"latency: median {statistics.median(latencies):.3f} s, max {max(latencies):.3f} s; "
              f"peak RSS {'not kept on this system' if peak is None else f'{peak / MB:.1f} MB'} (the kernel's "
              f"high-water mark); server healthy at the end: {healthy}")
    print(f"exceptions: {len(problems)}")
    for line in problems[:10]:
        print("   ", line[:300])
    sys.exit(0 if flat and not problems else 1)


if __name__ == "__main__":
    main()

"""The first page view after a server start, per page: what the first student of a class waits for.

Run from the repository root:  python bench/bench_first_view.py  [--starts 3] [--wait 20] [--page qkv]
                                                                 [--root CHECKOUT]

For every page (the home page and each lesson in lessons.COURSE) and each of --starts fresh starts: start a
server as the image does (`streamlit run streamlit_app.py --server.headless true --server.fileWatcherType
none`, the project's .streamlit/config.toml, a loopback port in 9100-9199), wait until `/_stcore/health`
answers "ok" on its own socket, then ask health every 0.2 s for --wait seconds (a load balancer's checks while
the server stands ready before class; a server that warms itself in the background does so then), and
open the page as a browser opens a bare link (bench/streamlit_client.py: the XSRF cookie, the websocket,
one rerun_script with no query string). Timed: the first view, from sending rerun_script to
script_finished, and the whole visit (health, websocket handshake and the view). Each start serves one
page, so every figure is a first view on a fresh process.

Reported per page: median, min and max of the first view over the starts and the median visit; and over
every start: the time from starting the process to its first "ok", and the slowest health answer during
the wait. The machine's other work during the run is printed last (bench/machine.py): a first view is mostly
CPU (imports, weights, chart designs), so it grows with whatever else the cores are doing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import Watch  # noqa: E402
from bench.streamlit_client import Server, Session, cpu_seconds  # noqa: E402
from lessons import COURSE  # noqa: E402

# deploy/Dockerfile's CMD flags (deploy/serve.py's STREAMLIT_FLAGS minus the headless pair Server adds).
SERVER_FLAGS = ("--server.fileWatcherType", "none")
PAGES = ["", *(lesson.url_path for lesson in COURSE)]  # "" is the home page


def health_ms(url: str) -> float:
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as response:
        response.read()
    return (time.perf_counter() - t0) * 1000


async def first_view(url: str, page: str) -> tuple[float, float, str]:
    """(first view s, whole visit s, what went wrong or '') for a bare link to page."""
    t0 = time.perf_counter()
    session, render = await Session.open(url, page)
    visit = time.perf_counter() - t0
    await session.close()
    problem = "; ".join(render.exceptions) or ("" if render.status.startswith("FINISHED_SUCCESS") else render.status)
    return render.latency_s, visit, problem


def one_start(page: str, wait: float, root: Path) -> dict:
    t0 = time.monotonic()
    with Server.start(extra=SERVER_FLAGS, root=root) as server:
        ready = time.monotonic() - t0
        slowest = 0.0
        until = time.monotonic() + wait
        while time.monotonic() < until:
            slowest = max(slowest, health_ms(server.url))
            time.sleep(0.2)
        view, visit, problem = asyncio.run(first_view(server.url, page))
    return {"ready_s": ready, "health_max_ms": slowest, "view_s": view, "visit_s": visit, "problem": problem}


async def warm_views(url: str, pid: int, pages: list[str], n: int) -> dict[str, tuple[float, float]]:
    """On a warm server: each page opened by n new sessions, one after another, all kept open (as a class's
    are: with every session gone Streamlit drops its compiled scripts). Server CPU ms and KB per first view."""
    out, kept = {}, []
    try:
        for page in pages:
            before, sent = cpu_seconds(pid), 0
            for _ in range(n):
                session, render = await Session.open(url, page)
                kept.append(session)
                sent += render.bytes
            await asyncio.sleep(0.05)
            out[page] = (1000 * (cpu_seconds(pid) - before) / n, sent / n / 1024)
    finally:
        for session in kept:
            await session.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="fresh starts per page (default 3)")
    parser.add_argument("--wait", type=float, default=20.0,
                        help="seconds between the server's first 'ok' and the first view (default 20)")
    parser.add_argument("--page", action="append", choices=PAGES, metavar="PATH",
                        help="only these pages (url paths; '' is the home page); repeatable")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout to serve (another one, e.g. a copy of an older commit, to compare)")
    parser.add_argument("--warm", type=int, default=0, metavar="N",
                        help="instead: on one warm server, N new sessions open each page; server CPU per first view")
    args = parser.parse_args()
    pages = args.page if args.page is not None else PAGES
    watch = Watch()
    if args.warm:
        with Server.start(extra=SERVER_FLAGS, root=args.root, until_warm=True) as server:
            asyncio.run(first_view(server.url, pages[0]))  # one session open: what a class's server has
            figures = asyncio.run(warm_views(server.url, server.pid, pages, args.warm))
        print(f"first view of a new session on a warm server, {args.warm} sessions a page:")
        for page, (ms, kb) in figures.items():
            print(f"{page or 'home':<14} {ms:6.0f} ms of server CPU  {kb:5.0f} KB")
        print(watch.line())
        return
    print(f"first view after a fresh start, {args.starts} starts a page, {args.wait:.0f} s after the first 'ok'; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print(f"{'page':<14} {'first view s: median':>20} {'min':>6} {'max':>6} {'visit s':>8}  problems", flush=True)
    starts = []
    for page in pages:
        runs = [one_start(page, args.wait, args.root) for _ in range(args.starts)]
        starts += runs
        views = [r["view_s"] for r in runs]
        problems = sorted({r["problem"] for r in runs if r["problem"]})
        print(f"{page or 'home':<14} {statistics.median(views):>20.2f} {min(views):>6.2f} {max(views):>6.2f} "
              f"{statistics.median(r['visit_s'] for r in runs):>8.2f}  {'; '.join(problems)}", flush=True)
    ready = [r["ready_s"] for r in starts]
    print(f"start to first 'ok': median {statistics.median(ready):.1f} s, max {max(ready):.1f} s; slowest health "
          f"answer while waiting: median {statistics.median(r['health_max_ms'] for r in starts):.0f} ms, "
          f"max {max(r['health_max_ms'] for r in starts):.0f} ms")
    print(f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {watch.line()}")


if __name__ == "__main__":
    main()

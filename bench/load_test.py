"""A classroom on one server: N students drive real sessions over Streamlit's websocket protocol.

Run from the repository root:
    python bench/load_test.py                          # N = 1, 10, 30, 60, then postScriptGC true vs false at 30
    python bench/load_test.py --sessions 30 --duration 60 --gc both
    python bench/load_test.py --pages qkv --sessions 30 # the whole class on one shared link
    python bench/load_test.py --sessions 30 --replicas 2  # two server processes, each student kept on one
    python bench/load_test.py --sessions 40 --interval 3,7 --gc-compare 0   # students who read between moves

For each configuration a fresh server is started (`streamlit run streamlit_app.py` on a loopback port in
9100-9199, with `--runner.postScriptGC true|false`), warmed up by one session that opens every page once
(imports, model weights and chart specs are loaded by the first visitor, not by the class), and then:

- N students connect over `ws://127.0.0.1:P/_stcore/stream` (bench/streamlit_client.py: the XSRF cookie
  and token handshake, rerun_script BackMsgs, ForwardMsgs until script_finished), spread over --ramp
  seconds, each on a deep link (page + query string), the pages dealt round-robin from --pages;
- every 0.5-1.5 s (--interval; random, seeded per student) each student moves one of the sliders its page
  drew (id, range and options read from the Slider protos of the last render) to a new value, and times the
  rerun from sending the BackMsg to script_finished. A student does not move again before its previous rerun
  has been drawn (a closed loop: the server is never sent more work than students who see the result);
- the server process's VmRSS is sampled every 0.25 s from /proc, and its CPU time is read before and after
  (with --replicas K, K servers, each student kept on one of them as a sticky load balancer would: RSS and
  CPU are summed over them).

Reported per configuration: reruns timed, p50 / p95 / max latency of slider moves, p95 of the first page
view, reruns that showed an exception, server CPU (share of one core, and ms per rerun), peak RSS (VmHWM),
and memory per session = (RSS with all N connected - RSS after the warm-up) / N.

The client runs on the same machine as the server and takes some of its CPU; its own CPU time is printed.
Every figure moves with whatever else the machine is doing: note `uptime` next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.streamlit_client import Server, Session, cpu_seconds, proc_status  # noqa: E402

# A deep link per page, as a teacher would share it (non-default settings, so the link does something).
DEEP_LINKS = {
    "qkv": "text=The+cat+sat+on+the+warm+mat+because+it+was+tired&seed=3",
    "scaling": "d_k=64&seed=2",
    "masking": "text=the+quick+brown+fox+jumps+over+the+lazy+dog&seed=1",
    "multi-head": "d_model=32&heads=4&seed=5",
    "model": "fm_prompt=def+main(&temp=0.8",
    "training": "tr_data=copy&tr_steps=200",
}
DEFAULT_PAGES = ("qkv", "scaling", "masking", "multi-head", "model")
# Frames worth listing in a profile: the app (ui/, core/, the lesson scripts) and the costs around it.
PROFILED = re.compile(r"\((ui|core)/|<module> \(\w+\.py\)|pyarrow|altair|dataframe_util|watcher|"
                      r"_enqueue|vega_charts|collect|serialize")
MB = 1024 * 1024


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); nan for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass
class Result:
    sessions: int
    post_script_gc: bool
    duration_s: float
    pages: list[str]
    moves: list[float] = field(default_factory=list)  # latency of each slider move (s)
    by_page: dict[str, list[float]] = field(default_factory=dict)  # the same, per page
    opens: list[float] = field(default_factory=list)  # latency of each first page view (s)
    exceptions: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # sessions that lost their connection or timed out
    baseline_rss: int = 0
    end_rss: int = 0
    peak_rss: int = 0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    rss_curve: list[tuple[float, int]] = field(default_factory=list)

    def summary(self) -> dict:
        reruns = len(self.moves) + len(self.opens)
        return {
            "N": self.sessions, "postScriptGC": self.post_script_gc, "moves": len(self.moves),
            "p50_s": statistics.median(self.moves) if self.moves else math.nan,
            "p95_s": percentile(self.moves, 95), "max_s": max(self.moves, default=math.nan),
            "open_p95_s": percentile(self.opens, 95), "exceptions": len(self.exceptions),
            "failures": len(self.failures),
            "server_cpu_share": self.server_cpu_s / self.duration_s if self.duration_s else math.nan,
            "server_ms_per_rerun": 1000 * self.server_cpu_s / reruns if reruns else math.nan,
            "client_cpu_share": self.client_cpu_s / self.duration_s if self.duration_s else math.nan,
            "baseline_rss_mb": self.baseline_rss / MB, "end_rss_mb": self.end_rss / MB,
            "peak_rss_mb": self.peak_rss / MB,
            "per_session_mb": (self.end_rss - self.baseline_rss) / MB / self.sessions,
        }


async def warm_up(url: str, pages: list[str]) -> None:
    """One visitor opens every page once, moves a slider, and leaves."""
    session, render = await Session.open(url, pages[0], DEEP_LINKS.get(pages[0], ""))
    try:
        for page in pages:
            session.query = DEEP_LINKS.get(page, "")
            render = await session.rerun(page=page)
            if render.sliders:
                slider = next(iter(render.sliders.values()))
                await session.move(slider, slider.values()[-1])
    finally:
        await session.close()


async def student(i: int, url: str, page: str, start_at: float, stop_at: float, rng: random.Random,
                  result: Result, interval: tuple[float, float] = (0.5, 1.5)) -> None:
    """Open the page at start_at, then move a random slider every `interval` seconds (uniform) until stop_at."""
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    session = None
    try:
        session, render = await Session.open(url, page, DEEP_LINKS.get(page, ""))
        result.opens.append(render.latency_s)
        result.exceptions += [f"{page} open: {e}" for e in render.exceptions]
        next_move = time.monotonic() + rng.uniform(*interval)
        while True:
            await asyncio.sleep(max(0.0, next_move - time.monotonic()))
            if time.monotonic() >= stop_at or not render.sliders:
                break
            slider = render.sliders[rng.choice(sorted(render.sliders))]
            choices = [v for v in slider.values() if v not in slider.value] or slider.values()
            value = rng.choice(choices)
            sent = time.monotonic()
            render = await session.move(slider, value)
            result.moves.append(render.latency_s)
            result.by_page.setdefault(page, []).append(render.latency_s)
            result.exceptions += [f"{page} {slider.key}={value}: {e}" for e in render.exceptions]
            next_move = sent + rng.uniform(*interval)
    except Exception as err:  # a dropped connection or a timeout is a finding, not a crash of the bench
        result.failures.append(f"student {i} on {page}: {err!r}")
    finally:
        if session is not None:
            await session.close()


def total_rss(pids: list[int], field: str = "VmRSS") -> int:
    return sum(proc_status(pid)[field] for pid in pids)


async def sample_rss(pids: list[int], result: Result, t0: float, stop: asyncio.Event, every: float = 0.25) -> None:
    while not stop.is_set():
        try:
            rss, hwm = total_rss(pids), total_rss(pids, "VmHWM")
        except OSError:
            return
        result.rss_curve.append((time.monotonic() - t0, rss))
        result.end_rss = rss
        result.peak_rss = max(result.peak_rss, hwm)
        await asyncio.sleep(every)


async def drive(servers: list[Server], n: int, pages: list[str], duration: float, ramp: float, seed: int,
                post_script_gc: bool, interval: tuple[float, float] = (0.5, 1.5)) -> Result:
    """N students on one or more servers; student i stays on server i % len(servers), as behind a sticky
    load balancer. RSS and CPU are summed over the servers."""
    result = Result(sessions=n, post_script_gc=post_script_gc, duration_s=0.0, pages=pages)
    pids = [server.pid for server in servers]
    await asyncio.gather(*(warm_up(server.url, pages) for server in servers))
    await asyncio.sleep(1.0)
    result.baseline_rss = total_rss(pids)
    cpu0, client0 = sum(map(cpu_seconds, pids)), resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pids, result, t0, stop))
    stop_at = t0 + ramp + duration
    tasks = [student(i, servers[i % len(servers)].url, pages[(i // len(servers)) % len(pages)],
                     t0 + ramp * i / max(1, n), stop_at, random.Random(seed * 100_003 + i), result, interval)
             for i in range(n)]

    async def last_sample():  # the RSS with everyone still connected, just before the students leave
        await asyncio.sleep(max(0.0, stop_at - time.monotonic() - 0.3))
        result.end_rss = total_rss(pids)
        stop.set()

    await asyncio.gather(*tasks, last_sample())
    await sampler
    result.duration_s = time.monotonic() - t0
    client1 = resource.getrusage(resource.RUSAGE_SELF)
    result.server_cpu_s = sum(map(cpu_seconds, pids)) - cpu0
    result.client_cpu_s = (client1.ru_utime + client1.ru_stime) - (client0.ru_utime + client0.ru_stime)
    result.peak_rss = max(result.peak_rss, total_rss(pids, "VmHWM"))
    return result


def run_one(n: int, post_script_gc: bool, pages: list[str], duration: float, ramp: float, seed: int,
            server_args: tuple[str, ...] = (), profile: Path | None = None, replicas: int = 1,
            interval: tuple[float, float] = (0.5, 1.5)) -> Result:
    with contextlib.ExitStack() as stack:
        servers = []
        for _ in range(replicas):
            servers.append(Server.start(post_script_gc=post_script_gc, extra=server_args))
            stack.callback(servers[-1].stop)
        spy = start_py_spy(servers[0].pid, ramp + duration, profile) if profile else None
        result = asyncio.run(drive(servers, n, pages, duration, ramp, seed, post_script_gc, interval))
        if spy is not None:
            spy.wait(timeout=60)
            print_profile(profile)
        for server in servers:
            if server.proc.poll() is not None:
                result.failures.append(f"server exited: {server.output()}")
            elif server.health() != "ok":
                result.failures.append(f"server on {server.port} unhealthy after the run")
    return result


def start_py_spy(pid: int, seconds: float, out: Path) -> subprocess.Popen | None:
    """Sample the server with py-spy (if installed next to this Python) while the class runs: only the
    thread holding the GIL, since one Streamlit process runs every session's script under one GIL."""
    exe = Path(sys.executable).parent / "py-spy"
    if not exe.exists():
        print("py-spy is not installed in this environment (pip install py-spy); no profile", flush=True)
        return None
    return subprocess.Popen([str(exe), "record", "-p", str(pid), "-d", str(int(seconds) + 5), "-r", "50", "-f", "raw",
                             "--gil", "--nonblocking", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def print_profile(path: Path, top: int = 25) -> None:
    """Inclusive share of samples per function (file:line dropped), the app's and Streamlit's."""
    if not path.exists():
        return
    inclusive: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        for frame in {re.sub(r":\d+\)$", ")", f) for f in stack.split(";")}:
            inclusive[frame] = inclusive.get(frame, 0) + int(count)
    print(f"    profile ({total} samples holding the GIL), inclusive share:")
    interesting = [(n, f) for f, n in inclusive.items() if PROFILED.search(f)]
    for n, frame in sorted(interesting, reverse=True)[:top]:
        print(f"      {100 * n / total:5.1f}%  {frame[:140]}")


def table(rows: list[dict]) -> str:
    head = ("N", "postScriptGC", "moves", "p50 s", "p95 s", "max s", "open p95 s", "exc", "fail",
            "server CPU", "ms/rerun", "peak RSS MB", "MB/session")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            str(r["N"]), str(r["postScriptGC"]).lower(), str(r["moves"]), f"{r['p50_s']:.2f}", f"{r['p95_s']:.2f}",
            f"{r['max_s']:.2f}", f"{r['open_p95_s']:.2f}", str(r["exceptions"]), str(r["failures"]),
            f"{100 * r['server_cpu_share']:.0f}%", f"{r['server_ms_per_rerun']:.0f}", f"{r['peak_rss_mb']:.0f}",
            f"{r['per_session_mb']:.1f}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", default="1,10,30,60", help="comma-separated N (default 1,10,30,60)")
    parser.add_argument("--gc", choices=("false", "true", "both"), default="false",
                        help="runner.postScriptGC for the --sessions runs (default false, as in config.toml)")
    parser.add_argument("--gc-compare", type=int, default=30,
                        help="also run this N with postScriptGC true and false (0: skip; default 30)")
    parser.add_argument("--duration", type=float, default=40.0, help="seconds of slider moves per run (default 40)")
    parser.add_argument("--ramp", type=float, default=5.0, help="students arrive over this many seconds (default 5)")
    parser.add_argument("--pages", default=",".join(DEFAULT_PAGES), help="url paths, dealt round-robin")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every result (with the RSS curves) here")
    parser.add_argument("--server-arg", action="append", default=[], metavar="FLAG=VALUE",
                        help="extra streamlit flag, e.g. --server-arg=--server.fileWatcherType=none (repeatable)")
    parser.add_argument("--interval", default="0.5,1.5", metavar="LO,HI",
                        help="seconds between a student's slider moves, uniform in [LO, HI] (default 0.5,1.5)")
    parser.add_argument("--replicas", type=int, default=1,
                        help="servers (one process each); student i stays on server i %% replicas (default 1)")
    parser.add_argument("--py-spy", type=Path, metavar="OUT",
                        help="profile the server with py-spy during each run (raw stacks to OUT-N-gc.txt)")
    args = parser.parse_args()

    pages = [p for p in args.pages.split(",") if p]
    lo, hi = (float(x) for x in args.interval.split(","))
    interval = (lo, hi)
    gcs = {"false": [False], "true": [True], "both": [False, True]}[args.gc]
    plan = [(int(n), gc) for n in args.sessions.split(",") if n for gc in gcs]
    if args.gc_compare:
        plan += [(args.gc_compare, gc) for gc in (True, False) if (args.gc_compare, gc) not in plan]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs; "
          f"pages {pages}; a move every {lo:g}-{hi:g} s; {args.duration:.0f} s per run after a {args.ramp:.0f} s ramp; "
          f"server flags {args.server_arg or 'none'}; {args.replicas} server process(es)", flush=True)

    results = []
    for n, gc in plan:
        server_args = tuple(part for flag in args.server_arg for part in flag.split("=", 1))
        profile = args.py_spy.with_name(f"{args.py_spy.stem}-{n}-{str(gc).lower()}.txt") if args.py_spy else None
        res = run_one(n, gc, pages, args.duration, args.ramp, args.seed, server_args, profile, args.replicas,
                      interval)
        results.append(res)
        s = res.summary()
        print(f"N={n:<3} postScriptGC={str(gc).lower():5} moves={s['moves']:<5} p50={s['p50_s']:.2f}s "
              f"p95={s['p95_s']:.2f}s max={s['max_s']:.2f}s open_p95={s['open_p95_s']:.2f}s "
              f"exceptions={s['exceptions']} failures={s['failures']} server_cpu={100 * s['server_cpu_share']:.0f}% "
              f"({s['server_ms_per_rerun']:.0f} ms/rerun) client_cpu={100 * s['client_cpu_share']:.0f}% "
              f"peak_rss={s['peak_rss_mb']:.0f}MB per_session={s['per_session_mb']:.1f}MB "
              f"load={os.getloadavg()[0]:.2f}", flush=True)
        print("    per page (p50 / p95 s): " + ", ".join(
            f"{page} {statistics.median(lat):.2f} / {percentile(lat, 95):.2f}" for page, lat in res.by_page.items()),
            flush=True)
        for line in (res.exceptions + res.failures)[:5]:
            print("   ", line[:300], flush=True)

    print()
    print(table([r.summary() for r in results]))
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps([{**r.summary(), "by_page": r.by_page, "exceptions_list": r.exceptions[:50],
                                          "failures_list": r.failures[:50],
                                          "rss_curve": r.rss_curve[::4]} for r in results], indent=1))


if __name__ == "__main__":
    main()

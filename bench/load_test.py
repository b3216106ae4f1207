"""A classroom on one server: N students drive real sessions over Streamlit's websocket protocol.

Run from the repository root:
    python bench/load_test.py                          # N = 1, 10, 30, 60, then postScriptGC true vs false at 30
    python bench/load_test.py --sessions 30 --duration 60 --gc both
    python bench/load_test.py --pages qkv --sessions 30 # the whole class on one shared link
    python bench/load_test.py --sessions 30 --replicas 2  # two server processes, each student kept on one
    python bench/load_test.py --sessions 40 --interval 3,7 --gc-compare 0   # students who read between moves
    python bench/load_test.py --serve 2 --sessions 30,60 --gc-compare 0  # deploy/serve.py 2: HAProxy + 2 processes
    python bench/load_test.py --url http://127.0.0.1:8501 --state /tmp/serve.json --sessions 30 --gc-compare 0
                                                       # a set-up already running (python deploy/serve.py 2 --state ...)
    python bench/load_test.py --serve 2 --sessions 30 --trainers 10 --gc-compare 0
                                                       # 10 of the 30 train a model while 20 move sliders
    python bench/load_test.py --sessions 30,60 --gc-compare 0 --root /tmp/older  # an older checkout, same client
    python bench/load_test.py --sessions 30 --gc-compare 0 --follow   # the class makes its teacher's moves
    python bench/load_test.py --sessions 30,120 --gc-compare 0 --cold --duration 10  # arriving at a fresh server

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
- with --trainers K, K of the N students (spread evenly over the arrival order; the other N - K are the
  slider movers above, their pages dealt round-robin from --pages) open the Training page on a link that
  makes a run long (TRAIN_LINK: the synthetic copy task, tr_steps at its 2000 maximum, batch 32; --train-link
  to change it), press Train once after the ramp (within a second of each other, a teacher's "go"), then
  tick the live panel as the browser does: the press's run sends a ForwardMsg auto_rerun (fragment id,
  interval = 1 s) and each tick is a rerun_script with that fragment_id and is_auto_rerun, timed from
  sending it to its script_finished (FINISHED_FRAGMENT_RUN_SUCCESSFULLY): the "tick latency". Ticks keep the
  timer's phase (one every interval after the press); a tick that ends after the next was due is followed
  at once, which is what the browser's setInterval and the server's coalescing of queued fragment reruns
  amount to. Each tick trains for up to 0.25 s of wall time and redraws the panel; the step the progress bar
  shows ("Training · step N of M") is read after every tick. A run that finishes (the fragment calls
  st.rerun(scope="app"), which ends the timer) is followed by another press of Train;
- the server process's RSS is sampled every 0.25 s (psutil), and its CPU time is read before and after
  (with --replicas K, K servers, each student kept on one of them as a sticky load balancer would: RSS and
  CPU are summed over them).

With --serve N, each configuration starts the one-machine set-up instead (`python deploy/serve.py N`: N
Streamlit processes behind HAProxy with a sticky cookie, on loopback ports) and every student connects to
HAProxy, which places it (leastconn) and keeps it there; the first visitor of each process (its sticky
cookie set by hand) warms it up. With --url URL nothing is started: the students go to URL (a proxy or a
server already running; postScriptGC is then whatever it was started with); memory and CPU are summed over
the processes named in --state (the file `deploy/serve.py --state FILE` writes), or not reported without it.
Memory with a proxy is the total of every process: the Streamlit processes and HAProxy.

Reported per configuration: reruns timed, p50 / p95 / max latency of slider moves (the movers only), the p95 of the
moves sent in each 5 s from the first arrival (a class's first seconds, while it arrives and its first views are
drawn, apart from the minutes after), p95 of the first page view (every student), reruns that showed an exception,
server CPU (share of one core, and ms per rerun: moves, first views, presses and ticks), peak RSS (the kernel's
high-water mark: VmHWM on Linux, the peak working set on Windows; on macOS, which keeps none that another process
can read, the largest RSS sampled), and memory per session = (RSS with all N connected - RSS after the warm-up) / N.
With trainers, also: ticks done, tick latency p50 / p95 / max, the tick rate per trainer against the timer's (1 /
interval: how much slower training ran than asked), steps trained per tick (the panel's "This update: S steps in X
ms" caption), steps trained in all and by the slowest trainer, runs finished, and ticks after which the step had not
grown (0 when training trains).

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
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import Watch, event_loop  # noqa: E402
from bench.streamlit_client import (  # noqa: E402
    Server,
    Session,
    cpu_seconds,
    free_port,
    memory,
    port_is_free,
)

# A deep link per page, as a teacher would share it (non-default settings, so the link does something).
DEEP_LINKS = {
    "qkv": "text=The+cat+sat+on+the+warm+mat+because+it+was+tired&seed=3",
    "scaling": "d_k=64&seed=2",
    "masking": "text=the+quick+brown+fox+jumps+over+the+lazy+dog&seed=1",
    "multi-head": "d_model=32&heads=4&seed=5",
    "model": "fm_prompt=def+main(&sample_temp=0.8",
    "training": "tr_data=copy&tr_steps=200",
}
WINDOW_S = 5.0  # the printed p95 of moves by when they were sent: one figure per this many seconds
DEFAULT_PAGES = ("qkv", "scaling", "masking", "multi-head", "model")
# What a trainer opens: a run that outlasts a test (2000 steps is the page's limit; batch 32 makes each step
# slower, so a lone trainer needs ~80 one-second ticks; a busy server, more).
TRAIN_PAGE, TRAIN_LINK, TRAIN_BUTTON = "training", "tr_data=copy&tr_steps=2000&tr_batch=32", "tr_train"
STEP = re.compile(r"step (\d+) of (\d+)")  # the progress bar's text: "Training · step 84 of 2000"
UPDATE = re.compile(r"This update: (\d+) steps in (\d+) ms of training")  # the live panel's caption
# Frames worth listing in a profile: the app (ui/, core/, the lesson scripts) and the costs around it.
PROFILED = re.compile(r"\((ui|core)/|<module> \(\w+\.py\)|pyarrow|altair|dataframe_util|watcher|"
                      r"_enqueue|vega_charts|collect|serialize")
MB = 1024 * 1024
SERVE_COOKIE = "attention-lab-server"  # deploy/haproxy/haproxy.cfg.template: names the process (s1, s2, ...)


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
    visits: list[float] = field(default_factory=list)  # from a student's arrival to its first view, connecting too
    exceptions: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # sessions that lost their connection or timed out
    baseline_rss: int = 0
    end_rss: int = 0
    peak_rss: int = 0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    rss_curve: list[tuple[float, int]] = field(default_factory=list)
    measured: bool = True  # False: no process ids (--url without --state), so no memory or CPU
    trainers: int = 0  # of the `sessions`: the rest move sliders
    moved_at: list[float] = field(default_factory=list)  # when each of `moves` was sent, s after t0
    t0: float = 0.0  # time.monotonic() when the first student arrives
    ticks: list[float] = field(default_factory=list)  # latency of each live-panel tick (s)
    presses: list[float] = field(default_factory=list)  # latency of each press of Train (s)
    tick_interval_s: float = math.nan  # the interval the server's auto_rerun asked for
    ticking_s: float = 0.0  # trainer-seconds from each trainer's first press to its last tick's end
    tick_steps: list[int] = field(default_factory=list)  # optimiser steps each tick trained (its caption)
    tick_train_ms: list[int] = field(default_factory=list)  # ms of training in each tick (its caption)
    trainer_steps: list[int] = field(default_factory=list)  # each trainer's steps, summed over its runs
    runs_finished: int = 0
    stalled_ticks: int = 0  # ticks after which the progress bar's step had not grown
    placement: dict[str, dict[str, int]] = field(default_factory=dict)  # behind a proxy: process -> role -> count

    def place(self, session: Session, role: str) -> None:
        """Count where the proxy put a student (its sticky cookie names the process)."""
        if SERVE_COOKIE in session.cookies:
            where = self.placement.setdefault(session.cookies[SERVE_COOKIE], {"movers": 0, "trainers": 0})
            where[role] += 1

    def p95_by_window(self, window_s: float = WINDOW_S) -> list[float]:
        """The p95 of the moves sent in each `window_s` seconds from the first arrival (NaN for a window without
        one): a class's first seconds, while it arrives and its first views are drawn, apart from the rest."""
        if not self.moved_at:
            return []
        windows: list[list[float]] = [[] for _ in range(int(max(self.moved_at) // window_s) + 1)]
        for at, latency in zip(self.moved_at, self.moves):
            windows[int(at // window_s)].append(latency)
        return [percentile(w, 95) if w else math.nan for w in windows]

    def summary(self) -> dict:
        reruns = len(self.moves) + len(self.opens) + len(self.ticks) + len(self.presses)
        return {
            "N": self.sessions, "postScriptGC": self.post_script_gc, "moves": len(self.moves),
            "p50_s": statistics.median(self.moves) if self.moves else math.nan,
            "p95_s": percentile(self.moves, 95), "max_s": max(self.moves, default=math.nan),
            "p95_by_window_s": self.p95_by_window(),
            "open_p95_s": percentile(self.opens, 95), "visit_p95_s": percentile(self.visits, 95),
            "exceptions": len(self.exceptions),
            "failures": len(self.failures),
            "server_cpu_share": self.server_cpu_s / self.duration_s if self.duration_s else math.nan,
            "server_ms_per_rerun": 1000 * self.server_cpu_s / reruns if reruns else math.nan,
            "client_cpu_share": self.client_cpu_s / self.duration_s if self.duration_s else math.nan,
            "baseline_rss_mb": self.baseline_rss / MB, "end_rss_mb": self.end_rss / MB,
            "peak_rss_mb": self.peak_rss / MB,
            "per_session_mb": (self.end_rss - self.baseline_rss) / MB / self.sessions,
            "trainers": self.trainers, "movers": self.sessions - self.trainers, "ticks": len(self.ticks),
            "tick_p50_s": statistics.median(self.ticks) if self.ticks else math.nan,
            "tick_p95_s": percentile(self.ticks, 95), "tick_max_s": max(self.ticks, default=math.nan),
            "tick_interval_s": self.tick_interval_s,
            "ticks_per_s_per_trainer": len(self.ticks) / self.ticking_s if self.ticking_s else math.nan,
            "presses": len(self.presses), "press_p95_s": percentile(self.presses, 95),
            "steps_per_tick_p50": statistics.median(self.tick_steps) if self.tick_steps else math.nan,
            "train_ms_per_tick_p50": statistics.median(self.tick_train_ms) if self.tick_train_ms else math.nan,
            "steps_total": sum(self.trainer_steps), "steps_min_per_trainer": min(self.trainer_steps, default=0),
            "runs_finished": self.runs_finished, "stalled_ticks": self.stalled_ticks,
            "placement": dict(sorted(self.placement.items())),
        } | ({} if self.measured else dict.fromkeys(
            ("server_cpu_share", "server_ms_per_rerun", "baseline_rss_mb", "end_rss_mb", "peak_rss_mb",
             "per_session_mb"), math.nan))


async def warm_up(url: str, pages: list[str], cookies: dict[str, str] | None = None) -> None:
    """One visitor opens every page once, moves a slider, and leaves (cookies: e.g. a sticky cookie that
    sends it to one process behind a proxy)."""
    session, render = await Session.open(url, pages[0], DEEP_LINKS.get(pages[0], ""), cookies=cookies)
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
                  result: Result, interval: tuple[float, float] = (0.5, 1.5), moves: random.Random | None = None
                  ) -> None:
    """Open the page at start_at, then move a random slider every `interval` seconds (uniform) until stop_at.
    moves: where the slider and its value are drawn from (default: rng, the student's own; a class following
    its teacher shares one sequence, so every student makes the same moves, each at its own time)."""
    moves = moves or rng
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    session = None
    try:
        arrived = time.monotonic()
        session, render = await Session.open(url, page, DEEP_LINKS.get(page, ""))
        result.opens.append(render.latency_s)
        result.visits.append(time.monotonic() - arrived)
        result.place(session, "movers")
        result.exceptions += [f"{page} open: {e}" for e in render.exceptions]
        next_move = time.monotonic() + rng.uniform(*interval)
        while True:
            await asyncio.sleep(max(0.0, next_move - time.monotonic()))
            if time.monotonic() >= stop_at or not render.sliders:
                break
            slider = render.sliders[moves.choice(sorted(render.sliders))]
            choices = [v for v in slider.values() if v not in slider.value] or slider.values()
            value = moves.choice(choices)
            sent = time.monotonic()
            render = await session.move(slider, value)
            result.moves.append(render.latency_s)
            result.moved_at.append(sent - result.t0)
            result.by_page.setdefault(page, []).append(render.latency_s)
            result.exceptions += [f"{page} {slider.key}={value}: {e}" for e in render.exceptions]
            next_move = sent + rng.uniform(*interval)
    except Exception as err:  # a dropped connection or a timeout is a finding, not a crash of the bench
        result.failures.append(f"student {i} on {page}: {err!r}")
    finally:
        if session is not None:
            await session.close()


async def trainer(i: int, url: str, start_at: float, press_at: float, stop_at: float, result: Result,
                  link: str = TRAIN_LINK) -> None:
    """Open the Training page at start_at, press Train at press_at, then tick the live panel as the browser's
    timer does until stop_at (pressing Train again whenever a run has finished)."""
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    session = None
    done_before = step = 0  # steps of this trainer's finished runs; the step its current run has reached
    first_press = last_end = None
    try:
        session, render = await Session.open(url, TRAIN_PAGE, link)
        result.opens.append(render.latency_s)
        result.place(session, "trainers")
        result.exceptions += [f"{TRAIN_PAGE} open: {e}" for e in render.exceptions]
        await asyncio.sleep(max(0.0, press_at - time.monotonic()))
        due = math.nan  # when the fragment's timer fires next
        while time.monotonic() < stop_at:
            tick = bool(session.auto_reruns)  # no timer armed: no run going (the first press, or a run finished)
            if not tick:
                button = session.buttons.get(TRAIN_BUTTON)
                if button is None or button.disabled:
                    raise RuntimeError(f"no Train button to press: {session.buttons}")
                render = await session.press(button)
                result.presses.append(render.latency_s)
                result.exceptions += [f"{TRAIN_PAGE} Train: {e}" for e in render.exceptions]
                if not session.auto_reruns:
                    raise RuntimeError(f"pressing Train started no timer: {render.progress} {render.exceptions}")
                now = time.monotonic()
                first_press = now - render.latency_s if first_press is None else first_press
                done_before, step = done_before + step, 0
                due = now + next(iter(session.auto_reruns.values()))  # the timer is armed as the run ends
            else:
                fragment_id, every = next(iter(session.auto_reruns.items()))
                result.tick_interval_s = every
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                if time.monotonic() >= stop_at:
                    break
                sent = time.monotonic()
                render = await session.rerun_fragment(fragment_id)
                result.ticks.append(render.latency_s)
                result.exceptions += [f"{TRAIN_PAGE} tick: {e}" for e in render.exceptions]
                # The timer's next firing after this send. If it fired while the tick ran, the browser's
                # request waited on the server (and any more fired meanwhile were merged with it): go at once.
                due += every * (math.floor((sent - due) / every) + 1)
                update = next((m for m in map(UPDATE.search, render.captions) if m), None)
                if update:
                    result.tick_steps.append(int(update[1]))
                    result.tick_train_ms.append(int(update[2]))
                if not session.auto_reruns:  # the run finished: the fragment reran the whole page
                    result.runs_finished += 1
            shown = [int(m[1]) for m in map(STEP.search, render.progress) if m]
            if tick and (not shown or shown[-1] <= step):
                result.stalled_ticks += 1
            step = shown[-1] if shown else step
            last_end = time.monotonic()
    except Exception as err:  # a dropped connection or a timeout is a finding, not a crash of the bench
        result.failures.append(f"trainer {i}: {err!r}")
    finally:
        result.trainer_steps.append(done_before + step)
        if first_press is not None and last_end is not None:
            result.ticking_s += last_end - first_press
        if session is not None:
            await session.close()


def total_rss(pids: list[int], field: str = "rss") -> int:
    """Summed over the processes still alive (a process that exited counts 0); field "rss" or "peak" (a
    process whose system keeps no peak counts 0: see memory())."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, KeyError, psutil.Error):
            total += memory(pid)[field]
    return total


def total_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, psutil.Error):
            total += cpu_seconds(pid)
    return total


async def sample_rss(pids: list[int], result: Result, t0: float, stop: asyncio.Event, every: float = 0.25) -> None:
    while not stop.is_set():
        rss, peak = total_rss(pids), total_rss(pids, "peak")
        result.rss_curve.append((time.monotonic() - t0, rss))
        result.end_rss = rss
        result.peak_rss = max(result.peak_rss, peak, rss)  # rss: where no peak is kept, the largest sampled
        await asyncio.sleep(every)


@dataclass
class Target:
    """Where the students go and what to measure: student i connects to urls[i % len(urls)] (one url per
    server, as a sticky balancer would keep them, or one proxy url); RSS and CPU are summed over pids."""

    urls: list[str]
    pids: list[int]
    warm: list[tuple[str, dict[str, str]]]  # (url, cookies) of each first visitor


def is_trainer(i: int, n: int, trainers: int) -> bool:
    """Whether student i of n is one of the `trainers`, spread evenly over the arrival order (so over the
    servers too, when student i goes to server i % replicas)."""
    return (i + 1) * trainers // n > i * trainers // n


async def drive(target: Target, n: int, pages: list[str], duration: float, ramp: float, seed: int,
                post_script_gc: bool | None, interval: tuple[float, float] = (0.5, 1.5), trainers: int = 0,
                train_link: str = TRAIN_LINK, follow: bool = False, cold: bool = False) -> Result:
    """N students on the target's servers (or its proxy), `trainers` of them training, the rest moving
    sliders. RSS and CPU are summed over the target's processes. follow: the movers make the same moves (each
    student the same sequence of sliders and values, at its own times), as a class following its teacher does.
    cold: no first visitor warms the servers (the class arrives at a freshly started server)."""
    result = Result(sessions=n, post_script_gc=post_script_gc, duration_s=0.0, pages=pages, trainers=trainers)
    pids, urls = target.pids, target.urls
    warm_pages = [*pages, TRAIN_PAGE] if trainers and TRAIN_PAGE not in pages else pages
    if not cold:
        await asyncio.gather(*(warm_up(url, warm_pages, cookies) for url, cookies in target.warm))
        await asyncio.sleep(1.0)
    result.baseline_rss = total_rss(pids)
    cpu0, client0 = total_cpu(pids), time.process_time()
    t0 = result.t0 = time.monotonic()
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pids, result, t0, stop))
    stop_at = t0 + ramp + duration
    tasks, movers = [], 0
    for i in range(n):
        rng, start_at = random.Random(seed * 100_003 + i), t0 + ramp * i / max(1, n)
        if is_trainer(i, n, trainers):  # "go" after the ramp: everyone presses Train within a second
            tasks.append(trainer(i, urls[i % len(urls)], start_at, t0 + ramp + rng.uniform(0, 1), stop_at, result,
                                 train_link))
        else:  # the movers' pages are dealt round-robin among them, as without trainers
            tasks.append(student(i, urls[i % len(urls)], pages[(movers // len(urls)) % len(pages)], start_at,
                                 stop_at, rng, result, interval, random.Random(seed) if follow else None))
            movers += 1

    async def last_sample():  # the RSS with everyone still connected, just before the students leave
        await asyncio.sleep(max(0.0, stop_at - time.monotonic() - 0.3))
        result.end_rss = total_rss(pids)
        stop.set()

    await asyncio.gather(*tasks, last_sample())
    await sampler
    result.duration_s = time.monotonic() - t0
    result.server_cpu_s = total_cpu(pids) - cpu0
    result.client_cpu_s = time.process_time() - client0  # this process's user + system CPU
    result.peak_rss = max(result.peak_rss, total_rss(pids, "peak"))
    return result


def read_state(path: Path) -> dict:
    return json.loads(path.read_text())


def state_target(url: str, state: dict) -> Target:
    """A proxy's URL and the processes behind it (deploy/serve.py's state file): each process warmed up
    by a first visitor whose sticky cookie names it."""
    n = len(state["streamlit"])
    return Target(urls=[url], pids=[state["haproxy_pid"], *state["streamlit"].values()],
                  warm=[(url, {SERVE_COOKIE: f"s{k}"}) for k in range(1, n + 1)])


@contextlib.contextmanager
def serve(processes: int, post_script_gc: bool, server_args: tuple[str, ...], max_restarts: int = 0):
    """`python deploy/serve.py N` on loopback ports for the length of a run; yields its state (and the serve.py
    process). A Streamlit process that exits is started again up to `max_restarts` times, as in production."""
    port = free_port(range(9300, 9400))
    first = next(p for p in random.sample(range(9400, 9500 - processes), 90)
                 if all(port_is_free(q) for q in range(p, p + processes)))
    with tempfile.TemporaryDirectory(prefix="load-test-serve-") as tmp:
        state_file = Path(tmp) / "state.json"
        flags = [*server_args, "--runner.postScriptGC", str(post_script_gc).lower()]
        args = [sys.executable, str(ROOT / "deploy" / "serve.py"), str(processes), "--address", "127.0.0.1",
                "--port", str(port), "--first-port", str(first), "--state", str(state_file),
                "--max-restarts", str(max_restarts),
                "--logs", str(Path(tmp) / "logs"),  # serve.py keeps its logs: here, gone with the run's folder
                *(f"--server-arg={name}={value}" for name, value in zip(flags[::2], flags[1::2]))]
        log = open(Path(tmp) / "serve.log", "wb")
        proc = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while not state_file.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("deploy/serve.py did not start:\n"
                                       + (Path(tmp) / "serve.log").read_text(errors="replace")[-3000:])
                time.sleep(0.3)
            yield read_state(state_file), proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # as Ctrl-C: serve.py stops HAProxy and its processes
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            log.close()


def run_one(n: int, post_script_gc: bool | None, pages: list[str], duration: float, ramp: float, seed: int,
            server_args: tuple[str, ...] = (), profile: Path | None = None, replicas: int = 1,
            interval: tuple[float, float] = (0.5, 1.5), url: str | None = None, state: Path | None = None,
            serve_processes: int = 0, trainers: int = 0, train_link: str = TRAIN_LINK, root: Path = ROOT,
            follow: bool = False, cold: bool = False) -> Result:
    run = partial(drive, n=n, pages=pages, duration=duration, ramp=ramp, seed=seed, post_script_gc=post_script_gc,
                  interval=interval, trainers=trainers, train_link=train_link, follow=follow, cold=cold)
    if url is not None:  # a set-up already running: start nothing
        target = state_target(url, read_state(state)) if state else Target([url], [], [(url, {})])
        result = asyncio.run(run(target))
        result.measured = bool(target.pids)
        with contextlib.suppress(OSError):
            if health(url) != "ok":
                result.failures.append(f"{url} unhealthy after the run")
        return result
    if serve_processes:
        with serve(serve_processes, bool(post_script_gc), server_args) as (served, proc):
            target = state_target(served["url"], served)
            spy = start_py_spy(target.pids[1], ramp + duration, profile) if profile else None
            result = asyncio.run(run(target))
            if spy is not None:
                spy.wait(timeout=60)
                print_profile(profile)
            if proc.poll() is not None:
                result.failures.append(f"deploy/serve.py exited with {proc.returncode}")
            elif health(served["url"]) != "ok":
                result.failures.append("the proxy is unhealthy after the run")
            # a process that died during the run is not restarted (--max-restarts 0): count it
            result.failures += [f"streamlit {pid} exited" for pid in served["streamlit"].values()
                                if not psutil.pid_exists(pid)]
        return result
    with contextlib.ExitStack() as stack:
        servers = []
        for _ in range(replicas):
            launched = time.monotonic()
            # until_warm: the server's start-up warm-up (ui/compute/warm.py) ends before the class arrives,
            # unless it arrives cold: as soon as the server answers, the first student's page the first drawn
            servers.append(Server.start(post_script_gc=post_script_gc, extra=server_args, until_warm=not cold,
                                        root=root))
            if cold:
                print(f"    server {servers[-1].port} answered {time.monotonic() - launched:.1f} s after its launch",
                      flush=True)
            stack.callback(servers[-1].stop)
        spy = start_py_spy(servers[0].pid, ramp + duration, profile) if profile else None
        target = Target([s.url for s in servers], [s.pid for s in servers], [(s.url, {}) for s in servers])
        result = asyncio.run(run(target))
        if spy is not None:
            spy.wait(timeout=60)
            print_profile(profile)
        for server in servers:
            if server.proc.poll() is not None:
                result.failures.append(f"server exited: {server.output()}")
            elif server.health() != "ok":
                result.failures.append(f"server on {server.port} unhealthy after the run")
    return result


def health(url: str) -> str:
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
        return response.read().decode()


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


# Where a sample of the server's CPU went, by what it was doing (the first pattern that matches wins): the app's
# own work against Streamlit's around it. A stack outside every script run is the server's event loop: messages
# written to websockets, sessions made, the message each run starts with.
WHERE = (
    ("Streamlit outside the runs (messages sent, sessions, the event loop)",
     lambda stack, leaf: "_run_script" not in stack),
    ("Streamlit's st.* calls (elements, widgets, layout blocks)", lambda stack, leaf: "gather_metrics" in stack),
    ("the core's maths (core/, NumPy)", lambda stack, leaf: re.search(r"\((core/|numpy/)", leaf) is not None),
    ("chart designs built (Altair, JSON, deep copies)",
     lambda stack, leaf: re.search(r"\((altair/|jsonschema/|json/|copy\.py)", leaf) is not None),
    ("Arrow tables written (pyarrow)", lambda stack, leaf: "(pyarrow/" in leaf),
    ("the app's Python (ui/, lessons/)",
     lambda stack, leaf: re.search(r"\((ui/|lessons/|streamlit_app\.py)", leaf) is not None),
    ("Streamlit in the runs, outside st.* calls (fragments, state)", lambda stack, leaf: "(streamlit/" in leaf),
    ("other (the standard library, ...)", lambda stack, leaf: True),
)


def where_it_went(stack: str) -> str:
    """The WHERE row a sampled stack (py-spy's raw format, frames joined by ';') belongs to."""
    leaf = stack.rsplit(";", 1)[-1]
    return next(name for name, test in WHERE if test(stack, leaf))


def print_profile(path: Path, top: int = 25) -> None:
    """Where the server's CPU went (WHERE), then the inclusive share of samples per function (file:line dropped),
    the app's and Streamlit's."""
    if not path.exists():
        return
    inclusive: dict[str, int] = {}
    where: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        kind = where_it_went(stack)
        where[kind] = where.get(kind, 0) + int(count)
        for frame in {re.sub(r":\d+\)$", ")", f) for f in stack.split(";")}:
            inclusive[frame] = inclusive.get(frame, 0) + int(count)
    print(f"    profile ({total} samples holding the GIL), where they went:")
    for kind, n in sorted(where.items(), key=lambda item: -item[1]):
        print(f"      {100 * n / total:5.1f}%  {kind}")
    print("    inclusive share:")
    interesting = [(n, f) for f, n in inclusive.items() if PROFILED.search(f)]
    for n, frame in sorted(interesting, reverse=True)[:top]:
        print(f"      {100 * n / total:5.1f}%  {frame[:140]}")


def gc_label(gc: bool | None) -> str:
    return "as started" if gc is None else str(gc).lower()


def table(rows: list[dict]) -> str:
    """One row per run; with trainers in any run, the movers' columns are theirs only and the trainers'
    columns follow (ticks/s: per trainer; the timer asks for 1 / interval)."""
    training = any(r["trainers"] for r in rows)
    head = ("N", *(("trainers",) if training else ()), "postScriptGC", "moves", "p50 s", "p95 s", "max s",
            "open p95 s", "exc", "fail", "server CPU", "ms/rerun", "peak RSS MB (all processes)", "MB/session",
            *(("ticks", "tick p50 s", "tick p95 s", "ticks/s per trainer", "steps/tick", "steps (slowest)")
              if training else ()))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            str(r["N"]), *((str(r["trainers"]),) if training else ()), gc_label(r["postScriptGC"]), str(r["moves"]),
            f"{r['p50_s']:.2f}", f"{r['p95_s']:.2f}",
            f"{r['max_s']:.2f}", f"{r['open_p95_s']:.2f}", str(r["exceptions"]), str(r["failures"]),
            f"{100 * r['server_cpu_share']:.0f}%", f"{r['server_ms_per_rerun']:.0f}", f"{r['peak_rss_mb']:.0f}",
            f"{r['per_session_mb']:.1f}",
            *((str(r["ticks"]), f"{r['tick_p50_s']:.2f}", f"{r['tick_p95_s']:.2f}",
               f"{r['ticks_per_s_per_trainer']:.2f} (timer {1 / r['tick_interval_s']:.2f})",
               f"{r['steps_per_tick_p50']:.0f}", f"{r['steps_total']} ({r['steps_min_per_trainer']})")
              if training else ())]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", default="1,10,30,60", help="comma-separated N (default 1,10,30,60)")
    parser.add_argument("--gc", choices=("false", "true", "both", "as-started"), default="false",
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
    parser.add_argument("--serve", type=int, default=0, metavar="PROCESSES",
                        help="start `deploy/serve.py PROCESSES` (HAProxy + that many Streamlit processes) for each "
                             "run and send every student through HAProxy")
    parser.add_argument("--url", help="drive a server or proxy already running at URL; start nothing")
    parser.add_argument("--state", type=Path, help="with --url: deploy/serve.py's --state file, to sum memory and "
                        "CPU over its processes")
    parser.add_argument("--trainers", type=int, default=0, metavar="K",
                        help="K of each run's N students train a model on the Training page (Train pressed after "
                             "the ramp, the live panel ticked as the browser's timer does); the other N - K move "
                             "sliders (default 0)")
    parser.add_argument("--train-link", default=TRAIN_LINK, metavar="QUERY",
                        help=f"the trainers' query string on the Training page (default {TRAIN_LINK})")
    parser.add_argument("--root", type=Path, default=ROOT, metavar="CHECKOUT",
                        help="serve this checkout instead (e.g. a git worktree of an older commit), driven by this one")
    parser.add_argument("--follow", action="store_true",
                        help="a class following its teacher: every mover makes the same moves, each at its own times")
    parser.add_argument("--cold", action="store_true",
                        help="the class arrives at a freshly started server, as soon as it answers (no warm-up "
                             "visitor, the server's own start-up warm-up not waited for: whatever it does before it "
                             "answers is printed as the time from its launch to its first answer)")
    parser.add_argument("--py-spy", type=Path, metavar="OUT",
                        help="profile the server with py-spy during each run (raw stacks to OUT-N-gc.txt)")
    args = parser.parse_args()
    if args.url and (args.serve or args.replicas != 1):
        parser.error("--url drives what is already running: no --serve or --replicas with it")
    if args.url:  # the server's postScriptGC is whatever it was started with: one run per N
        args.gc, args.gc_compare = "as-started", 0

    pages = [p for p in args.pages.split(",") if p]
    if args.trainers < 0:
        parser.error("--trainers must be 0 or more")
    lo, hi = (float(x) for x in args.interval.split(","))
    interval = (lo, hi)
    gcs = {"false": [False], "true": [True], "both": [False, True], "as-started": [None]}[args.gc]
    plan = [(int(n), gc) for n in args.sessions.split(",") if n for gc in gcs]
    if args.gc_compare:
        plan += [(args.gc_compare, gc) for gc in (True, False) if (args.gc_compare, gc) not in plan]
    if args.trainers and min(n for n, _ in plan) < args.trainers:
        parser.error(f"--trainers {args.trainers} needs every N (--sessions, --gc-compare) to be at least that")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in psutil.getloadavg())}; {os.cpu_count()} CPUs; "
          f"pages {pages}; a move every {lo:g}-{hi:g} s; {args.duration:.0f} s per run after a {args.ramp:.0f} s ramp; "
          f"server flags {args.server_arg or 'none'}; event loop {event_loop()}; " + (
              f"{args.trainers} of the N train ({TRAIN_PAGE}?{args.train_link}); " if args.trainers else "") + (
              f"target {args.url} (already running)" if args.url else
              f"deploy/serve.py {args.serve}: HAProxy + {args.serve} Streamlit processes" if args.serve else
              f"{args.replicas} server process(es)"), flush=True)

    results = []
    for n, gc in plan:
        server_args = tuple(part for flag in args.server_arg for part in flag.split("=", 1))
        profile = args.py_spy.with_name(f"{args.py_spy.stem}-{n}-{str(gc).lower()}.txt") if args.py_spy else None
        watch = Watch()
        res = run_one(n, gc, pages, args.duration, args.ramp, args.seed, server_args, profile, args.replicas,
                      interval, url=args.url, state=args.state, serve_processes=args.serve,
                      trainers=args.trainers, train_link=args.train_link, root=args.root.resolve(),
                      follow=args.follow, cold=args.cold)
        results.append(res)
        s = res.summary()
        movers = f"movers={s['movers']} " if args.trainers else ""
        print(f"N={n:<3} {movers}postScriptGC={gc_label(gc):5} moves={s['moves']:<5} p50={s['p50_s']:.2f}s "
              f"p95={s['p95_s']:.2f}s max={s['max_s']:.2f}s open_p95={s['open_p95_s']:.2f}s "
              f"visit_p95={s['visit_p95_s']:.2f}s "
              f"exceptions={s['exceptions']} failures={s['failures']} server_cpu={100 * s['server_cpu_share']:.0f}% "
              f"({s['server_ms_per_rerun']:.0f} ms/rerun) client_cpu={100 * s['client_cpu_share']:.0f}% "
              f"peak_rss={s['peak_rss_mb']:.0f}MB per_session={s['per_session_mb']:.1f}MB "
              f"load={psutil.getloadavg()[0]:.2f}", flush=True)
        print(f"    p95 of the moves sent in each {WINDOW_S:g} s from the first arrival: " + " ".join(
            f"{p:.2f}" for p in s["p95_by_window_s"]), flush=True)
        print("    per page (p50 / p95 s): " + ", ".join(
            f"{page} {statistics.median(lat):.2f} / {percentile(lat, 95):.2f}" for page, lat in res.by_page.items()),
            flush=True)
        if args.trainers:
            print(f"    trainers={s['trainers']} ticks={s['ticks']} tick_p50={s['tick_p50_s']:.2f}s "
                  f"tick_p95={s['tick_p95_s']:.2f}s tick_max={s['tick_max_s']:.2f}s "
                  f"rate={s['ticks_per_s_per_trainer']:.2f} ticks/s per trainer (the timer asks "
                  f"{1 / s['tick_interval_s']:.2f}) presses={s['presses']} press_p95={s['press_p95_s']:.2f}s "
                  f"steps/tick={s['steps_per_tick_p50']:.0f} ({s['train_ms_per_tick_p50']:.0f} ms training) "
                  f"steps={s['steps_total']} (slowest trainer {s['steps_min_per_trainer']}) "
                  f"runs_finished={s['runs_finished']} stalled_ticks={s['stalled_ticks']}", flush=True)
        if s["placement"]:
            print("    placed by the proxy: " + ", ".join(
                f"{where} {roles['movers']} movers + {roles['trainers']} trainers"
                for where, roles in s["placement"].items()), flush=True)
        print(f"    {watch.line()}", flush=True)
        for line in (res.exceptions + res.failures)[:5]:
            print("   ", line[:300], flush=True)

    print()
    print(table([r.summary() for r in results]))
    print(f"\nload average at end: {' '.join(f'{x:.2f}' for x in psutil.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps([{**r.summary(), "by_page": r.by_page, "exceptions_list": r.exceptions[:50],
                                          "failures_list": r.failures[:50], "tick_latencies": r.ticks,
                                          "trainer_steps": r.trainer_steps,
                                          "rss_curve": r.rss_curve[::4]} for r in results], indent=1))


if __name__ == "__main__":
    main()

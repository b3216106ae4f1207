"""A fresh server warms itself: every page runs once, at its defaults, for no one, before it serves anyone.

The first view of a page after a start pays for what every later view reuses: importing the lesson's modules
(and with them pandas and Altair), reading the shipped weights, designing its charts and computing its
defaults (0.6-1.0 s a page measured, bench/bench_first_view.py). `streamlit run streamlit_app.py` finds the
`st.App` that the entry script defines when it is imported rather than run, and starts the server through it;
its `lifespan` is Streamlit's hook for "the runtime has started". `at_start(pages)` makes one that runs each
page in turn in a session of its own that no browser holds (the same bare session Streamlit's own script
health check runs), as a bare link to the page would run it, and only then lets the server answer. The
runtime's hooks this needs are private: ui.streamlit_internals holds them (run_page_for_no_one,
a_browser_script_running, runtime_ready).

Why before, not beside: a class that arrived while the warm-up ran in the background shared one core with it
(about 4 CPU seconds) and with the first views of pages nobody had drawn yet: 30 students arriving within
5 s of a start waited up to 3.1 s, p95, for their first view, against 0.13 s at a warm server (docs/LOAD.md).
Streamlit listens on its port before the lifespan runs, so a request that comes meanwhile is not refused: it
waits in the socket's queue and is answered, warm, a few seconds later (the server answers about 5 s after it
starts, instead of 1.4 s). A warm-up that outlasts WARM_BEFORE_SERVING_S (a machine far slower than this one)
goes on in the background once the server answers, and then lets students go first: before each page it
waits until no student's script is running (students_first), for DEFER_AT_MOST_S at most.

What such a run leaves behind is what every session shares anyway: loaded modules and the per-process
caches (ui/compute/__init__.py). Its own session state goes with it.

Once every page is warm, what the warm-up loaded is set aside from Python's cyclic garbage collector
(set_aside: gc.freeze, after one collection of what the warm-up left behind). Modules, weights, chart designs and
shared results live as long as the process, yet every full collection walked all of them: with postScriptGC off
(.streamlit/config.toml) Python still runs one now and then by itself, and each stopped every student at once.
Measured, 60 busy students on one process for 40 s (bench/load_test.py, a gc.callbacks probe): 6 full
collections, 0.15-0.16 s each at most and 0.76-0.78 s in all; with the warm-up set aside (173,000 objects, 64,000
left to walk), 0.04-0.05 s at most and 0.20-0.23 s in all. Objects set aside are still freed when nothing refers to
them (reference counting); only a cycle among them would stay, and the collection just before finds those.

`GET /api/ready` (ready_route(), served beside Streamlit's own routes through the st.App) answers 503 until the
warm-up has ended and 200 `ok` after it, so a load balancer's readiness probe sends no class to a process
whose warm-up outlasted WARM_BEFORE_SERVING_S. A warm-up that failed on a page has still ended: that page is
left to its first visitor, as it would be anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections.abc import Callable, Sequence

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ui import streamlit_internals

LOG = streamlit_internals.logger(__name__)
RUN_TIMEOUT_S = 180  # one page's run on a busy machine; a page that takes longer is left to its first student
SWITCH = "ATTENTION_LAB_WARM_UP"  # set to 0 for a server that stays cold until its first visitor (tests of that)
# About 4 s on a quiet 2-core machine, 10 s on a busy one; the environment may say otherwise (tests).
WARM_BEFORE_SERVING_S = float(os.environ.get("ATTENTION_LAB_WARM_BEFORE_SERVING_S", "30"))
DEFER_AT_MOST_S = 60.0  # a class that keeps the process busy longer than this: warm the rest anyway
READY_PATH = "/api/ready"  # Streamlit reserves /_stcore/ and the like for itself and suggests /api/ for an app's


class Progress:
    """How far this process's warm-up has got: one per process, written by the warm-up, read by /api/ready."""

    def __init__(self) -> None:
        self.pages, self.done, self.ended = 0, 0, False


PROGRESS = Progress()


async def students_first(until: float) -> None:
    """Wait while a student's script (a session a browser holds) runs (until the monotonic time `until` at
    most)."""
    while streamlit_internals.a_browser_script_running() and time.monotonic() < until:
        await asyncio.sleep(0.02)


async def warm(pages: Sequence[str]) -> None:
    """Run every page once, one after another, each when no student's script is running; a page that fails is
    logged and left to its first visitor."""
    t0 = time.monotonic()
    failed = []
    PROGRESS.pages = len(pages)
    try:
        for page in pages:
            await students_first(until=t0 + DEFER_AT_MOST_S)
            try:
                ok = await streamlit_internals.run_page_for_no_one(page, RUN_TIMEOUT_S)
            except Exception:  # a warm-up must never take the server down
                LOG.exception("warming %r failed", page or "home")
                ok = False
            if not ok:
                failed.append(page or "home")
            PROGRESS.done += 1
        LOG.info("warmed %d pages in %.1f s%s", len(pages), time.monotonic() - t0,
                 f"; not warmed: {', '.join(failed)}" if failed else "")
        LOG.info("set aside %d objects from the garbage collector's walks", set_aside())
    finally:
        PROGRESS.ended = True  # ended, even cancelled: a probe must never wait for a warm-up that will not come


def set_aside() -> int:
    """Collect what the warm-up left as garbage, then take every object alive now out of the cyclic collector's
    walks (gc.freeze; see the module's docstring); how many objects that is."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


async def ready(_request: Request) -> PlainTextResponse:
    """200 `ok` once the server is up and its warm-up has ended; 503 and what it waits for before."""
    up, message = await streamlit_internals.runtime_ready()
    if up and not PROGRESS.ended:
        up, message = False, f"warming up: {PROGRESS.done} of {PROGRESS.pages or '?'} pages"
    return PlainTextResponse(message, status_code=200 if up else 503, headers={"Cache-Control": "no-cache"})


def ready_route() -> Route:
    """The route for st.App(routes=...): GET (and HEAD) READY_PATH answered by ready()."""
    return Route(READY_PATH, ready, methods=["GET", "HEAD"])


def at_start(pages: Sequence[str]) -> Callable:
    """A lifespan for st.App: warm `pages` before the server answers, for WARM_BEFORE_SERVING_S at most, then go
    on in the background (unless the environment says ATTENTION_LAB_WARM_UP=0)."""

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        if os.environ.get(SWITCH, "1") == "0":
            PROGRESS.ended = True  # nothing to wait for: ready as soon as the server is
            yield
            return
        task = asyncio.get_running_loop().create_task(warm(pages), name="warm pages")
        with contextlib.suppress(TimeoutError):  # shielded: a warm-up that outlasts the wait goes on
            await asyncio.wait_for(asyncio.shield(task), WARM_BEFORE_SERVING_S)
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    return lifespan

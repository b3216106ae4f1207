"""Failover that loses nothing: one of two Streamlit processes behind HAProxy dies in the middle of a class.

The set-up is the README's own command, `python deploy/serve.py 2` (two Streamlit processes, HAProxy with
a sticky cookie in front, on loopback ports). Students are placed on a process by the sticky cookie a
browser would hold (half on each), every one on a deep link with settings of its own, and each moves a
slider once, so part of its view comes from a move (the server writes it into the address bar). Then:

- the students on the other process keep moving sliders every 0.5-1.5 s;
- the first process is killed (SIGKILL: a crash, no goodbye);
- its students' connections drop; each does what Streamlit's frontend does (ping health, open a new
  websocket with its cookies, run the page from the address bar) and HAProxy, whose cookie names a dead
  process, sends it to the live one with a new cookie;
- where Chromium and Playwright are installed, two real browsers pinned to the dying process do the same
  through Streamlit's own frontend, which reconnects by itself.

Asserted: every moved student gets the same page back with the same settings (the page's title, every
slider's value as the page draws it, the query string), now on the live process; no exception element, no
lost connection on the live process, and its students' moves during the failover stay under a bound
(generous: the machine is shared). The whole test is bounded in time (the serve start, every wait and
every loop) and stops the set-up with SIGTERM, as Ctrl-C would.

Without haproxy the module is skipped, unless REQUIRE_PROXY=1 or REQUIRE_BROWSER=1 (CI), where that is a
failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.streamlit_client import DONE, Render, Session, free_port, owns_port, port_is_free
from deploy.serve import find_haproxy
from tests.apptest_helpers import ROOT

if find_haproxy() is None:
    if os.environ.get("REQUIRE_PROXY") == "1" or os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail("REQUIRE_PROXY=1 but haproxy is not installed (apt-get install haproxy)", pytrace=False)
    pytest.skip("the failover test needs haproxy (apt-get install haproxy)", allow_module_level=True)

try:
    from playwright.async_api import async_playwright
except ImportError:  # pragma: no cover - depends on the machine
    async_playwright = None

pytestmark = pytest.mark.timeout(240)

COOKIE = "attention-lab-server"  # deploy/haproxy/haproxy.cfg.template
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]
HAVE_BROWSER = async_playwright is not None and Path(CHROMIUM).exists()
if os.environ.get("REQUIRE_BROWSER") == "1" and not HAVE_BROWSER:
    pytest.fail(f"REQUIRE_BROWSER=1 but {CHROMIUM} is missing", pytrace=False)
START_TIMEOUT_S = 120
# Deep links, each with its own settings (page, query string); student i takes the i-th.
LINKS = [
    ("qkv", "text=The+cat+sat+on+the+warm+mat&seed=3"),
    ("scaling", "d_k=64&seed=2"),
    ("masking", "text=the+quick+brown+fox+jumps&seed=1"),
    ("multi-head", "d_model=32&heads=4&seed=5"),
    ("qkv", "text=attention+is+all+you+need&seed=11"),
    ("scaling", "d_k=16&seed=9"),
]
BROWSER_LINKS = [("scaling", "d_k=32&seed=4"), ("masking", "text=a+class+of+thirty&seed=6")]
MOVING_S = 14.0  # how long the live process's students keep moving; the kill comes KILL_AT_S into it
KILL_AT_S = 3.0
RECONNECT_S = 45.0  # a dropped student must be back within this
MOVE_BOUND_S = 15.0  # a live student's move during the failover (two shared, busy cores)
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
# The page as a user sees it once everything has arrived (as tests/browser/harness.py's DRAWN): a title under an
# idle app (the run that drew it has ended: IDLE alone also holds before the first run starts), and no
# skeleton left (a slider, like a chart, is loaded lazily and drawn a while after the run has ended).
DRAWN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.dataset.testScriptState === 'notRunning' && app.dataset.testConnectionState === 'CONNECTED'
        && !!app.querySelector('h1') && !app.querySelector('[data-testid="stSkeleton"]');
}"""
EXCEPTION = '[data-testid="stException"]'


@dataclass
class Served:
    proc: subprocess.Popen
    state_file: Path
    url: str = ""
    by_cookie: dict[str, int] = field(default_factory=dict)  # cookie value -> streamlit pid

    def state(self) -> dict:
        return json.loads(self.state_file.read_text())


class PortTaken(Exception):
    """Another process bound one of the ports between the check and the bind."""


def start_served(state_file: Path) -> Served:
    port = free_port(range(9300, 9400))
    first = next(p for p in random.sample(range(9400, 9500, 2), 50) if port_is_free(p) and port_is_free(p + 1))
    # The README's command, with loopback ports chosen here.
    proc = subprocess.Popen([sys.executable, "deploy/serve.py", "2", "--address", "127.0.0.1", "--port", str(port),
                             "--first-port", str(first), "--state", str(state_file), "--max-restarts", "0",
                             "--logs", str(state_file.parent / "logs")],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    srv = Served(proc, state_file)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not state_file.exists():
            if proc.poll() is not None:
                output = proc.stdout.read().decode(errors="replace")
                logs = re.search(r"see (\S+)/streamlit-\d+\.log", output)
                if logs:
                    output += "".join(log.read_text(errors="replace") for log in Path(logs.group(1)).glob("*.log"))
                if re.search(r"cannot bind|is not available|already in use", output):
                    raise PortTaken(output[-3000:])
                pytest.fail(f"deploy/serve.py exited with {proc.returncode}:\n{output[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"deploy/serve.py was not ready within {START_TIMEOUT_S} s")
            time.sleep(0.3)
        state = srv.state()
        # Health answered on a port proves nothing if another process holds it: each must be ours.
        listeners = [(state["haproxy_pid"], port), *((pid, int(p)) for p, pid in state["streamlit"].items())]
        if not all(owns_port(pid, p) for pid, p in listeners):
            raise PortTaken(f"not every port is held by its process: {state}")
        srv.url = state["url"]
        ports = sorted(state["streamlit"], key=int)
        srv.by_cookie = {f"s{i}": state["streamlit"][p] for i, p in enumerate(ports, 1)}
        return srv
    except BaseException:
        stop_served(srv)
        raise


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    for attempt in range(3):
        try:
            srv = start_served(tmp_path_factory.mktemp("serve") / "state.json")
            break
        except PortTaken:
            if attempt == 2:
                raise
    try:
        yield srv
    finally:
        stop_served(srv)


def stop_served(srv: Served) -> None:
    """SIGTERM to serve.py (as Ctrl-C), which stops HAProxy and the Streamlit processes; then make sure."""
    pids = []
    with contextlib.suppress(OSError, ValueError):
        state = srv.state()
        pids = [state["haproxy_pid"], *state["streamlit"].values()]
    if srv.proc.poll() is None:
        srv.proc.send_signal(signal.SIGTERM)
        try:
            srv.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.proc.kill()
            srv.proc.wait(timeout=10)
    for pid in pids:  # only if serve.py could not stop them itself
        with contextlib.suppress(ProcessLookupError, PermissionError, TypeError):
            os.killpg(pid, signal.SIGKILL)


def test_serve_says_where_to_go_and_keeps_its_logs_after_a_clean_stop(tmp_path):
    port = free_port(range(9300, 9400))
    first = next(p for p in random.sample(range(9400, 9500, 2), 50) if port_is_free(p))
    logs = tmp_path / "logs"
    proc = subprocess.Popen([sys.executable, "deploy/serve.py", "1", "--address", "127.0.0.1", "--port", str(port),
                             "--first-port", str(first), "--state", str(tmp_path / "state.json"), "--logs", str(logs)],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    srv = Served(proc, tmp_path / "state.json")
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not srv.state_file.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.3)
        assert srv.state_file.exists(), f"not started (exit {proc.poll()})"
    finally:
        stop_served(srv)
    output = proc.stdout.read()
    assert proc.returncode == 0, output[-3000:]
    assert f"Students open http://127.0.0.1:{port}\n" in output, output[-3000:]
    assert f"the logs are in {logs}" in output
    (log,) = logs.glob("streamlit-*.log")  # kept after a clean stop, with what the process wrote
    assert f"URL: http://127.0.0.1:{first}" in log.read_text()
    assert (logs / "haproxy.cfg").exists()


# ---- simulated students (bench/streamlit_client.py) --------------------------------------------------


def view(session: Session) -> dict:
    """What a student sees of its settings: the page's title, each slider's value, the address bar."""
    return {"title": session.title, "sliders": session.slider_values(), "page": session.page, "query": session.query}


@dataclass
class Student:
    i: int
    home: str  # the cookie value of the process it starts on
    session: Session
    render: Render
    before: dict = field(default_factory=dict)
    after: dict = field(default_factory=dict)
    moves: list[float] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    back_after_s: float | None = None


async def arrive(url: str, i: int, home: str) -> Student:
    page, query = LINKS[i % len(LINKS)]
    session, render = await Session.open(url, page, query, timeout=60, cookies={COOKIE: home})
    assert session.cookies.get(COOKIE) == home, session.cookies
    student = Student(i, home, session, render, exceptions=list(render.exceptions))
    # One move of its own: a slider to a value no other student uses, so part of the view comes from a move.
    slider = render.sliders.get("seed") or next(iter(render.sliders.values()))
    values = [v for v in slider.values() if v not in slider.value]
    student.render = await session.move(slider, values[(7 * i + 3) % len(values)])
    student.exceptions += student.render.exceptions
    student.before = view(session)
    return student


async def keep_moving(student: Student, until: float) -> None:
    rng = random.Random(student.i)
    try:
        while time.monotonic() < until:
            await asyncio.sleep(rng.uniform(0.5, 1.5))
            render = student.render
            slider = render.sliders[rng.choice(sorted(render.sliders))]
            value = rng.choice([v for v in slider.values() if v not in slider.value] or slider.values())
            student.render = await student.session.move(slider, value)
            student.moves.append(student.render.latency_s)
            student.exceptions += student.render.exceptions
        if student.session.closed_reason is not None:
            student.failures.append(f"connection dropped: {student.session.closed_reason}")
        student.before = student.after = view(student.session)
    except Exception as err:
        student.failures.append(repr(err))


async def come_back(student: Student, killed_at: asyncio.Future) -> None:
    """A student reading its page when its process dies: notice the drop, reconnect, get the page back."""
    try:
        t_kill = await killed_at
        deadline = t_kill + RECONNECT_S
        while student.session.closed_reason is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert student.session.closed_reason is not None, "the connection to the killed process did not drop"
        render = await asyncio.wait_for(student.session.reconnect(attempts=60, pause=0.5),
                                        max(1.0, deadline - time.monotonic()))
        student.back_after_s = time.monotonic() - t_kill
        student.render = render
        student.exceptions += render.exceptions
        student.after = view(student.session)
    except Exception as err:
        student.failures.append(repr(err))


# ---- real browsers ---------------------------------------------------------------------------------


async def sidebar_view(page) -> dict:
    sliders = page.locator('[data-testid="stSidebar"]').get_by_role("slider")
    values = [await sliders.nth(j).get_attribute("aria-valuetext") for j in range(await sliders.count())]
    return {"title": await page.locator("h1").first.inner_text(), "sliders": values, "url": page.url}


class Runs:
    """Script runs as the page's websockets carry them, counted per websocket (the page opens another one on a
    reconnect or a reload): rerun requests sent, runs ended (script_finished, any status), and runs done (ended
    as a run the page waits for, not cut short by a newer request). The DOM cannot say it: a move served in a
    few milliseconds may finish before the frontend ever draws its "running" state."""

    def __init__(self, page):
        self.sockets: list[dict[str, int]] = []
        page.on("websocket", self._opened)

    def _opened(self, ws) -> None:
        counts = {"sent": 0, "ended": 0, "done": 0}
        self.sockets.append(counts)

        def sent(payload) -> None:
            if isinstance(payload, bytes) and BackMsg.FromString(payload).WhichOneof("type") == "rerun_script":
                counts["sent"] += 1

        def received(payload) -> None:
            if isinstance(payload, bytes):
                msg = ForwardMsg.FromString(payload)
                if msg.WhichOneof("type") == "script_finished":
                    counts["ended"] += 1
                    counts["done"] += msg.script_finished in DONE

        ws.on("framesent", sent)
        ws.on("framereceived", received)

    @property
    def current(self) -> dict[str, int]:
        assert self.sockets, "the page opened no websocket"
        return self.sockets[-1]


async def until(condition, timeout: float, failure) -> None:
    """Poll `condition` until it holds; past `timeout` seconds fail with `await failure()`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(await failure())
        await asyncio.sleep(0.05)


async def states(page) -> str:
    return f"states {await page.evaluate('window.__states || null')}"


async def settle(page, runs: Runs) -> None:
    """Every run the page asked for on its websocket has ended, and the page on screen is the last one's."""
    socket = runs.current
    await until(lambda: socket["ended"] >= socket["sent"], 30, lambda: states(page))
    await page.wait_for_function(DRAWN, polling=100)


async def move_and_wait(page, runs: Runs, key: str) -> None:
    """Press `key` on the first sidebar slider; return once the address bar shows the move and the server has
    finished the run it asked for (with no run under way at the press, the next run done is the move's)."""
    await settle(page, runs)
    socket = runs.current
    done, url = socket["done"], page.url
    await page.locator('[data-testid="stSidebar"]').get_by_role("slider").first.focus()
    await page.keyboard.press(key)
    await page.wait_for_url(lambda u: u != url, timeout=30_000)  # the move is in the address bar
    await until(lambda: socket["done"] > done, 30, lambda: states(page))


async def browser_arrives(browser, url: str, link: tuple[str, str], home: str):
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    await context.add_cookies([{"name": COOKIE, "value": home, "url": url}])
    page = await context.new_page()
    runs = Runs(page)
    page.set_default_timeout(60_000)
    await page.goto(f"{url}/{link[0]}?{link[1]}")
    await page.wait_for_function(DRAWN, polling=100)
    await move_and_wait(page, runs, "ArrowLeft")  # seq_len, first, starts at the whole text: down one
    await settle(page, runs)
    # Watched from here, long before the kill: every connection state the page goes through until then
    await page.evaluate(WATCH)
    return context, page, runs, await sidebar_view(page)


WATCH = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.__states = [];
    new MutationObserver(() => window.__states.push(
        app.dataset.testConnectionState + '/' + app.dataset.testScriptState)).observe(app, {attributes: true});
}"""
# Connected again after the drop (the page on screen stays as it was meanwhile: Streamlit's frontend keeps it).
RECONNECTED = """() => {
    const s = window.__states, app = document.querySelector('[data-testid="stApp"]');
    return s.some(x => !x.startsWith('CONNECTED/')) && app.dataset.testConnectionState === 'CONNECTED';
}"""


async def browser_comes_back(context, page, runs: Runs, killed_at: asyncio.Future) -> dict:
    """Streamlit's frontend notices the dropped websocket, pings /_stcore/health until the proxy answers
    (from the live process, with a new cookie) and opens a new websocket. Then: the page shows the same
    settings; a slider move is served by the live process; reloading the address bar there gives that view."""
    t_kill = await killed_at
    try:
        await page.wait_for_function(RECONNECTED, timeout=RECONNECT_S * 1000, polling=100)
    except Exception as err:
        raise AssertionError(f"not reconnected: {await states(page)}") from err
    out = {"back_s": time.monotonic() - t_kill}
    # The frontend may ask the new process for a run as it reconnects (it does when its last run was a
    # fragment's): the page shown after it is the one to compare.
    await settle(page, runs)
    out["after"] = await sidebar_view(page)
    cookies = {c["name"]: c["value"] for c in await context.cookies()}
    out["cookie"] = cookies.get(COOKIE)
    await move_and_wait(page, runs, "ArrowRight")  # back to the value the link had before the first move
    out["moved"] = await sidebar_view(page)
    opened = len(runs.sockets)
    await page.reload()
    await until(lambda: len(runs.sockets) > opened and runs.current["done"] >= 1, 60,
                lambda: states(page))  # the live process has run the page from the address bar
    await page.wait_for_function(DRAWN, polling=100)
    out["reloaded"] = await sidebar_view(page)
    out["errors"] = [await e.inner_text() for e in await page.locator(EXCEPTION).all()]
    return out


# ---- the test --------------------------------------------------------------------------------------


async def failover(srv: Served) -> dict:
    url = srv.url
    # The first visitor of each process pays for the imports and the model weights (not timed).
    for home in ("s1", "s2"):
        session, _ = await Session.open(url, "qkv", timeout=90, cookies={COOKIE: home})
        await session.close()
    students = await asyncio.gather(*(arrive(url, i, ("s1", "s2")[i % 2]) for i in range(len(LINKS))))
    victims = [s for s in students if s.home == "s1"]
    live = [s for s in students if s.home == "s2"]

    browsers, pw, chromium = [], None, None
    if HAVE_BROWSER:
        pw = await async_playwright().start()
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        browsers = [await browser_arrives(chromium, url, link, "s1") for link in BROWSER_LINKS]
    try:
        loop = asyncio.get_running_loop()
        killed_at: asyncio.Future = loop.create_future()
        start = time.monotonic()

        async def kill():
            await asyncio.sleep(KILL_AT_S)
            os.killpg(srv.by_cookie["s1"], signal.SIGKILL)
            killed_at.set_result(time.monotonic())

        results = await asyncio.gather(
            kill(),
            *(keep_moving(s, start + MOVING_S) for s in live),
            *(come_back(s, killed_at) for s in victims),
            *(browser_comes_back(ctx, page, runs, killed_at) for ctx, page, runs, _ in browsers),
        )
        browser_results = results[1 + len(live) + len(victims):]
        return {"victims": victims, "live": live,
                "browsers": [(before, after) for (*_, before), after in zip(browsers, browser_results)]}
    finally:
        for s in students:
            await s.session.close()
        if chromium is not None:
            await chromium.close()
        if pw is not None:
            await pw.stop()


def test_students_of_a_killed_process_get_their_view_back(served):
    started = time.monotonic()
    out = asyncio.run(asyncio.wait_for(failover(served), 180))
    elapsed = time.monotonic() - started
    victims, live = out["victims"], out["live"]
    assert victims and live

    for s in victims:
        assert not s.failures, (s.i, s.failures)
        assert s.after == s.before, (s.i, s.before, s.after)
        assert s.session.cookies[COOKIE] == "s2", "HAProxy should have moved the student to the live process"
        assert not s.exceptions, (s.i, s.exceptions)
    for s in live:
        assert not s.failures, (s.i, s.failures)
        assert not s.exceptions, (s.i, s.exceptions)
        assert s.session.cookies[COOKIE] == "s2"
        assert s.moves, f"student {s.i} timed no move"
        assert max(s.moves) < MOVE_BOUND_S, (s.i, sorted(s.moves))
    for before, after in out["browsers"]:
        assert after["after"] == before, (before, after)  # the same page, the same settings, the same link
        assert after["cookie"] == "s2", after
        assert after["moved"]["url"] != before["url"] and after["moved"]["title"] == before["title"], after
        assert after["reloaded"] == after["moved"], after  # the live process rebuilds the view from the link
        assert not after["errors"], after["errors"]

    back = [s.back_after_s for s in victims] + [after["back_s"] for _, after in out["browsers"]]
    moves = sorted(m for s in live for m in s.moves)
    print(f"\nfailover: {len(victims)} simulated students and {len(out['browsers'])} browsers moved to the live "
          f"process in {min(back):.1f}-{max(back):.1f} s; {len(live)} live students' {len(moves)} moves: "
          f"max {moves[-1]:.2f} s; scenario {elapsed:.1f} s; load {os.getloadavg()[0]:.2f}")
    assert served.proc.poll() is None, "deploy/serve.py should keep serving with one process left"

"""A minimal Streamlit client: one browser session over Streamlit's own websocket protocol.

It does what the browser's frontend does for a page view, a slider move, a button press and a fragment's
timer, no more:

1. GET /_stcore/health, which sets the `_streamlit_xsrf` cookie (the frontend pings health before it
   opens the stream);
2. open ws://host:port/_stcore/stream with the subprotocol list ["streamlit", <xsrf token>], the cookie
   and a same-origin Origin header, as the browser does (XSRF protection stays on);
3. send a BackMsg `rerun_script` (ClientState: the deep link's query string, the page's url path as
   page_name, the widget values the user has set, context info) and read ForwardMsgs until
   `script_finished`: the time in between is what a student waits for the page to redraw.

Widget ids and ranges come from the Slider protos of the last render, so a "student" moves exactly the
sliders the page drew. Buttons likewise (Button protos: id, label, disabled): `press(button)` sends one
rerun_script whose widget states carry the button's `trigger_value = True` (a trigger is sent once, never
kept, as the frontend does).

A widget drawn inside a fragment (its Delta carries the fragment's id) is moved or pressed as the browser
does it: the rerun_script carries that fragment_id, and the server reruns the fragment alone (script_finished
FINISHED_FRAGMENT_RUN_SUCCESSFULLY; such a run sends only the fragment's elements). A slider bound to the URL
(its proto names a query_param_key) rewrites the session's query string as the frontend rewrites the address
bar, leaving out a value equal to the slider's default. `Session.title`, `.sliders` and `.slider_values()`
keep what the page shows across fragment runs; expanders and popovers with a key open and close with
`set_panel`.

Text inputs, radios, select boxes and number inputs (TextInputInfo, RadioInfo, NumberInputInfo, from their
protos: id, label, options, the form they are in) are filled with `fill`, as a phone fills them: outside a form
the page reruns at once (the browser sends a text on Enter or when the box loses focus, a radio on the click);
inside a form the value is held in the browser and sent with nothing else, until the form's submit button is
pressed (`press`): then one rerun_script carries the form's held values and the button's trigger together (the
fragment's own rerun when the form is in one). What a run drew, to read, is in its Render: markdown, captions,
alerts (st.info, st.error, ...), toasts, metrics (label -> value), charts (each Vega-Lite spec, its numbers put
back inside it) and `Render.text`, all of it. A run cut short by st.rerun leaves only the next run's page, as in
the browser.

Fragments with `run_every` (st.fragment(f, run_every=...)): the server does not rerun them itself. During a
full run it sends a ForwardMsg `auto_rerun` (fragment_id, interval in seconds), and the browser then sends a
rerun_script with `fragment_id` set, `is_auto_rerun` true and its current widget states every `interval`
seconds; the run ends with script_finished FINISHED_FRAGMENT_RUN_SUCCESSFULLY. The frontend's timers (kept
here in `Session.auto_reruns`) are all cancelled when a full run starts (a new_session whose
metadata.run.fragment_ids is empty) and re-armed by the auto_rerun messages of that run; `stop_auto_rerun`
cancels single fragments. `rerun_fragment(fragment_id)` sends one such tick and waits for its end; when to
send the next is the caller's choice (the frontend uses setInterval, open loop).

The browser's message cache is kept too, as the frontend keeps it: a ForwardMsg whose metadata says
`cacheable` (a new element at least `global.minCachedMessageSize` bytes long) is stored under its hash with
the run it last served; each rerun_script lists the hashes held (`cached_message_hashes`), and the server then
sends an element the browser already holds as a short `ref_hash` message instead of the element itself. At
the end of each run (not one that ends early for a rerun) a message unused for more than the session's
`max_cached_message_age` runs is dropped, and after a fragment's run only that fragment's messages age. So
`Render.bytes` counts what a browser is sent, and the server's work per move is the work a browser causes.

Used by bench/load_test.py, bench/soak.py, bench/class_bench.py and the system tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Button_pb2 import Button
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Radio_pb2 import Radio
from streamlit.proto.Selectbox_pb2 import Selectbox
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextArea_pb2 import TextArea
from streamlit.proto.TextInput_pb2 import TextInput
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
XSRF_COOKIE = "_streamlit_xsrf"
FINISHED = ForwardMsg.ScriptFinishedStatus
# What ends a run the client waits for. FINISHED_EARLY_FOR_RERUN is not among them: another run follows (e.g.
# a fragment that calls st.rerun(scope="app") ends early and the full run after it ends the wait).
DONE = {FINISHED.FINISHED_SUCCESSFULLY, FINISHED.FINISHED_WITH_COMPILE_ERROR,
        FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


def chart_spec(chart) -> dict:
    """A chart element's Vega-Lite spec with its numbers inside it: the app sends them beside the spec, as a named
    dataset in Arrow (ui/drawing/chart_data.py), and a reader of the page wants them where a spec holds them."""
    spec = json.loads(chart.spec)
    tables = {d.name: d.data.data for d in chart.datasets}
    if not tables:
        return spec
    from ui.drawing.chart_data import DATASET, ChartData  # the app's own format: read only where a chart has one

    return ChartData.from_arrow(tables[DATASET]).inlined(spec) if DATASET in tables else spec


# ---- the server ---------------------------------------------------------------------------------------


def port_is_free(port: int) -> bool:
    """Nothing listens on this loopback port now."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def owns_port(pid: int, port: int) -> bool:
    """The socket listening on 127.0.0.1:port belongs to process `pid` or a process under it (not to another
    that took the port). Under it counts: on Windows a virtualenv's python.exe runs the interpreter as its
    child."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return False
    for process in processes:
        with contextlib.suppress(psutil.Error, OSError):  # ended, or not ours to read
            if any(c.status == psutil.CONN_LISTEN and c.laddr and tuple(c.laddr) == ("127.0.0.1", port)
                   for c in process.net_connections(kind="tcp4")):
                return True
    return False


def free_port(ports: range = range(9100, 9200)) -> int:
    """A loopback port in `ports` that nothing listens on now (tried in random order: other test runs on the
    machine pick from the same range)."""
    for port in random.sample(list(ports), len(ports)):
        if port_is_free(port):
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def memory(pid: int) -> dict[str, int]:
    """A process's resident memory in bytes: "rss" now, and "peak", its high-water mark, where the system
    keeps one that another process can read (Linux, Windows; not macOS). Raises psutil.NoSuchProcess when
    the process has ended."""
    info = psutil.Process(pid).memory_info()
    out = {"rss": info.rss}
    if sys.platform == "linux":
        # psutil does not report the peak; Linux keeps it in /proc/PID/status (VmHWM, in kB)
        with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/status") as f:
            peak = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:")), None)
            if peak is not None:  # a zombie has no memory lines
                out["peak"] = peak
    elif hasattr(info, "peak_wset"):  # Windows: the peak working set
        out["peak"] = info.peak_wset
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (the kernel counts it in clock ticks: 10 ms on Linux)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def stop_tree(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate `proc` and every process under it; kill whatever is left after `timeout` seconds. psutil
    finds the processes under it on every platform (os.killpg needs POSIX process groups)."""
    if proc.poll() is not None:
        return
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    proc.terminate()
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)
    _, alive = psutil.wait_procs(children, timeout=timeout)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(alive, timeout=timeout)


class Server:
    """`streamlit run streamlit_app.py` on a loopback port, in a session of its own (a Ctrl-C in the terminal
    reaches the benchmark alone, which then stops it and every process under it).
    root: the checkout to serve (another one, e.g. a git worktree of an older commit, to compare with).
    script: the script to run, from root (bench/bare_page.py: the yardstick of bench/budget.py).
    until_warm: a checkout whose server warms its pages when it starts (ui/compute/warm.py, unless
    ATTENTION_LAB_WARM_UP=0) is ready only once its log says `warmed N pages`, else the warm-up's CPU (tens of
    seconds on a busy machine) lands in the first moves measured (bench_pages --compare read 4-5.5x)."""

    def __init__(self, port: int | None = None, post_script_gc: bool | None = None, extra: tuple[str, ...] = (),
                 root: Path = ROOT, until_warm: bool = False, script: str = "streamlit_app.py"):
        self.warms = until_warm and (root / "ui/compute/warm.py").exists() \
            and os.environ.get("ATTENTION_LAB_WARM_UP", "1") != "0"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"streamlit-{self.port}-", suffix=".log", delete=False)
        args = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(self.port),
                "--server.address", "127.0.0.1", "--server.headless", "true", *extra]
        if post_script_gc is not None:
            args += ["--runner.postScriptGC", "true" if post_script_gc else "false"]
        self.proc = subprocess.Popen(args, cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def health(self, timeout: float = 5) -> str:
        with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=timeout) as response:
            return response.read().decode()

    @classmethod
    def start(cls, attempts: int = 3, **kwargs) -> Server:
        """A ready server; if another process took the port between the check and the bind, try another."""
        for attempt in range(attempts):
            server = cls(**kwargs)
            try:
                return server.wait_ready()
            except RuntimeError:
                lost_race = server.proc.poll() is not None and re.search(r"is not available|already in use",
                                                                          server.output()) is not None
                server.stop()
                if not lost_race or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def wait_ready(self, timeout: float = 90) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.output()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.health() == "ok" and self.owns_port():
                    break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"streamlit did not answer on {self.url} within {timeout} s:\n{self.output()}")
        warm_deadline = time.monotonic() + 300  # the warm-up gives up on a page after 180 s
        while self.warms and re.search(r" warmed \d+ pages", Path(self.log.name).read_text(errors="replace")) is None:
            if self.proc.poll() is not None or time.monotonic() > warm_deadline:
                raise RuntimeError(f"streamlit on {self.url} did not finish its warm-up:\n{self.output()}")
            time.sleep(0.2)
        return self

    def owns_port(self) -> bool:
        """True when the socket listening on the port is this server's (not another process that took it)."""
        return owns_port(self.pid, self.port)

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """Terminate the server and every process under it, kill them if they linger; remove the log."""
        stop_tree(self.proc)
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> Server:
        try:
            return self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


# ---- what a render showed -----------------------------------------------------------------------------


@dataclass
class SliderInfo:
    """A slider or select slider the page drew: enough to send a new value for it."""

    id: str
    key: str  # the user key (the URL parameter it is bound to)
    kind: str  # "slider" or "select_slider"
    min: float
    max: float
    step: float
    integer: bool
    options: tuple[str, ...]
    value: tuple  # the value shown (numbers for a slider, option labels for a select slider)
    fragment_id: str = ""  # the fragment it was drawn in: a move reruns only that fragment, as in the browser
    bound: bool = False  # bound to the URL (bind="query-params"): a move rewrites the address bar
    default: tuple = ()  # the value the URL leaves out

    @classmethod
    def from_proto(cls, s: Slider) -> SliderInfo:
        select = s.type == Slider.Type.SELECT_SLIDER
        # A select slider sends its labels once set (raw_value), otherwise the indices of its default.
        value = (tuple(s.raw_value) or tuple(s.options[int(i)] for i in (s.value or s.default))) if select \
            else tuple(s.value or s.default)
        default = tuple(s.options[int(i)] for i in s.default) if select else tuple(s.default)
        return cls(id=s.id, key=s.query_param_key or s.id.rsplit("-", 1)[-1],
                   kind="select_slider" if select else "slider", min=s.min, max=s.max, step=s.step,
                   integer=s.data_type == Slider.DataType.INT, options=tuple(s.options), value=value,
                   bound=bool(s.query_param_key), default=default)

    def values(self) -> list:
        """Every value this slider offers (option labels, or numbers on its step grid; at most 1000)."""
        if self.kind == "select_slider":
            return list(self.options)
        n = round((self.max - self.min) / self.step) + 1 if self.step else 1
        stride = max(1, n // 1000)
        grid = [self.min + i * self.step for i in range(0, n, stride)]
        return [round(v) if self.integer else round(v, 10) for v in grid]

    def url_text(self, value) -> str:
        """The value as the browser writes it into the URL: 5, not 5.0."""
        if self.kind == "select_slider":
            return str(value)
        return str(int(value)) if float(value).is_integer() else repr(float(value))

    def state(self, value) -> WidgetState:
        """The WidgetState the browser sends when the user drags this slider to `value`."""
        ws = WidgetState(id=self.id)
        if self.kind == "select_slider":
            ws.string_array_value.data[:] = [str(value)]
        else:
            ws.double_array_value.data[:] = [float(value)]
        return ws


def user_key(widget_id: str) -> str:
    """The key a script gave a widget, from the end of its id ("" for none; a form's submit button: its label)."""
    key = widget_id.rsplit("-", 1)[-1] if widget_id.startswith("$$ID-") else ""
    return "" if key == "None" else key


@dataclass
class ButtonInfo:
    """A button the page drew: enough to press it."""

    id: str
    key: str  # the user key ("" for a button without one)
    label: str
    disabled: bool
    fragment_id: str = ""  # the fragment it was drawn in: a press reruns only that fragment, as in the browser
    form_id: str = ""  # a form's submit button: pressing it sends the form

    @classmethod
    def from_proto(cls, b: Button) -> ButtonInfo:
        return cls(id=b.id, key=user_key(b.id), label=b.label, disabled=b.disabled,
                   form_id=b.form_id if b.is_form_submitter else "")

    def state(self) -> WidgetState:
        """The WidgetState of a click: a trigger, true for the one rerun it is sent with."""
        return WidgetState(id=self.id, trigger_value=True)


@dataclass
class TextInputInfo:
    """A text input or text area the page drew: enough to type into it."""

    id: str
    key: str
    label: str
    value: str  # what it shows
    max_chars: int = 0  # 0: no limit
    form_id: str = ""  # the form it is in ("" for none)
    fragment_id: str = ""
    bound: bool = False  # bound to the URL (bind="query-params")

    @classmethod
    def from_proto(cls, t: TextInput | TextArea) -> TextInputInfo:
        return cls(id=t.id, key=user_key(t.id), label=t.label, value=t.value if t.set_value else t.default,
                   max_chars=t.max_chars, form_id=t.form_id, bound=bool(t.query_param_key))

    def state(self, value: str) -> WidgetState:
        if self.max_chars and len(value) > self.max_chars:  # the browser's box takes no more
            raise ValueError(f"{self.label!r} takes at most {self.max_chars} characters")
        return WidgetState(id=self.id, string_value=value)


@dataclass
class RadioInfo:
    """A radio or a select box the page drew (their protos share these fields): its options as shown (after the
    script's format_func)."""

    id: str
    key: str
    label: str
    options: tuple[str, ...]
    value: str | None  # the option picked, None for none
    form_id: str = ""
    fragment_id: str = ""
    bound: bool = False

    @classmethod
    def from_proto(cls, r: Radio | Selectbox) -> RadioInfo:
        value = r.raw_value if r.HasField("raw_value") else r.options[r.default] if r.HasField("default") else None
        return cls(id=r.id, key=user_key(r.id), label=r.label, options=tuple(r.options), value=value,
                   form_id=r.form_id, bound=bool(r.query_param_key))

    def state(self, option: str) -> WidgetState:
        """The browser sends the label of the option picked."""
        if option not in self.options:
            raise ValueError(f"{self.label!r} has no option {option!r}: {self.options}")
        return WidgetState(id=self.id, string_value=option)


@dataclass
class NumberInputInfo:
    """A number input the page drew."""

    id: str
    key: str
    label: str
    integer: bool
    min: float | None
    max: float | None
    value: float | None
    form_id: str = ""
    fragment_id: str = ""
    bound: bool = False

    @classmethod
    def from_proto(cls, n: NumberInput) -> NumberInputInfo:
        value = n.value if n.HasField("value") else n.default if n.HasField("default") else None
        return cls(id=n.id, key=user_key(n.id), label=n.label, integer=n.data_type == NumberInput.DataType.INT,
                   min=n.min if n.has_min else None, max=n.max if n.has_max else None, value=value,
                   form_id=n.form_id, bound=bool(n.query_param_key))

    def state(self, value: float) -> WidgetState:
        """An int_value for an integer input, a double_value otherwise (as the browser's widget manager sends)."""
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise ValueError(f"{self.label!r} takes {self.min} to {self.max}, not {value}")
        return WidgetState(id=self.id, int_value=int(value)) if self.integer else \
            WidgetState(id=self.id, double_value=float(value))


Field = TextInputInfo | RadioInfo | NumberInputInfo
# element type -> its Field, read from its proto (a text area has a text input's fields)
INPUTS = {"text_input": TextInputInfo.from_proto, "text_area": TextInputInfo.from_proto,
          "radio": RadioInfo.from_proto, "selectbox": RadioInfo.from_proto, "number_input": NumberInputInfo.from_proto}


@dataclass
class Render:
    """One script run as the client saw it (a fragment run: only the fragment's elements)."""

    latency_s: float = 0.0
    status: str = ""
    exceptions: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    sliders: dict[str, SliderInfo] = field(default_factory=dict)  # by user key
    buttons: dict[str, ButtonInfo] = field(default_factory=dict)  # by user key, else by label
    fields: dict[str, Field] = field(default_factory=dict)  # text inputs, radios, number inputs: by key, else label
    markdown: list[str] = field(default_factory=list)  # the body of each st.markdown (captions apart)
    alerts: list[str] = field(default_factory=list)  # the body of each st.info, st.success, st.warning, st.error
    toasts: list[str] = field(default_factory=list)
    metrics: dict[str, str] = field(default_factory=dict)  # label -> the value shown
    charts: list[dict] = field(default_factory=list)  # each Vega-Lite chart's spec
    progress: list[str] = field(default_factory=list)  # the text of each st.progress bar
    captions: list[str] = field(default_factory=list)  # the body of each st.caption
    fragment_ids: tuple[str, ...] = ()  # the fragments this run ran (empty: a full run), from its new_session
    panels: dict[str, str] = field(default_factory=dict)  # expanders, popovers with a key: label -> widget id
    code: list[str] = field(default_factory=list)  # the text of each st.code block
    # each download button's label -> the path of the file it holds (/media/…; "" for a file made at the click)
    downloads: dict[str, str] = field(default_factory=dict)
    elements: int = 0
    blocks: int = 0  # layout blocks sent (columns, rows, containers, expanders): each a message, as an element is
    bytes: int = 0
    references: int = 0  # elements sent as a reference to one the browser's message cache holds

    @property
    def title(self) -> str:
        return self.headings[0] if self.headings else ""

    @property
    def text(self) -> str:
        """Every text the run drew, one a line: headings, markdown, captions, alerts, toasts, metrics."""
        metrics = [f"{label}: {value}" for label, value in self.metrics.items()]
        return "\n".join([*self.headings, *self.markdown, *self.captions, *self.alerts, *self.toasts, *metrics])


class MessageCache:
    """The browser's ForwardMsg cache (see the module's docstring): hash -> (message, fragment id, last run)."""

    def __init__(self) -> None:
        self.messages: dict[str, tuple[ForwardMsg, str, int]] = {}
        self.runs = 0
        self.max_age = 2  # Streamlit's default; each session's new_session message says the server's

    def take(self, msg: ForwardMsg) -> ForwardMsg:
        """The message a received one stands for: itself (kept when cacheable), or the one a reference names."""
        if msg.WhichOneof("type") == "ref_hash":
            held, fragment_id, _ = self.messages[msg.ref_hash]  # a miss is the server's bug, as in the browser
            self.messages[msg.ref_hash] = (held, fragment_id, self.runs)
            found = ForwardMsg()
            found.CopyFrom(held)
            found.metadata.CopyFrom(msg.metadata)
            return found
        if msg.metadata.cacheable and msg.hash:  # kept, or (held already) marked as used in this run
            held = self.messages.get(msg.hash)
            self.messages[msg.hash] = (held[0], held[1], self.runs) if held else (
                msg, msg.delta.fragment_id if msg.HasField("delta") else "", self.runs)
        return msg

    def run_finished(self, fragment_ids: tuple[str, ...]) -> None:
        """A run ended: messages unused for more than max_age runs go (after a fragment run, only its own)."""
        self.runs += 1
        for key, (_, fragment_id, used) in list(self.messages.items()):
            if fragment_ids and fragment_id not in fragment_ids:
                continue
            if self.runs - used > self.max_age:
                del self.messages[key]

    def hashes(self) -> list[str]:
        return list(self.messages)


# ---- the session ---------------------------------------------------------------------------------------


class Session:
    """One browser tab on one server. `await Session.open(url, "qkv", "seed=3")`, then `await s.rerun(...)`."""

    def __init__(self, base_url: str, page: str = "", query: str = "", timeout: float = 120):
        self.base_url = base_url.rstrip("/")
        self.page = page  # url path of the page ("" = the default page)
        self.query = query
        self.timeout = timeout
        self.page_script_hash = ""
        self.session_id = ""  # the server's id for this session (uploads are PUT under it)
        self.xsrf = ""  # the XSRF token (the cookie's value), sent as X-Xsrftoken on uploads
        self.pages: dict[str, str] = {}  # url path -> page script hash, from the navigation message
        self.widgets: dict[str, WidgetState] = {}  # values this user has set, by widget id
        self.moved: dict[str, tuple] = {}  # the same values as the slider shows them, by widget id
        self.title = ""  # the page's title, from the last full run (a fragment run leaves it on screen)
        self.sliders: dict[str, SliderInfo] = {}  # the sliders on the page now (a fragment run redraws its own)
        self.cookies: dict[str, str] = {}  # as a browser keeps them for the site (XSRF, a sticky cookie)
        self.auto_reruns: dict[str, float] = {}  # fragment id -> interval (s): the frontend's armed timers
        self.buttons: dict[str, ButtonInfo] = {}  # the buttons on the page now (a fragment run updates its own)
        self.fields: dict[str, Field] = {}  # the inputs on the page now, likewise
        self.held: dict[str, dict[str, WidgetState]] = {}  # form id -> values filled in, not sent until submitted
        self._ws = None
        self._reader: asyncio.Task | None = None
        self._current = Render()
        self._waiter: asyncio.Future | None = None
        self.closed_reason: str | None = None
        self.runs_finished = 0  # every run the server ended, asked for or not (a rerun on save is not)
        self.cache = MessageCache()

    @classmethod
    async def open(cls, base_url: str, page: str = "", query: str = "", timeout: float = 120,
                   cookies: dict[str, str] | None = None) -> tuple[Session, Render]:
        """Connect as a browser opening base_url/page?query (holding `cookies`, e.g. a load balancer's sticky
        cookie from an earlier visit), and wait for the first render."""
        session = cls(base_url, page, query, timeout)
        session.cookies.update(cookies or {})
        await session.connect()
        return session, await session.rerun()

    async def connect(self) -> None:
        xsrf = self.xsrf = await asyncio.to_thread(self._xsrf_cookie)
        host = urlsplit(self.base_url).netloc
        cookie = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        self._ws = await connect(
            f"ws://{host}/_stcore/stream", origin=self.base_url, subprotocols=["streamlit", xsrf],
            additional_headers={"Cookie": cookie}, max_size=None, compression=None,
            open_timeout=self.timeout, ping_interval=None)
        self.closed_reason = None
        self._reader = asyncio.create_task(self._read())

    def _xsrf_cookie(self) -> str:
        """GET /_stcore/health as the browser does, sending the cookies it holds and keeping the ones set:
        Streamlit's XSRF cookie, and a load balancer's sticky cookie (which names the server to go back to)."""
        request = urllib.request.Request(f"{self.base_url}/_stcore/health")
        if self.cookies:
            request.add_header("Cookie", "; ".join(f"{name}={value}" for name, value in self.cookies.items()))
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            cookies = SimpleCookie()
            for header in response.headers.get_all("Set-Cookie") or []:
                cookies.load(header)
        self.cookies.update({name: morsel.value for name, morsel in cookies.items()})
        if XSRF_COOKIE not in self.cookies:
            raise RuntimeError("the server set no XSRF cookie (is enableXsrfProtection off?)")
        return self.cookies[XSRF_COOKIE]

    async def reconnect(self, attempts: int = 40, pause: float = 0.5) -> Render:
        """What the frontend does when its websocket drops: ping health until something answers, open a new
        stream with the cookies it holds (a load balancer moves a browser whose server is gone to a live one,
        with a new sticky cookie), and run the page again from its link: the page and the query string as
        the address bar shows them now, no widget values (a new server knows none). Bounded: `attempts`
        tries `pause` seconds apart."""
        await self.close()
        self.widgets.clear()
        self.moved.clear()
        self.held.clear()
        self.auto_reruns.clear()
        last: Exception | None = None
        for _ in range(attempts):
            try:
                await self.connect()
                return await self.rerun()
            except Exception as err:  # refused, a 503 while the proxy notices, a handshake cut short
                last = err
                await self.close()
                await asyncio.sleep(pause)
        raise ConnectionError(f"no server took the session back after {attempts} attempts: {last!r}")

    async def close(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- messages from the server --

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                self._handle(raw)
        except Exception as err:  # the connection dropped: fail whoever waits
            self.closed_reason = repr(err)
        else:
            self.closed_reason = "closed by the server"
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(self.closed_reason))

    def _handle(self, raw: bytes) -> None:
        msg = ForwardMsg.FromString(raw)
        self._current.bytes += len(raw)
        if msg.WhichOneof("type") == "ref_hash":
            self._current.references += 1
        msg = self.cache.take(msg)
        kind = msg.WhichOneof("type")
        if kind == "new_session":  # a run starts (a full run, or the fragments in metadata.run.fragment_ids)
            # After a run that ended early for a rerun (st.rerun) the browser shows this run's page, not both:
            # keep only the counts of what was sent.
            sent = self._current
            self._current = Render(elements=sent.elements, blocks=sent.blocks, bytes=sent.bytes,
                                   references=sent.references)
            if msg.new_session.config.max_cached_message_age:
                self.cache.max_age = msg.new_session.config.max_cached_message_age
            self.page_script_hash = msg.new_session.page_script_hash or self.page_script_hash
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self._current.fragment_ids = tuple(msg.metadata.run.fragment_ids)
            if not self._current.fragment_ids:  # the frontend cancels every fragment timer on a full run
                self.auto_reruns.clear()
        elif kind == "auto_rerun":  # the frontend (re)arms a timer; the same id and interval keep the old one
            if msg.auto_rerun.fragment_id:
                if msg.auto_rerun.interval > 0:
                    self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
                else:  # the server never sends this (run_every=None sends nothing); treat it as a cancel
                    self.auto_reruns.pop(msg.auto_rerun.fragment_id, None)
        elif kind == "stop_auto_rerun":  # fragments the server evicted
            for fragment_id in msg.stop_auto_rerun.fragment_ids:
                self.auto_reruns.pop(fragment_id, None)
        elif kind == "page_info_changed":  # the frontend writes it into the address bar
            self.query = msg.page_info_changed.query_string
        elif kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
            self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "add_block":
            self._current.blocks += 1
            block = msg.delta.add_block
            if block.WhichOneof("type") == "expandable" and block.expandable.id:
                self._current.panels[block.expandable.label] = block.expandable.id
            elif block.WhichOneof("type") == "popover" and block.popover.id:
                self._current.panels[block.popover.label] = block.popover.id
        elif kind == "script_finished" and msg.script_finished != FINISHED.FINISHED_EARLY_FOR_RERUN:
            self.cache.run_finished(self._current.fragment_ids)
        if kind == "script_finished" and msg.script_finished in DONE:
            self.runs_finished += 1
            render, self._current = self._current, Render()
            render.status = FINISHED.Name(msg.script_finished)
            if render.fragment_ids:
                self.buttons.update(render.buttons)
                self.sliders.update(render.sliders)
                self.fields.update(render.fields)
            else:
                self.buttons, self.sliders, self.title = dict(render.buttons), dict(render.sliders), render.title
                self.fields = dict(render.fields)
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_result(render)

    def _element(self, el, fragment_id: str = "") -> None:
        self._current.elements += 1
        kind = el.WhichOneof("type")
        if kind == "slider":
            info = SliderInfo.from_proto(el.slider)
            info.fragment_id = fragment_id
            self._current.sliders[info.key] = info
        elif kind == "button":
            button = ButtonInfo.from_proto(el.button)
            button.fragment_id = fragment_id
            self._current.buttons[button.key or button.label] = button
        elif kind in INPUTS:
            info = INPUTS[kind](getattr(el, kind))
            info.fragment_id = fragment_id
            self._current.fields[info.key or info.label] = info
        elif kind == "markdown" and el.markdown.element_type != el.markdown.Type.CAPTION:
            self._current.markdown.append(el.markdown.body)
        elif kind == "alert":
            self._current.alerts.append(el.alert.body)
        elif kind == "toast":
            self._current.toasts.append(el.toast.body)
        elif kind == "metric":
            self._current.metrics[el.metric.label] = el.metric.body
        elif kind == "vega_lite_chart":
            self._current.charts.append(chart_spec(el.vega_lite_chart))
        elif kind == "progress":
            self._current.progress.append(el.progress.text)
        elif kind == "markdown" and el.markdown.element_type == el.markdown.Type.CAPTION:
            self._current.captions.append(el.markdown.body)
        elif kind == "code":
            self._current.code.append(el.code.code_text)
        elif kind == "download_button":
            self._current.downloads[el.download_button.label] = el.download_button.url
        elif kind == "heading":
            self._current.headings.append(el.heading.body)
        elif kind == "exception":
            self._current.exceptions.append(f"{el.exception.type}: {el.exception.message}")

    # -- messages to the server --

    async def rerun(self, page: str | None = None) -> Render:
        """Send rerun_script with the widget values set so far and wait until the script has finished."""
        if page is not None and page != self.page:  # a click on a page link: new page, its own widgets
            self.page = page
            self.page_script_hash = self.pages.get(page, "")
            self.widgets.clear()
            self.moved.clear()
            self.held.clear()
        return await self._send_rerun()

    async def _send_rerun(self, triggers: tuple[WidgetState, ...] = (), fragment_id: str = "",
                          is_auto_rerun: bool = False) -> Render:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_script_hash
        cs.page_name = self.page
        cs.widget_states.widgets.extend(self.widgets.values())
        cs.widget_states.widgets.extend(triggers)
        cs.fragment_id = fragment_id
        cs.is_auto_rerun = is_auto_rerun
        cs.cached_message_hashes.extend(self.cache.hashes())
        cs.context_info.timezone = "UTC"
        cs.context_info.locale = "en-US"
        cs.context_info.url = f"{self.base_url}/{self.page}" + (f"?{self.query}" if self.query else "")
        self._waiter = asyncio.get_running_loop().create_future()
        self._current = Render()
        if self._reader is None or self._reader.done():  # the reader fails a waiter only while it runs
            raise ConnectionError(self.closed_reason or "not connected")
        start = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        render = await asyncio.wait_for(self._waiter, self.timeout)
        render.latency_s = time.perf_counter() - start
        return render

    async def move(self, slider: SliderInfo, value) -> Render:
        """Drag `slider` to `value` and wait for the page to redraw."""
        self.widgets[slider.id] = slider.state(value)
        self.moved[slider.id] = (value,)
        if slider.bound:  # the frontend writes a bound widget's value into the address bar, dropping a default
            query = dict(parse_qsl(self.query, keep_blank_values=True))
            query[slider.key] = slider.url_text(value)
            if slider.default and query[slider.key] == slider.url_text(slider.default[0]):
                del query[slider.key]
            self.query = urlencode(query)
        if slider.fragment_id:
            return await self._send_rerun(fragment_id=slider.fragment_id)
        return await self.rerun()

    def slider_values(self) -> dict[str, tuple]:
        """What each slider on the page shows now, by key: the value the user moved it to, else the one the
        server drew it with (its default, or the link's value on a page's first run)."""
        return {key: self.moved.get(s.id, s.value) for key, s in sorted(self.sliders.items())}

    async def set_panel(self, render: Render, label: str, opened: bool) -> Render:
        """Open or close the expander or popover labelled `label` that `render` drew (one with a key, whose state the
        script reads) and wait for the page to redraw."""
        panel_id = render.panels[label]
        self.widgets[panel_id] = WidgetState(id=panel_id, bool_value=opened)
        return await self.rerun()

    async def press(self, button: ButtonInfo | str) -> Render:
        """Click `button` (a ButtonInfo, or the key or label of one on the page now) and wait for the page to
        redraw: one rerun_script with the widget values set so far plus the button's trigger. A form's submit
        button sends the form: the values filled into it go with the trigger, and stay set after it."""
        if isinstance(button, str):
            button = self.buttons[button]
        if button.form_id:
            self.widgets.update(self.held.pop(button.form_id, {}))
        return await self._send_rerun(triggers=(button.state(),), fragment_id=button.fragment_id)

    async def fill(self, info: Field | str, value) -> Render | None:
        """Type `value` into a text input, pick the option labelled `value` on a radio, or set a number input
        (a Field, or the key or label of one on the page now). Inside a form the value is held until the form
        is submitted (press its submit button), and nothing is sent: None. Outside, the page reruns (the input's
        fragment alone when it is in one) and its Render comes back. An input bound to the URL is written into the
        address bar, as the frontend writes it (a value equal to the default is written too, which the frontend
        would leave out)."""
        if isinstance(info, str):
            info = self.fields[info]
        state = info.state(value)
        if info.form_id:
            self.held.setdefault(info.form_id, {})[info.id] = state
            return None
        if info.bound:
            query = dict(parse_qsl(self.query, keep_blank_values=True))
            query[info.key] = str(value)
            self.query = urlencode(query)
        self.widgets[info.id] = state
        return await self._send_rerun(fragment_id=info.fragment_id)

    async def rerun_fragment(self, fragment_id: str | None = None, is_auto_rerun: bool = True) -> Render:
        """What a fragment's timer does in the browser: rerun_script with `fragment_id` (default: the one armed
        auto-rerun) and the widget values set so far; wait for that run's script_finished (normally
        FINISHED_FRAGMENT_RUN_SUCCESSFULLY; FINISHED_SUCCESSFULLY when the fragment asked for a full rerun).
        A fragment the server no longer has is skipped without any answer: this then times out."""
        if fragment_id is None:
            if len(self.auto_reruns) != 1:
                raise ValueError(f"no single armed fragment to rerun: {self.auto_reruns}")
            fragment_id = next(iter(self.auto_reruns))
        return await self._send_rerun(fragment_id=fragment_id, is_auto_rerun=is_auto_rerun)

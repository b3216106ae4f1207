"""What a hostile student or a hostile link can do on a shared server: one test per promise.

1. Nothing a user types, puts in a link or uploads is rendered as HTML or as Markdown (links, emphasis):
   every Markdown-rendered string on every page (text, captions, alerts, headings, labels, help) is
   checked after typing, linking and uploading payloads that would otherwise become a link, a tag or bold
   text; on the Class page, a class's title and the students' nicknames on the phone, the projector and the
   teacher's page; and every st.html / unsafe_allow_html call in the app (classroom/ included) is given a
   constant.
2. Nothing a user types is executed: no eval / exec / compile / pickle / subprocess in the app's code, and
   exercise answers are parsed as numbers (an expression that would take forever to evaluate is rejected
   at once).
3. Uploads are capped by server.maxUploadSize, kept in memory and never written to disk, under any name;
   the real server answers 413 above the cap.
4. XSRF protection stays on (config and the running server), CORS is not switched off, and a websocket
   from a foreign origin is refused.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from bench.streamlit_client import Server, Session
from lessons import COURSE
from tests.apptest_helpers import ROOT, for_lesson, panel_keys, run_app, type_everywhere
from ui.frame.exercises import parse_number

pytestmark = pytest.mark.timeout(300)

LESSONS = COURSE
APP_SOURCES = sorted([ROOT / "streamlit_app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "lessons").rglob("*.py"),
                      *(ROOT / "classroom").rglob("*.py")])
CLASS_PAGE = str(ROOT / "classroom" / "page.py")
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())

# Each payload carries a marker (zq1...) so the check can find where it landed.
PAYLOADS = {
    "link": "[zq1](javascript:alert(1))",
    "html": "<img src=x onerror=zq2>",
    "emphasis": "**zq3** _zq5_",
    "code span breakout": "``[zq4](https://evil.example)``",
}
MARKERS = ("zq1", "zq2", "zq3", "zq4", "zq5")
MARKDOWN_FIELDS = ("body", "label", "help", "captions")  # proto fields Streamlit renders as Markdown
PLAIN_ELEMENTS = {"text", "code", "exception", "json"}  # shown verbatim, never as Markdown


# ---- reading what a page shows -------------------------------------------------------------------------


def strip_code_spans(text: str) -> str:
    """CommonMark code spans removed: a run of n backticks opens one, the next run of exactly n closes it."""
    out, i = [], 0
    runs = list(re.finditer(r"(?<!\\)`+", text))
    k = 0
    while k < len(runs):
        opening = runs[k]
        closing = next((r for r in runs[k + 1:] if len(r.group()) == len(opening.group())), None)
        if closing is None:
            k += 1
            continue
        out.append(text[i:opening.start()])
        i = closing.end()
        k = runs.index(closing) + 1
    out.append(text[i:])
    return "".join(out)


def active_markup(body: str) -> list[str]:
    """The payload constructs that would still act in this Markdown (outside code spans, unescaped)."""
    text = strip_code_spans(body)
    found = []
    for m in MARKERS:
        if re.search(rf"(?<!\\)\[[^\]\n]*{m}[^\]\n]*(?<!\\)\]\(", text):
            found.append(f"a Markdown link around {m}")
        if re.search(rf"(?<!\\)<[A-Za-z/!][^>\n]*{m}", text):
            found.append(f"an HTML tag around {m}")
        if re.search(rf"(?<!\\)\*\*{m}(?<!\\)\*\*", text) or re.search(rf"(?<![\\\w])_{m}(?<!\\)_(?!\w)", text):
            found.append(f"emphasis around {m}")
    return found


def walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def markdown_strings(at: AppTest) -> list[tuple[str, str]]:
    """(element type, string) for every string on the page that Streamlit renders as Markdown."""
    found = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            proto = getattr(node, "proto", None)
            if proto is None or getattr(node, "type", "") in PLAIN_ELEMENTS:
                continue
            for field, value in proto.ListFields():
                if field.name in MARKDOWN_FIELDS:
                    for item in value if isinstance(value, (list, tuple)) or hasattr(value, "append") else [value]:
                        if isinstance(item, str):
                            found.append((getattr(node, "type", "?"), item))
    return found


def leaks(at: AppTest) -> list[str]:
    problems = [e.value for e in at.exception]
    for kind, body in markdown_strings(at):
        for construct in active_markup(body):
            problems.append(f"{kind}: {construct} in {body[:160]!r}")
    return problems


def open_page(lesson, query: dict | None = None) -> AppTest:
    """The lesson in the app, with every lazy panel open (share, export, code, exercises): what a panel draws
    only while open is checked too."""
    return run_app(lesson.path, query, timeout=120, opened=panel_keys(lesson.url_path))


_URL_KEYS: dict[str, list[str]] = {}


def url_keys(lesson) -> list[str]:
    if lesson.path not in _URL_KEYS:
        at = open_page(lesson)
        _URL_KEYS[lesson.path] = sorted(at.session_state["_view"]) if "_view" in at.session_state else []
    return _URL_KEYS[lesson.path]


def test_the_checker_sees_unescaped_markup_and_lets_escaped_markup_pass():
    from ui.text import code_span, escape_md

    assert active_markup("see [zq1](javascript:alert(1))")
    assert active_markup("<img src=x onerror=zq2>")
    assert active_markup("**zq3**") and active_markup("an _zq5_ word")
    assert active_markup("`` ``[zq4](https://evil.example)`` ``")  # the double-backtick fence, broken out of
    for payload in PAYLOADS.values():
        assert not active_markup(escape_md(payload)), escape_md(payload)
        assert not active_markup(code_span(payload)), code_span(payload)


# ---- 1. user text is never Markdown or HTML -----------------------------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.url_path for lesson in LESSONS])
@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_link_parameters_are_shown_escaped(lesson, payload):
    """The payload in every URL parameter the page reads (and in an unknown one)."""
    query = {key: payload for key in url_keys(lesson)} | {"zq_unknown": payload}
    at = open_page(lesson, query)
    assert not leaks(at), leaks(at)


@pytest.mark.parametrize("lesson", LESSONS, ids=[lesson.url_path for lesson in LESSONS])
@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_typed_text_is_shown_escaped(lesson, payload):
    """The payload typed into every text box (sidebar, page), then into every exercise answer with Check."""
    at = open_page(lesson)
    runs = 0
    for _ in type_everywhere(at, lambda box: payload):
        runs += 1
        assert not leaks(at), leaks(at)
    if for_lesson(lesson.url_path):  # the exercises' forms were there to type into (their panel is open)
        assert runs > 1, "no exercise form was found"


def test_the_shown_tokens_carry_the_typed_text():
    """The escaping checks above look at text that is really on the page (not at a page that hid it)."""
    qkv = COURSE.lesson("qkv")
    at = open_page(qkv, {"text": "alpha [zq1](javascript:alert(1)) omega"})
    shown = "\n".join(body for _, body in markdown_strings(at))
    assert "zq1" in shown and "javascript" in shown


def test_a_settings_file_cannot_inject_markdown():
    """A shared settings file is user content: its names are shown when they do not belong on the page."""
    qkv = COURSE.lesson("qkv")
    at = open_page(qkv)
    doc = {"page": "/qkv", "settings": {"seed": "7", **{payload: "1" for payload in PAYLOADS.values()}}}
    at.file_uploader(key="share_upload").upload("view.json", json.dumps(doc).encode(), "application/json")
    at.run()
    assert at.session_state["seed"] == 7  # the file was read
    assert not leaks(at), leaks(at)


def test_an_uploaded_file_name_cannot_inject_markdown():
    """The training page names an oversized upload in its error message."""
    training = COURSE.lesson("training")
    at = open_page(training, {"tr_data": "text"})
    name = "".join(PAYLOADS.values()).replace("/", "_") + ".txt"
    at.file_uploader(key="tr_upload").upload(name, b"hello world " * 30_000, "text/plain")  # over the 200 KB cap
    at.run()
    at.button(key="tr_train").click().run()
    assert at.error, "the oversized upload should have been refused with a message"
    assert not leaks(at), leaks(at)


# Nicknames are at most 24 characters: the same constructs, shorter
NICKNAMES = {"link": "[zq1](javascript:x)", "html": "<img src=x onerror=zq2>", "emphasis": "**zq3** _zq5_",
             "code span breakout": "``[zq4](https://e.x)``"}


def class_page(query: dict) -> AppTest:
    at = AppTest.from_file(CLASS_PAGE, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def raw_html(at: AppTest) -> list[str]:
    """Markdown sent with its HTML let through (unsafe_allow_html) that carries a payload's marker."""
    found = []
    for root in (at.main, at.sidebar):
        for node in walk(root):
            proto = getattr(node, "proto", None)
            if getattr(proto, "allow_html", False) and any(m in proto.body for m in MARKERS):
                found.append(f"{node.type}: raw HTML in {proto.body[:160]!r}")
    return found


@pytest.fixture
def class_db(tmp_path, monkeypatch):
    from classroom import connection
    from store import classes

    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    monkeypatch.setenv(connection.ENVIRONMENT, url)
    engine = classes.engine_for(url)
    classes.prepare(engine)
    yield engine
    engine.dispose()


@pytest.mark.parametrize("payload", list(PAYLOADS), ids=list(PAYLOADS))
def test_a_class_title_and_nicknames_are_shown_escaped(class_db, payload):
    """A teacher's title and the students' nicknames, each a payload, on every view of the class: the phone
    before joining and after, the projector before a question, while it is open and revealed, the teacher's
    page with who answered. The title and the nicknames are really there (the check reads a page that has them)."""
    from classroom import asked
    from classroom.questions import bank
    from store import classes

    title, nickname = PAYLOADS[payload], NICKNAMES[payload]
    code, key = classes.start_session(class_db, time.time(), title=title)
    q = next(q for q in bank() if q.kind == "choice")
    seen: dict[str, tuple[list[str], str]] = {}  # view -> (what acts as markup, the Markdown it sent)

    def look(view: str, at: AppTest) -> AppTest:
        seen[view] = ([*leaks(at), *raw_html(at)], "\n".join(body for _, body in markdown_strings(at)))
        return at

    look("projector, no question", class_page({"code": code, "view": "projector"}))
    phone = look("phone, not joined", class_page({"code": code}))
    qid = asked.put(class_db, code, key, q)
    for n in range(3):
        token = f"student-token-{n:04d}-abcdefghij"
        classes.join(class_db, code, token, nickname, time.time())
        classes.answer(class_db, code, token, qid, str(q.answer), time.time())
    phone.text_input[0].input(nickname)
    next(b for b in phone.button if b.label == "Join").click()
    look("phone, joined", phone.run())
    look("projector, open", class_page({"code": code, "view": "projector"}))
    look("teacher", class_page({"code": code, "key": key}))
    classes.set_state(class_db, code, key, qid, "revealed", time.time())
    look("projector, revealed", class_page({"code": code, "view": "projector"}))
    look("phone, revealed", phone.run())
    problems = [f"{view}: {p}" for view, (found, _) in seen.items() for p in found]
    assert not problems, problems
    marker = next(m for m in MARKERS if m in title)
    shows_title = [view for view, (_, shown) in seen.items() if marker in shown]
    assert {"projector, no question", "phone, not joined", "teacher"} <= set(shows_title), shows_title
    named = next(m for m in MARKERS if m in nickname)
    assert named in seen["teacher"][1].split("Answered:")[-1], "the teacher's page does not name who answered"


def html_calls(tree: ast.AST):
    """st.html(...), components.html(...) and any call with unsafe_allow_html=True."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        unsafe = any(k.arg == "unsafe_allow_html" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                     for k in node.keywords)
        if name == "html" or unsafe:
            yield node


def test_raw_html_is_only_ever_a_constant():
    """Every st.html / unsafe_allow_html in the app renders a string literal or a module-level constant."""
    seen = 0
    for path in APP_SOURCES:
        tree = ast.parse(path.read_text())
        constants = {t.id for node in tree.body if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                     for t in node.targets if isinstance(t, ast.Name)}
        for call in html_calls(tree):
            seen += 1
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("body", "html")),
                                                      None)
            static = (isinstance(arg, ast.Constant) and isinstance(arg.value, str)) or \
                (isinstance(arg, ast.Name) and arg.id in constants)
            assert static, f"{path.relative_to(ROOT)}:{call.lineno} renders HTML that is not a constant"
            runs_script = any(k.arg == "unsafe_allow_javascript" and not (isinstance(k.value, ast.Constant)
                                                                         and k.value.value is False)
                              for k in call.keywords)
            where = (path.relative_to(ROOT).as_posix(), arg.id if isinstance(arg, ast.Name) else None)
            assert not runs_script or where in SCRIPTS_ALLOWED, \
                f"{path.relative_to(ROOT)}:{call.lineno} runs a script that is not one of {SCRIPTS_ALLOWED}"
    assert seen <= 6, "more raw HTML than expected: check each new use is static"  # 5th: ui/state/phone.py


# The scripts the app runs, each a constant where it is: one marks scrolling chart frames focusable, one makes a
# browser's device number for the class mode (its cookie)
SCRIPTS_ALLOWED = (("ui/state/presenter.py", "FOCUSABLE_FRAMES"), ("classroom/device.py", "SCRIPT"))


# ---- 2. nothing typed is executed ---------------------------------------------------------------------------

FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "marshal", "shelve", "subprocess", "pty", "code", "codeop"}
FORBIDDEN_ATTRS = {("os", "system"), ("os", "popen"), ("os", "execv"), ("os", "execvp"), ("os", "spawnv"),
                   ("yaml", "load"), ("yaml", "unsafe_load")}


def test_no_code_execution_primitives_in_the_app():
    problems = []
    for path in APP_SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                problems.append(f"{rel}:{node.lineno} calls {node.func.id}()")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and (node.func.value.id, node.func.attr) in FORBIDDEN_ATTRS:
                problems.append(f"{rel}:{node.lineno} calls {node.func.value.id}.{node.func.attr}()")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                problems += [f"{rel}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in FORBIDDEN_MODULES]
            if isinstance(node, ast.keyword) and node.arg == "allow_pickle" and \
                    not (isinstance(node.value, ast.Constant) and node.value.value is False):
                problems.append(f"{rel}:{node.lineno} loads arrays with allow_pickle")
    assert not problems, problems


def dynamic_imports(tree: ast.AST):
    """Line numbers of every import by a computed name: importlib.import_module(x) or __import__(x)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")):
            yield node.lineno


def test_no_module_is_imported_by_a_computed_name():
    """A module name that arrives at run time could come from a user (a link, a settings file); the app
    imports only by name in its source (the code expander reads the function objects themselves)."""
    found = [f"{path.relative_to(ROOT)}:{line}" for path in APP_SOURCES
             for line in dynamic_imports(ast.parse(path.read_text()))]
    assert found == []


def test_the_check_for_computed_imports_finds_them():
    tree = ast.parse("import importlib\ndef f(name):\n    return importlib.import_module(name)\n__import__('os')\n")
    assert sorted(dynamic_imports(tree)) == [3, 4]


@pytest.mark.parametrize("typed", [
    "__import__('os').system('echo hacked')", "2**10", "1+1", "9**9**9**9", "exec('x=1')", "(lambda: 1)()",
    "0x10", "1e3e3", "1/0", "nan", "inf", "--1", "1_000", "{}", "[1]",
])
def test_answers_are_parsed_as_numbers_not_evaluated(typed):
    start = time.perf_counter()
    with pytest.raises(ValueError):
        value = parse_number(typed)
        if value != value or value in (float("inf"), float("-inf")):  # nan / inf are not answers either
            raise ValueError(typed)
    assert time.perf_counter() - start < 0.1


def test_a_typed_expression_in_an_exercise_is_refused_at_once():
    qkv = COURSE.lesson("qkv")
    at = open_page(qkv)
    answers = [box for box in at.text_input if str(box.key).startswith("ex_")]
    assert answers, "the QKV page should have a number exercise"
    form = answers[0].key.removesuffix("_answer") + "_form"
    start = time.perf_counter()
    answers[0].set_value("9**9**9**9")
    next(b for b in at.button if b.proto.is_form_submitter and form in str(b.key)).click()
    at.run()  # a form sends its values with the Check press, as in the browser
    assert time.perf_counter() - start < 20
    assert not at.exception
    assert any("not a number" in e.value for e in at.error), [e.value for e in at.error]


# ---- 3. uploads: capped, in memory, never written -----------------------------------------------------------

WRITE_MODES = re.compile(r"[wax+]")
WRITING_CALLS = {"write_text", "write_bytes", "save", "savez", "savez_compressed", "savetxt", "to_csv", "to_parquet",
                 "to_pickle", "mkdir", "makedirs", "rename", "replace", "remove", "unlink", "rmtree", "copy",
                 "copyfile", "move", "mkstemp", "NamedTemporaryFile", "TemporaryDirectory", "touch", "chmod"}


def test_upload_size_is_capped_in_the_config():
    cap_mb = CONFIG["server"]["maxUploadSize"]
    assert isinstance(cap_mb, int) and 1 <= cap_mb <= 10, cap_mb


# The writes the app makes on purpose, each where it is: the app's database (a SQLite file, by default in the
# user's state folder: the folder and the file made private, 0700 / 0600, before SQLite opens them), and a
# trained run's arrays packed in memory for that database.
WRITES_ALLOWED = {("store/engine.py", "mkdir"), ("store/engine.py", "touch"), ("store/engine.py", "chmod"),
                  ("ui/compute/model_store.py", "savez_compressed"),
                  ("classroom/links.py", "save")}  # the join link's QR code, drawn into a BytesIO


def test_the_app_never_writes_files():
    """No open(..., 'w'), no write_bytes / np.save / to_csv(path) ... anywhere in the app's code, but the database's
    own (WRITES_ALLOWED)."""
    problems = []
    for path in APP_SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "open":
                mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                    None)
                if mode is not None and not (isinstance(mode, ast.Constant) and not WRITE_MODES.search(mode.value)):
                    problems.append(f"{rel}:{node.lineno} opens a file for writing")
            elif name in WRITING_CALLS:
                # DataFrame.to_csv() with no path returns a string (the export panel): that is not a write
                if name == "to_csv" and not node.args and not any(k.arg == "path_or_buf" for k in node.keywords):
                    continue
                if name in ("replace", "copy") and not (isinstance(node.func, ast.Attribute) and
                                                         getattr(node.func.value, "id", "") in ("os", "shutil")):
                    continue  # str.replace, DataFrame.replace, dict.copy ...
                if (rel, name) not in WRITES_ALLOWED:
                    problems.append(f"{rel}:{node.lineno} calls {name}()")
    assert not problems, problems


def test_uploads_under_a_hostile_name_leave_no_file_behind():
    marker = f"attention-lab-upload-{uuid.uuid4().hex[:8]}"
    names = [f"../../../../tmp/{marker}.txt", f"/tmp/{marker}-abs.txt", f"..\\..\\{marker}-win.txt"]
    training = COURSE.lesson("training")
    qkv = COURSE.lesson("qkv")
    before = set(ROOT.rglob(f"*{marker}*")) | set((ROOT.parent).glob(f"*{marker}*"))
    for name in names:
        at = open_page(qkv)
        at.file_uploader(key="share_upload").upload(name.replace(".txt", ".json"), b'{"settings": {"seed": "3"}}',
                                                     "application/json")
        at.run()
        assert not at.exception
        if training is not None:
            at = open_page(training, {"tr_data": "text"})
            at.file_uploader(key="tr_upload").upload(name, b"the cat sat on the mat. " * 200, "text/plain")
            at.run()
            at.button(key="tr_train").click().run()
            assert not at.exception
    after = set(ROOT.rglob(f"*{marker}*")) | set((ROOT.parent).glob(f"*{marker}*"))
    written = sorted(after - before) + sorted(Path(tempfile.gettempdir()).glob(f"*{marker}*"))
    assert not written, written


# ---- 3 and 4 on the real server -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    srv = Server.start()
    try:
        yield srv
    finally:
        srv.stop()


def test_xsrf_protection_is_on_and_cors_is_not_off():
    assert CONFIG["server"]["enableXsrfProtection"] is True
    assert CONFIG["server"].get("enableCORS", True) is not False


def put_upload(server: Server, session: Session, size: int, token: str | None) -> int:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode() + b"a" * size + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Cookie": f"_streamlit_xsrf={session.xsrf}"}
    if token:
        headers["X-Xsrftoken"] = token
    url = f"{server.url}/_stcore/upload_file/{session.session_id}/{uuid.uuid4().hex}"
    request = urllib.request.Request(url, data=body, headers=headers, method="PUT")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
    except urllib.error.URLError as err:
        # The server may answer 413 and close the socket while a body past the cap is still being sent: the
        # client then sees a broken pipe or a reset instead of the answer (1 run in ~10 on a loaded machine).
        if isinstance(err.reason, (BrokenPipeError, ConnectionResetError)):
            return REFUSED_MID_BODY
        raise


REFUSED_MID_BODY = -1  # the connection was closed on us before the whole body was sent


def test_the_server_enforces_xsrf_and_the_upload_cap(server):
    async def check():
        session, render = await Session.open(server.url, "qkv")
        try:
            assert session.session_id and not render.exceptions
            cap = CONFIG["server"]["maxUploadSize"] * 1024 * 1024
            return (put_upload(server, session, 1000, token=None),
                    put_upload(server, session, 1000, token=session.xsrf),
                    put_upload(server, session, cap + 100_000, token=session.xsrf))
        finally:
            await session.close()

    no_token, small, too_big = asyncio.run(check())
    assert no_token == 403
    assert small == 204
    assert too_big in (413, REFUSED_MID_BODY)
    assert server.health() == "ok"  # refused, not fallen over


def test_a_websocket_from_another_site_is_refused(server):
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    async def attempt():
        host = server.url.removeprefix("http://")
        async with connect(f"ws://{host}/_stcore/stream", origin="https://evil.example",
                           subprotocols=["streamlit"], open_timeout=20) as ws:
            await ws.recv()

    with pytest.raises((InvalidStatus, ConnectionError, OSError)) as err:
        asyncio.run(attempt())
    assert "403" in str(err.value) or "1008" in str(err.value) or isinstance(err.value, InvalidStatus)


def test_a_visitor_is_never_shown_an_errors_details():
    """A fault the pages did not catch shows a plain notice, not a traceback with the server's paths (the full
    error goes to the server's log)."""
    assert CONFIG["client"]["showErrorDetails"] == "none"

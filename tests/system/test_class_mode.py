"""A class on the real servers: two Streamlit processes behind HAProxy share one database, and every answer a
phone sends from one process is counted on the projector that the other process draws.

The set-up is the README's `python deploy/serve.py 2`, with ATTENTION_LAB_DATABASE_URL naming one SQLite file
in the test's folder, or (the same test) a fresh schema on the PostgreSQL server ATTENTION_LAB_TEST_POSTGRES_URL
names. Every person is a browser tab speaking Streamlit's protocol (bench/streamlit_client.py), placed on a
process by the sticky cookie it holds:

- the teacher (process B) starts a class on /class and puts a lesson's multiple-choice question to the room;
- STUDENTS phones (process A) open the join link, join (a nickname, or none), and each does what its page's
  timer does (the question part reruns every 2 s) until the question appears; then each picks an option in the
  form and presses Send;
- the projector (process B) reruns its live part every 0.8 s, as its timer does.

Asserted: every phone's answer is acknowledged; the projector's count reaches STUDENTS and never goes down or
past it; after Reveal the projector draws the room's answers, option by option, as they were sent, and each phone
says whether its own was right; the store, read directly, counts what was sent. Every wait is bounded; the
set-up is stopped with SIGTERM, as Ctrl-C would. Without haproxy the module is skipped (REQUIRE_PROXY=1: a
failure); without ATTENTION_LAB_TEST_POSTGRES_URL the PostgreSQL case is skipped (REQUIRE_POSTGRES=1: a failure).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from bench.load_test import serve
from bench.postgres import own_schema
from bench.streamlit_client import RadioInfo, Render, Session
from classroom import connection, device
from classroom.questions import bank
from deploy.serve import find_haproxy
from store import classes, codes

if find_haproxy() is None:
    if os.environ.get("REQUIRE_PROXY") == "1":
        pytest.fail("REQUIRE_PROXY=1 but haproxy is not installed (apt-get install haproxy)", pytrace=False)
    pytest.skip("the class mode's system test needs haproxy (apt-get install haproxy)", allow_module_level=True)

pytestmark = pytest.mark.timeout(420)

COOKIE = "attention-lab-server"  # deploy/haproxy/haproxy.cfg.template: s1 is process A, s2 process B
POSTGRES_URL = "ATTENTION_LAB_TEST_POSTGRES_URL"
STUDENTS = 12
PICKS = (0, 1, 1, 2, 1, 0, 1, 2, 1, 1, 0, 1)  # student i picks option PICKS[i % len(PICKS)]: A 3, B 7, C 2
SCENARIO_S = 240  # the whole class, from the teacher's first view to the last check
SHOWS_S = 45  # a question, a count or a reveal reaches a page within this (two shared, busy cores)


# ---- the database and the servers --------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request, tmp_path):
    """The URL both processes are given: one SQLite file, or a schema of this test's own on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'class.sqlite3'}"
        return
    server = os.environ.get(POSTGRES_URL)
    if not server:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"REQUIRE_POSTGRES=1 but {POSTGRES_URL} is not set", pytrace=False)
        pytest.skip(f"set {POSTGRES_URL} to run the class on PostgreSQL")
    with own_schema(server, "t") as url:
        yield url


@pytest.fixture
def served(database, monkeypatch):
    """`deploy/serve.py 2` on loopback ports, both processes on `database` (they inherit the environment); no
    lesson warm-up (the class page needs none, and the test needs the cores)."""
    monkeypatch.setenv(connection.ENVIRONMENT, database)
    monkeypatch.setenv("ATTENTION_LAB_WARM_UP", "0")
    with serve(2, post_script_gc=False, server_args=()) as (state, proc):
        yield state["url"]
        assert proc.poll() is None, "deploy/serve.py stopped during the class"


@pytest.fixture
def engine(database):
    made = classes.engine_for(database)
    yield made
    made.dispose()


# ---- people -------------------------------------------------------------------------------------------


def ok(render: Render) -> Render:
    assert not render.exceptions, render.exceptions
    return render


async def open_tab(url: str, query: str, process: str, browser: str | None = None) -> tuple[Session, Render]:
    """A tab on `process`; `browser`: the device number the browser's cookie holds (classroom.device)."""
    held = {COOKIE: process} | ({device.DEVICE: browser} if browser else {})
    session, render = await Session.open(url, "class", query, timeout=60, cookies=held)
    assert session.cookies[COOKIE] == process, "HAProxy should keep a tab on the process its cookie names"
    return session, ok(render)


async def poll(session: Session, done, what: str, timeout: float = SHOWS_S) -> Render:
    """What the page's timer does until `done(render)` holds: rerun its live part every interval the server asked
    for (the browser's setInterval: the next tick is due an interval after the last was due)."""
    (interval,) = session.auto_reruns.values()
    deadline = time.monotonic() + timeout
    due = time.monotonic()
    while True:
        render = ok(await session.rerun_fragment())
        if done(render):
            return render
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not shown within {timeout:.0f} s; the page shows:\n{render.text}")
        due += interval
        await asyncio.sleep(max(0.0, due - time.monotonic()))


def room_chart(render: Render) -> dict[str, float] | None:
    """The projector's chart of the room's answers after the reveal: option label -> students."""
    for spec in render.charts:
        if str(spec.get("title", {}).get("text", "")).startswith("The room:"):
            datum = find_datum(spec)
            return dict(zip(datum["label"], datum["value"]))
    return None


def find_datum(spec) -> dict:
    """The one datum a chart carries its table in (ui.drawing.chart_data), wherever in the spec it is."""
    if isinstance(spec, dict):
        if "values" in spec and spec["values"] and "label" in spec["values"][0]:
            return spec["values"][0]
        spec = list(spec.values())
    for part in spec if isinstance(spec, list) else []:
        if isinstance(part, dict | list) and (found := find_datum(part)):
            return found
    return {}


@dataclass
class Phone:
    i: int
    session: Session
    sent_at: float = 0.0
    picked: str = ""
    acknowledged: Render | None = None
    seen: list[str] = field(default_factory=list)


async def join(url: str, code: str, i: int) -> Phone:
    browser = codes.new_token()  # the shape of the number a browser makes for its cookie
    session, page = await open_tab(url, f"code={code}", "s1", browser)
    assert "Join the class" in page.text, page.text
    await session.fill("Nickname (optional)", f"student {i}" if i % 3 else "")  # every third one anonymous
    joined = ok(await session.press("Join"))
    assert session.query == f"code={code}" and "Joined." in joined.text, joined.text
    if i == 0:  # a second tab of this phone, on the other process: the same student, not a new one
        again, shown = await open_tab(url, f"code={code}", "s2", browser)
        assert "Joined." in shown.text and "Join the class" not in shown.text, shown.text
        await again.close()
    return Phone(i, session)


async def answer(phone: Phone) -> None:
    """Wait for the question as the phone's timer does, pick this student's option, send it."""
    asked = await poll(phone.session, lambda r: any(k.startswith("class_pick_") for k in r.fields), "the question")
    radio = next(f for k, f in asked.fields.items() if k.startswith("class_pick_"))
    assert isinstance(radio, RadioInfo) and "Question 1" in asked.text
    phone.picked = radio.options[PICKS[phone.i % len(PICKS)]]
    await phone.session.fill(radio, phone.picked)
    phone.sent_at = time.monotonic()
    phone.acknowledged = ok(await phone.session.press("Send"))


# ---- the class ----------------------------------------------------------------------------------------


def first_choice_question():
    """The teacher's choice: the first multiple-choice question of the lesson the "Ask the room" panel opens on."""
    questions = bank()
    lesson = questions[0].source.split("/")[0]
    mine = [q for q in questions if q.source.split("/")[0] == lesson]
    return next(i for i, q in enumerate(mine) if q.kind == "choice"), next(q for q in mine if q.kind == "choice")


async def a_class(url: str) -> dict:
    laptop = codes.new_token()  # the teacher's browser
    teacher, _ = await open_tab(url, "", "s2", laptop)
    await teacher.fill("Title (optional)", "System test")
    started = ok(await teacher.press("Start a class"))
    assert "Teacher's page" in started.text, started.text
    code = dict(part.split("=", 1) for part in teacher.query.split("&"))["code"]
    assert "key" not in teacher.query
    # a reload, landing on the other process: the teacher's browser is still the teacher, with no key in a link
    reloaded, shown = await open_tab(url, teacher.query, "s1", laptop)
    assert "Teacher's page" in shown.text and "ask_put" in shown.buttons, shown.text
    await reloaded.close()

    phones = await asyncio.gather(*(join(url, code, i) for i in range(STUDENTS)))
    projector, shown = await open_tab(url, f"code={code}&view=projector", "s2")
    assert f"{STUDENTS} students joined so far" in shown.text, shown.text  # joined through A, read through B

    index, question = first_choice_question()
    box = teacher.fields["ask_question"]
    ok(await teacher.fill(box, box.options[index]))
    ok(await teacher.press("ask_put"))

    counts: list[int] = []

    def counted(render: Render) -> bool:
        said = render.metrics.get("Answers so far", "")
        if said:
            counts.append(int(said.split(" of ")[0]))
            assert said.endswith(f" of {STUDENTS}"), said
        return bool(counts) and counts[-1] >= STUDENTS

    projecting = asyncio.create_task(poll(projector, counted, f"{STUDENTS} answers on the projector", 2 * SHOWS_S))
    await asyncio.gather(*(answer(phone) for phone in phones))
    await projecting
    all_counted_at = time.monotonic()

    ok(await teacher.press("class_revealed"))
    revealed = await poll(projector, lambda r: room_chart(r) is not None, "the room's answers")
    after = await asyncio.gather(*(poll(p.session, lambda r: "Right!" in r.text or "Not this time." in r.text,
                                        f"student {p.i}'s result") for p in phones))
    for session in (teacher, projector, *(p.session for p in phones)):
        await session.close()
    return {"code": code, "question": question, "phones": phones, "counts": counts, "revealed": revealed,
            "after": after, "all_counted_at": all_counted_at}


def test_every_answer_sent_through_one_process_is_counted_on_the_projector_of_the_other(served, engine):
    started = time.monotonic()
    out = asyncio.run(asyncio.wait_for(a_class(served), SCENARIO_S))
    last_sent = max(p.sent_at for p in out["phones"])
    print(f"\nclass on {engine.dialect.name}: {STUDENTS} answers on the projector "
          f"{out['all_counted_at'] - last_sent:.2f} s after the last was sent; the class took "
          f"{time.monotonic() - started:.1f} s; load {os.getloadavg()[0]:.2f}")
    q, phones = out["question"], out["phones"]

    for phone in phones:  # each phone was told its answer is in, and shows it
        assert phone.session.cookies[COOKIE] == "s1"
        assert "Answer sent." in phone.acknowledged.toasts, phone.acknowledged.text
        assert f"Your answer: {phone.picked}" in phone.acknowledged.text, phone.acknowledged.text
    counts = out["counts"]
    assert counts == sorted(counts) and counts[-1] == STUDENTS, counts  # only rising, to the whole room

    sent = Counter(PICKS[p.i % len(PICKS)] for p in phones)
    labels = list(room_chart(out["revealed"]))
    assert room_chart(out["revealed"]) == {label: sent[j] for j, label in enumerate(labels)}
    right = sent[q.answer]
    assert f"The room: {STUDENTS} answers, {right} right" in str(out["revealed"].charts)
    for phone, render in zip(phones, out["after"]):
        is_right = PICKS[phone.i % len(PICKS)] == q.answer
        assert f"Your answer: {phone.picked}. " + ("Right!" if is_right else "Not this time.") in render.text

    asked = classes.current_question(engine, out["code"])
    assert asked.state == "revealed"
    assert classes.counts(engine, asked.id) == classes.Tally({str(j): n for j, n in sent.items()}, STUDENTS)
    assert classes.joined(engine, out["code"]) == STUDENTS

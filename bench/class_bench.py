"""A class votes on the real server: how soon each answer shows on the projector, and whether any is lost.

Run from the repository root:
    python bench/class_bench.py                          # 60 phones on one process, then 120 on deploy/serve.py 2
    python bench/class_bench.py --one 0 --two 0 --kill   # 120 on two processes, one of them killed mid-vote
    python bench/class_bench.py --postgres postgresql://user:pw@host/db   # the same on PostgreSQL
    python bench/class_bench.py --check                  # exit 1 past the aim (below)

Every person is a browser tab speaking Streamlit's protocol (bench/streamlit_client.py). A class starts in the
store (the database the servers are given: a new SQLite file, or with --postgres a new schema on that server),
then:

- each phone opens the join link at a random moment of the first --arrive seconds (a page load), types a
  nickname and presses Join, then does what its page's timer does: rerun the question part every 2 s;
- once every phone has joined, the teacher puts a multiple-choice question (as the teacher page's "Put to the
  room" does); each phone picks an option at a random moment of the next --vote seconds, not before its page
  shows the question, and presses Send; its page's timer goes on meanwhile;
- the projector (one tab, on the second process when there are two) reruns its live part every 0.8 s, as its
  timer does, and its count is read from every run.

Reported per run: how long the phones took to load and join (p95); the answers sent, acknowledged ("Answer
sent."), and lost (acknowledged but not in the store, read directly); from each answer's Send to the first
projector run whose count includes it (the store's answered_at orders the answers: the k-th written is in every
count of k or more), p50 / p95 / max, and answers the projector never counted; a phone's wait for its Send
(p95) and for a timer's rerun (p95); the servers' CPU seconds per answer over the vote (from the question to
the end: every phone's timer, every Send and the projector), the same per request, and per phone arriving.

With two processes (deploy/serve.py 2, HAProxy with a sticky cookie; both on one database) the phones are
placed on each by the cookie they hold, half and half. --kill kills the first process (SIGKILL) halfway into the
vote: its phones' connections drop, and each reconnects as the browser does (HAProxy sends it to the live
process; its page reruns, and its device cookie keeps the same student). A phone whose answer the killed
process had acknowledged sends nothing more; one whose Send was cut off sees its stored answer, or sends again.
The run then also reports how many answers the killed process had written and how many of them are counted.

The aim (the class mode's issue): every answer on the projector within 2 s of its Send, none lost. The figures
are printed as measured, with no verdict; --check exits 1 when an acknowledged answer is lost or not counted,
or an answer took more than --within seconds to reach the projector. The servers run without the lessons'
warm-up (ATTENTION_LAB_WARM_UP=0): the class page is what is measured, and its first view on each process is
paid before the class arrives. Every figure moves with the machine's other work: see the last line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.load_test import SERVE_COOKIE, percentile, serve  # noqa: E402
from bench.machine import Watch  # noqa: E402
from bench.postgres import own_schema  # noqa: E402
from bench.streamlit_client import RadioInfo, Render, Server, Session, cpu_seconds  # noqa: E402
from classroom import asked, connection, device  # noqa: E402
from classroom.questions import bank  # noqa: E402
from store import classes, codes  # noqa: E402

SENT = "Answer sent."  # the toast of an answer the store accepted (classroom/student.py)
PICKED = "class_pick_"  # the key of the question's radio
RECONNECT_ATTEMPTS = 60  # 0.5 s apart


@dataclass
class Phone:
    i: int
    home: str  # the sticky cookie it arrives with ("" on one process)
    pick: int  # the option it will choose
    plan_s: float  # when it means to answer, after the question is put
    session: Session | None = None
    join_s: float = math.nan
    radio: RadioInfo | None = None
    sent_at: float = math.nan  # wall time of its last Send
    ack_s: float = math.nan  # Send -> "Answer sent."
    acked_at: float = math.nan
    acked_by: str = ""  # the process that acknowledged it (its cookie), or "stored" (seen after a reconnect)
    polls: list[tuple[float, float]] = field(default_factory=list)  # the timer's reruns: (wall time, seconds)
    reconnected: bool = False
    back_s: float = math.nan  # from the kill to its page drawn again by the live process
    failures: list[str] = field(default_factory=list)
    browser: str = field(default_factory=codes.new_token)  # its device cookie (classroom.device): who it is


    @property
    def nickname(self) -> str:
        return f"phone {self.i}"


@dataclass
class Vote:
    """What the teacher and the projector share with the phones."""

    question_at: float = math.inf  # wall time the question was put
    killed_at: float = math.inf
    counts: list[tuple[float, int]] = field(default_factory=list)  # projector: (wall time drawn, count)
    ticks: list[tuple[float, float]] = field(default_factory=list)  # projector runs: (wall time, seconds)
    stop: asyncio.Event = field(default_factory=asyncio.Event)


async def open_tab(url: str, query: str, home: str, browser: str = "") -> tuple[Session, Render]:
    """A tab; `home` the sticky cookie it holds, `browser` its device cookie (what the class knows a phone by)."""
    cookies = ({SERVE_COOKIE: home} if home else {}) | ({device.DEVICE: browser} if browser else {})
    return await Session.open(url, "class", query, timeout=60, cookies=cookies or None)


async def sleep_until(t: float) -> None:
    await asyncio.sleep(max(0.0, t - time.monotonic()))


def look(phone: Phone, render: Render) -> None:
    """What the phone's page shows: the question's radio (once it appears), its stored answer after a reconnect."""
    radio = next((f for key, f in render.fields.items() if key.startswith(PICKED)), None)
    if isinstance(radio, RadioInfo):
        phone.radio = radio
    if phone.reconnected and not phone.acked_by and not math.isnan(phone.sent_at) and "Your answer:" in render.text:
        phone.acked_at, phone.acked_by = time.time(), "stored"  # the Send cut off by the kill had been written


async def send(phone: Phone) -> None:
    session = phone.session
    await session.fill(phone.radio, phone.radio.options[phone.pick])
    phone.sent_at = time.time()
    render = await session.press("Send")
    if SENT in render.toasts:
        phone.acked_at, phone.ack_s = time.time(), render.latency_s
        phone.acked_by = session.cookies.get(SERVE_COOKIE, "one")
    else:
        phone.failures.append(f"not acknowledged: {render.text[-200:]}")


async def phone_in_class(phone: Phone, url: str, code: str, arrive_at: float, vote: Vote) -> None:
    await sleep_until(arrive_at)
    started = time.monotonic()
    phone.session, _ = await open_tab(url, f"code={code}", phone.home, phone.browser)
    session = phone.session
    await session.fill("Nickname (optional)", phone.nickname)
    look(phone, await session.press("Join"))
    phone.join_s = time.monotonic() - started
    (interval,) = session.auto_reruns.values()
    due = time.monotonic() + interval
    while not vote.stop.is_set():
        try:
            answer_at = vote.question_at + phone.plan_s
            if phone.radio is not None and not phone.acked_by and not phone.failures and time.time() >= answer_at:
                await send(phone)
                continue
            wait = due - time.monotonic()
            if phone.radio is not None and not phone.acked_by:
                wait = min(wait, answer_at - time.time())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(vote.stop.wait(), max(0.0, wait))
            if vote.stop.is_set() or time.monotonic() < due:
                continue
            render = await session.rerun_fragment()
            phone.polls.append((time.time(), render.latency_s))
            due = max(due + interval, time.monotonic())  # a late tick is not caught up twice
            look(phone, render)
        except ConnectionError:  # its process died: reconnect as the browser does, to the live one
            phone.reconnected = True
            phone.radio = None
            look(phone, await session.reconnect(attempts=RECONNECT_ATTEMPTS))
            phone.back_s = time.time() - vote.killed_at
            due = time.monotonic() + interval


async def projector(url: str, code: str, home: str, vote: Vote) -> Session:
    session, _ = await open_tab(url, f"code={code}&view=projector", home)
    (interval,) = session.auto_reruns.values()
    due = time.monotonic()
    while not vote.stop.is_set():
        await sleep_until(due)
        render = await session.rerun_fragment()
        vote.ticks.append((time.time(), render.latency_s))
        shown = render.metrics.get("Answers so far")
        if shown:
            vote.counts.append((time.time(), int(shown.split(" of ")[0])))
        due = max(due + interval, time.monotonic())
    return session


def choice_question():
    return next(q for q in bank() if q.kind == "choice")


async def a_class(url: str, engine, n: int, homes: list[str], arrive_s: float, vote_s: float, rng: random.Random,
                  pids: dict[str, int], kill: str = "") -> dict:
    code, key = classes.start_session(engine, time.time(), title="bench", seats=classes.SEATS_MAX)
    for home in homes:  # each process's first view of the class page (imports, caches) before the class
        session, _ = await open_tab(url, f"code={code}&view=projector", home)
        await session.close()
    question = choice_question()
    phones = [Phone(i, homes[i % len(homes)], rng.randrange(len(question.options)), rng.uniform(0, vote_s))
              for i in range(n)]
    vote = Vote()
    cpu = {"start": cpu_of(pids)}
    start = time.monotonic()
    tasks = [asyncio.create_task(phone_in_class(p, url, code, start + rng.uniform(0, arrive_s), vote))
             for p in phones]
    watching = asyncio.create_task(projector(url, code, homes[-1], vote))
    deadline = start + arrive_s + 60
    while not all(not math.isnan(p.join_s) or task.done() for p, task in zip(phones, tasks)) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    cpu["question"] = cpu_of(pids)
    vote.question_at = time.time()
    question_id = asked.put(engine, code, key, question)
    if kill:
        await asyncio.sleep(vote_s / 2)
        cpu["killed"] = cpu_of({kill: pids[kill]})  # its last reading
        os.killpg(pids[kill], signal.SIGKILL)
        vote.killed_at = time.time()
    end = time.monotonic() + vote_s + 30
    while time.monotonic() < end:  # until every phone's answer is in and counted, or the bound
        acked = sum(bool(p.acked_by) for p in phones)
        if all(p.acked_by or p.failures for p in phones) and vote.counts and vote.counts[-1][1] >= acked:
            break
        await asyncio.sleep(0.2)
    vote.stop.set()
    alive = {home: pid for home, pid in pids.items() if home != kill} if kill else pids
    cpu["end"] = {**cpu.get("killed", {}), **cpu_of(alive)}
    outcomes = await asyncio.gather(*tasks, watching, return_exceptions=True)
    for phone, outcome in zip(phones, outcomes):
        if isinstance(outcome, BaseException):
            phone.failures.append(repr(outcome))
        if phone.session is not None:
            await phone.session.close()
    if isinstance(outcomes[-1], Session):
        await outcomes[-1].close()
    stored = {a.nickname: a for a in classes.answers_of(engine, code, key, question_id)}
    return {"phones": phones, "vote": vote, "cpu": cpu, "stored": stored,
            "counted": classes.counts(engine, question_id).total, "errors": [repr(o) for o in outcomes
                                                                          if isinstance(o, BaseException)]}


def cpu_of(pids: dict[str, int]) -> dict[str, float]:
    """Each server process's CPU seconds so far, by its cookie."""
    return {home: cpu_seconds(pid) for home, pid in pids.items()}


def cpu_between(cpu: dict, start: str, end: str) -> float:
    return sum(cpu[end][home] - cpu[start][home] for home in cpu[start])


# ---- figures -----------------------------------------------------------------------------------------


def on_projector(phones: list[Phone], stored: dict, counts: list[tuple[float, int]]) -> tuple[list[float], int]:
    """Each acknowledged answer's time from its Send to the first projector run that counts it, and how many no
    run counted. The k-th answer written (store's answered_at) is in every count of k or more."""
    order = {name: k for k, name in enumerate(sorted(stored, key=lambda name: stored[name].answered_at), 1)}
    delays, never = [], 0
    for phone in phones:
        rank = order.get(phone.nickname)
        if not phone.acked_by or rank is None:
            continue
        seen = next((t for t, count in counts if count >= rank and t >= phone.sent_at), None)
        if seen is None:
            never += 1
        else:
            delays.append(seen - phone.sent_at)
    return delays, never


def figures(out: dict, n: int, killed: str) -> dict:
    phones, vote, cpu, stored = out["phones"], out["vote"], out["cpu"], out["stored"]
    acked = [p for p in phones if p.acked_by]
    lost = [p for p in acked if p.nickname not in stored or stored[p.nickname].value != str(p.pick)]
    delays, never = on_projector(phones, stored, vote.counts)
    in_vote = [s for p in phones for t, s in p.polls if t >= vote.question_at]
    ticks = [s for t, s in vote.ticks if t >= vote.question_at]
    answers = len(stored)
    vote_cpu = cpu_between(cpu, "question", "end")
    joined = [p.join_s for p in phones if not math.isnan(p.join_s)]
    row = {"phones": n, "joined": len(joined), "join_p95": percentile(joined, 95),
           "sent": sum(not math.isnan(p.sent_at) for p in phones), "acked": len(acked), "stored": answers,
           "counted": out["counted"], "lost": len(lost),
           "proj_p50": percentile(delays, 50), "proj_p95": percentile(delays, 95),
           "proj_max": max(delays, default=math.nan), "never": never,
           "ack_p95": percentile([p.ack_s for p in acked if p.ack_s == p.ack_s], 95),
           "poll_p95": percentile(in_vote, 95), "tick_p95": percentile(ticks, 95),
           "cpu_per_answer": vote_cpu / answers if answers else math.nan,
           "cpu_ms_per_request": 1000 * vote_cpu / (len(in_vote) + len(ticks) + answers) if answers else math.nan,
           "cpu_per_arrival": cpu_between(cpu, "start", "question") / n,
           "failures": [f for p in phones for f in p.failures] + out["errors"]}
    if killed:
        before = [p for p in acked if p.acked_by == killed and p.acked_at < vote.killed_at]
        cut = [p for p in acked if p.acked_by == "stored"]
        row.update(killed_wrote=len(before) + len(cut), killed_counted=sum(p not in lost for p in before + cut),
                   reconnected=sum(p.reconnected for p in phones), acked_before_kill=len(before), cut_off=len(cut),
                   back_max=max((p.back_s for p in phones if p.reconnected), default=math.nan))
    return row


def show(name: str, row: dict) -> None:
    print(f"{name}: {row['phones']} phones, {row['joined']} joined (load + join p95 {row['join_p95']:.2f} s); "
          f"{row['sent']} sent, {row['acked']} acknowledged, {row['stored']} in the store, projector's last count "
          f"{row['counted']}; lost {row['lost']}")
    print(f"    Send -> on the projector: p50 {row['proj_p50']:.2f} s, p95 {row['proj_p95']:.2f} s, max "
          f"{row['proj_max']:.2f} s; never counted {row['never']}. Send -> acknowledged p95 {row['ack_p95']:.2f} s; "
          f"a timer's rerun p95: phone {row['poll_p95']:.2f} s, projector {row['tick_p95']:.2f} s")
    print(f"    server CPU: {row['cpu_per_answer']:.3f} s per answer over the vote ({row['cpu_ms_per_request']:.1f} "
          f"ms per request: timers, Sends, projector), {row['cpu_per_arrival']:.3f} s per phone arriving (its "
          f"page, its join, its timer until the question)")
    if "killed_wrote" in row:
        print(f"    killed process: it had written {row['killed_wrote']} answers ({row['acked_before_kill']} "
              f"acknowledged, {row['cut_off']} whose acknowledgement the kill cut off), {row['killed_counted']} of "
              f"them counted; {row['reconnected']} phones reconnected, the last {row['back_max']:.1f} s after the kill")
    for failure in row["failures"][:5]:
        print(f"    failure: {failure}")


# ---- runs ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def database(postgres: str | None):
    """A fresh database for one run: a SQLite file in a new folder, or a new schema on the PostgreSQL server."""
    if not postgres:
        with tempfile.TemporaryDirectory(prefix="class-bench-") as folder:
            yield f"sqlite:///{Path(folder) / 'class.sqlite3'}"
        return
    with own_schema(postgres, "bench") as url:
        yield url


def run(n: int, processes: int, kill: bool, args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    with database(args.postgres) as url:
        os.environ[connection.ENVIRONMENT] = url  # the servers inherit it
        engine = classes.engine_for(url)
        try:
            if processes == 1:
                with Server.start() as server:
                    out = asyncio.run(a_class(server.url, engine, n, [""], args.arrive, args.vote, rng,
                                              {"": server.pid}))
            else:
                with serve(processes, False, ()) as (state, _):
                    pids = {f"s{k}": pid for k, (_, pid) in
                            enumerate(sorted(state["streamlit"].items(), key=lambda item: int(item[0])), 1)}
                    out = asyncio.run(a_class(state["url"], engine, n, list(pids), args.arrive, args.vote, rng,
                                              pids, kill="s1" if kill else ""))
        finally:
            engine.dispose()
    return figures(out, n, "s1" if kill else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--one", type=int, default=60, help="phones on one process (default 60; 0 skips)")
    parser.add_argument("--two", type=int, default=120, help="phones on deploy/serve.py 2 (default 120; 0 skips)")
    parser.add_argument("--kill", action="store_true", help="then the two processes again, the first killed mid-vote")
    parser.add_argument("--vote", type=float, default=10.0, help="seconds over which the answers come (default 10)")
    parser.add_argument("--arrive", type=float, default=10.0, help="seconds over which phones join (default 10)")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server (a new schema a run) instead of SQLite")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="exit 1 when an acknowledged answer is lost or never "
                        "counted, or one took more than --within seconds to reach the projector")
    parser.add_argument("--within", type=float, default=2.0, help="the aim for --check (default 2 s)")
    args = parser.parse_args(argv)
    os.environ["ATTENTION_LAB_WARM_UP"] = "0"
    # the question bank's cache, used here outside a page, says so at every call: nothing to act on
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    where = "PostgreSQL" if args.postgres else "one SQLite file"
    runs = [(f"{args.one} phones, one process, {where}", args.one, 1, False),
            (f"{args.two} phones, deploy/serve.py 2, {where}", args.two, 2, False),
            (f"{args.two or 120} phones, deploy/serve.py 2, {where}, first process killed mid-vote", args.two or 120, 2,
             True)]
    watch, bad = Watch(), []
    print(f"class bench: answers over {args.vote:.0f} s, phones joining over {args.arrive:.0f} s; "
          f"load {os.getloadavg()[0]:.2f}")
    for name, n, processes, kill in runs:
        if n <= 0 or (kill and not args.kill):
            continue
        row = run(n, processes, kill, args)
        show(name, row)
        if row["lost"] or row["never"] or row["acked"] < n or not row["proj_max"] <= args.within or (
                kill and row["killed_counted"] < row["killed_wrote"]):
            bad.append(name)
    print(watch.line())
    if args.check and bad:
        print(f"past the aim: {'; '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

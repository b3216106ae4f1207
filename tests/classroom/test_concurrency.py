"""A class answering at once, as the store meets it behind several server processes: two engines (each process
has its own pool) on one SQLite file in WAL mode, and on PostgreSQL. Every accepted answer is counted exactly
once, none is lost, nothing raises; the projector's count only rises. A writer killed with SIGKILL mid-way
leaves every answer it had committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import text

from store import classes
from tests.classroom import writer

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_800_000_000.0
STUDENTS, QUESTIONS = 60, 3
VALUES = ["A", "B", "C", "D"]


def first_value(i: int, k: int) -> str:
    return VALUES[(i + k) % len(VALUES)]


def changed_value(i: int) -> str:  # the even students change their answer to the first question
    return VALUES[(i + 1) % len(VALUES)]


@pytest.mark.timeout(300)
def test_sixty_students_answer_at_once_through_two_processes(make_engine):
    a, b, projector = make_engine(), make_engine(), make_engine()
    code, key = classes.start_session(a, NOW, seats=STUDENTS)
    # a quiz's questions, open together: each student answers all three at once
    questions = [classes.put_question(a, code, key, "choice", {"k": k}, NOW, close_others=False)
                 for k in range(QUESTIONS)]
    start = threading.Barrier(STUDENTS + 1)
    done = threading.Event()
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    seen_totals: list[list[int]] = [[] for _ in questions]

    def student(i: int) -> None:
        engine = a if i % 2 else b  # half the room on each process
        token = f"student-{i:04d}-of-the-room"
        try:
            joined = classes.join(engine, code, token, f"s{i}", NOW)
            start.wait(60)
            out = [joined] + [classes.answer(engine, code, token, q, first_value(i, k), NOW + 1)
                              for k, q in enumerate(questions)]
            if i % 2 == 0:
                out.append(classes.answer(engine, code, token, questions[0], changed_value(i), NOW + 2))
            results[i] = out
        except BaseException as error:  # the test reports whatever a thread raised
            errors.append(error)

    def watch() -> None:
        try:
            start.wait(60)
            while not done.is_set():
                for k, q in enumerate(questions):
                    seen_totals[k].append(classes.counts(projector, q).total)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(STUDENTS)]
    watcher = threading.Thread(target=watch)
    for t in [*threads, watcher]:
        t.start()
    for t in threads:
        t.join(240)
    done.set()
    watcher.join(60)

    assert errors == [] and len(results) == STUDENTS
    assert all(isinstance(r[0], int) and all(x is None for x in r[1:]) for r in results.values()), results
    for k, q in enumerate(questions):
        final = {i: changed_value(i) if k == 0 and i % 2 == 0 else first_value(i, k) for i in range(STUDENTS)}
        assert classes.counts(projector, q) == classes.Tally(dict(Counter(final.values())), STUDENTS)
        rows = classes.answers_of(projector, code, key, q)
        assert sorted(r.nickname for r in rows) == sorted(f"s{i}" for i in range(STUDENTS))
        assert {r.nickname: r.value for r in rows} == {f"s{i}": v for i, v in final.items()}
        assert {r.nickname: r.changes for r in rows} == {
            f"s{i}": int(k == 0 and i % 2 == 0 and changed_value(i) != first_value(i, 0)) for i in range(STUDENTS)}
        assert seen_totals[k] == sorted(seen_totals[k]), "the projector's count went down"
    assert classes.joined(projector, code) == STUDENTS


@pytest.mark.timeout(180)
def test_a_writer_killed_mid_way_keeps_what_it_committed(engine, db_url):
    code, key = classes.start_session(engine, NOW, seats=classes.SEATS_MAX)  # room for every student it makes
    question = classes.put_question(engine, code, key, "choice", {}, NOW)
    process = subprocess.Popen([sys.executable, "-m", "tests.classroom.writer", db_url, code, str(question), "5000"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    committed: list[int] = []
    try:
        for line in process.stdout:
            committed.append(int(line))
            if len(committed) == 40:
                break
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(30)
    committed += [int(line) for line in process.stdout.read().split()]  # printed before the kill
    process.stdout.close()
    assert process.returncode == -signal.SIGKILL and len(committed) >= 40, (process.returncode, committed)

    for i in committed:
        assert classes.my_answer(engine, question, writer.token(i)) == writer.value(i), i
    total = classes.counts(engine, question).total
    assert total - len(committed) in (0, 1)  # and the one it may have committed without printing
    assert classes.answer(engine, code, writer.token(0), question, "after", NOW) is None  # no lock left behind
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"

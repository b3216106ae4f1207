"""Who is in a class (store.classes.roster): joins stop at the class's seats, a removed student's answers leave every
count and their browser cannot join again, and only the teacher's key lists, removes or changes the seats; on
SQLite and PostgreSQL, and on the teacher's page."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from store import classes
from store.codes import new_token
from tests.apptest_helpers import ROOT
from tests.classroom.conftest import snapshot

NOW = 1_800_000_000.0


def test_joins_stop_at_the_seats_and_a_returning_student_keeps_theirs(engine):
    code, key = classes.start_session(engine, NOW, seats=3)
    tokens = [new_token() for _ in range(4)]
    assert [classes.join(engine, code, t, None, NOW) == classes.Refusal("full") for t in tokens] == [False] * 3 + [True]
    assert not isinstance(classes.join(engine, code, tokens[0], "again", NOW), classes.Refusal)  # not a new seat
    assert classes.joined(engine, code) == 3
    assert classes.set_seats(engine, code, key, 4) is None
    assert not isinstance(classes.join(engine, code, tokens[3], None, NOW), classes.Refusal)


def test_the_last_seat_goes_to_one_of_two_joining_at_once(make_engine):
    engine = make_engine()
    code, _ = classes.start_session(engine, NOW, seats=1)
    results: list[object] = []
    engines = [make_engine() for _ in range(4)]
    threads = [threading.Thread(target=lambda e=e: results.append(classes.join(e, code, new_token(), None, NOW)))
               for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(not isinstance(r, classes.Refusal) for r in results) == 1 and classes.joined(engine, code) == 1


def test_a_removed_student_leaves_every_count_and_cannot_join_again(engine):
    code, key = classes.start_session(engine, NOW)
    question = classes.put_question(engine, code, key, "choice", {}, NOW)
    ada, bob = new_token(), new_token()
    for token, name, value in ((ada, "Ada", "0"), (bob, "Bob", "1")):
        classes.join(engine, code, token, name, NOW)
        assert classes.answer(engine, code, token, question, value, NOW) is None
    assert [(s.number, s.nickname, s.answers) for s in classes.roster(engine, code, key)] == [(1, "Ada", 1),
                                                                                           (2, "Bob", 1)]
    assert classes.remove_student(engine, code, key, 1, NOW) is None
    assert classes.counts(engine, question) == classes.Tally({"1": 1}, 1) and classes.joined(engine, code) == 1
    assert [s.number for s in classes.roster(engine, code, key)] == [2]  # Bob keeps his number
    assert not classes.enrolled(engine, code, ada)
    assert classes.join(engine, code, ada, "Ada", NOW) == classes.Refusal("removed")
    assert classes.answer(engine, code, ada, question, "0", NOW) == classes.Refusal("not joined")
    assert classes.remove_student(engine, code, key, 1, NOW) == classes.Refusal("no such student")
    assert [row["student"] for row in classes.export_rows(engine, code, key)] == [2]


@pytest.mark.parametrize("seats", [0, -1, classes.SEATS_MAX + 1, 2.5, "40", True])
def test_seats_out_of_range_change_nothing(engine, seats):
    code, key = classes.start_session(engine, NOW)
    before = snapshot(engine)
    assert classes.set_seats(engine, code, key, seats) == classes.Refusal("seats")
    assert snapshot(engine) == before


def test_only_the_teachers_key_lists_removes_or_sets_seats(engine):
    code, key = classes.start_session(engine, NOW)
    other, other_key = classes.start_session(engine, NOW)
    classes.join(engine, code, new_token(), "Ada", NOW)
    before = snapshot(engine)
    for wrong in (other_key, None, key[:-1], "x" * 500):
        assert classes.roster(engine, code, wrong) == classes.Refusal("wrong key")
        assert classes.remove_student(engine, code, wrong, 1, NOW) == classes.Refusal("wrong key")
        assert classes.set_seats(engine, code, wrong, 5) == classes.Refusal("wrong key")
    assert classes.remove_student(engine, other, other_key, 1, NOW) == classes.Refusal("no such student")
    assert snapshot(engine) == before


# ---- the teacher's page ---------------------------------------------------------------------------------------

def teacher_page(code: str, key: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "classroom" / "page.py"), default_timeout=60)
    at.query_params["code"], at.query_params["key"] = code, key
    return at.run()


def test_the_teacher_removes_a_student_and_sets_the_seats_from_the_page(db):
    code, key = classes.start_session(db, time.time(), seats=30)
    classes.join(db, code, new_token(), "Ada", time.time())
    classes.join(db, code, new_token(), "<b>Bob</b>", time.time())
    at = teacher_page(code, key)
    assert not at.exception
    assert "**2 students joined** (the class takes 30)." in [m.value for m in at.markdown]
    table = at.dataframe[0].value
    assert table["nickname"].tolist() == ["Ada", "<b>Bob</b>"]  # a table cell is text, never markup
    pick = next(s for s in at.selectbox if s.label == "Remove a student")
    pick.set_value(2)
    next(b for b in at.button if b.label == "Remove from the class").click().run()
    assert not at.exception
    assert any(s.value.startswith("Removed student 2 (<b>Bob</b>): their answers are deleted") for s in at.success)
    assert classes.joined(db, code) == 1 and at.dataframe[0].value["nickname"].tolist() == ["Ada"]
    next(n for n in at.number_input if n.label == "Students the class takes").set_value(12)
    next(b for b in at.button if b.label == "Set").click().run()
    assert classes.teacher(db, code, key).seats == 12
    assert "The class now takes 12 students." in [s.value for s in at.success]


def test_a_full_class_tells_the_student_why(db, monkeypatch):
    code, _ = classes.start_session(db, time.time(), seats=1)
    classes.join(db, code, new_token(), None, time.time())
    at = AppTest.from_file(str(ROOT / "classroom" / "page.py"), default_timeout=60)
    at.query_params["code"] = code
    at.run()
    at.button[0].click().run()  # Join
    assert classes.Refusal("full").message in [e.value for e in at.error]
    assert classes.joined(db, code) == 1


def test_a_removed_students_open_page_says_so_and_takes_no_answer(db):
    from classroom import asked, device, student
    from classroom.questions import bank

    code, key = classes.start_session(db, time.time())
    at = AppTest.from_file(str(ROOT / "classroom" / "page.py"), default_timeout=60)
    at.query_params["code"] = code
    at.run()
    at.button[0].click().run()  # Join
    asked.put(db, code, key, next(q for q in bank() if q.kind == "choice"))
    at.run()
    assert any(r.label == "Your answer" for r in at.radio)
    token = device.derived(at.session_state[device.TAB_TOKEN], "student", code)
    assert classes.enrolled(db, code, token)
    assert classes.remove_student(db, code, key, 1, time.time()) is None
    at.run()
    said = [e.value for e in (*at.warning, *at.error)]
    assert student.REMOVED in said or classes.Refusal("removed").message in said
    assert not any(r.label == "Your answer" for r in at.radio)

"""A student's phone, through Streamlit's AppTest on a real SQLite file: a refusal stays until the student acts
again, a long paste gets a sentence, a space is an answer, the saved answer is there after a reload, and a
database error or a question that cannot be drawn is a sentence, never a traceback.

One AppTest is one tab; a "reload" is a new AppTest of the same browser (its device number, as in test_device)."""

from __future__ import annotations

import sqlite3
import time

import pytest
from streamlit.testing.v1 import AppTest

from classroom import asked, connection, device, faults
from classroom.questions import ClassQuestion, bank
from store import classes
from tests.apptest_helpers import ROOT

PAGE = str(ROOT / "classroom" / "page.py")
NUMBER = ClassQuestion(kind="number", prompt="How much?", answer=0.25, tolerance=0.01, explanation="Because.",
                       source="test/number")
CHAR = ClassQuestion(kind="char", prompt="Next character?", answer=" ", explanation="A space.",
                     source="predict/next-character")


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    monkeypatch.setenv(connection.ENVIRONMENT, url)
    monkeypatch.setattr(device, "from_cookie", lambda: "phone-device-number-0001")  # one browser throughout
    engine = classes.engine_for(url)
    classes.prepare(engine)
    return engine


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def said(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.caption, *at.error, *at.warning, *at.info, *at.success)]
    return "\n".join(str(p) for p in parts)


def phone(code: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["code"] = code
    return ok(at.run())


def joined(db, q: ClassQuestion | None = None):
    code, key = classes.start_session(db, time.time())
    at = phone(code)
    at.button[0].click().run()  # Join, no nickname
    qid = asked.put(db, code, key, q) if q is not None else None
    return code, key, qid, ok(at.run())


def send(at: AppTest, typed: str) -> AppTest:
    at.text_input[0].input(typed)
    at.button[0].click().run()
    return ok(at)


def test_a_refusal_stays_until_the_student_sends_again(db):
    _, _, qid, at = joined(db, NUMBER)
    assert "That is not a number" in said(send(at, "about a half"))
    at.run()  # the question part's refresh, a second later
    at.run()
    assert "That is not a number" in said(ok(at))
    send(at, "0.3")
    assert "That is not a number" not in said(at) and classes.counts(db, qid).total == 1


def test_too_many_answers_stays_said(db):
    _, _, _, at = joined(db, NUMBER)
    for i in range(classes.BURST + 1):
        send(at, str(i))
    at.run()
    assert classes.Refusal("too many").message in said(ok(at))


def test_a_paste_over_the_limit_is_said_and_not_cut(db):
    _, _, qid, at = joined(db, NUMBER)
    send(at, "1" * 300)
    assert "That is 300 characters: an answer is at most 200. Nothing was sent." in said(at)
    assert classes.counts(db, qid).total == 0


def test_a_space_is_sent_and_shown_as_a_space(db):
    _, _, qid, at = joined(db, CHAR)
    send(at, " ")
    assert "Nothing was sent" not in said(at) and classes.counts(db, qid).counts == {" ": 1}
    assert "(a space)" in said(at)


@pytest.mark.parametrize(("q", "typed", "read"), [(NUMBER, "0.3", "0.3"), (CHAR, " ", " ")])
def test_the_saved_answer_is_in_the_box_after_a_reload(db, q, typed, read):
    code, _, _, at = joined(db, q)
    send(at, typed)
    again = phone(code)
    assert again.text_input[0].value == read


def test_the_saved_pick_is_picked_after_a_reload(db):
    q = next(q for q in bank() if q.kind == "choice")
    code, _, _, at = joined(db, q)
    at.radio[0].set_value(1)
    at.button[0].click().run()
    assert phone(code).radio[0].value == 1


def test_a_locked_database_on_send_is_a_sentence_and_the_question_stays(db, tmp_path):
    _, _, qid, at = joined(db, NUMBER)
    locker = sqlite3.connect(tmp_path / "class.sqlite3", isolation_level=None)
    try:
        locker.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the busy timeout
        send(at, "0.3")
    finally:
        locker.close()
    assert "The class database is busy" in said(at) and at.text_input
    assert "No answer sent yet." in said(at)  # the part went on past the failed Send
    assert classes.counts(db, qid).total == 0


def test_a_question_the_phone_cannot_draw_is_a_sentence(db):
    code, key, _, at = joined(db)
    classes.put_question(db, code, key, "number", {"question": {"version": 99}}, time.time())
    assert faults.PHONE in said(ok(at.run()))

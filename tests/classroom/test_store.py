"""The class store's whole API as a class uses it, on a SQLite file and on PostgreSQL (the same tests)."""

from __future__ import annotations

import csv
import io

from store import classes
from store.codes import new_token, shown_code

NOW = 1_800_000_000.0  # a fixed "now": the store takes time from its caller


def test_a_class_from_start_to_export(engine):
    code, key = classes.start_session(engine, NOW, title="Attention, week 3")
    session = classes.find_session(engine, shown_code(code).lower(), NOW + 1)
    assert isinstance(session, classes.Session) and session.code == code and session.title == "Attention, week 3"
    assert session.status(NOW + 1) == "live" and session.expires_at == NOW + 4 * 3600
    assert classes.current_question(engine, code) is None and classes.joined(engine, code) == 0

    spec = {"options": ["the key 'cat'", "the key 'mat'"], "answer": 1, "note": "ü → √d_k", "w": [0.25, 0.75]}
    q1 = classes.put_question(engine, code, key, "choice", spec, NOW + 10)
    current = classes.current_question(engine, code)
    assert current.id == q1 and current.spec == spec and current.state == "open" and current.position == 1

    ann, bob, cat = new_token(), new_token(), new_token()
    ids = [classes.join(engine, code, ann, "Ann", NOW + 11), classes.join(engine, code, bob, None, NOW + 12),
           classes.join(engine, code, cat, "  Cat\u202e ", NOW + 13)]
    assert len(set(ids)) == 3 and classes.joined(engine, code) == 3
    assert classes.join(engine, code, ann, "Annie", NOW + 14) == ids[0]  # the same student, renamed
    assert classes.joined(engine, code) == 3

    for token, value in ((ann, "0"), (bob, "1"), (cat, "1"), (ann, "1")):  # Ann changes her mind
        assert classes.answer(engine, code, token, q1, value, NOW + 20) is None
    assert classes.counts(engine, q1) == classes.Tally({"1": 3}, 3)
    assert classes.my_answer(engine, q1, ann) == "1" and classes.my_answer(engine, q1, new_token()) is None

    assert classes.set_state(engine, code, key, q1, "closed", NOW + 30) is None
    assert classes.set_state(engine, code, key, q1, "revealed", NOW + 31) is None
    revealed = classes.current_question(engine, code)
    assert (revealed.state, revealed.closed_at, revealed.revealed_at) == ("revealed", NOW + 30, NOW + 31)

    q2 = classes.put_question(engine, code, key, "number", {"answer": 0.5}, NOW + 40)
    assert classes.current_question(engine, code).id == q2 and classes.current_question(engine, code).position == 2
    assert classes.answer(engine, code, bob, q2, 0.5, NOW + 41) is None
    assert [q.id for q in classes.all_questions(engine, code)] == [q1, q2]

    rows = classes.answers_of(engine, code, key, q1)
    assert [(r.student, r.nickname, r.value, r.changes) for r in rows] == [
        (1, "Annie", "1", 1), (2, None, "1", 0), (3, "Cat", "1", 0)]
    assert rows[0].answered_at == NOW + 20 and rows[0].changed_at == NOW + 20

    anonymous = classes.export_rows(engine, code, key)
    assert [(r["question"], r["kind"], r["student"], r["answer"]) for r in anonymous] == [
        (1, "choice", 1, "1"), (1, "choice", 2, "1"), (1, "choice", 3, "1"), (2, "number", 2, "0.5")]
    assert all("nickname" not in r for r in anonymous)
    assert anonymous[0]["answered_at"] == "2027-01-15T08:00:20+00:00"
    named = classes.export_rows(engine, code, key, with_names=True)
    assert [r["nickname"] for r in named] == ["Annie", "", "Cat", ""]
    out = io.StringIO()
    csv.DictWriter(out, fieldnames=list(named[0])).writerows(named)  # plain values: a CSV takes them as they are
    assert ann not in out.getvalue() and bob not in out.getvalue()

    assert classes.end_session(engine, code, key, NOW + 50) is None
    assert classes.find_session(engine, code, NOW + 51) == classes.Refusal("ended")
    assert classes.teacher(engine, code, key).status(NOW + 51) == "ended"
    assert classes.export_rows(engine, code, key) == anonymous  # the teacher exports after the class too


def test_a_second_answer_replaces_the_first_and_counts_a_change(engine):
    code, key = classes.start_session(engine, NOW)
    q = classes.put_question(engine, code, key, "choice", {}, NOW)
    token = new_token()
    classes.join(engine, code, token, "Ann", NOW)
    for t, value in enumerate(["A", "B", "B", "C"]):
        assert classes.answer(engine, code, token, q, value, NOW + t) is None
    (row,) = classes.answers_of(engine, code, key, q)
    assert (row.value, row.changes, row.answered_at, row.changed_at) == ("C", 2, NOW, NOW + 3)  # B again: no change
    assert classes.counts(engine, q) == ({"C": 1}, 1)


def test_questions_move_open_closed_revealed(engine):
    code, key = classes.start_session(engine, NOW)
    q1 = classes.put_question(engine, code, key, "choice", {}, NOW)
    q2 = classes.put_question(engine, code, key, "choice", {}, NOW + 1)
    states = {q.id: q.state for q in classes.all_questions(engine, code)}
    assert states == {q1: "closed", q2: "open"}  # putting a question closes the one before

    assert classes.set_state(engine, code, key, q1, "open", NOW + 2) is None  # reopened: current again
    assert classes.current_question(engine, code).id == q1
    assert classes.set_state(engine, code, key, q1, "open", NOW + 3) is None  # the same state: nothing to do
    assert classes.set_state(engine, code, key, q1, "revealed", NOW + 4) is None  # revealed from open: closed too
    q = classes.current_question(engine, code)
    assert (q.state, q.closed_at, q.revealed_at) == ("revealed", NOW + 4, NOW + 4)
    for state in ("open", "closed"):
        assert classes.set_state(engine, code, key, q1, state, NOW + 5) == classes.Refusal("stays revealed")
    assert classes.set_state(engine, code, key, q1, "revealed", NOW + 6) is None

    q3 = classes.put_question(engine, code, key, "quiz", {"item": 1}, NOW + 7, close_others=False)
    q4 = classes.put_question(engine, code, key, "quiz", {"item": 2}, NOW + 7, close_others=False)
    states = {q.id: q.state for q in classes.all_questions(engine, code)}
    assert states == {q1: "revealed", q2: "open", q3: "open", q4: "open"}  # a quiz's questions open together
    assert [q.position for q in classes.all_questions(engine, code)] == [1, 2, 3, 4]


def test_a_session_expires(engine):
    code, key = classes.start_session(engine, NOW, ttl_s=60)
    q = classes.put_question(engine, code, key, "choice", {}, NOW)
    token = new_token()
    classes.join(engine, code, token, None, NOW)
    assert classes.find_session(engine, code, NOW + 59.9).code == code
    assert classes.find_session(engine, code, NOW + 60) == classes.Refusal("expired")
    assert classes.answer(engine, code, token, q, "A", NOW + 61) == classes.Refusal("expired")
    assert classes.join(engine, code, new_token(), None, NOW + 61) == classes.Refusal("expired")
    assert classes.put_question(engine, code, key, "choice", {}, NOW + 61) == classes.Refusal("expired")
    assert classes.set_state(engine, code, key, q, "revealed", NOW + 62) is None  # the teacher can still reveal
    assert classes.teacher(engine, code, key).status(NOW + 62) == "expired"


def test_the_burst_limit_refuses_the_eleventh_answer_in_ten_seconds(engine):
    code, key = classes.start_session(engine, NOW)
    q = classes.put_question(engine, code, key, "number", {}, NOW)
    token = new_token()
    classes.join(engine, code, token, None, NOW)
    for i in range(classes.BURST):
        assert classes.answer(engine, code, token, q, str(i), NOW + i * 0.5) is None
    refused = classes.answer(engine, code, token, q, "99", NOW + 9)
    assert refused == classes.Refusal("too many") and refused.message.startswith("Too many answers at once")
    assert classes.my_answer(engine, q, token) == str(classes.BURST - 1)  # the refused one was not written
    assert classes.answer(engine, code, token, q, "99", NOW + classes.BURST_S) is None  # a new window
    assert classes.my_answer(engine, q, token) == "99"
    other = new_token()  # the limit is per student: another is not held back
    classes.join(engine, code, other, None, NOW)
    assert classes.answer(engine, code, other, q, "1", NOW + 9) is None


def test_two_sessions_do_not_mix(engine):
    code_a, key_a = classes.start_session(engine, NOW)
    code_b, key_b = classes.start_session(engine, NOW)
    assert code_a != code_b
    qa = classes.put_question(engine, code_a, key_a, "choice", {}, NOW)
    qb = classes.put_question(engine, code_b, key_b, "choice", {}, NOW)
    token = new_token()  # one phone in both classes: a student in each
    assert classes.join(engine, code_a, token, "A", NOW) != classes.join(engine, code_b, token, "B", NOW)
    assert classes.answer(engine, code_a, token, qb, "X", NOW) == classes.Refusal("no such question")
    assert classes.answer(engine, code_a, token, qa, "X", NOW) is None
    assert classes.counts(engine, qb).total == 0 and classes.my_answer(engine, qb, token) is None
    assert classes.answers_of(engine, code_b, key_b, qa) == classes.Refusal("no such question")
    assert classes.set_state(engine, code_b, key_b, qa, "closed", NOW) == classes.Refusal("no such question")
    assert classes.answers_of(engine, code_a, key_a, qa)[0].nickname == "A"

"""The class store's whole API as a class uses it, on a SQLite file and on PostgreSQL (the same tests)."""

from __future__ import annotations

import csv
import io

from classroom import store
from classroom.codes import new_token, shown_code

NOW = 1_800_000_000.0  # a fixed "now": the store takes time from its caller


def test_a_class_from_start_to_export(engine):
    code, key = store.start_session(engine, NOW, title="Attention, week 3")
    session = store.find_session(engine, shown_code(code).lower(), NOW + 1)
    assert isinstance(session, store.Session) and session.code == code and session.title == "Attention, week 3"
    assert session.status(NOW + 1) == "live" and session.expires_at == NOW + 4 * 3600
    assert store.current_question(engine, code) is None and store.joined(engine, code) == 0

    spec = {"options": ["the key 'cat'", "the key 'mat'"], "answer": 1, "note": "ü → √d_k", "w": [0.25, 0.75]}
    q1 = store.put_question(engine, code, key, "choice", spec, NOW + 10)
    current = store.current_question(engine, code)
    assert current.id == q1 and current.spec == spec and current.state == "open" and current.position == 1

    ann, bob, cat = new_token(), new_token(), new_token()
    ids = [store.join(engine, code, ann, "Ann", NOW + 11), store.join(engine, code, bob, None, NOW + 12),
           store.join(engine, code, cat, "  Cat\u202e ", NOW + 13)]
    assert len(set(ids)) == 3 and store.joined(engine, code) == 3
    assert store.join(engine, code, ann, "Annie", NOW + 14) == ids[0]  # the same student, renamed
    assert store.joined(engine, code) == 3

    for token, value in ((ann, "0"), (bob, "1"), (cat, "1"), (ann, "1")):  # Ann changes her mind
        assert store.answer(engine, code, token, q1, value, NOW + 20) is None
    assert store.counts(engine, q1) == store.Tally({"1": 3}, 3)
    assert store.my_answer(engine, q1, ann) == "1" and store.my_answer(engine, q1, new_token()) is None

    assert store.set_state(engine, code, key, q1, "closed", NOW + 30) is None
    assert store.set_state(engine, code, key, q1, "revealed", NOW + 31) is None
    revealed = store.current_question(engine, code)
    assert (revealed.state, revealed.closed_at, revealed.revealed_at) == ("revealed", NOW + 30, NOW + 31)

    q2 = store.put_question(engine, code, key, "number", {"answer": 0.5}, NOW + 40)
    assert store.current_question(engine, code).id == q2 and store.current_question(engine, code).position == 2
    assert store.answer(engine, code, bob, q2, 0.5, NOW + 41) is None
    assert [q.id for q in store.all_questions(engine, code)] == [q1, q2]

    rows = store.answers_of(engine, code, key, q1)
    assert [(r.student, r.nickname, r.value, r.changes) for r in rows] == [
        (1, "Annie", "1", 1), (2, None, "1", 0), (3, "Cat", "1", 0)]
    assert rows[0].answered_at == NOW + 20 and rows[0].changed_at == NOW + 20

    anonymous = store.export_rows(engine, code, key)
    assert [(r["question"], r["kind"], r["student"], r["answer"]) for r in anonymous] == [
        (1, "choice", 1, "1"), (1, "choice", 2, "1"), (1, "choice", 3, "1"), (2, "number", 2, "0.5")]
    assert all("nickname" not in r for r in anonymous)
    assert anonymous[0]["answered_at"] == "2027-01-15T08:00:20+00:00"
    named = store.export_rows(engine, code, key, with_names=True)
    assert [r["nickname"] for r in named] == ["Annie", "", "Cat", ""]
    out = io.StringIO()
    csv.DictWriter(out, fieldnames=list(named[0])).writerows(named)  # plain values: a CSV takes them as they are
    assert ann not in out.getvalue() and bob not in out.getvalue()

    assert store.end_session(engine, code, key, NOW + 50) is None
    assert store.find_session(engine, code, NOW + 51) == store.Refusal("ended")
    assert store.teacher(engine, code, key).status(NOW + 51) == "ended"
    assert store.export_rows(engine, code, key) == anonymous  # the teacher exports after the class too


def test_a_second_answer_replaces_the_first_and_counts_a_change(engine):
    code, key = store.start_session(engine, NOW)
    q = store.put_question(engine, code, key, "choice", {}, NOW)
    token = new_token()
    store.join(engine, code, token, "Ann", NOW)
    for t, value in enumerate(["A", "B", "B", "C"]):
        assert store.answer(engine, code, token, q, value, NOW + t) is None
    (row,) = store.answers_of(engine, code, key, q)
    assert (row.value, row.changes, row.answered_at, row.changed_at) == ("C", 2, NOW, NOW + 3)  # B again: no change
    assert store.counts(engine, q) == ({"C": 1}, 1)


def test_questions_move_open_closed_revealed(engine):
    code, key = store.start_session(engine, NOW)
    q1 = store.put_question(engine, code, key, "choice", {}, NOW)
    q2 = store.put_question(engine, code, key, "choice", {}, NOW + 1)
    states = {q.id: q.state for q in store.all_questions(engine, code)}
    assert states == {q1: "closed", q2: "open"}  # putting a question closes the one before

    assert store.set_state(engine, code, key, q1, "open", NOW + 2) is None  # reopened: current again
    assert store.current_question(engine, code).id == q1
    assert store.set_state(engine, code, key, q1, "open", NOW + 3) is None  # the same state: nothing to do
    assert store.set_state(engine, code, key, q1, "revealed", NOW + 4) is None  # revealed from open: closed too
    q = store.current_question(engine, code)
    assert (q.state, q.closed_at, q.revealed_at) == ("revealed", NOW + 4, NOW + 4)
    for state in ("open", "closed"):
        assert store.set_state(engine, code, key, q1, state, NOW + 5) == store.Refusal("stays revealed")
    assert store.set_state(engine, code, key, q1, "revealed", NOW + 6) is None

    q3 = store.put_question(engine, code, key, "quiz", {"item": 1}, NOW + 7, close_others=False)
    q4 = store.put_question(engine, code, key, "quiz", {"item": 2}, NOW + 7, close_others=False)
    states = {q.id: q.state for q in store.all_questions(engine, code)}
    assert states == {q1: "revealed", q2: "open", q3: "open", q4: "open"}  # a quiz's questions open together
    assert [q.position for q in store.all_questions(engine, code)] == [1, 2, 3, 4]


def test_a_session_expires(engine):
    code, key = store.start_session(engine, NOW, ttl_s=60)
    q = store.put_question(engine, code, key, "choice", {}, NOW)
    token = new_token()
    store.join(engine, code, token, None, NOW)
    assert store.find_session(engine, code, NOW + 59.9).code == code
    assert store.find_session(engine, code, NOW + 60) == store.Refusal("expired")
    assert store.answer(engine, code, token, q, "A", NOW + 61) == store.Refusal("expired")
    assert store.join(engine, code, new_token(), None, NOW + 61) == store.Refusal("expired")
    assert store.put_question(engine, code, key, "choice", {}, NOW + 61) == store.Refusal("expired")
    assert store.set_state(engine, code, key, q, "revealed", NOW + 62) is None  # the teacher can still reveal
    assert store.teacher(engine, code, key).status(NOW + 62) == "expired"


def test_the_burst_limit_refuses_the_eleventh_answer_in_ten_seconds(engine):
    code, key = store.start_session(engine, NOW)
    q = store.put_question(engine, code, key, "number", {}, NOW)
    token = new_token()
    store.join(engine, code, token, None, NOW)
    for i in range(store.BURST):
        assert store.answer(engine, code, token, q, str(i), NOW + i * 0.5) is None
    refused = store.answer(engine, code, token, q, "99", NOW + 9)
    assert refused == store.Refusal("too many") and refused.message.startswith("Too many answers at once")
    assert store.my_answer(engine, q, token) == str(store.BURST - 1)  # the refused one was not written
    assert store.answer(engine, code, token, q, "99", NOW + store.BURST_S) is None  # a new window
    assert store.my_answer(engine, q, token) == "99"
    other = new_token()  # the limit is per student: another is not held back
    store.join(engine, code, other, None, NOW)
    assert store.answer(engine, code, other, q, "1", NOW + 9) is None


def test_two_sessions_do_not_mix(engine):
    code_a, key_a = store.start_session(engine, NOW)
    code_b, key_b = store.start_session(engine, NOW)
    assert code_a != code_b
    qa = store.put_question(engine, code_a, key_a, "choice", {}, NOW)
    qb = store.put_question(engine, code_b, key_b, "choice", {}, NOW)
    token = new_token()  # one phone in both classes: a student in each
    assert store.join(engine, code_a, token, "A", NOW) != store.join(engine, code_b, token, "B", NOW)
    assert store.answer(engine, code_a, token, qb, "X", NOW) == store.Refusal("no such question")
    assert store.answer(engine, code_a, token, qa, "X", NOW) is None
    assert store.counts(engine, qb).total == 0 and store.my_answer(engine, qb, token) is None
    assert store.answers_of(engine, code_b, key_b, qa) == store.Refusal("no such question")
    assert store.set_state(engine, code_b, key_b, qa, "closed", NOW) == store.Refusal("no such question")
    assert store.answers_of(engine, code_a, key_a, qa)[0].nickname == "A"

"""Every bad input the class store can meet: each gets its own sentence, and nothing is written (every table
is the same before and after). On a SQLite file and on PostgreSQL."""

from __future__ import annotations

import math

import pytest

from store import classes, codes
from store.codes import hash_secret, new_key, new_token, shown_code
from tests.classroom.conftest import snapshot

NOW = 1_800_000_000.0


@pytest.fixture
def room(engine):
    """A live class with a question open, one student who answered it, and a second, closed question."""
    code, key = classes.start_session(engine, NOW)
    closed = classes.put_question(engine, code, key, "choice", {"n": 1}, NOW)
    classes.set_state(engine, code, key, closed, "closed", NOW)
    question = classes.put_question(engine, code, key, "choice", {"n": 2}, NOW)
    token = new_token()
    classes.join(engine, code, token, "Ann", NOW)
    classes.answer(engine, code, token, question, "A", NOW)
    other_code, other_key = classes.start_session(engine, NOW)
    other_question = classes.put_question(engine, other_code, other_key, "choice", {}, NOW)
    return dict(code=code, key=key, question=question, closed=closed, token=token, other_key=other_key,
                other_question=other_question)


def refused(engine, reason, call, *args):
    """`call(engine, *args)` refuses with `reason`, its sentence, and changes nothing."""
    before = snapshot(engine)
    result = call(engine, *args)
    assert result == classes.Refusal(reason), (call.__name__, args, result)
    assert result.message and result.message[0].isupper() and result.message.endswith(".")
    assert snapshot(engine) == before, f"{call.__name__} wrote while refusing"
    return result.message


@pytest.mark.parametrize("typed", ["", "ABC", "K7M4QX!", "<script>", "K" * 10_000, None, 42, ["K7M4QX"]])
def test_a_string_that_cannot_be_a_code(engine, room, typed):
    message = refused(engine, "not a code", classes.find_session, typed, NOW)
    assert message == f"That is not a class code: a code is {codes.CODE_LENGTH} letters and digits, like K7M\u20114QX."
    refused(engine, "not a code", classes.join, typed, new_token(), "Bo", NOW)
    refused(engine, "not a code", classes.answer, typed, room["token"], room["question"], "B", NOW)
    refused(engine, "not a code", classes.end_session, typed, room["key"], NOW)


def test_an_unknown_code(engine, room):
    unknown = "222222" if room["code"] != "222222" else "333333"
    assert "No class has this code" in refused(engine, "unknown", classes.find_session, unknown, NOW)
    refused(engine, "unknown", classes.join, unknown, new_token(), None, NOW)
    refused(engine, "unknown", classes.teacher, unknown, room["key"])
    refused(engine, "unknown", classes.put_question, unknown, room["key"], "choice", {}, NOW)
    assert classes.current_question(engine, unknown) is None and classes.all_questions(engine, unknown) == []
    assert classes.joined(engine, unknown) == 0


WRONG_KEYS = {
    "another's": None, "none": None, "empty": "", "cut": None, "longer": None, "the student's token": None,
    "the stored hash": None, "a number": 12345, "huge": "k" * 100_000,
}


@pytest.mark.parametrize("which", list(WRONG_KEYS))
def test_a_wrong_teacher_key_opens_nothing_and_changes_nothing(engine, room, which):
    key = {"another's": room["other_key"], "none": None, "cut": room["key"][:-1], "longer": room["key"] + "A",
           "the student's token": room["token"], "the stored hash": hash_secret(room["key"])}.get(
        which, WRONG_KEYS[which])
    code, question = room["code"], room["question"]
    message = refused(engine, "wrong key", classes.teacher, code, key)
    assert message == "This teacher key does not open this class: nothing was changed."
    refused(engine, "wrong key", classes.end_session, code, key, NOW)
    refused(engine, "wrong key", classes.put_question, code, key, "choice", {}, NOW)
    for state in ("open", "closed", "revealed"):
        refused(engine, "wrong key", classes.set_state, code, key, question, state, NOW)
        refused(engine, "wrong key", classes.set_state, code, key, room["closed"], state, NOW)
    refused(engine, "wrong key", classes.answers_of, code, key, question)
    refused(engine, "wrong key", classes.export_rows, code, key)
    refused(engine, "wrong key", classes.export_rows, code, key, True)
    assert classes.find_session(engine, code, NOW).ended_at is None


def test_a_key_opens_its_own_session_only_and_its_questions_only(engine, room):
    refused(engine, "no such question", classes.set_state, room["code"], room["key"], room["other_question"],
            "revealed", NOW)
    refused(engine, "no such question", classes.set_state, room["code"], room["key"], 10**9, "closed", NOW)
    refused(engine, "no such question", classes.answers_of, room["code"], room["key"], room["other_question"])
    assert classes.teacher(engine, room["code"], room["key"]).code == room["code"]


@pytest.mark.parametrize("token", [None, "", "short", 42, "t" * 201, ["x" * 22]])
def test_a_page_without_a_proper_token(engine, room, token):
    assert "does not know you yet" in refused(engine, "no token", classes.join, room["code"], token, "Bo", NOW)
    refused(engine, "no token", classes.answer, room["code"], token, room["question"], "B", NOW)
    assert classes.my_answer(engine, room["question"], token) is None


def test_answers_that_are_refused(engine, room):
    code, token, question = room["code"], room["token"], room["question"]
    assert "Join the class first" in refused(engine, "not joined", classes.answer, code, new_token(), question, "B",
                                             NOW)
    for empty in ("", "   ", "\n\t", "\u200b\u202e", None, [], {"a": 1}):
        assert "empty" in refused(engine, "empty", classes.answer, code, token, question, empty, NOW)
    refused(engine, "no such question", classes.answer, code, token, room["other_question"], "B", NOW)
    refused(engine, "no such question", classes.answer, code, token, 10**9, "B", NOW)
    assert "closed" in refused(engine, "closed", classes.answer, code, token, room["closed"], "B", NOW)
    classes.set_state(engine, code, room["key"], room["closed"], "revealed", NOW)
    assert "shown" in refused(engine, "revealed", classes.answer, code, token, room["closed"], "B", NOW)
    assert classes.my_answer(engine, question, token) == "A"


def test_an_ended_class_takes_no_one_and_nothing(engine, room):
    code, key = room["code"], room["key"]
    assert classes.end_session(engine, code, key, NOW + 5) is None
    assert classes.end_session(engine, code, key, NOW + 6) is None  # twice: the first end stays
    assert classes.teacher(engine, code, key).ended_at == NOW + 5
    assert refused(engine, "ended", classes.find_session, shown_code(code), NOW + 7) == "This class has ended."
    refused(engine, "ended", classes.join, code, new_token(), "Late", NOW + 7)
    refused(engine, "ended", classes.join, code, room["token"], "Ann again", NOW + 7)
    refused(engine, "ended", classes.answer, code, room["token"], room["question"], "B", NOW + 7)
    refused(engine, "ended", classes.put_question, code, key, "choice", {}, NOW + 7)
    refused(engine, "ended", classes.set_state, code, key, room["closed"], "open", NOW + 7)


def test_an_expired_class(engine):
    code, key = classes.start_session(engine, NOW, ttl_s=10)
    question = classes.put_question(engine, code, key, "choice", {}, NOW)
    token = new_token()
    classes.join(engine, code, token, None, NOW)
    assert "expired: ask your teacher for a new one" in refused(engine, "expired", classes.find_session, code, NOW + 10)
    refused(engine, "expired", classes.join, code, new_token(), None, NOW + 10)
    refused(engine, "expired", classes.answer, code, token, question, "A", NOW + 10)
    refused(engine, "expired", classes.put_question, code, key, "choice", {}, NOW + 10)


def test_too_many_answers_at_once(engine, room):
    code, token, question = room["code"], room["token"], room["question"]
    for i in range(classes.BURST - 1):  # the room's answer was the first of this window
        assert classes.answer(engine, code, token, question, f"v{i}", NOW + 1) is None
    message = refused(engine, "too many", classes.answer, code, token, question, "flood", NOW + 2)
    assert message == "Too many answers at once: wait ten seconds, then send it again."


def test_over_long_text_is_refused_not_cut(engine, room):
    """The store keeps what the student chose, or nothing: never the first 200 characters of it."""
    code, question = room["code"], room["question"]
    token = new_token()
    message = refused(engine, "nickname too long", classes.join, code, token, "N" * 25, NOW)
    assert message == "A nickname is at most 24 characters: shorten it, then join."
    refused(engine, "nickname too long", classes.join, code, token, "N" * 5000, NOW)
    classes.join(engine, code, token, "N" * 24, NOW)
    message = refused(engine, "too long", classes.answer, code, token, question, "x" * 201, NOW)
    assert message == "Nothing was sent: an answer is at most 200 characters."
    refused(engine, "too long", classes.answer, code, token, question, "x" * 5000, NOW)
    assert classes.answer(engine, code, token, question, "  " + "x" * 200 + "  ", NOW) is None  # measured as kept
    classes.start_session(engine, NOW, title="T" * 500)  # a title is the teacher's: cut, not refused


@pytest.mark.parametrize("spec", [{"s": {1, 2}}, {"x": math.nan}, {"x": math.inf}, {"big": "x" * 70_000}])
def test_a_page_bug_is_a_value_error_that_writes_nothing(engine, room, spec):
    before = snapshot(engine)
    with pytest.raises(ValueError):
        classes.put_question(engine, room["code"], room["key"], "choice", spec, NOW)
    with pytest.raises(ValueError, match="state is one of"):
        classes.set_state(engine, room["code"], room["key"], room["question"], "shown", NOW)
    with pytest.raises(ValueError, match="kind"):
        classes.put_question(engine, room["code"], room["key"], "", {}, NOW)
    with pytest.raises(ValueError, match="some time"):
        classes.start_session(engine, NOW, ttl_s=0)
    assert snapshot(engine) == before


def test_a_new_key_is_not_any_key(engine, room):
    refused(engine, "wrong key", classes.export_rows, room["code"], new_key())


@pytest.mark.parametrize("question_id", [None, True, 0, -1, 1.0, 2**70, "", "12abc", "１２", "1" * 40, [1]])
def test_a_question_id_that_cannot_be_one(engine, room, question_id):
    code, key, token = room["code"], room["key"], room["token"]
    refused(engine, "no such question", classes.answer, code, token, question_id, "B", NOW)
    refused(engine, "no such question", classes.set_state, code, key, question_id, "closed", NOW)
    refused(engine, "no such question", classes.answers_of, code, key, question_id)
    assert classes.counts(engine, question_id) == classes.Tally({}, 0)
    assert classes.my_answer(engine, question_id, token) is None


def test_a_question_id_from_a_url_is_read_as_a_number(engine, room):
    code, token, question = room["code"], room["token"], str(room["question"])
    assert classes.answer(engine, code, token, question, "B", NOW + 1) is None
    assert classes.my_answer(engine, question, token) == "B" and classes.counts(engine, question).total == 1

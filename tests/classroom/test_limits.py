"""What the store accepts of a student, on a SQLite file and on PostgreSQL: answers as typed where the question's
kind needs it (a space is an answer to "the next character"), and the burst limit as a sliding window: no
BURST + 1 answers within less than BURST_S seconds, wherever the window is put."""

from __future__ import annotations

import random

import pytest

from store import classes
from store.codes import new_token
from tests.classroom.conftest import snapshot

NOW = 1_800_000_000.0


@pytest.fixture
def room(engine):
    code, key = classes.start_session(engine, NOW)
    token = new_token()
    classes.join(engine, code, token, None, NOW)
    return code, key, token


def test_a_space_is_an_answer_to_a_one_character_question(engine, room):
    code, key, token = room
    q = classes.put_question(engine, code, key, "char", {}, NOW)
    assert classes.answer(engine, code, token, q, " ", NOW) is None
    assert classes.my_answer(engine, q, token) == " "
    assert classes.counts(engine, q).counts == {" ": 1}
    assert classes.answer(engine, code, token, q, "\t", NOW + 1) is None  # a tab is typed as a space
    assert classes.my_answer(engine, q, token) == " "
    assert classes.answer(engine, code, token, q, "", NOW + 2) == classes.Refusal("empty")


def test_other_answers_are_one_line_with_their_ends_stripped(engine, room):
    code, key, token = room
    q = classes.put_question(engine, code, key, "number", {}, NOW)
    assert classes.answer(engine, code, token, q, "  0.5\n", NOW) is None
    assert classes.my_answer(engine, q, token) == "0.5"
    before = snapshot(engine)
    assert classes.answer(engine, code, token, q, " ", NOW + 1) == classes.Refusal("empty")
    assert snapshot(engine) == before


def test_no_double_burst_at_a_window_edge(engine, room):
    """A fixed window let BURST answers through just before its end and BURST more just after: 2x in 2 ms."""
    code, key, token = room
    q = classes.put_question(engine, code, key, "number", {}, NOW)
    edge = NOW + classes.BURST_S
    taken = [classes.answer(engine, code, token, q, str(i), edge - 0.001) is None for i in range(classes.BURST)]
    taken += [classes.answer(engine, code, token, q, str(i), edge + 0.001) is None for i in range(classes.BURST)]
    assert sum(taken) == classes.BURST


def test_no_window_of_burst_s_ever_holds_more_than_burst_answers(engine, room):
    code, key, token = room
    q = classes.put_question(engine, code, key, "number", {}, NOW)
    rng = random.Random(46)
    now, accepted = NOW, []
    for i in range(300):  # bursts, pauses and steady streams, in random order
        now += rng.choice([0.0, 0.001, 0.3, 1.0, 2.5, 12.0])
        if classes.answer(engine, code, token, q, str(i), now) is None:
            accepted.append(now)
    assert len(accepted) > 3 * classes.BURST  # the limit let a fair share through
    for first, last in zip(accepted, accepted[classes.BURST:]):
        assert last - first >= classes.BURST_S, (first, last)


def test_a_student_who_paused_has_a_whole_burst_again(engine, room):
    code, key, token = room
    q = classes.put_question(engine, code, key, "number", {}, NOW)
    for i in range(classes.BURST):
        assert classes.answer(engine, code, token, q, str(i), NOW) is None
    assert classes.answer(engine, code, token, q, "x", NOW + 1) == classes.Refusal("too many")
    later = NOW + classes.BURST * classes.BURST_S
    assert all(classes.answer(engine, code, token, q, str(i), later) is None for i in range(classes.BURST))

"""A quiz's items put, and closed or revealed, in one transaction, on a SQLite file and on PostgreSQL: a failure
half-way (a database error, a refused item) leaves the class as it was, never half a quiz."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from classroom import asked
from classroom.quiz import quiz
from store import classes
from store.classes import asking
from tests.classroom.conftest import snapshot

NOW = 1_800_000_000.0


@pytest.fixture
def class_(engine):
    return classes.start_session(engine, NOW)


def failing_insert(engine, after: int):
    """Make the database fail at the (after + 1)-th INSERT INTO questions, as a full disk or a lost link would."""
    seen = []

    def fail(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO QUESTIONS"):
            seen.append(statement)
            if len(seen) > after:
                raise OSError("the disk is full")

    event.listen(engine, "before_cursor_execute", fail)
    return lambda: event.remove(engine, "before_cursor_execute", fail)


def test_a_quiz_is_put_whole(engine, class_):
    code, key = class_
    items = quiz()
    ids = asked.put_all(engine, code, key, items, "pre")
    rows = classes.all_questions(engine, code)
    assert [r.id for r in rows] == ids and [r.position for r in rows] == list(range(1, len(items) + 1))
    assert {asked.batch_of(r) for r in rows} != {None} and len({asked.batch_of(r) for r in rows}) == 1
    assert asked.shown(engine, code) == rows and {r.state for r in rows} == {"open"}


def test_a_failure_half_way_puts_no_item(engine, class_):
    code, key = class_
    first = asked.put_all(engine, code, key, quiz()[:1])
    before = snapshot(engine)
    undo = failing_insert(engine, after=3)
    try:
        with pytest.raises(classes.StoreError):
            asked.put_all(engine, code, key, quiz(), "pre")
    finally:
        undo()
    assert snapshot(engine) == before  # the question before it still open, no item of the quiz
    assert [r.id for r in asked.shown(engine, code)] == first


def test_a_quiz_is_revealed_whole_or_not_at_all(engine, class_):
    code, key = class_
    ids = asked.put_all(engine, code, key, quiz(), "pre")
    other_code, other_key = classes.start_session(engine, NOW)
    stranger = classes.put_question(engine, other_code, other_key, "choice", {}, NOW)
    before = snapshot(engine)
    refused = asking.set_states(engine, code, key, [*ids[:3], stranger, *ids[3:]], "revealed", NOW + 1)
    assert refused == classes.Refusal("no such question")
    assert snapshot(engine) == before  # the first three were not revealed alone
    assert asking.set_states(engine, code, key, ids, "revealed", NOW + 2) is None
    assert {r.state for r in classes.all_questions(engine, code)} == {"revealed"}
    assert asking.set_states(engine, code, key, ids, "open", NOW + 3) == classes.Refusal("stays revealed")


def test_the_rules_are_set_states_own(engine, class_):
    code, key = class_
    ids = asked.put_all(engine, code, key, quiz()[:2])
    assert asking.set_states(engine, code, "not the key", ids, "closed", NOW) == classes.Refusal("wrong key")
    assert asking.set_states(engine, code, key, ids, "closed", NOW) is None
    classes.end_session(engine, code, key, NOW + 1)
    assert asking.set_states(engine, code, key, ids, "open", NOW + 2) == classes.Refusal("ended")
    assert asking.set_states(engine, code, key, ids, "revealed", NOW + 2) is None  # reveal after the end
    assert asked.put_all(engine, code, key, quiz()[:1]) == classes.Refusal("ended")
    with pytest.raises(ValueError):
        asking.set_states(engine, code, key, ids, "shown", NOW)


def test_the_room_numbers_a_quizs_items_apart_from_the_questions_put_alone(engine, class_):
    """The question after a seven-item quiz is "Question 1" of those put alone, not "Question 8"; the teacher's
    page names the round of a quiz's item."""
    code, key = class_
    items = quiz()
    lone = items[0]
    first = asked.put_all(engine, code, key, [lone])
    quiz_ids = asked.put_all(engine, code, key, items, "pre")
    after = asked.put_all(engine, code, key, [lone])
    rows = {row.id: row for row in classes.all_questions(engine, code)}
    assert [asked.number(rows[i]) for i in quiz_ids] == list(range(1, len(items) + 1))
    assert [asked.number(rows[i]) for i in (*first, *after)] == [1, 2]
    assert rows[after[0]].position == len(items) + 2  # the class's order is kept apart, for the export
    assert asked.title(rows[quiz_ids[2]]) == "The quiz before the lesson, question 3"
    assert asked.title(rows[after[0]]) == "Question 2"

"""A question as the class store keeps it, and back: the ClassQuestion itself (classroom.questions' spec) and, for
the quiz, which round it belongs to (the one before the lessons, or the one after), so the teacher's page can
work out the class's gain. Also the few lookups every view of a class makes."""

from __future__ import annotations

import secrets
import time

from classroom.questions import ClassQuestion, from_spec, to_spec
from store import classes
from store.classes import asking
from store.engine import Engine

ROUNDS = {"pre": "the quiz before the lesson", "post": "the quiz after the lesson"}


def put(engine: Engine, code: str, key: str, q: ClassQuestion, round_: str | None = None,
        close_others: bool = True, batch: str | None = None) -> int | classes.Refusal:
    """Put q to the room (it opens and becomes the current question); its id, or why not. `batch` names the
    questions put together (a quiz's items), which the room then sees together, open, closed or revealed."""
    if round_ is not None and round_ not in ROUNDS:
        raise ValueError(f"A quiz round is one of {sorted(ROUNDS)}, not {round_!r}")
    spec = {"question": to_spec(q), "round": round_, "batch": batch}
    if batch is None:
        spec["number"] = 1 + sum(batch_of(row) is None for row in classes.all_questions(engine, code))
    return classes.put_question(engine, code, key, q.kind, spec, time.time(), close_others=close_others)


def put_all(engine: Engine, code: str, key: str, items: list[ClassQuestion],
            round_: str | None = None) -> list[int] | classes.Refusal:
    """Put the items to the room together, in one transaction (all or none): a quiz's items, or one question;
    their ids, or why not. Two or more share a batch name, so the room sees them together."""
    if round_ is not None and round_ not in ROUNDS:
        raise ValueError(f"A quiz round is one of {sorted(ROUNDS)}, not {round_!r}")
    batch = secrets.token_hex(4) if len(items) > 1 else None
    # the number the room sees: a quiz's items 1 to n, a question put alone counted among those put alone (so
    # the question after a seven-item quiz is not "Question 8")
    first = 1 if batch else 1 + sum(batch_of(row) is None for row in classes.all_questions(engine, code))
    return asking.put_questions(
        engine, code, key, [(q.kind, {"question": to_spec(q), "round": round_, "batch": batch, "number": first + i})
                            for i, q in enumerate(items)], time.time())


def question(row: classes.Question) -> ClassQuestion:
    """The ClassQuestion a stored question asks."""
    return from_spec(row.spec["question"])


def round_of(row: classes.Question) -> str | None:
    """"pre" or "post" for a quiz item, None for any other question."""
    return row.spec.get("round")


def number(row: classes.Question) -> int:
    """The question's number as the room sees it: its place in its quiz, or among the questions put alone."""
    return row.spec.get("number", row.position)  # a question put before numbers were kept: its place in the class


def title(row: classes.Question) -> str:
    """What the teacher's page calls the question: "Question 3", or "The quiz before the lesson, question 3"."""
    round_ = ROUNDS.get(round_of(row))
    return f"{round_.capitalize()}, question {number(row)}" if round_ else f"Question {number(row)}"


def batch_of(row: classes.Question) -> str | None:
    """The name shared by the questions put together with this one (a quiz's items), None for one put alone."""
    return row.spec.get("batch")


def shown(engine: Engine, code: str) -> list[classes.Question]:
    """What the room is asked now: every open question (the quiz opens its items together), or, when none is open,
    the latest one with those put together with it (closed, or revealed with its answer); nothing before the first
    question."""
    rows = classes.all_questions(engine, code)
    open_rows = [r for r in rows if r.state == "open"]
    if open_rows or not rows:
        return open_rows
    last = batch_of(rows[-1])
    return [r for r in rows if batch_of(r) == last] if last is not None else rows[-1:]

"""The students' side of the class store: joining, answering, one's own answer; the room's counts for the
projector; and, for the teacher's key alone, who answered what and the session's answers for a CSV."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import Engine, case, func, select

from store.classes import budgets
from store.classes.records import (
    AnswerRow,
    Refusal,
    Tally,
    as_id,
    live_row,
    session_row,
    student_numbers,
    teacher_row,
    upsert,
)
from store.codes import (
    ANSWER_MAX,
    NICKNAME_MAX,
    clean_answer,
    clean_character,
    clean_nickname,
    hash_secret,
    too_long,
)
from store.engine import reading, writing
from store.schema import answers, for_classes, questions, students

# A student's answers: BURST at once at most, then one more every BURST_S seconds, so that no BURST + 1 answers
# fall within less than BURST_S seconds, wherever that window is put (a fixed window lets 2 * BURST through at its
# edge). students.burst_start holds when the student's budget is whole again (GCRA, the cell-rate algorithm);
# burst_count is no longer used. A student who joins has a whole budget.
BURST, BURST_S = 10, 10.0
TOKEN_LENGTHS = range(16, 201)  # codes.new_token() makes 22 characters


def _token_ok(token: object) -> bool:
    return isinstance(token, str) and len(token) in TOKEN_LENGTHS


@for_classes
def join(engine: Engine, code: object, token: object, nickname: object, now: float,
         address: str | None = None) -> int | Refusal:
    """Join a live session as the student whose page keeps `token` (classroom.device); the student's id.
    Joining again with the same token is the same student, now with the nickname given (None: anonymous). A new
    student is refused once the class has its seats, or when the network `address` it comes from has made
    its budget of new students (store.classes.budgets; None: a caller with no address, the tests' and benches'
    own scripts); a student the teacher removed is refused for good."""
    if not _token_ok(token):
        return Refusal("no token")
    if too_long(nickname, clean_nickname(nickname), NICKNAME_MAX):
        return Refusal("nickname too long")
    with writing(engine) as conn:
        row = live_row(conn, code, now, lock=True)  # locked: two joins at once cannot both take the last seat
        if isinstance(row, Refusal):
            return row
        me = students.c.session_id == row.id, students.c.token_hash == hash_secret(token)
        found = conn.execute(select(students.c.id, students.c.removed_at).where(*me)).first()
        if found is not None and found.removed_at is not None:
            return Refusal("removed")
        if found is None and conn.scalar(select(func.count()).select_from(students).where(
                students.c.session_id == row.id, students.c.removed_at.is_(None))) >= row.seats:
            return Refusal("full")
        if found is None and address is not None and not budgets.spend(engine, conn, "join", address, now):
            return Refusal("busy address")
        insert = upsert(engine, students).values(
            session_id=row.id, token_hash=hash_secret(token), nickname=clean_nickname(nickname), joined_at=now,
            burst_start=now, burst_count=0)
        insert = insert.on_conflict_do_update(
            index_elements=[students.c.session_id, students.c.token_hash],
            set_={"nickname": insert.excluded.nickname})
        return conn.scalar(insert.returning(students.c.id))


@for_classes
def answer(engine: Engine, code: object, token: object, question_id: int | str, value: object,
           now: float) -> Refusal | None:
    """Record the student's answer (text, at most ANSWER_MAX characters) to an open question of a live session:
    None once it is committed, else why not. A one-character question's answer is kept as typed (a space is an
    answer); another's is one line, its ends stripped. A second answer replaces the first (`changes` counts the
    changes). Past the burst limit (BURST) an answer is refused, and nothing of a refused answer is written."""
    if clean_character(value) is None:  # nothing at all, however it is read
        return Refusal("empty")
    if not _token_ok(token):
        return Refusal("no token")
    if (question_id := as_id(question_id)) is None:
        return Refusal("no such question")
    with writing(engine) as conn:
        row = live_row(conn, code, now)
        if isinstance(row, Refusal):
            return row
        student_id = conn.scalar(select(students.c.id).where(
            students.c.session_id == row.id, students.c.token_hash == hash_secret(token),
            students.c.removed_at.is_(None)))
        if student_id is None:
            return Refusal("not joined")
        # FOR SHARE: a teacher's close or reveal waits until this answer is in, and none comes after it
        question = conn.execute(select(questions.c.state, questions.c.kind).where(
            questions.c.id == question_id, questions.c.session_id == row.id).with_for_update(read=True)).first()
        if question is None:
            return Refusal("no such question")
        if question.state != "open":
            return Refusal(question.state)
        text = (clean_character if question.kind == "char" else clean_answer)(value)
        if text is None:
            return Refusal("empty")
        if too_long(value, text, ANSWER_MAX):
            return Refusal("too long")
        if not _counted(conn, student_id, now):
            return Refusal("too many")
        insert = upsert(engine, answers).values(
            question_id=question_id, student_id=student_id, value=text, answered_at=now, changed_at=now, changes=0)
        same = answers.c.value == insert.excluded.value
        conn.execute(insert.on_conflict_do_update(
            index_elements=[answers.c.question_id, answers.c.student_id],
            set_={"value": insert.excluded.value,
                  "changed_at": case((same, answers.c.changed_at), else_=insert.excluded.changed_at),
                  "changes": answers.c.changes + case((same, 0), else_=1)}))
    return None


def _counted(conn, student_id: int, now: float) -> bool:
    """Take one answer from the student's budget, in one statement (two processes cannot both take the last):
    whether there was one. The budget is whole again at burst_start; each answer moves that BURST_S later."""
    whole_at = students.c.burst_start
    return conn.execute(students.update().where(
        students.c.id == student_id, whole_at <= now + (BURST - 1) * BURST_S,
    ).values(burst_start=case((whole_at > now, whole_at), else_=now) + BURST_S)).rowcount == 1


@for_classes
def counts(engine: Engine, question_id: int | str) -> Tally:
    """How many students' answer each value is, and how many answered: one grouped read of the question's
    rows, cheap enough for a projector that asks every second."""
    if (question_id := as_id(question_id)) is None:
        return Tally({}, 0)
    with reading(engine) as conn:
        found = conn.execute(select(answers.c.value, func.count()).where(answers.c.question_id == question_id)
                             .group_by(answers.c.value)).all()
    tally = {value: n for value, n in found}
    return Tally(tally, sum(tally.values()))


@for_classes
def answered_by(engine: Engine, question_ids: list[int | str]) -> int:
    """How many students answered at least one of the questions (a quiz's items, open together): one read."""
    ids = [i for i in map(as_id, question_ids) if i is not None]
    if not ids:
        return 0
    with reading(engine) as conn:
        return conn.scalar(select(func.count(func.distinct(answers.c.student_id)))
                           .where(answers.c.question_id.in_(ids)))


@for_classes
def joined(engine: Engine, code: object) -> int:
    """How many students are in the session (joined, not removed; 0 for an unknown code)."""
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal):
            return 0
        return conn.scalar(select(func.count()).select_from(students).where(
            students.c.session_id == row.id, students.c.removed_at.is_(None)))


@for_classes
def standing(engine: Engine, code: object, token: object) -> Literal["in", "removed", "new"]:
    """Whether the student with `token` is in the session `code`, was removed from it by the teacher, or has not
    joined it."""
    if not _token_ok(token):
        return "new"
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal):
            return "new"
        found = conn.execute(select(students.c.removed_at).where(
            students.c.session_id == row.id, students.c.token_hash == hash_secret(token))).first()
    return "new" if found is None else "in" if found.removed_at is None else "removed"


def enrolled(engine: Engine, code: object, token: object) -> bool:
    """Whether the student with `token` has joined the session `code` and has not been removed from it."""
    return standing(engine, code, token) == "in"


@for_classes
def my_answer(engine: Engine, question_id: int | str, token: object) -> str | None:
    """The answer the student with `token` gave to the question, or None."""
    if not _token_ok(token) or (question_id := as_id(question_id)) is None:
        return None
    with reading(engine) as conn:
        return conn.scalar(
            select(answers.c.value)
            .join(students, students.c.id == answers.c.student_id)
            .join(questions, questions.c.id == answers.c.question_id)
            .where(answers.c.question_id == question_id, students.c.token_hash == hash_secret(token),
                   students.c.session_id == questions.c.session_id))


@for_classes
def answers_of(engine: Engine, code: object, key: object, question_id: int | str) -> list[AnswerRow] | Refusal:
    """Teacher only: every answer to the question, with each student's number and nickname, in join order."""
    with reading(engine) as conn:
        row = teacher_row(conn, code, key)
        if isinstance(row, Refusal):
            return row
        question_id = as_id(question_id)
        if question_id is None or conn.scalar(select(questions.c.id).where(
                questions.c.id == question_id, questions.c.session_id == row.id)) is None:
            return Refusal("no such question")
        numbers = student_numbers(conn, row.id)
        found = conn.execute(
            select(answers, students.c.nickname).join(students, students.c.id == answers.c.student_id)
            .where(answers.c.question_id == question_id).order_by(answers.c.student_id)).all()
    return [AnswerRow(numbers[a.student_id], a.nickname, a.value, a.answered_at, a.changed_at, a.changes)
            for a in found]


@for_classes
def export_rows(engine: Engine, code: object, key: object, with_names: bool = False) -> list[dict] | Refusal:
    """Teacher only: every answer of the session as plain dicts for a CSV, by question then student:
    question (its position), kind, student (a number per session, never the token), nickname (only
    `with_names`, "" for an anonymous one), answer, answered_at and changed_at (ISO 8601, UTC), changes."""
    with reading(engine) as conn:
        row = teacher_row(conn, code, key)
        if isinstance(row, Refusal):
            return row
        numbers = student_numbers(conn, row.id)
        found = conn.execute(
            select(answers, questions.c.position, questions.c.kind, students.c.nickname)
            .join(questions, questions.c.id == answers.c.question_id)
            .join(students, students.c.id == answers.c.student_id)
            .where(questions.c.session_id == row.id)
            .order_by(questions.c.position, answers.c.student_id)).all()
    rows = []
    for a in found:
        named = {"nickname": a.nickname or ""} if with_names else {}
        rows.append({"question": a.position, "kind": a.kind, "student": numbers[a.student_id], **named,
                     "answer": a.value, "answered_at": _iso(a.answered_at), "changed_at": _iso(a.changed_at),
                     "changes": a.changes})
    return rows


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")

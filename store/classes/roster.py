"""Who is in a class, for its teacher alone: the students (by number and nickname), how many seats the class
has, and removing a student: their answers are deleted and their browser cannot join that class again (a
second ballot from a student who found a way round "one browser, one student" is the teacher's to take out).

A student's number is their place in the order of joining, removed students included, so a number in an export
names the same student before and after a removal.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import Engine, delete, func, select

from store.classes.records import Refusal, student_numbers, teacher_row
from store.engine import reading, writing
from store.schema import SEATS_MAX, answers, class_sessions, for_classes, students


class Student(NamedTuple):
    number: int  # 1, 2, ... in the order they joined (store.classes.records.student_numbers)
    nickname: str | None  # None: anonymous
    answers: int  # how many questions they answered


@for_classes
def roster(engine: Engine, code: object, key: object) -> list[Student] | Refusal:
    """Teacher only: the students in the class (not removed), in join order."""
    with reading(engine) as conn:
        row = teacher_row(conn, code, key)
        if isinstance(row, Refusal):
            return row
        numbers = student_numbers(conn, row.id)
        given = (select(answers.c.student_id, func.count().label("n")).group_by(answers.c.student_id)
                 .subquery())
        found = conn.execute(
            select(students.c.id, students.c.nickname, func.coalesce(given.c.n, 0))
            .outerjoin(given, given.c.student_id == students.c.id)
            .where(students.c.session_id == row.id, students.c.removed_at.is_(None))
            .order_by(students.c.id)).all()
    return [Student(numbers[i], nickname, n) for i, nickname, n in found]


@for_classes
def remove_student(engine: Engine, code: object, key: object, number: int, now: float) -> Refusal | None:
    """Teacher only: take student `number` out of the class: their answers are deleted from every count, and
    their browser is refused if it tries to join again."""
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        by_number = {n: i for i, n in student_numbers(conn, row.id).items()}
        student_id = by_number.get(number) if type(number) is int else None
        if student_id is None or conn.scalar(select(students.c.removed_at).where(
                students.c.id == student_id)) is not None:
            return Refusal("no such student")
        conn.execute(delete(answers).where(answers.c.student_id == student_id))
        conn.execute(students.update().where(students.c.id == student_id).values(removed_at=now))
    return None


@for_classes
def set_seats(engine: Engine, code: object, key: object, seats: int) -> Refusal | None:
    """Teacher only: how many students the class takes (1 to SEATS_MAX). Fewer than have joined removes nobody;
    it only stops further joins."""
    if type(seats) is not int or not 1 <= seats <= SEATS_MAX:
        return Refusal("seats")
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        conn.execute(class_sessions.update().where(class_sessions.c.id == row.id).values(seats=seats))
    return None

"""What the class store returns (sessions, questions, tallies, answers, refusals) and the lookups that both the
teacher's side (store.classes.sessions) and the students' side (store.classes.answers) make."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, NamedTuple

from sqlalchemy import Connection, Engine, Row, select
from sqlalchemy.dialects import postgresql, sqlite

from store.codes import ANSWER_MAX, CODE_RULE, NICKNAME_MAX, normal_code, same_secret
from store.schema import SEATS_MAX, class_sessions, students

Reason = Literal["not a code", "unknown", "ended", "expired", "wrong key", "no such question", "no token",
                 "not joined", "closed", "revealed", "stays revealed", "empty", "too many", "full", "removed",
                 "no such student", "seats", "too long",
                 "nickname too long", "busy address", "guesses"]
MESSAGES: dict[str, str] = {
    "not a code": f"That is not a class code: {CODE_RULE}.",
    "unknown": "No class has this code (or its data has been deleted). Check it against the projector.",
    "ended": "This class has ended.",
    "expired": "This class's code has expired: ask your teacher for a new one.",
    "wrong key": "This teacher key does not open this class: nothing was changed.",
    "no such question": "That question is not part of this class.",
    "no token": "This page does not know you yet: open the join link again.",
    "not joined": "Join the class first, then answer.",
    "closed": "This question is closed: it takes no more answers.",
    "revealed": "The answer has been shown: this question takes no more answers.",
    "stays revealed": "A question whose answer has been shown stays revealed.",
    "empty": "Nothing was sent: the answer is empty.",
    "too many": "Too many answers at once: wait ten seconds, then send it again.",
    "full": "This class is full: it takes as many students as your teacher said. Ask your teacher to let more in.",
    "removed": "Your teacher removed this browser from the class: it cannot join it again.",
    "no such student": "That student is not in this class (removed already?): nothing was changed.",
    "seats": f"A class takes 1 to {SEATS_MAX} students: nothing was changed.",
    "too long": f"Nothing was sent: an answer is at most {ANSWER_MAX} characters.",
    "nickname too long": f"A nickname is at most {NICKNAME_MAX} characters: shorten it, then join.",
    "busy address": "Very many students have just joined from this network: wait a minute, then press Join again.",
    "guesses": "Too many wrong class codes from this network: wait a minute, check the code on the projector, "
               "then try again.",
}


@dataclass(frozen=True)
class Refusal:
    """Why a call did nothing; `message` is the sentence to show. Nothing was written."""

    reason: Reason

    @property
    def message(self) -> str:
        return MESSAGES[self.reason]


@dataclass(frozen=True)
class Session:
    id: int
    code: str  # canonical, e.g. "K7M4QX" (codes.shown_code gives "K7M-4QX")
    title: str
    created_at: float
    expires_at: float
    ended_at: float | None
    current_question_id: int | None
    seats: int  # how many students may join
    key_generation: int  # how many times the teacher made a new key (classroom.device derives this one's)

    def status(self, now: float) -> Literal["live", "ended", "expired"]:
        return "ended" if self.ended_at is not None else "expired" if now >= self.expires_at else "live"


@dataclass(frozen=True)
class Question:
    id: int
    session_id: int
    position: int  # 1, 2, ... in the order put
    kind: str
    spec: dict
    state: Literal["open", "closed", "revealed"]
    opened_at: float
    closed_at: float | None
    revealed_at: float | None


class Tally(NamedTuple):
    counts: dict[str, int]  # value -> how many students' latest answer it is
    total: int  # students who answered


@dataclass(frozen=True)
class AnswerRow:
    student: int  # 1, 2, ... in the order students joined this session: stable, never the token
    nickname: str | None  # None: anonymous
    value: str
    answered_at: float
    changed_at: float
    changes: int


def session_of(row: Row) -> Session:
    return Session(row.id, row.code, row.title, row.created_at, row.expires_at, row.ended_at,
                   row.current_question_id, row.seats, row.key_generation)


def question_of(row: Row) -> Question:
    return Question(row.id, row.session_id, row.position, row.kind, json.loads(row.spec), row.state,
                    row.opened_at, row.closed_at, row.revealed_at)


def session_row(conn: Connection, code: object, lock: bool = False) -> Row | Refusal:
    """The session a code (as typed) names; `lock` holds its row until the transaction ends (PostgreSQL)."""
    canonical = normal_code(code)
    if canonical is None:
        return Refusal("not a code")
    query = select(class_sessions).where(class_sessions.c.code == canonical)
    row = conn.execute(query.with_for_update() if lock else query).first()
    return row if row is not None else Refusal("unknown")


def live_row(conn: Connection, code: object, now: float, lock: bool = False) -> Row | Refusal:
    """The session a code names while it is live; else why not (not a code, unknown, ended, expired)."""
    row = session_row(conn, code, lock)
    if isinstance(row, Refusal):
        return row
    status = session_of(row).status(now)
    return row if status == "live" else Refusal(status)


def teacher_row(conn: Connection, code: object, key: object, lock: bool = False) -> Row | Refusal:
    """The session when `key` is its teacher's key (compared in constant time), else a refusal."""
    row = session_row(conn, code, lock)
    if isinstance(row, Refusal):
        return row
    return row if same_secret(key, row.key_hash) else Refusal("wrong key")


def as_id(value: object) -> int | None:
    """A row id as a page may hold it (an int, or digits from a URL), or None when it cannot be one."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        value = int(value)
    return value if type(value) is int and 0 < value < 2**63 else None


def upsert(engine: Engine, table):
    """An INSERT that can say ON CONFLICT, in the engine's dialect (the same statement on both)."""
    return (postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert)(table)


def student_numbers(conn: Connection, session_id: int) -> dict[int, int]:
    """Student id -> 1, 2, ... in the order they joined the session: how exports name anonymous students."""
    ids = conn.scalars(select(students.c.id).where(students.c.session_id == session_id).order_by(students.c.id))
    return {student_id: n for n, student_id in enumerate(ids, start=1)}

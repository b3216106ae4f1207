"""The teacher's side of the class store: start and end a session, put questions, open, close and reveal them;
and what every page reads about them (the session a code names, the current question). And how long a class is
kept: keep_days() days after it ends or expires (whichever is first), then purge deletes it with its questions,
students and answers; delete_session deletes one at once, for its teacher."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from sqlalchemy import Connection, Engine, and_, case, exc, func, select

from classroom.codes import TITLE_MAX, clean_text, hash_secret, new_code, new_key
from classroom.database import guarded, reading, writing
from classroom.records import (
    Question,
    Refusal,
    Session,
    as_id,
    live_row,
    question_of,
    session_of,
    session_row,
    teacher_row,
)
from classroom.schema import SEATS, SEATS_MAX, STATES, StoreError, class_sessions, questions
from ui.compute import sql

SPEC_MAX = 64_000  # characters of a question's JSON spec
KIND_MAX = 40
KEEP_ENV = "ATTENTION_LAB_KEEP_DAYS"
# Four weeks after a class: time to export, mark and come back to a question over a holiday week; past it,
# pupils' nicknames and answers serve no lesson, so they go.
KEEP_DAYS = 28
KEEP_MAX_DAYS = 3650
DAY_S = 86_400


def keep_days() -> int:
    """Whole days a class (its questions, students, answers) is kept after it ends or expires: the setting
    ATTENTION_LAB_KEEP_DAYS, else KEEP_DAYS. The one place it is read. StoreError when it is not such a number:
    a mistyped setting must not keep pupils' data longer than someone meant."""
    text = os.environ.get(KEEP_ENV, "").strip()
    if not text:
        return KEEP_DAYS
    if not (text.isascii() and text.isdigit()) or int(text) > KEEP_MAX_DAYS:
        raise StoreError(f"The setting {KEEP_ENV} is how many whole days a class is kept after it ends, 0 to "
                         f"{KEEP_MAX_DAYS}; it says {text[:20]!r}. Fix it, or leave it out for {KEEP_DAYS} days.")
    return int(text)


@guarded
def start_session(engine: Engine, now: float, ttl_s: float = 4 * 3600, title: str = "",
                  key_for: Callable[[str], str] | None = None, seats: int = SEATS) -> tuple[str, str]:
    """A new class session, live for `ttl_s` seconds, taking `seats` students: (join code, teacher key). No
    student may see the key. `key_for(code)` gives the key for the code drawn (a browser's own,
    classroom.device); else a random one."""
    if not ttl_s > 0:
        raise ValueError(f"A session must last some time: ttl_s = {ttl_s}")
    if type(seats) is not int or not 1 <= seats <= SEATS_MAX:
        raise ValueError(f"A class takes 1 to {SEATS_MAX} students, not {seats!r}")
    for _ in range(10):  # 10 collisions in a row would need ~1e8 codes in use: the loop is a formality
        code = new_code()
        key = key_for(code) if key_for is not None else new_key()
        try:
            with writing(engine) as conn:
                _purge(conn, now)  # starting a class is the cheap moment to forget the old ones
                conn.execute(class_sessions.insert().values(
                    code=code, key_hash=hash_secret(key), title=clean_text(title, TITLE_MAX) or "",
                    created_at=now, expires_at=now + ttl_s, seats=seats))
            return code, key
        except exc.IntegrityError:
            continue
    raise StoreError("No free join code was found. Try again.")


@guarded
def find_session(engine: Engine, code: object, now: float) -> Session | Refusal:
    """The live session a join code (as typed) names, or why not: not a code, unknown, ended, expired."""
    with reading(engine) as conn:
        row = live_row(conn, code, now)
    return row if isinstance(row, Refusal) else session_of(row)


@guarded
def teacher(engine: Engine, code: object, key: object) -> Session | Refusal:
    """The session when `key` is its teacher's key, live, ended or expired alike (Session.status says which)."""
    with reading(engine) as conn:
        row = teacher_row(conn, code, key)
    return row if isinstance(row, Refusal) else session_of(row)


@guarded
def end_session(engine: Engine, code: object, key: object, now: float) -> Refusal | None:
    """End the session: it takes no more students or answers. Ending an ended session changes nothing."""
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        if row.ended_at is None:
            conn.execute(class_sessions.update().where(class_sessions.c.id == row.id).values(ended_at=now))
    return None


@guarded
def delete_session(engine: Engine, code: object, key: object) -> Refusal | None:
    """Delete the session now, with its questions, students and answers (the tables' ON DELETE CASCADE; foreign
    keys are on for every SQLite connection the store makes). Its code then opens nothing."""
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        conn.execute(class_sessions.delete().where(class_sessions.c.id == row.id))
    sql.reclaim(engine)  # the freed pages leave a SQLite file, with what they held
    return None


@guarded
def purge(engine: Engine, now: float) -> int:
    """Delete every session whose keeping time is over (keep_days() after it ended or expired); how many."""
    with writing(engine) as conn:
        deleted = _purge(conn, now)
    if deleted:
        sql.reclaim(engine)
    return deleted


def _purge(conn: Connection, now: float) -> int:
    ended, expires = class_sessions.c.ended_at, class_sessions.c.expires_at
    over = case((and_(ended.is_not(None), ended < expires), ended), else_=expires)  # the first of the two
    return conn.execute(class_sessions.delete().where(over < now - keep_days() * DAY_S)).rowcount


@guarded
def put_question(engine: Engine, code: object, key: object, kind: str, spec: dict, now: float,
                 close_others: bool = True) -> int | Refusal:
    """Put a question to the room: it is open and becomes the current one; its id. Every other open question
    of the session is closed, unless `close_others` is False (a quiz whose questions are open together).
    `spec` is what the pages need to ask it and to compute its answer, as JSON."""
    if not isinstance(kind, str) or not 0 < len(kind) <= KIND_MAX:
        raise ValueError(f"A question's kind is a short name, e.g. 'choice', not {kind!r}")
    try:
        text = json.dumps(spec, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"A question's spec must be plain JSON (no NaN, sets or arrays): {error}") from error
    if len(text) > SPEC_MAX:
        raise ValueError(f"A question's spec is at most {SPEC_MAX} characters of JSON, this one {len(text)}")
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)  # locked: two tabs' questions get distinct positions
        if isinstance(row, Refusal):
            return row
        if (refusal := _not_live(row, now)) is not None:
            return refusal
        in_session = questions.c.session_id == row.id
        if close_others:
            conn.execute(questions.update().where(in_session, questions.c.state == "open")
                         .values(state="closed", closed_at=now))
        position = conn.scalar(select(func.coalesce(func.max(questions.c.position), 0) + 1).where(in_session))
        question_id = conn.execute(questions.insert().values(
            session_id=row.id, position=position, kind=kind, spec=text, state="open", opened_at=now,
        )).inserted_primary_key[0]
        conn.execute(class_sessions.update().where(class_sessions.c.id == row.id)
                     .values(current_question_id=question_id))
    return question_id


@guarded
def set_state(engine: Engine, code: object, key: object, question_id: int | str, state: str,
              now: float) -> Refusal | None:
    """Move a question: open -> closed -> revealed (revealing an open one closes it too); a closed one may
    open again, and is then the current one; a revealed one stays revealed. The same state again: no change.
    Closing and revealing work in an ended or expired session too; opening needs a live one."""
    if state not in STATES:
        raise ValueError(f"A question's state is one of {STATES}, not {state!r}")
    with writing(engine) as conn:
        row = teacher_row(conn, code, key)
        if isinstance(row, Refusal):
            return row
        if state == "open" and (refusal := _not_live(row, now)) is not None:
            return refusal
        if (question_id := as_id(question_id)) is None:
            return Refusal("no such question")
        query = select(questions).where(questions.c.id == question_id, questions.c.session_id == row.id)
        # FOR UPDATE: answers being written to it commit first (they hold it FOR SHARE), none after
        question = conn.execute(query.with_for_update()).first()
        if question is None:
            return Refusal("no such question")
        if question.state == state:
            return None
        if question.state == "revealed":
            return Refusal("stays revealed")
        changes: dict = {"state": state}
        if state == "open":
            changes.update(opened_at=now, closed_at=None)
            conn.execute(class_sessions.update().where(class_sessions.c.id == row.id)
                         .values(current_question_id=question_id))
        elif state == "revealed":
            changes.update(revealed_at=now, closed_at=question.closed_at or now)
        else:
            changes.update(closed_at=now)
        conn.execute(questions.update().where(questions.c.id == question_id).values(**changes))
    return None


@guarded
def current_question(engine: Engine, code: object) -> Question | None:
    """The question the room sees now (the last put or reopened), whatever its state; None before the first.
    Its spec may hold the computed answer: a student's page shows it only once the state is "revealed"."""
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal) or row.current_question_id is None:
            return None
        found = conn.execute(select(questions).where(questions.c.id == row.current_question_id)).first()
    return question_of(found) if found is not None else None


@guarded
def all_questions(engine: Engine, code: object) -> list[Question]:
    """Every question of the session, in the order put (an unknown code has none)."""
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal):
            return []
        found = conn.execute(select(questions).where(questions.c.session_id == row.id).order_by(questions.c.position))
        return [question_of(q) for q in found]


def _not_live(row, now: float) -> Refusal | None:
    status = session_of(row).status(now)
    return None if status == "live" else Refusal(status)

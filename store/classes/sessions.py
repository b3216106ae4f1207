"""The teacher's side of the class store: start and end a session, put questions, open, close and reveal them;
and what every page reads about them (the session a code names, the current question). And how long a class is
kept: keep_days() days after it ends or expires (whichever is first), then purge deletes it with its questions,
students and answers; delete_session deletes one at once, for its teacher."""

from __future__ import annotations

import os
from collections.abc import Callable

from sqlalchemy import Connection, Engine, and_, case, exc, select

from store import engine as sql
from store.classes import budgets
from store.classes.records import (
    Question,
    Refusal,
    Session,
    live_row,
    question_of,
    session_of,
    session_row,
    teacher_row,
)
from store.codes import TITLE_MAX, clean_text, hash_secret, new_code, new_key
from store.engine import reading, writing
from store.errors import StoreError
from store.schema import SEATS, SEATS_MAX, class_sessions, for_classes, questions

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


@for_classes
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


@for_classes
def find_session(engine: Engine, code: object, now: float) -> Session | Refusal:
    """The live session a join code (as typed) names, or why not: not a code, unknown, ended, expired."""
    with reading(engine) as conn:
        row = live_row(conn, code, now)
    return row if isinstance(row, Refusal) else session_of(row)


@for_classes
def look_up(engine: Engine, code: object, now: float, address: str) -> Session | Refusal:
    """find_session for a page a code was brought to (typed, or a link), from a network address: an address past
    its budget of wrong codes (store.classes.budgets) is refused before the code is read, and a code that opens no
    class takes one from its budget, so join codes cannot be tried one after another."""
    with reading(engine) as conn:
        if budgets.spent(conn, "guess", address, now):
            return Refusal("guesses")
        row = live_row(conn, code, now)
    if row == Refusal("unknown"):
        with writing(engine) as conn:
            budgets.spend(engine, conn, "guess", address, now)
    return row if isinstance(row, Refusal) else session_of(row)


@for_classes
def teacher(engine: Engine, code: object, key: object) -> Session | Refusal:
    """The session when `key` is its teacher's key, live, ended or expired alike (Session.status says which)."""
    with reading(engine) as conn:
        row = teacher_row(conn, code, key)
    return row if isinstance(row, Refusal) else session_of(row)


@for_classes
def key_generation(engine: Engine, code: object) -> int:
    """How many times the teacher of the class `code` made a new key (0 for no such class): not a secret, the
    key of each generation is (classroom.device)."""
    with reading(engine) as conn:
        row = session_row(conn, code)
    return 0 if isinstance(row, Refusal) else row.key_generation


@for_classes
def new_teacher_key(engine: Engine, code: object, key: object,
                    key_for: Callable[[str, int], str] | None = None) -> str | Refusal:
    """Make the class's teacher key anew, for its teacher: the new key, or why not. Every earlier key stops
    working at once, wherever it was pasted. `key_for(code, generation)` gives the key of the new generation
    (the browser's own, classroom.device, so that browser finds it again after a reload); else a random one."""
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        generation = row.key_generation + 1
        fresh = key_for(row.code, generation) if key_for is not None else new_key()
        conn.execute(class_sessions.update().where(class_sessions.c.id == row.id).values(
            key_hash=hash_secret(fresh), key_generation=generation))
    return fresh


@for_classes
def end_session(engine: Engine, code: object, key: object, now: float) -> Refusal | None:
    """End the session: it takes no more students or answers. Ending an ended session changes nothing."""
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)
        if isinstance(row, Refusal):
            return row
        if row.ended_at is None:
            conn.execute(class_sessions.update().where(class_sessions.c.id == row.id).values(ended_at=now))
    return None


@for_classes
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


@for_classes
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
    budgets.forget_whole(conn, now)
    return conn.execute(class_sessions.delete().where(over < now - keep_days() * DAY_S)).rowcount


@for_classes
def current_question(engine: Engine, code: object) -> Question | None:
    """The question the room sees now (the last put or reopened), whatever its state; None before the first.
    Its spec may hold the computed answer: a student's page shows it only once the state is "revealed"."""
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal) or row.current_question_id is None:
            return None
        found = conn.execute(select(questions).where(questions.c.id == row.current_question_id)).first()
    return question_of(found) if found is not None else None


@for_classes
def all_questions(engine: Engine, code: object) -> list[Question]:
    """Every question of the session, in the order put (an unknown code has none)."""
    with reading(engine) as conn:
        row = session_row(conn, code)
        if isinstance(row, Refusal):
            return []
        found = conn.execute(select(questions).where(questions.c.session_id == row.id).order_by(questions.c.position))
        return [question_of(q) for q in found]

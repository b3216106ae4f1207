"""Questions put to the room, and moved (closed, reopened, revealed), in one transaction: a quiz's items are all
put or none, and all revealed or none, so a failure half-way (a database gone, a lock timed out) leaves no half
quiz. One question is the one-item case (put_question, set_state).

    put_questions(engine, code, key, items=[(kind, spec)], now, close_others=True) -> [question id] | Refusal
    set_states(engine, code, key, question_ids, state, now) -> Refusal | None
    put_question(engine, code, key, kind, spec, now, close_others=True) -> question id | Refusal
    set_state(engine, code, key, question_id, state, now) -> Refusal | None
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Connection, Engine, Row, func, select

from store.classes.records import Refusal, as_id, session_of, teacher_row
from store.engine import writing
from store.schema import STATES, class_sessions, for_classes, questions

SPEC_MAX = 64_000  # characters of a question's JSON spec
KIND_MAX = 40


class _Undone(Exception):
    """A refusal met after something was written: raised so that the transaction rolls back."""

    def __init__(self, refusal: Refusal):
        super().__init__(refusal.reason)
        self.refusal = refusal


def spec_text(kind: object, spec: object) -> str:
    """A question's kind checked and its spec as the JSON stored; ValueError for a bug in the calling page."""
    if not isinstance(kind, str) or not 0 < len(kind) <= KIND_MAX:
        raise ValueError(f"A question's kind is a short name, e.g. 'choice', not {kind!r}")
    try:
        text = json.dumps(spec, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"A question's spec must be plain JSON (no NaN, sets or arrays): {error}") from error
    if len(text) > SPEC_MAX:
        raise ValueError(f"A question's spec is at most {SPEC_MAX} characters of JSON, this one {len(text)}")
    return text


@for_classes
def put_questions(engine: Engine, code: object, key: object, items: Sequence[tuple[str, dict]],
                  now: float, close_others: bool = True) -> list[int] | Refusal:
    """Put the questions to the room together, open, in order; their ids. The last is the current one. Every
    other open question of the session is closed, unless `close_others` is False (a quiz's items put one by
    one). All or none: nothing is written when any is refused. A spec is what the pages need to ask the question
    and to compute its answer, as JSON."""
    texts = [(kind, spec_text(kind, spec)) for kind, spec in items]
    if not texts:
        raise ValueError("Put one question or more.")
    with writing(engine) as conn:
        row = teacher_row(conn, code, key, lock=True)  # locked: two tabs' questions get distinct positions
        if isinstance(row, Refusal):
            return row
        if (status := session_of(row).status(now)) != "live":
            return Refusal(status)
        in_session = questions.c.session_id == row.id
        if close_others:
            conn.execute(questions.update().where(in_session, questions.c.state == "open")
                         .values(state="closed", closed_at=now))
        first = conn.scalar(select(func.coalesce(func.max(questions.c.position), 0) + 1).where(in_session))
        ids = [conn.execute(questions.insert().values(
            session_id=row.id, position=first + n, kind=kind, spec=text, state="open", opened_at=now,
        )).inserted_primary_key[0] for n, (kind, text) in enumerate(texts)]
        conn.execute(class_sessions.update().where(class_sessions.c.id == row.id)
                     .values(current_question_id=ids[-1]))
    return ids


@for_classes
def set_states(engine: Engine, code: object, key: object, question_ids: Sequence[int | str], state: str,
               now: float) -> Refusal | None:
    """Move every question to `state` by set_state's rules (open -> closed -> revealed, a revealed one stays
    revealed, opening needs a live session), in one transaction: all move, or none when any is refused."""
    if state not in STATES:
        raise ValueError(f"A question's state is one of {STATES}, not {state!r}")
    try:
        with writing(engine) as conn:
            row = teacher_row(conn, code, key)
            if isinstance(row, Refusal):
                return row
            if state == "open" and (status := session_of(row).status(now)) != "live":
                return Refusal(status)
            for question_id in question_ids:
                if (refusal := _move(conn, row, question_id, state, now)) is not None:
                    raise _Undone(refusal)
    except _Undone as undone:
        return undone.refusal
    return None


def put_question(engine: Engine, code: object, key: object, kind: str, spec: dict, now: float,
                 close_others: bool = True) -> int | Refusal:
    """Put one question to the room: open, and the current one; its id (put_questions' rules)."""
    put = put_questions(engine, code, key, [(kind, spec)], now, close_others)
    return put if isinstance(put, Refusal) else put[0]


def set_state(engine: Engine, code: object, key: object, question_id: int | str, state: str,
              now: float) -> Refusal | None:
    """Move a question: open -> closed -> revealed (revealing an open one closes it too); a closed one may
    open again, and is then the current one; a revealed one stays revealed. The same state again: no change.
    Closing and revealing work in an ended or expired session too; opening needs a live one."""
    return set_states(engine, code, key, [question_id], state, now)


def _move(conn: Connection, session: Row, question_id: int | str, state: str, now: float) -> Refusal | None:
    """One question of the session to `state`, inside the caller's transaction; why not, if not."""
    if (question_id := as_id(question_id)) is None:
        return Refusal("no such question")
    query = select(questions).where(questions.c.id == question_id, questions.c.session_id == session.id)
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
        conn.execute(class_sessions.update().where(class_sessions.c.id == session.id)
                     .values(current_question_id=question_id))
    elif state == "revealed":
        changes.update(revealed_at=now, closed_at=question.closed_at or now)
    else:
        changes.update(closed_at=now)
    conn.execute(questions.update().where(questions.c.id == question_id).values(**changes))
    return None

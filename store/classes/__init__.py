"""The class mode's store, its one entry: class sessions, the questions a teacher puts, who joined, and their
answers, in a SQL database (SQLite or PostgreSQL, the same code). No Streamlit here.

Every function takes an Engine first (st.connection("sql").engine, or engine_for(url)) and, where time matters,
`now` in seconds since the epoch (time.time()), so a test decides what time it is. An engine's first use makes
or upgrades the tables (prepare). Every call is one transaction: an answer the store accepted is committed
before `answer` returns.

    engine_for(url) -> Engine
    prepare(engine) -> None                                      tables made or upgraded; SchemaTooNew if newer
    put_questions(...), set_states(...)                           several at once: store.classes.asking

    start_session(engine, now, ttl_s=4*3600, title="", key_for=None, seats=SEATS) -> (code, key)
    find_session(engine, code, now) -> Session | Refusal          not a code / unknown / ended / expired
    look_up(engine, code, now, address) -> Session | Refusal      find_session, wrong codes limited per address
    teacher(engine, code, key) -> Session | Refusal               wrong key
    new_teacher_key(engine, code, key, key_for=None) -> key | Refusal   every earlier key stops working
    key_generation(engine, code) -> int                          how many new keys the teacher made
    end_session(engine, code, key, now) -> Refusal | None
    delete_session(engine, code, key) -> Refusal | None           the class and all it holds, now
    purge(engine, now) -> int                                     classes past their keeping time deleted
    keep_days() -> int                                            ATTENTION_LAB_KEEP_DAYS, else KEEP_DAYS (28)
    put_question(engine, code, key, kind, spec, now, close_others=True) -> question id | Refusal
    set_state(engine, code, key, question_id, state, now) -> Refusal | None
    current_question(engine, code) -> Question | None
    all_questions(engine, code) -> [Question]

    join(engine, code, token, nickname, now, address=None) -> student id | Refusal   new students limited per address
    answer(engine, code, token, question_id, value, now) -> Refusal | None
    counts(engine, question_id) -> Tally(counts={value: n}, total)
    answered_by(engine, question_ids) -> int                     students who answered any of them
    joined(engine, code) -> int                                  students in the class (not removed)
    roster(engine, code, key) -> [Student] | Refusal             teacher: who is in, by number
    remove_student(engine, code, key, number, now) -> Refusal | None   answers deleted, no joining again
    set_seats(engine, code, key, seats) -> Refusal | None        how many may join (1 to SEATS_MAX)
    standing(engine, code, token) -> 'in' | 'removed' | 'new'     enrolled(...): standing == 'in'
    enrolled(engine, code, token) -> bool                        the student joined (not removed)
    my_answer(engine, question_id, token) -> str | None
    answers_of(engine, code, key, question_id) -> [AnswerRow] | Refusal
    export_rows(engine, code, key, with_names=False) -> [dict] | Refusal

What a person can get wrong (a mistyped code, a wrong teacher key, a closed question, an empty answer, too many
answers at once) comes back as a Refusal, whose `message` is a sentence to show; nothing is written. A database
that is missing, locked or down raises StoreError, whose str() is a sentence to show. A bug in the calling page
(a state that is not one, a spec that is not JSON) raises ValueError. Codes, keys and tokens: store.codes.
Only the teacher's key (compared in constant time with its stored hash) changes a session or reads who answered
what; a student is known by a token the student's page keeps, and the store keeps only its hash.

Nothing is kept for ever: a class, with its questions, students and answers, is deleted keep_days() days after it
ended or expired, whichever came first (purge: at every start_session, and hourly from classroom.connection), and
its teacher can delete it sooner (delete_session). On SQLite the freed pages leave the file at once.
"""

from __future__ import annotations

from sqlalchemy import Engine

from store.classes.answers import (
    BURST,
    BURST_S,
    answer,
    answered_by,
    answers_of,
    counts,
    enrolled,
    export_rows,
    join,
    joined,
    my_answer,
    standing,
)
from store.classes.asking import put_question, set_state
from store.classes.records import AnswerRow, Question, Refusal, Session, Tally
from store.classes.roster import Student, remove_student, roster, set_seats
from store.classes.sessions import (
    KEEP_DAYS,
    KEEP_ENV,
    all_questions,
    current_question,
    delete_session,
    end_session,
    find_session,
    keep_days,
    key_generation,
    look_up,
    new_teacher_key,
    purge,
    start_session,
    teacher,
)
from store.engine import engine_for
from store.errors import SchemaTooNew, StoreError
from store.schema import SCHEMA_VERSION, SEATS, SEATS_MAX, for_classes

__all__ = [
    "BURST", "BURST_S", "KEEP_DAYS", "KEEP_ENV", "SCHEMA_VERSION", "SEATS", "SEATS_MAX", "AnswerRow",
    "Question", "Refusal", "SchemaTooNew", "Session", "StoreError", "Student", "Tally", "all_questions",
    "answer", "answered_by", "answers_of", "counts", "current_question", "delete_session", "end_session",
    "engine_for", "enrolled", "export_rows", "find_session", "join", "joined", "keep_days", "key_generation",
    "look_up", "my_answer", "new_teacher_key", "prepare", "purge", "put_question", "remove_student", "roster",
    "set_seats", "set_state", "standing", "start_session", "teacher",
]


@for_classes
def prepare(engine: Engine) -> None:
    """Make `engine` ready for the store: its connection settings, and its tables made or upgraded. Every call
    of the store does it first (once per engine); an app may call it at start to learn early that the database
    is there. Raises StoreError with a sentence to show (SchemaTooNew for tables newer than this code)."""

"""Every table of the app's database, and how each part's tables are made or brought up to date once per engine:
the class mode's tables, their version and the steps that bring an older database up to it (prepare_classes), and
the trained runs' table (prepare_runs). The statements that read and write them are store.classes' and store.runs'.

The class tables: one MetaData, SQLAlchemy Core, the same on SQLite and PostgreSQL. Times are seconds since the
epoch (floats) given by the caller. Keys and tokens are stored as SHA-256 hex digests only (store.codes.hash_secret).

    meta           key -> value; "schema_version" is the version the tables are at
    class_sessions one class: its join code, the teacher key's hash and how many times the teacher made a new
                   key, when it started, expires and ended, the question the room sees now, and how many
                   students may join (seats)
    questions      what the teacher put, in order: kind, spec (JSON text), state open / closed / revealed
    students       who joined a session: the token's hash, a nickname or NULL (anonymous), the answers
                   limit, and when the teacher removed the student (NULL: in the class)
    answers        one row per (question, student): the latest value, when first given, when last changed,
                   how many times changed
    address_budgets how many joins and wrong codes a network address may still send (store.classes.budgets):
                   a keyed hash of the address, never the address, and when its budget is whole again; a
                   row goes once it is whole

A class's rows go with it: questions and students by ON DELETE CASCADE, their answers with them (SQLite does it
only with foreign keys on, which store.engine turns on for every connection the store makes).

A fresh database gets the current tables at once. A database at an older version is brought up step by step
(MIGRATIONS); one at a newer version than this code knows is refused (SchemaTooNew), never written to.

    trained_runs   one row per run: its id (what the link carries), the browser session that trained it (a
                   random token, never shown), the run's name, its weights as .npz bytes (core.model_file.save),
                   its config and meta as JSON, when it was stored and when it expires

The runs' table has a MetaData of its own (runs_metadata): it has no version yet and is made by its own prepare,
under its own lock, so a class database at a newer version never stops a shared run, nor the other way round.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    CheckConstraint,
    Column,
    Connection,
    Double,
    Engine,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    inspect,
    select,
    text,
)

from store import engine as sql
from store.codes import ANSWER_MAX, CODE_LENGTH, NICKNAME_MAX, TITLE_MAX
from store.errors import CLASS, RUNS, SchemaTooNew

SCHEMA_VERSION = 3
SEATS, SEATS_MAX = 40, 500  # students a class takes unless its teacher says otherwise; at most
STATES = ("open", "closed", "revealed")
HASH_LENGTH = 64  # SHA-256 in hex
SCHEMA_LOCK = 4_141_741  # PostgreSQL advisory lock: one process at a time creates or upgrades the class tables
RUNS_LOCK = 4_141_742  # ... and the runs' table; a run being stored takes it too (store.runs)
RUN_ID_LENGTH = 8

metadata = MetaData()

meta = Table(
    "meta", metadata,
    Column("key", String(40), primary_key=True),
    Column("value", String(200), nullable=False),
)

class_sessions = Table(
    "class_sessions", metadata,
    Column("id", Integer, primary_key=True),
    Column("code", String(CODE_LENGTH), nullable=False, unique=True),
    Column("key_hash", String(HASH_LENGTH), nullable=False),
    Column("title", String(TITLE_MAX), nullable=False, default=""),
    Column("created_at", Double, nullable=False),
    Column("expires_at", Double, nullable=False),
    Column("ended_at", Double),
    # no foreign key: questions point at their session, and a cycle of keys needs ALTER TABLE, which SQLite lacks
    Column("current_question_id", Integer),
    # joins are refused past it: one browser is one student, and a script must not flood the room's counts
    Column("seats", Integer, nullable=False, default=SEATS, server_default=str(SEATS)),
    # how many times the teacher made a new key: the browser that started the class derives the key of this
    # generation from its device number (classroom.device), and every earlier key, pasted anywhere, stops working
    Column("key_generation", Integer, nullable=False, default=0, server_default="0"),
)

questions = Table(
    "questions", metadata,
    Column("id", Integer, primary_key=True),
    Column("session_id", Integer, ForeignKey("class_sessions.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),  # 1, 2, ... in the order they were put
    Column("kind", String(40), nullable=False),
    Column("spec", Text, nullable=False),  # JSON: what the page needs to ask it and to compute its answer
    Column("state", String(10), nullable=False),
    Column("opened_at", Double, nullable=False),
    Column("closed_at", Double),
    Column("revealed_at", Double),
    UniqueConstraint("session_id", "position"),
    CheckConstraint("state IN ('open', 'closed', 'revealed')", name="question_state"),
)

students = Table(
    "students", metadata,
    Column("id", Integer, primary_key=True),
    Column("session_id", Integer, ForeignKey("class_sessions.id", ondelete="CASCADE"), nullable=False),
    Column("token_hash", String(HASH_LENGTH), nullable=False),
    Column("nickname", String(NICKNAME_MAX)),  # NULL: anonymous
    Column("joined_at", Double, nullable=False),
    # the answers limit (store.classes.answers): burst_start is when the student's budget of BURST answers is whole
    # again; burst_count is no longer used (kept: dropping a column needs a migration for nothing)
    Column("burst_start", Double, nullable=False),
    Column("burst_count", Integer, nullable=False, default=0),
    # the teacher removed this student: the answers are deleted, and the browser cannot join again
    Column("removed_at", Double),
    UniqueConstraint("session_id", "token_hash"),
)

answers = Table(
    "answers", metadata,
    Column("question_id", Integer, ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
    Column("student_id", Integer, ForeignKey("students.id", ondelete="CASCADE"), primary_key=True),
    Column("value", String(ANSWER_MAX), nullable=False),
    Column("answered_at", Double, nullable=False),
    Column("changed_at", Double, nullable=False),
    Column("changes", Integer, nullable=False, default=0),
    CheckConstraint("changes >= 0", name="answer_changes"),
)
Index("answers_by_student", answers.c.student_id)  # a student's own answers; the key serves per question

address_budgets = Table(
    "address_budgets", metadata,
    Column("address_hash", String(HASH_LENGTH), primary_key=True),  # HMAC of the address (store.classes.budgets)
    Column("kind", String(10), primary_key=True),  # "join" or "guess"
    Column("whole_at", Double, nullable=False),  # when the address's budget of this kind is whole again
)

runs_metadata = MetaData()

trained_runs = Table(
    "trained_runs", runs_metadata,
    Column("id", String(RUN_ID_LENGTH), primary_key=True),
    Column("owner", String(64), nullable=False),  # the browser session's random token
    Column("name", String(200), nullable=False),
    Column("weights", LargeBinary, nullable=False),  # the .npz bytes
    Column("config", Text, nullable=False),  # JSON: ModelConfig's fields
    Column("meta", Text, nullable=False),  # JSON: tokenizer, figures, settings, losses
    Column("size", Integer, nullable=False),
    Column("stored_at", Double, nullable=False),  # seconds since the epoch
    Column("expires_at", Double, nullable=False),
)
Index("trained_runs_by_owner", trained_runs.c.owner, trained_runs.c.stored_at)


def _seats_and_removals(conn: Connection) -> None:
    """Version 2: a class's seats, and a student the teacher removed."""
    double = Double().compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE class_sessions ADD COLUMN seats INTEGER NOT NULL DEFAULT {SEATS}"))
    conn.execute(text(f"ALTER TABLE students ADD COLUMN removed_at {double}"))


def _key_generations_and_address_budgets(conn: Connection) -> None:
    """Version 3: a teacher can make a new key; joins and wrong codes are limited per network address."""
    conn.execute(text("ALTER TABLE class_sessions ADD COLUMN key_generation INTEGER NOT NULL DEFAULT 0"))
    address_budgets.create(conn)


# MIGRATIONS[n] brings a database at version n - 1 to version n (ALTER TABLE, copy, ...). A fresh database
# gets the current tables from create_all and no step.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {2: _seats_and_removals,
                                                       3: _key_generations_and_address_budgets}


def stored_version(conn: Connection) -> int:
    """The schema version the database is at: 0 for a database with no tables of ours."""
    if not inspect(conn).has_table("meta"):
        return 0
    value = conn.scalar(select(meta.c.value).where(meta.c.key == "schema_version"))
    return int(value) if value is not None else 0


def upgrade(conn: Connection) -> int:
    """Create the tables, or bring them to SCHEMA_VERSION, inside the caller's transaction; the version."""
    version = stored_version(conn)
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"The class database was made by a newer version of Attention Lab (its tables are at version "
            f"{version}, this app knows up to {SCHEMA_VERSION}). Update the app, or give it another database."
        )
    if version == SCHEMA_VERSION:
        return version
    if version == 0:
        metadata.create_all(conn)
    else:
        for step in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[step](conn)
    if version == 0:
        conn.execute(meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
    else:
        conn.execute(meta.update().where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
    return SCHEMA_VERSION


def prepare_classes(engine: Engine) -> None:
    """The class tables made or brought up to date (store.engine.once calls it once per engine)."""
    if engine.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
        raise ValueError("The class store needs transactions: an engine without autocommit, please.")
    sql.tune(engine)
    with sql.writing(engine) as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
        upgrade(conn)


def prepare_runs(engine: Engine) -> None:
    """The runs' table made (the same in every version so far: no upgrade step yet), and a SQLite file from before
    incremental auto-vacuum converted once."""
    sql.tune(engine)
    sql.make_reclaimable(engine)
    with sql.writing(engine) as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(RUNS_LOCK)))
        runs_metadata.create_all(conn, checkfirst=True)


# The decorators of the statements: the engine prepared once, a failure said in the reader's words
for_classes = sql.guarded(prepare_classes, CLASS)
for_runs = sql.guarded(prepare_runs, RUNS)

"""Engines and transactions for the class store: the settings each connection needs, one transaction per call,
and every database failure turned into a StoreError a page can show.

SQLite (the default, a file several processes on one machine share): WAL journal (readers never wait for the
writer), a 5 s busy timeout (a writer waits for another's lock instead of failing at once), full sync (an answer
committed is on disk), foreign keys on. Python's sqlite3 would open a transaction only at the first write, and a
read-then-write transaction in WAL mode fails at once when another process wrote in between; so the store opens
its own: BEGIN IMMEDIATE (the write lock first) for a writing call, BEGIN for a reading one.

PostgreSQL: psycopg 3, READ COMMITTED; a connection checked before use (engine_for's pool_pre_ping), a 5 s
connect timeout and a 5 s lock timeout, so a server that is down or a stuck lock gives a message, not a hang.

An engine made elsewhere (st.connection("sql").engine) gets the same settings at its first use here (prepare).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, exc, func, make_url, select
from sqlalchemy.engine import URL

from classroom.schema import StoreError, upgrade

BUSY_TIMEOUT_S = 5
WRITE = "classroom_write"  # the execution option that makes a SQLite transaction BEGIN IMMEDIATE
SCHEMA_LOCK = 4_141_741  # PostgreSQL advisory lock: one process at a time creates or upgrades the tables

BUSY = ("The class database is busy: another process held it for more than "
        f"{BUSY_TIMEOUT_S} seconds. Try again in a moment; the lessons work as usual.")
UNREACHABLE = ("The class database could not be reached. Try again in a moment; the lessons work as usual, "
               "only the class mode needs the database.")
UNOPENED = ("The class database file could not be opened or written (check that its folder exists and can be "
            "written, and that the disk is not full). The lessons work as usual.")
FAILED = "The class database failed ({name}). The lessons work as usual; the class mode needs the database."
BAD_URL = "The class database address is not one this app can use ({url_kind}): check the setting."

_prepared: weakref.WeakSet[Engine] = weakref.WeakSet()
_write_locks: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_prepare_lock = threading.Lock()
_locks_lock = threading.Lock()


def engine_for(url: str | URL) -> Engine:
    """An engine for a database URL ("sqlite:///path/class.db", "postgresql://user:pw@host/db"), with the
    settings above. A SQLite file's folder is made if missing; "postgres://" is read as PostgreSQL + psycopg."""
    try:
        url = make_url(url)
    except exc.ArgumentError as error:
        raise StoreError(BAD_URL.format(url_kind="not a database URL")) from error
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    try:
        if url.get_backend_name() == "postgresql":
            return create_engine(url, pool_pre_ping=True)
        return create_engine(url)
    except (exc.ArgumentError, exc.NoSuchModuleError, ImportError) as error:
        raise StoreError(BAD_URL.format(url_kind=url.drivername)) from error


def _prepare(engine: Engine) -> None:
    """Give `engine` the connection settings and make sure the tables are there, once per engine."""
    if engine in _prepared:
        return
    with _prepare_lock:
        if engine in _prepared:
            return
        if engine.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            raise ValueError("The class store needs transactions: an engine without autocommit, please.")
        _tune(engine)
        with writing(engine) as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
            upgrade(conn)
        _prepared.add(engine)


def _tune(engine: Engine) -> None:
    if engine.dialect.name == "sqlite":
        if not event.contains(engine, "connect", _sqlite_connect):
            _make_folder(engine.url)
            event.listen(engine, "connect", _sqlite_connect)
            event.listen(engine, "begin", _sqlite_begin)
            engine.dispose()  # a connection pooled before the listeners would lack the settings
    elif engine.dialect.name == "postgresql":
        if not event.contains(engine, "connect", _postgres_connect):
            event.listen(engine, "do_connect", _postgres_do_connect)
            event.listen(engine, "connect", _postgres_connect)
            engine.dispose()


def _make_folder(url: URL) -> None:
    database = url.database
    if database and database != ":memory:" and not database.startswith("file:"):
        try:
            Path(database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a file where the folder should be, no permission, a read-only disk
            raise StoreError(UNOPENED) from error


def _sqlite_connect(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # sqlite3 opens no transaction of its own: _sqlite_begin does
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")  # first: the next line may wait
    cursor.execute("PRAGMA journal_mode = WAL")  # kept in the file; a no-op once it is WAL
    cursor.execute("PRAGMA synchronous = FULL")  # WAL's NORMAL could lose the last commits on power loss
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")


def _postgres_do_connect(_dialect, _record, _cargs, cparams: dict) -> None:
    cparams.setdefault("connect_timeout", BUSY_TIMEOUT_S)


def _postgres_connect(dbapi_connection, _record) -> None:
    # session settings, not startup options: connection poolers in front of hosted servers refuse those
    with dbapi_connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = {int(BUSY_TIMEOUT_S * 1000)}")  # ms
    dbapi_connection.commit()


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """One transaction that writes: committed when the block ends (before the caller returns), rolled back
    entirely when it raises. On SQLite, the threads of one process take turns for the write lock here, in
    order, and only the processes meet in SQLite's busy handler, which polls with growing sleeps: 120 students
    on two processes answering within 10 s, the slowest answer took 0.85 s and 5.8 s in two runs without the
    turns (the busy timeout is 5 s), 0.14 s and 0.30 s with them (bench/class_store.py, a busy machine)."""
    with _turn(engine), engine.connect() as conn:
        conn.execution_options(**{WRITE: True})
        with conn.begin():
            yield conn


@contextmanager
def _turn(engine: Engine) -> Iterator[None]:
    if engine.dialect.name != "sqlite":
        yield
        return
    with _locks_lock:
        lock = _write_locks.setdefault(engine, threading.Lock())
    if not lock.acquire(timeout=BUSY_TIMEOUT_S):
        raise StoreError(BUSY)
    try:
        yield
    finally:
        lock.release()


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """One transaction that only reads (on SQLite it takes no lock a writer waits for)."""
    with engine.connect() as conn, conn.begin():
        yield conn


P = ParamSpec("P")
R = TypeVar("R")


def guarded(function: Callable[P, R]) -> Callable[P, R]:
    """Prepare the engine (the first argument) once, and turn any failure of the database into a StoreError
    whose message a page shows as it is."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        engine = args[0]
        assert isinstance(engine, Engine), "the store's functions take the engine first"
        try:
            _prepare(engine)
            return function(*args, **kwargs)
        except StoreError:
            raise
        except (exc.SQLAlchemyError, OSError, engine.dialect.loaded_dbapi.Error) as error:
            raise StoreError(sentence(error, engine.dialect.name)) from error

    return call


def sentence(error: BaseException, dialect: str) -> str:
    """What a teacher is told about a database failure; the error itself stays the StoreError's __cause__."""
    text = str(getattr(error, "orig", None) or error).lower()
    if isinstance(error, exc.TimeoutError) or any(w in text for w in ("locked", "busy", "lock timeout")):
        return BUSY
    if dialect == "sqlite" and (isinstance(error, OSError | exc.OperationalError) or type(error) is exc.DatabaseError):
        return UNOPENED  # no folder, no permission, a full disk, a file that is not a database
    if isinstance(error, exc.OperationalError | exc.InterfaceError | exc.DisconnectionError) or (
            isinstance(error, exc.DBAPIError) and error.connection_invalidated):
        return UNREACHABLE
    return FAILED.format(name=type(getattr(error, "orig", None) or error).__name__)


@guarded
def prepare(engine: Engine) -> None:
    """Make `engine` ready for the store: its connection settings, and its tables made or upgraded. Every call
    of the store does it first (once per engine); an app may call it at start to learn early that the database
    is there. Raises StoreError with a sentence to show (SchemaTooNew for tables newer than this code)."""

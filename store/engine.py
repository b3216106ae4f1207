"""The app's database as SQLAlchemy engines: the one rule that reads a database URL, the settings every
connection needs, one transaction per call, and each part's tables prepared once per engine (guarded). Plain SQL:
no UI library, so the class store (store.classes) and the store of trained runs (store.runs) both build on it, and
a test hands either an engine of its own.

SQLite (the default, a file several processes on one machine share): WAL journal (readers never wait for the
writer), a 5 s busy timeout (a writer waits for another's lock instead of failing at once), full sync (a write
committed is on disk), foreign keys on, incremental auto-vacuum (a deleted run's pages can go back to the disk:
reclaim) and a cap on the size the WAL file keeps after a checkpoint. The app's own file lives in a folder only
its user can enter (private_file: folder 0700, file 0600; SQLite gives the -wal and -shm files the main file's
mode). Python's sqlite3 would open a transaction only at the first write, and a
read-then-write transaction in WAL mode fails at once when another process wrote in between; so the stores open
their own: BEGIN IMMEDIATE (the write lock first) for a writing call, BEGIN for a reading one.

PostgreSQL: psycopg 3, READ COMMITTED; a connection checked before use (engine_options' pool_pre_ping), a 5 s
connect timeout and a 5 s lock timeout, so a server that is down or a stuck lock gives a message, not a hang.

What a failure is said as is store.errors'.
"""

from __future__ import annotations

import functools
import os
import stat
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, exc, make_url
from sqlalchemy.engine import URL

from store.errors import (
    APP_UNOPENED,
    BAD_URL,
    BUSY_TIMEOUT_S,
    NOT_PRIVATE,
    Busy,
    Reader,
    StoreError,
    busy_message,
    in_words,
    sentence,
)

__all__ = ["BUSY_TIMEOUT_S", "Connection", "Engine", "StoreError", "engine_for", "engine_options", "guarded",
           "make_reclaimable", "normal_url", "once", "private_file", "reading", "reclaim", "tune", "writing"]

WAL_KEEP_BYTES = 64 * 2**20  # the WAL file is truncated to this after a checkpoint, not kept at its largest
WRITE = "classroom_write"  # the execution option that makes a SQLite transaction BEGIN IMMEDIATE

_write_locks: weakref.WeakKeyDictionary[Engine, threading.Lock] = weakref.WeakKeyDictionary()
_locks_lock = threading.Lock()
_prepared: weakref.WeakKeyDictionary[Engine, set[Callable]] = weakref.WeakKeyDictionary()
_prepare_lock = threading.Lock()


def normal_url(url: str | URL) -> URL:
    """A database URL as this app reads it: "postgres://" (Heroku's spelling) and "postgresql://" are PostgreSQL
    with psycopg 3. StoreError when it is not a database URL at all."""
    try:
        url = make_url(url)
    except exc.ArgumentError as error:
        raise StoreError(BAD_URL.format(url_kind="not a database URL")) from error
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def engine_options(url: URL) -> dict:
    """What create_engine is given beside the URL: on PostgreSQL a connection the server dropped (a restart) is
    replaced, not used (pool_pre_ping)."""
    return {"pool_pre_ping": True} if url.get_backend_name() == "postgresql" else {}


def engine_for(url: str | URL) -> Engine:
    """An engine for a database URL ("sqlite:///path/class.db", "postgresql://user:pw@host/db"), with the
    settings above. A SQLite file's folder is made if missing; "postgres://" is read as PostgreSQL + psycopg."""
    url = normal_url(url)
    try:
        return create_engine(url, **engine_options(url))
    except (exc.ArgumentError, exc.NoSuchModuleError, ImportError) as error:
        raise StoreError(BAD_URL.format(url_kind=url.drivername)) from error


def tune(engine: Engine) -> None:
    """Give `engine` the connection settings above (once: a second call changes nothing)."""
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
            raise StoreError(APP_UNOPENED) from error


def private_file(path: Path) -> None:
    """Make `path`'s folder (0700) and the file (0600) if missing, and refuse a folder this process's user does not
    own or that others can write (another local user could swap the file or read it). Raises StoreError."""
    folder = path.parent
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _check_private(folder)
        path.touch(mode=0o600, exist_ok=True)  # before SQLite makes it 0644; the -wal and -shm copy its mode
        for each in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if each.exists() and each.stat().st_mode & 0o077:  # a file from before: nobody else reads it now
                each.chmod(0o600)
    except OSError as error:
        raise StoreError(APP_UNOPENED) from error


def _check_private(folder: Path) -> None:
    if not hasattr(os, "getuid"):  # Windows: a user's profile folder is private by its access lists
        return
    link, target = folder.lstat(), folder.stat()  # a symbolic link counts only if this user made it
    mine = link.st_uid == target.st_uid == os.getuid()
    if not mine or not stat.S_ISDIR(target.st_mode) or target.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise StoreError(NOT_PRIVATE)


def _sqlite_connect(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # sqlite3 opens no transaction of its own: _sqlite_begin does
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")  # first: the next line may wait
    # before WAL and any table: a new file only takes the mode then (an older file keeps none until reclaim's VACUUM)
    cursor.execute("PRAGMA auto_vacuum = INCREMENTAL")
    cursor.execute("PRAGMA journal_mode = WAL")  # kept in the file; a no-op once it is WAL
    cursor.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    # a deleted row's bytes zeroed in its page at no extra I/O (some builds leave it off); freed pages: reclaim
    cursor.execute("PRAGMA secure_delete = FAST")
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
        raise Busy(busy_message())
    try:
        yield
    finally:
        lock.release()


def reclaim(engine: Engine) -> None:
    """After a transaction that deleted rows: give a SQLite file's free pages back to the disk. Not inside that
    transaction: the pragma frees one page a step, and only a script steps it to the end. PostgreSQL needs nothing
    (its autovacuum makes a deleted row's room reusable)."""
    _outside_transaction(engine, lambda sqlite: sqlite.executescript("PRAGMA incremental_vacuum"))


def make_reclaimable(engine: Engine) -> None:
    """Bring a SQLite file made before incremental auto-vacuum to it: the mode changes only with a VACUUM, which
    rewrites the file once (a second or so at the runs' cap)."""
    def convert(sqlite) -> None:
        if sqlite.execute("PRAGMA auto_vacuum").fetchone()[0] == 0:
            sqlite.execute("PRAGMA auto_vacuum = INCREMENTAL")
            sqlite.execute("VACUUM")

    _outside_transaction(engine, convert)


def _outside_transaction(engine: Engine, work: Callable) -> None:
    """work(the sqlite3 connection) in autocommit (_sqlite_connect left it so), in this process's write turn. Busy
    or locked: skipped, since nothing is lost (free pages are reused meanwhile) and the next call tries again."""
    if engine.dialect.name != "sqlite":
        return
    with _turn(engine):
        raw = engine.raw_connection()
        try:
            work(raw.driver_connection)
        except engine.dialect.loaded_dbapi.OperationalError:
            pass
        finally:
            raw.close()


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """One transaction that only reads (on SQLite it takes no lock a writer waits for)."""
    with engine.connect() as conn, conn.begin():
        yield conn


def once(engine: Engine, prepare: Callable[[Engine], None]) -> None:
    """prepare(engine) once per engine and part (the class tables, the runs' table): the first thread to come
    does it, the others wait for it; a prepare that raises is tried again at the next call."""
    if prepare in _prepared.get(engine, ()):
        return
    with _prepare_lock:
        if prepare in _prepared.get(engine, ()):
            return
        prepare(engine)
        _prepared.setdefault(engine, set()).add(prepare)


P = ParamSpec("P")
R = TypeVar("R")


def guarded(prepare: Callable[[Engine], None], reader: Reader) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for a store's calls, which take the engine first: the engine prepared once (`prepare`), and
    any failure of the database turned into a StoreError whose message the reader's page shows as it is."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            engine = args[0]
            assert isinstance(engine, Engine), "the store's functions take the engine first"
            try:
                once(engine, prepare)
                return function(*args, **kwargs)
            except StoreError as error:
                said = in_words(error, reader)
                if said is error:
                    raise
                raise said from error.__cause__
            except (exc.SQLAlchemyError, OSError, engine.dialect.loaded_dbapi.Error) as error:
                raise StoreError(sentence(error, engine.dialect.name, reader)) from error

        return call

    return decorate

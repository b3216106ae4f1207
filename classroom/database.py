"""The class store's transactions: its tables made or upgraded once per engine, one transaction per call, and
every database failure turned into a StoreError a page can show. The engines and their connection settings
(SQLite's WAL and busy timeout, PostgreSQL's timeouts) are the app's, in ui.compute.sql: the store of trained
runs uses the same database.

An engine made elsewhere (st.connection("sql").engine) gets the same settings at its first use here (prepare).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from sqlalchemy import Engine, exc, func, select

from classroom.schema import StoreError, upgrade
from ui.compute import sql
from ui.compute.sql import engine_for, reading, writing

__all__ = ["BUSY", "FAILED", "UNOPENED", "UNREACHABLE", "engine_for", "guarded", "prepare", "reading", "sentence",
           "writing"]

SCHEMA_LOCK = 4_141_741  # PostgreSQL advisory lock: one process at a time creates or upgrades the tables

BUSY = ("The class database is busy: another process held it for more than "
        f"{sql.BUSY_TIMEOUT_S} seconds. Try again in a moment; the lessons work as usual.")
UNREACHABLE = ("The class database could not be reached. Try again in a moment; the lessons work as usual, "
               "only the class mode needs the database.")
UNOPENED = ("The class database file could not be opened or written (check that its folder exists and can be "
            "written, and that the disk is not full). The lessons work as usual.")
FAILED = "The class database failed ({name}). The lessons work as usual; the class mode needs the database."

_prepared: weakref.WeakSet[Engine] = weakref.WeakSet()
_prepare_lock = threading.Lock()


def _prepare(engine: Engine) -> None:
    """Give `engine` the connection settings and make sure the tables are there, once per engine."""
    if engine in _prepared:
        return
    with _prepare_lock:
        if engine in _prepared:
            return
        if engine.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            raise ValueError("The class store needs transactions: an engine without autocommit, please.")
        sql.tune(engine)
        with writing(engine) as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
            upgrade(conn)
        _prepared.add(engine)


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
        except sql.Busy:  # said in the class mode's words
            raise StoreError(BUSY) from None
        except StoreError as error:
            said = in_class_words(error)
            if said is error:
                raise
            raise said from error.__cause__
        except (exc.SQLAlchemyError, OSError, engine.dialect.loaded_dbapi.Error) as error:
            raise StoreError(sentence(error, engine.dialect.name)) from error

    return call


def in_class_words(error: StoreError) -> StoreError:
    """The app's database error as the class page says it ("The class database ..."); others as they are."""
    text = str(error)
    said = UNOPENED if text == sql.UNOPENED else text.replace("The app's database", "The class database", 1)
    return error if said == text else StoreError(said)


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

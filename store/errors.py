"""What the store says when the database fails: the one StoreError family, and the one place a database failure
becomes a sentence a page can show (sentence) or is said again in a reader's words (in_words).

Two readers hear of a failure. The class mode says "The class database ..." and tells a busy, unreachable or
unopened database apart (CLASS); the Training page's shared runs say one reason, that the database could not be
reached, and the page says the rest (RUNS). What the engine itself refuses (an address it cannot use, a folder
that is not private, a file it cannot open) is said as "The app's database ...", and the class mode says it in
its own words.
"""

from __future__ import annotations

from typing import Literal

from sqlalchemy import exc

BUSY_TIMEOUT_S = 5  # a writer waits this long for another's lock (store.engine), then the page says BUSY

Reader = Literal["class", "runs"]
CLASS: Reader = "class"
RUNS: Reader = "runs"

APP_WORDS, CLASS_WORDS = "The app's database", "The class database"

# The engine's sentences (store.engine, ui.compute.database), in the app's words
APP_UNOPENED = ("The app's database file could not be opened or written (check that its folder exists and can be "
                "written, and that the disk is not full). The lessons work as usual.")
BAD_URL = "The app's database address is not one this app can use ({url_kind}): check the setting."
NOT_PRIVATE = ("The app's database folder is not private to the user this server runs as (another user owns it, "
               "or others can write to it), so nothing is kept there: give it to this user with mode 0700, or set "
               "another database. The lessons work as usual.")
APP_BUSY = (f"The database is busy: another process held it for more than {BUSY_TIMEOUT_S} seconds. Try again "
            "in a moment; the lessons work as usual.")

# The class mode's sentences
BUSY = ("The class database is busy: another process held it for more than "
        f"{BUSY_TIMEOUT_S} seconds. Try again in a moment; the lessons work as usual.")
UNREACHABLE = ("The class database could not be reached. Try again in a moment; the lessons work as usual, "
               "only the class mode needs the database.")
UNOPENED = APP_UNOPENED.replace(APP_WORDS, CLASS_WORDS, 1)
FAILED = "The class database failed ({name}). The lessons work as usual; the class mode needs the database."

# The shared runs' one reason (the Training page says the rest)
RUNS_UNREACHABLE = "The database that keeps trained runs could not be reached."


class StoreError(RuntimeError):
    """The database could not be reached, opened or written, or is locked. str() is a sentence for the page:
    the class mode says it, a shared run says it, and the lessons go on without the database."""


class Busy(StoreError):
    """Another thread of this process held the SQLite write lock for more than BUSY_TIMEOUT_S."""


class SchemaTooNew(StoreError):
    """The database was written by a newer version of the app than this one."""


class RunIdTaken(StoreError):
    """Another browser session's run has this id (store.runs.new_id drew one already in use): draw another."""


def busy_message() -> str:
    return APP_BUSY


def sentence(error: BaseException, dialect: str, reader: Reader = CLASS) -> str:
    """What a reader is told about a database failure; the error itself stays the StoreError's __cause__."""
    if reader == RUNS:
        return RUNS_UNREACHABLE
    text = str(getattr(error, "orig", None) or error).lower()
    if isinstance(error, exc.TimeoutError) or any(w in text for w in ("locked", "busy", "lock timeout")):
        return BUSY
    if dialect == "sqlite" and (isinstance(error, OSError | exc.OperationalError) or type(error) is exc.DatabaseError):
        return UNOPENED  # no folder, no permission, a full disk, a file that is not a database
    if isinstance(error, exc.OperationalError | exc.InterfaceError | exc.DisconnectionError) or (
            isinstance(error, exc.DBAPIError) and error.connection_invalidated):
        return UNREACHABLE
    return FAILED.format(name=type(getattr(error, "orig", None) or error).__name__)


def in_words(error: StoreError, reader: Reader = CLASS) -> StoreError:
    """A StoreError said again in the reader's words: for the class mode, the app's database is "the class
    database" and a busy one is BUSY; the error itself when nothing changes (the runs keep the app's words)."""
    if reader != CLASS:
        return error
    if isinstance(error, Busy):
        return StoreError(BUSY)
    text = str(error)
    said = UNOPENED if text == APP_UNOPENED else text.replace(APP_WORDS, CLASS_WORDS, 1)
    return error if said == text else StoreError(said)

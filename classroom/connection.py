"""The class mode's database: the app's (ui.compute.database says where it is), its tables made or upgraded on
the first use (store.classes.prepare), and classes past their keeping time deleted (store.classes.purge) at
most once every PURGE_EVERY_S in a process, so the stated retention holds without a class being started. A
database that cannot be reached raises StoreError, whose text the class page shows; the lessons never need it.
"""

from __future__ import annotations

import threading
import time

from store import classes
from store.engine import Engine
from store.errors import in_words
from ui.compute import database
from ui.compute.database import ENVIRONMENT, database_url, default_file

__all__ = ["ENVIRONMENT", "PURGE_EVERY_S", "database_url", "default_file", "engine"]

PURGE_EVERY_S = 3600  # a class is deleted within an hour of its time, on a page of the class mode
_last_purge = {"at": float("-inf")}
_purge_lock = threading.Lock()


def engine() -> Engine:
    """The app's engine, the class tables ready. Raises classes.StoreError with a sentence to show when the
    database cannot be opened."""
    try:
        made = database.engine()
    except classes.StoreError as error:
        raise in_words(error) from error
    classes.prepare(made)
    _purge_now_and_then(made, time.time())
    return made


def _purge_now_and_then(made: Engine, now: float) -> None:
    with _purge_lock:  # one session's run pays for it; the others go on
        if now - _last_purge["at"] < PURGE_EVERY_S:
            return
        _last_purge["at"] = now
    try:
        classes.purge(made, now)
    except classes.StoreError:  # busy now: the page goes on, and the next visit tries again
        _last_purge["at"] = float("-inf")

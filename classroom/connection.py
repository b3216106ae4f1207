"""The class mode's database: the app's (ui.compute.database says where it is), its tables made or upgraded on
the first use (classroom.store.prepare). A database that cannot be reached raises StoreError, whose text the class
page shows; the lessons never need it.
"""

from __future__ import annotations

from sqlalchemy import Engine

from classroom import store
from classroom.database import in_class_words
from ui.compute import database
from ui.compute.database import DEFAULT_FILE, ENVIRONMENT, database_url

__all__ = ["DEFAULT_FILE", "ENVIRONMENT", "database_url", "engine"]


def engine() -> Engine:
    """The app's engine, the class tables ready. Raises store.StoreError with a sentence to show when the
    database cannot be opened."""
    try:
        made = database.engine()
    except store.StoreError as error:
        raise in_class_words(error) from error
    store.prepare(made)
    return made

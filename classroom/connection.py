"""The class mode's database, as the app reaches it: through st.connection("sql") (SQLAlchemy), ready for
classroom.store.

Where it is, first found first:
1. the environment's ATTENTION_LAB_DATABASE_URL (deploy/serve.py and a container set it so);
2. `.streamlit/secrets.toml`, section [connections.sql], key `url` (Streamlit's own place for it: a hosted
   PostgreSQL on Community Cloud goes there, `url = "postgresql://user:password@host:5432/dbname"`);
3. a SQLite file in the system's temporary folder, made on first use: nothing to set up, and several server
   processes on one machine (deploy/serve.py 2) share it.

The tables are made (or upgraded) on the first use (classroom.store.prepare). A database that cannot be reached
raises StoreError, whose text the class page shows; the lessons never touch the database.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st
from sqlalchemy import Engine

from classroom import store

ENVIRONMENT = "ATTENTION_LAB_DATABASE_URL"
DEFAULT_FILE = Path(tempfile.gettempdir()) / "attention-lab" / "classroom.sqlite3"


def _from_secrets() -> str | None:
    """[connections.sql] url from secrets.toml, if there is such a file and such a key."""
    try:
        section = st.secrets.get("connections", {}).get("sql", {})
    except Exception:  # no secrets file at all, or one that does not parse: not configured here
        return None
    url = section.get("url") if hasattr(section, "get") else None
    return str(url) if url else None


def database_url() -> str:
    """The database the class mode uses (see the module's docstring for the order)."""
    return os.environ.get(ENVIRONMENT) or _from_secrets() or f"sqlite:///{DEFAULT_FILE}"


def engine() -> Engine:
    """The app's engine, its tables ready. Raises store.StoreError with a sentence to show when the database
    cannot be opened."""
    url = database_url()
    try:
        # the store's own engine settings (WAL, timeouts) are given by prepare(); "postgres://" is Heroku's spelling
        options = {}
        if url.startswith("postgres://") or url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        if url.startswith("postgresql"):
            options["pool_pre_ping"] = True  # a connection the server dropped (a restart) is replaced, not used
        engine = st.connection("sql", url=url, **options).engine  # made once and kept for the process by Streamlit
    except Exception as error:  # a driver missing, a URL it cannot read: say so, do not trace
        raise store.StoreError(f"The class database could not be opened ({type(error).__name__}): check "
                               f"{ENVIRONMENT} or [connections.sql] in secrets.toml. The lessons work as usual.") \
            from error
    store.prepare(engine)
    return engine

"""The app's database, as a page reaches it: through st.connection("sql") (SQLAlchemy). The class mode keeps its
sessions there, and the Training page the runs a link can share (ui.compute.run_store).

Where it is, first found first:
1. the environment's ATTENTION_LAB_DATABASE_URL (deploy/serve.py and a container set it so);
2. `.streamlit/secrets.toml`, section [connections.sql], key `url` (Streamlit's own place for it: a hosted
   PostgreSQL on Community Cloud goes there, `url = "postgresql://user:password@host:5432/dbname"`);
3. a SQLite file in the system's temporary folder, made on first use: nothing to set up, and several server
   processes on one machine (deploy/serve.py 2) share it.

An address that cannot be used raises ui.compute.sql.StoreError, whose text the page shows.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import streamlit as st
from sqlalchemy import Engine

from ui.compute import sql

ENVIRONMENT = "ATTENTION_LAB_DATABASE_URL"
DEFAULT_FILE = Path(tempfile.gettempdir()) / "attention-lab" / "classroom.sqlite3"  # its first user's name


def _from_secrets() -> str | None:
    """[connections.sql] url from secrets.toml, if there is such a file and such a key."""
    try:
        section = st.secrets.get("connections", {}).get("sql", {})
    except Exception:  # no secrets file at all, or one that does not parse: not configured here
        return None
    url = section.get("url") if hasattr(section, "get") else None
    return str(url) if url else None


def database_url() -> str:
    """The database the app uses (see the module's docstring for the order)."""
    return os.environ.get(ENVIRONMENT) or _from_secrets() or f"sqlite:///{DEFAULT_FILE}"


def engine() -> Engine:
    """The app's engine, with ui.compute.sql's connection settings (made once per process by Streamlit). Raises
    StoreError with a sentence to show when the database cannot be opened."""
    url = database_url()
    try:
        options = {}
        if url.startswith("postgres://") or url.startswith("postgresql://"):  # "postgres://" is Heroku's spelling
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        if url.startswith("postgresql"):
            options["pool_pre_ping"] = True  # a connection the server dropped (a restart) is replaced, not used
        made = st.connection("sql", url=url, **options).engine  # made once and kept for the process by Streamlit
    except Exception as error:  # a driver missing, a URL it cannot read: say so, do not trace
        raise sql.StoreError(f"The app's database could not be opened ({type(error).__name__}): check "
                             f"{ENVIRONMENT} or [connections.sql] in secrets.toml. The lessons work as usual.") \
            from error
    sql.tune(engine=made)
    return made

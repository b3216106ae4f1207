"""Where the app's database is, and the page's way to it: st.connection("sql"). Every table and statement is the
store's (store/): the class mode keeps its sessions there, and the Training page the runs a link can share
(store.runs). This module imports no SQLAlchemy: the URL rule and the connection settings are store.engine's.

Where it is, first found first:
1. the environment's ATTENTION_LAB_DATABASE_URL (deploy/serve.py and a container set it so);
2. `.streamlit/secrets.toml`, section [connections.sql], key `url` (Streamlit's own place for it: a hosted
   PostgreSQL on Community Cloud goes there, `url = "postgresql://user:password@host:5432/dbname"`);
3. a SQLite file in the user's state folder, $XDG_STATE_HOME/attention-lab/app.sqlite3, else
   ~/.local/state/attention-lab/app.sqlite3 (default_file), made on first use: nothing to set up, and every
   server process of that user on the machine (deploy/serve.py 2) shares it. Not the temporary folder: another
   local user could make the folder first or read the file there, and a reboot may empty it. The folder is made
   0700 and the file 0600, and a folder another user owns or can write is refused (store.engine.private_file).

An address that cannot be used raises store.errors.StoreError, whose text the page shows.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from store import engine as sql
from store.engine import Engine
from store.errors import StoreError

ENVIRONMENT = "ATTENTION_LAB_DATABASE_URL"
STATE_FOLDER = "attention-lab"  # under the user's state home
FILE_NAME = "app.sqlite3"
NO_HOME = ("The app's database has no folder: this server's user has no home folder. Set "
           f"{ENVIRONMENT}, or XDG_STATE_HOME. The lessons work as usual.")


def default_file() -> Path:
    """Where the database is when nothing is set: the XDG state home (an absolute $XDG_STATE_HOME, as the
    specification asks, else ~/.local/state), read at each call so that a test or a server may set it."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if os.path.isabs(base):
        return Path(base) / STATE_FOLDER / FILE_NAME
    home = os.path.expanduser("~")  # "~" itself when there is no HOME and no entry in the password database
    if not os.path.isabs(home):
        raise StoreError(NO_HOME)
    return Path(home) / ".local" / "state" / STATE_FOLDER / FILE_NAME


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
    return os.environ.get(ENVIRONMENT) or _from_secrets() or f"sqlite:///{default_file()}"


def engine() -> Engine:
    """The app's engine, with store.engine's connection settings (made once per process by Streamlit). Raises
    StoreError with a sentence to show when the database cannot be opened."""
    url = database_url()
    if url == f"sqlite:///{default_file()}":
        sql.private_file(default_file())  # the one place nobody chose: it must be this user's alone
    try:
        read = sql.normal_url(url)  # the store's one URL rule: "postgres://" is PostgreSQL with psycopg
        made = st.connection("sql", url=read.render_as_string(hide_password=False),
                             **sql.engine_options(read)).engine  # made once and kept for the process by Streamlit
    except Exception as error:  # a driver missing, a URL it cannot read: say so, do not trace
        named = error.__cause__ if isinstance(error, StoreError) and error.__cause__ else error
        raise StoreError(f"The app's database could not be opened ({type(named).__name__}): check "
                         f"{ENVIRONMENT} or [connections.sql] in secrets.toml. The lessons work as usual.") from error
    sql.tune(engine=made)
    return made

"""Real databases for the class store's tests: a SQLite file in the test's tmp_path, and PostgreSQL.

PostgreSQL is the server ATTENTION_LAB_TEST_POSTGRES_URL names (CI starts Debian's and sets it); else a private
server this test session starts from Debian's binaries (/usr/lib/postgresql/*/bin), in a temporary folder,
reached by a unix socket there; else its tests are skipped, unless REQUIRE_POSTGRES=1, where that is a failure.
Each test gets a schema of its own on the server (search_path), dropped after it, so tests and pytest-xdist's
workers can share one server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from bench.postgres import own_schema
from classroom import connection
from store import classes
from store.schema import metadata

POSTGRES_URL = "ATTENTION_LAB_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL URL whose user may create schemas."""
    if url := os.environ.get(POSTGRES_URL):
        yield url
        return
    pg_ctls = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if not pg_ctls:
        reason = f"no PostgreSQL: set {POSTGRES_URL}, or install Debian's postgresql to start a private server"
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"REQUIRE_POSTGRES=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with private_server(Path(pg_ctls[-1]).parent) as url:
        yield url


@contextmanager
def private_server(bin_dir: Path) -> Iterator[str]:
    """initdb and pg_ctl into a fresh temporary folder, listening only on a unix socket there. PostgreSQL
    refuses to run as root: as root, the folder is the postgres user's and the server runs as that user."""
    folder = Path(tempfile.mkdtemp(prefix="alpg-"))  # short: a socket's path is at most 107 bytes
    run_as: list[str] = []
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()
    log = folder / "server.log"

    def run(*command) -> None:
        done = subprocess.run([*run_as, *map(str, command)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            told = log.read_text()[-2000:] if log.exists() else ""
            pytest.fail(f"{' '.join(map(str, command))} failed:\n{done.stdout}{done.stderr}{told}", pytrace=False)

    try:
        run(bin_dir / "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
        run(bin_dir / "pg_ctl", "start", "-D", data, "-l", log, "-w", "-t", "60",
            "-o", f"-p {port} -k {folder} -c listen_addresses=''")
        yield f"postgresql+psycopg://postgres@/postgres?host={folder}&port={port}"
    finally:
        subprocess.run([*run_as, str(bin_dir / "pg_ctl"), "stop", "-D", str(data), "-m", "immediate"],
                       capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """The server's URL with a schema of this test's own first on the search path."""
    with own_schema(postgres_server, "t") as url:
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path) -> str:
    """A database URL for each backend: a SQLite file in tmp_path, or a fresh schema on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class' / 'class.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def make_engine(db_url) -> Iterator[Callable[[], Engine]]:
    """engine_for(db_url), as many as a test wants (each as a server process has its own), disposed after."""
    made: list[Engine] = []

    def make() -> Engine:
        made.append(classes.engine_for(db_url))
        return made[-1]

    yield make
    for engine in made:
        engine.dispose()


@pytest.fixture
def engine(make_engine) -> Engine:
    return make_engine()


def snapshot(engine: Engine) -> dict[str, list[tuple]]:
    """Every row of every table of the store, in order: equal before and after means nothing was written."""
    with engine.connect() as conn:
        return {t.name: sorted(tuple(r) for r in conn.execute(select(t))) for t in metadata.sorted_tables}


@pytest.fixture
def db(tmp_path, monkeypatch) -> Engine:
    """The Class page's own database for a page test (a SQLite file the page opens through the environment), and
    an engine on it for the test to look with."""
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    monkeypatch.setenv(connection.ENVIRONMENT, url)
    engine = classes.engine_for(url)
    classes.prepare(engine)
    return engine

"""Where the app's database is when nothing is set, and who can reach it: the user's state folder (not the shared
temporary folder), made 0700, the SQLite file and its -wal and -shm 0600 whatever the umask, a folder another user
owns or others can write refused with a sentence, and every server process of the user sharing the one file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from store import classes
from store import engine as sql
from store.errors import in_words
from tests.apptest_helpers import ROOT
from ui.compute import database

NOBODY = 65534


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def state(tmp_path, monkeypatch) -> Path:
    """No database set, the state home in tmp_path, and the common umask (022: files 0644 unless made private)."""
    monkeypatch.delenv(database.ENVIRONMENT, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    old = os.umask(0o022)
    yield tmp_path / "state"
    os.umask(old)


def test_the_default_file_is_in_the_users_state_folder(monkeypatch):
    monkeypatch.setenv("HOME", "/home/teacher")
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert database.default_file() == Path("/home/teacher/.local/state/attention-lab/app.sqlite3")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # the specification: a relative path is ignored
    assert database.default_file() == Path("/home/teacher/.local/state/attention-lab/app.sqlite3")
    monkeypatch.setenv("XDG_STATE_HOME", "/srv/state")
    assert database.default_file() == Path("/srv/state/attention-lab/app.sqlite3")


def test_a_user_without_a_home_is_told_what_to_set(monkeypatch):
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setattr(database.os.path, "expanduser", lambda path: path)  # what it gives when there is no home
    with pytest.raises(sql.StoreError, match=database.ENVIRONMENT):
        database.default_file()


def test_the_default_database_is_private_to_its_user(state):
    engine = database.engine()
    assert engine.url.database == str(database.default_file())
    code, _ = classes.start_session(engine, 1_800_000_000.0)  # a write: the -wal and -shm files exist now
    folder, path = database.default_file().parent, database.default_file()
    made = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    assert all(p.exists() for p in made)
    assert mode(folder) == 0o700
    assert {p.name: oct(mode(p)) for p in made} == {p.name: oct(0o600) for p in made}
    assert classes.find_session(engine, code, 1_800_000_001.0).code == code


def test_a_file_from_before_is_made_private(state):
    folder, path = database.default_file().parent, database.default_file()
    folder.mkdir(parents=True, mode=0o755)  # this user's, readable by others: accepted, its files closed
    for each in (path, Path(f"{path}-wal")):
        each.touch(mode=0o644)
    sql.private_file(path)
    assert (mode(path), mode(Path(f"{path}-wal"))) == (0o600, 0o600)


@pytest.mark.parametrize("folder_mode", [0o777, 0o770, 0o1777])
def test_a_folder_others_can_write_is_refused(state, folder_mode):
    folder = database.default_file().parent
    folder.mkdir(parents=True)
    folder.chmod(folder_mode)
    with pytest.raises(sql.StoreError) as refused:
        database.engine()
    assert str(refused.value) == sql.NOT_PRIVATE
    assert not database.default_file().exists()
    assert str(in_words(refused.value)).startswith("The class database folder is not private")


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's needs root")


@needs_root
def test_a_folder_another_user_owns_is_refused(state):
    folder = database.default_file().parent
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(sql.StoreError, match="not private"):
        sql.private_file(database.default_file())


@needs_root
def test_a_link_another_user_made_is_refused(state, tmp_path):
    """Another user's symbolic link to a folder of ours could be pointed elsewhere later."""
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    state.mkdir()
    link = database.default_file().parent
    link.symlink_to(mine)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(sql.StoreError, match="not private"):
        sql.private_file(database.default_file())


def test_every_server_process_of_the_user_shares_it(state):
    """Two processes with nothing set (deploy/serve.py's) meet in one file: a class started in one is found
    by the other."""
    started = ("import json\nfrom store import classes\nfrom ui.compute import database\n"
               "engine = database.engine()\nprint(json.dumps([str(engine.url.database), "
               "classes.start_session(engine, 1_800_000_000.0)[0]]))")
    done = subprocess.run([sys.executable, "-c", started], cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, check=True)
    path, code = json.loads(done.stdout.strip().splitlines()[-1])
    assert path == str(database.default_file())
    assert classes.find_session(database.engine(), code, 1_800_000_001.0).code == code

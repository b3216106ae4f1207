"""The store's tables and its database: made once whatever the number of processes, a newer version refused, a
later version's steps run in order, the connection settings on any engine, and a database that is missing,
locked or down given as a StoreError with a sentence (nothing written)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from sqlalchemy import create_engine, inspect, make_url, select, text

from store import classes, errors, schema
from store import engine as sql
from store.codes import new_token
from tests.classroom.conftest import _free_port, snapshot

NOW = 1_800_000_000.0


def version_rows(engine) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(schema.meta))]


def test_the_tables_are_made_at_first_use_and_once(make_engine):
    first = make_engine()
    code, key = classes.start_session(first, NOW)
    assert set(inspect(first).get_table_names()) >= {t.name for t in schema.metadata.sorted_tables}
    assert version_rows(first) == [("schema_version", str(schema.SCHEMA_VERSION))]
    classes.prepare(first)  # again, on the same engine and on another one: nothing changes
    second = make_engine()
    classes.prepare(second)
    assert version_rows(second) == [("schema_version", str(schema.SCHEMA_VERSION))]
    assert classes.teacher(second, code, key).code == code


def test_two_processes_making_the_tables_at_once(make_engine):
    engines = [make_engine() for _ in range(4)]
    errors: list[BaseException] = []

    def first_use(engine):
        try:
            classes.prepare(engine)
        except BaseException as error:  # the test reports whatever a thread raised
            errors.append(error)

    threads = [threading.Thread(target=first_use, args=(e,)) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and version_rows(engines[0]) == [("schema_version", str(schema.SCHEMA_VERSION))]


def test_a_newer_schema_is_refused_and_left_alone(make_engine):
    old = make_engine()
    code, _ = classes.start_session(old, NOW)
    newer_version = schema.SCHEMA_VERSION + 1
    with old.begin() as conn:
        conn.execute(schema.meta.update().values(value=str(newer_version)))
    before = snapshot(old)
    newer = make_engine()
    with pytest.raises(classes.SchemaTooNew) as refused:
        classes.start_session(newer, NOW)
    assert "newer version of Attention Lab" in str(refused.value)
    assert f"version {newer_version}" in str(refused.value)
    with pytest.raises(classes.StoreError):
        classes.find_session(newer, code, NOW)
    assert snapshot(old) == before


def test_a_later_version_runs_its_steps_in_order(make_engine, monkeypatch):
    engine = make_engine()
    code, key = classes.start_session(engine, NOW)

    def add_a_colour(conn):  # what a next version could do: a column with a default
        conn.execute(text("ALTER TABLE class_sessions ADD COLUMN colour VARCHAR(20) DEFAULT 'blue'"))

    later = schema.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", later)
    monkeypatch.setitem(schema.MIGRATIONS, later, add_a_colour)
    upgraded = make_engine()
    assert classes.teacher(upgraded, code, key).code == code
    assert version_rows(upgraded) == [("schema_version", str(later))]
    with upgraded.connect() as conn:
        assert conn.scalar(text("SELECT colour FROM class_sessions")) == "blue"


def test_an_engine_made_elsewhere_gets_the_settings(tmp_path):
    """As st.connection("sql") makes it: create_engine(url) and nothing more."""
    engine = create_engine(f"sqlite:///{tmp_path / 'class.db'}")
    with engine.connect() as conn:  # a connection pooled before the store saw the engine
        conn.execute(text("SELECT 1"))
    try:
        classes.start_session(engine, NOW)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    finally:
        engine.dispose()


def test_an_autocommit_engine_is_refused():
    engine = create_engine("sqlite://").execution_options(isolation_level="AUTOCOMMIT")
    with pytest.raises(ValueError, match="transactions"):
        classes.prepare(engine)


def test_a_url_that_is_not_a_database():
    for url in ("not a url", "nosuchdb://x/y"):
        with pytest.raises(classes.StoreError, match="address is not one this app can use"):
            classes.engine_for(url)


def test_a_sqlite_file_whose_folder_is_missing_is_made(tmp_path):
    engine = classes.engine_for(f"sqlite:///{tmp_path / 'a' / 'b' / 'class.db'}")
    try:
        classes.start_session(engine, NOW)
        assert (tmp_path / "a" / "b" / "class.db").is_file()
    finally:
        engine.dispose()


@pytest.mark.parametrize("where", ["under a file", "not a database"])
def test_a_sqlite_file_that_cannot_be_used(tmp_path, where):
    (tmp_path / "file").write_text("this is not a folder, nor a database, " * 100)
    path = tmp_path / "file" / "class.db" if where == "under a file" else tmp_path / "file"
    engine = classes.engine_for(f"sqlite:///{path}")
    try:
        for call in (lambda: classes.prepare(engine), lambda: classes.start_session(engine, NOW),
                     lambda: classes.counts(engine, 1)):
            with pytest.raises(classes.StoreError) as failed:
                call()
            assert str(failed.value) == errors.UNOPENED and "lessons work as usual" in str(failed.value)
    finally:
        engine.dispose()


def test_a_sqlite_file_locked_too_long(tmp_path, monkeypatch):
    """Another process holds the write lock past the busy timeout: the answer fails with a sentence and is not
    written; reading goes on meanwhile (WAL); once the lock is gone, answering works."""
    monkeypatch.setattr(sql, "BUSY_TIMEOUT_S", 0.3)
    path = tmp_path / "class.db"
    engine = classes.engine_for(f"sqlite:///{path}")
    try:
        code, key = classes.start_session(engine, NOW)
        question = classes.put_question(engine, code, key, "choice", {}, NOW)
        token = new_token()
        classes.join(engine, code, token, None, NOW)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(classes.StoreError) as failed:
            classes.answer(engine, code, token, question, "A", NOW)
        assert str(failed.value) == errors.BUSY and time.monotonic() - started < 3
        assert classes.counts(engine, question).total == 0
        holder.execute("ROLLBACK")
        holder.close()
        assert classes.answer(engine, code, token, question, "A", NOW) is None
        assert classes.counts(engine, question).total == 1
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_postgres_row_locked_too_long(postgres_url, monkeypatch):
    monkeypatch.setattr(sql, "BUSY_TIMEOUT_S", 0.3)
    engine = classes.engine_for(postgres_url)
    try:
        code, key = classes.start_session(engine, NOW)
        question = classes.put_question(engine, code, key, "choice", {}, NOW)
        token = new_token()
        student = classes.join(engine, code, token, None, NOW)
        with engine.connect() as holder:
            holder.execute(select(schema.students).where(schema.students.c.id == student).with_for_update())
            with pytest.raises(classes.StoreError) as failed:
                classes.answer(engine, code, token, question, "A", NOW)
            assert str(failed.value) == errors.BUSY
            holder.rollback()
        assert classes.counts(engine, question).total == 0
        assert classes.answer(engine, code, token, question, "A", NOW) is None
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("where", ["no server", "no database"])
def test_a_postgres_server_that_is_not_there(postgres_server, where):
    if where == "no server":
        url = f"postgresql+psycopg://nobody@127.0.0.1:{_free_port()}/attention"
    else:
        url = make_url(postgres_server).set(database="attention_lab_no_such_database")
    engine = classes.engine_for(url)
    try:
        started = time.monotonic()
        for call in (lambda: classes.prepare(engine), lambda: classes.start_session(engine, NOW),
                     lambda: classes.find_session(engine, "K7M4QX", NOW)):
            with pytest.raises(classes.StoreError) as failed:
                call()
            assert str(failed.value) == errors.UNREACHABLE
            assert "127.0.0.1" not in str(failed.value) and "nobody" not in str(failed.value)
        assert time.monotonic() - started < 10
    finally:
        engine.dispose()


def test_a_postgres_url_as_hosts_write_it():
    engine = classes.engine_for("postgres://user:secret@db.invalid:5432/attention")
    assert engine.url.drivername == "postgresql+psycopg"
    engine.dispose()



def test_a_version_1_database_gains_seats_and_removals_and_keeps_its_class(make_engine):
    """Version 2 (a class's seats, a removed student), on a database made at version 1: what it held stays."""
    old = make_engine()
    code, key = classes.start_session(old, NOW)
    token = new_token()
    classes.join(old, code, token, "Ada", NOW)
    with old.begin() as conn:  # back to version 1's tables, as an older app left them
        conn.execute(text("ALTER TABLE class_sessions DROP COLUMN seats"))
        conn.execute(text("ALTER TABLE students DROP COLUMN removed_at"))
        conn.execute(text("ALTER TABLE class_sessions DROP COLUMN key_generation"))
        conn.execute(text("DROP TABLE address_budgets"))
        conn.execute(schema.meta.update().values(value="1"))
    upgraded = make_engine()
    assert classes.teacher(upgraded, code, key).seats == schema.SEATS
    assert classes.enrolled(upgraded, code, token) and classes.joined(upgraded, code) == 1
    assert version_rows(upgraded) == [("schema_version", str(schema.SCHEMA_VERSION))]
    assert classes.remove_student(upgraded, code, key, 1, NOW) is None and classes.joined(upgraded, code) == 0


def test_a_version_2_database_gains_key_generations_and_address_budgets(make_engine):
    """Version 3 (a teacher's new key, limits per address), on a database made at version 2: its class and its
    teacher's key stay, and both new things work on it."""
    old = make_engine()
    code, key = classes.start_session(old, NOW)
    token = new_token()
    classes.join(old, code, token, "Ada", NOW)
    with old.begin() as conn:  # back to version 2's tables
        conn.execute(text("ALTER TABLE class_sessions DROP COLUMN key_generation"))
        conn.execute(text("DROP TABLE address_budgets"))
        conn.execute(schema.meta.update().values(value="2"))
    upgraded = make_engine()
    assert classes.teacher(upgraded, code, key).key_generation == 0 and classes.enrolled(upgraded, code, token)
    assert version_rows(upgraded) == [("schema_version", str(schema.SCHEMA_VERSION))]
    fresh = classes.new_teacher_key(upgraded, code, key)
    assert isinstance(classes.teacher(upgraded, code, fresh), classes.Session)
    assert classes.teacher(upgraded, code, key) == classes.Refusal("wrong key")
    assert isinstance(classes.join(upgraded, code, new_token(), None, NOW, address="203.0.113.9"), int)

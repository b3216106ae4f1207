"""How long a class is kept, on real databases (a SQLite file and PostgreSQL): a class is deleted, with its
questions, students and answers, keep_days() after it ends or expires, and not before; starting a class and the
class page's engine delete the old ones without anyone asking; its teacher (and nobody else) can delete it at once;
the setting is read in one place and a mistyped one is refused; the page says what the setting says; and the
teacher's control deletes only after its confirmation."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, select
from streamlit.testing.v1 import AppTest

from classroom import connection, retention
from store import classes, runs
from store.classes.sessions import KEEP_MAX_DAYS
from store.codes import new_token
from store.schema import metadata
from tests.apptest_helpers import ROOT
from tests.classroom.conftest import snapshot

NOW = 1_800_000_000.0
DAY = 86_400
KEEP = classes.KEEP_DAYS * DAY


def rows(engine) -> dict[str, int]:
    """How many rows each table of the class store holds."""
    with engine.connect() as conn:
        return {t.name: conn.scalar(select(func.count()).select_from(t)) for t in metadata.sorted_tables}


def busy_class(engine, now: float, title: str = "Tuesday") -> tuple[str, str]:
    """A class with a question, two students and their answers, ended at `now` + 1 h."""
    code, key = classes.start_session(engine, now, title=title)
    question = classes.put_question(engine, code, key, "choice", {"options": ["a", "b"]}, now + 60)
    for name in ("Ada", "Bo"):
        token = new_token()
        classes.join(engine, code, token, name, now + 30)
        assert classes.answer(engine, code, token, question, "1", now + 90) is None
    assert classes.end_session(engine, code, key, now + 3600) is None
    return code, key


def test_a_class_is_kept_its_time_after_it_ends_then_deleted_with_all_it_holds(engine, monkeypatch):
    monkeypatch.delenv(classes.KEEP_ENV, raising=False)
    code, key = busy_class(engine, NOW)
    ended = NOW + 3600
    assert classes.purge(engine, ended + KEEP - 1) == 0
    assert classes.teacher(engine, code, key).code == code  # a teacher can still export on the last day
    assert classes.purge(engine, ended + KEEP + 1) == 1
    assert {name: n for name, n in rows(engine).items() if name != "meta"} == {
        "class_sessions": 0, "questions": 0, "students": 0, "answers": 0, "address_budgets": 0}
    assert classes.find_session(engine, code, ended + KEEP + 2).reason == "unknown"


def test_a_class_never_ended_counts_from_its_expiry_and_a_live_one_stays(engine):
    old, _ = classes.start_session(engine, NOW, ttl_s=3600)
    live, _ = classes.start_session(engine, NOW + KEEP, ttl_s=4 * DAY)
    assert classes.purge(engine, NOW + 3600 + KEEP - 1) == 0
    assert classes.purge(engine, NOW + 3600 + KEEP + 1) == 1
    later = NOW + 3600 + KEEP + 2
    assert classes.find_session(engine, old, later).reason == "unknown"
    assert classes.find_session(engine, live, later).code == live


def test_a_class_ended_after_it_expired_counts_from_its_expiry(engine):
    """The first of the two: ending a class long after its code expired does not keep it longer."""
    code, key = classes.start_session(engine, NOW, ttl_s=3600)
    assert classes.end_session(engine, code, key, NOW + 20 * DAY) is None
    assert classes.purge(engine, NOW + 3600 + KEEP + 1) == 1


def test_starting_a_class_deletes_the_classes_past_their_time(engine):
    old, _ = busy_class(engine, NOW)
    kept, _ = busy_class(engine, NOW + 10 * DAY)
    new, _ = classes.start_session(engine, NOW + 3600 + KEEP + 1)
    assert rows(engine)["class_sessions"] == 2
    assert classes.teacher(engine, old, "any").reason == "unknown"
    assert {classes.all_questions(engine, c) != [] for c in (kept,)} == {True}
    assert classes.find_session(engine, new, NOW + 3600 + KEEP + 2).code == new


def test_the_class_page_engine_purges_at_most_hourly(engine, monkeypatch):
    """connection.engine() runs purge now and then, so the stated time holds even when no class is started."""
    monkeypatch.setattr(connection, "_last_purge", {"at": float("-inf")})
    busy_class(engine, NOW)
    over = NOW + 3600 + KEEP + 1  # the class's time is up from here
    connection._purge_now_and_then(engine, over - 1800)  # a visit: a purge, with nothing old yet
    connection._purge_now_and_then(engine, over)  # half an hour later: no purge yet
    assert rows(engine)["class_sessions"] == 1
    connection._purge_now_and_then(engine, over - 1800 + connection.PURGE_EVERY_S)
    assert rows(engine)["class_sessions"] == 0


def test_only_the_teacher_deletes_a_class_and_then_everything_of_it_goes(engine):
    code, key = busy_class(engine, NOW)
    other, _ = busy_class(engine, NOW, title="Wednesday")
    before = snapshot(engine)
    for wrong_code, wrong_key, reason in ((code, "not-the-key", "wrong key"), ("ZZZZZZ", key, "unknown"),
                                          ("!!", key, "not a code"), (code, None, "wrong key")):
        assert classes.delete_session(engine, wrong_code, wrong_key).reason == reason
    assert snapshot(engine) == before
    assert classes.delete_session(engine, code, key) is None
    left = rows(engine)
    assert (left["class_sessions"], left["questions"], left["students"], left["answers"]) == (1, 1, 2, 2)
    assert classes.teacher(engine, other, "x").reason == "wrong key"  # the other class is whole
    assert classes.delete_session(engine, code, key).reason == "unknown"  # deleting twice: nothing to delete


def test_child_rows_go_with_an_engine_made_without_the_stores_settings(tmp_path):
    """SQLite deletes the questions, students and answers with their class only when foreign keys are on for that
    connection: the store turns them on for any engine it is given."""
    engine = create_engine(f"sqlite:///{tmp_path / 'plain.sqlite3'}")
    try:
        code, key = busy_class(engine, NOW)
        assert classes.delete_session(engine, code, key) is None
        assert {name: n for name, n in rows(engine).items() if name != "meta"} == {
            "class_sessions": 0, "questions": 0, "students": 0, "answers": 0, "address_budgets": 0}
    finally:
        engine.dispose()


def test_a_deleted_class_leaves_the_sqlite_file(tmp_path):
    """Its nicknames are not left in the file: not in the pages freed (they go back to the disk), nor in pages
    another class's rows still use (zeroed)."""
    path = tmp_path / "class.sqlite3"
    engine = classes.engine_for(f"sqlite:///{path}")
    try:
        gone, key = classes.start_session(engine, NOW, seats=classes.SEATS_MAX)
        stays, _ = classes.start_session(engine, NOW, seats=classes.SEATS_MAX)
        for n in range(300):  # the two classes' students side by side in the same pages
            classes.join(engine, gone, new_token(), f"Zanzibar{n:04d}", NOW + 1)
            classes.join(engine, stays, new_token(), f"Kept{n:04d}", NOW + 1)
        classes.delete_session(engine, gone, key)
        raw = engine.raw_connection()
        raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        raw.close()
        assert b"Zanzibar" not in path.read_bytes() and b"Kept0299" in path.read_bytes()
    finally:
        engine.dispose()


def test_the_class_pages_engine_deletes_old_classes(tmp_path, monkeypatch):
    """What the page calls (classroom.connection.engine) purges: nobody needs to start a class for it."""
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    monkeypatch.setenv(connection.ENVIRONMENT, url)
    monkeypatch.setattr(connection, "_last_purge", {"at": float("-inf")})
    engine = classes.engine_for(url)
    try:
        busy_class(engine, 1_000_000_000.0)  # ended in 2001: long past any keeping time
        connection.engine()
        assert rows(engine)["class_sessions"] == 0
    finally:
        engine.dispose()


@pytest.mark.parametrize("setting, days", [("", classes.KEEP_DAYS), ("7", 7), (" 0 ", 0), ("3650", 3650)])
def test_the_keeping_time_is_the_setting(monkeypatch, setting, days):
    monkeypatch.setenv(classes.KEEP_ENV, setting)
    assert classes.keep_days() == days


@pytest.mark.parametrize("setting", ["seven", "-1", "1.5", "1e9", "3651", "٣"])
def test_a_mistyped_keeping_time_is_refused_with_a_sentence(monkeypatch, setting):
    monkeypatch.setenv(classes.KEEP_ENV, setting)
    with pytest.raises(classes.StoreError, match=classes.KEEP_ENV):
        classes.keep_days()


def test_a_keeping_time_of_zero_deletes_a_class_once_it_ends(engine, monkeypatch):
    monkeypatch.setenv(classes.KEEP_ENV, "0")
    busy_class(engine, NOW)
    assert classes.purge(engine, NOW + 1800) == 0  # still live
    assert classes.purge(engine, NOW + 3601) == 1


@pytest.mark.parametrize("setting, said", [("", f"{classes.KEEP_DAYS} days after the class ends"),
                                           ("1", "1 day after the class ends"), ("0", "until the class ends or")])
def test_the_page_says_the_keeping_time_the_store_keeps(monkeypatch, setting, said):
    monkeypatch.setenv(classes.KEEP_ENV, setting)
    assert said in retention.kept_sentence()
    assert "deleted" in retention.kept_sentence()


def delete_page() -> None:
    import streamlit as st

    from classroom import retention
    from store import classes

    engine = classes.engine_for(st.session_state["url"])
    st.session_state["deleted"] = retention.delete_control(engine, st.session_state["code"], st.session_state["key"])


def control(url: str, code: str, key: str) -> AppTest:
    at = AppTest.from_function(delete_page, default_timeout=30)
    at.session_state["url"], at.session_state["code"], at.session_state["key"] = url, code, key
    return at.run()


def test_the_teachers_control_deletes_only_after_the_tick(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    engine = classes.engine_for(url)
    try:
        code, key = busy_class(engine, NOW)
        at = control(url, code, key)
        assert not at.exception and at.button(key=retention.DELETE_KEY).disabled
        assert rows(engine)["class_sessions"] == 1 and not at.session_state["deleted"]
        at.checkbox(key=retention.SURE_KEY).check().run()
        at.button(key=retention.DELETE_KEY).click().run()
        assert not at.exception and at.session_state["deleted"]
        assert [s.value for s in at.success] == [retention.DELETED]
        assert rows(engine)["class_sessions"] == 0
    finally:
        engine.dispose()


def test_a_press_without_the_tick_deletes_nothing(tmp_path):
    """A press that reaches the server without the tick (the test lifts the button's disabling, as a crafted
    client could) deletes nothing: Streamlit discards it, and the control checks the tick itself too."""
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    engine = classes.engine_for(url)
    try:
        code, key = busy_class(engine, NOW)
        at = control(url, code, key)
        button = at.button(key=retention.DELETE_KEY)
        button.proto.disabled = False
        button.click().run()
        assert not at.exception and not at.session_state["deleted"]
        assert rows(engine)["class_sessions"] == 1
    finally:
        engine.dispose()


def test_the_teachers_control_says_why_it_did_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    engine = classes.engine_for(url)
    try:
        code, _ = busy_class(engine, NOW)
        at = control(url, code, "not-the-key")
        at.checkbox(key=retention.SURE_KEY).check().run()
        at.button(key=retention.DELETE_KEY).click().run()
        assert not at.exception and not at.session_state["deleted"]
        assert [e.value for e in at.error] == [classes.Refusal("wrong key").message]
        assert rows(engine)["class_sessions"] == 1
    finally:
        engine.dispose()


def test_the_readme_says_the_numbers_the_code_keeps():
    """README's "Where the data lives and how long" states the constants' values: it stays true when one changes."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    section = readme.split("## Where the data lives and how long")[1].split(" ## ")[0]
    assert f"deleted {classes.KEEP_DAYS} days after it ends" in section
    assert f"whole days from 0 to {KEEP_MAX_DAYS}" in section and classes.KEEP_ENV in section
    assert f"kept {runs.EXPIRE_DAYS} days" in section
    assert f"at most {runs.MAX_RUNS:,} runs and {runs.MAX_TOTAL_BYTES // 1_000_000} MB" in readme

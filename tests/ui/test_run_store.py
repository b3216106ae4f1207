"""Trained runs kept for a link (store.runs) on real databases: a SQLite file and PostgreSQL (the
class store's fixtures). A run comes back byte for byte; it expires; a session keeps only its newest few, and the
server its newest within a count and a byte cap, whoever stored them; a run over the size cap is refused; on SQLite
the file stays bounded under a flood and shrinks when runs go; a database that is not there gives a sentence."""

from __future__ import annotations

import io
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.model import ModelConfig, init_params
from core.model_file import flatten, unflatten
from store import engine as sql
from store import runs

NOW = 1_800_000_000.0
DAY = 86_400


def npz(seed: int = 0) -> tuple[bytes, ModelConfig, dict]:
    cfg = ModelConfig(vocab_size=11, d_model=8, n_heads=2, n_layers=1, max_len=16)
    params = init_params(cfg, np.random.default_rng(seed))
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **flatten(params))
    return buffer.getvalue(), cfg, params


def test_a_stored_run_comes_back_from_another_engine_as_it_was(make_engine):
    weights, cfg, params = npz()
    meta = {"tokenizer": {"kind": "char", "chars": "ABC|"}, "val_loss": 0.25}
    expires = runs.store(make_engine(), "AbC123xy", "owner-1", "copy task · run 1", weights,
                              cfg.to_dict(), meta, NOW)
    assert expires == pytest.approx(NOW + runs.EXPIRE_DAYS * DAY)
    other_process = make_engine()  # a second server process has its own engine
    got = runs.load(other_process, "AbC123xy", NOW + DAY)
    assert (got.name, got.meta, ModelConfig(**got.config)) == ("copy task · run 1", meta, cfg)
    with np.load(io.BytesIO(got.weights), allow_pickle=False) as data:
        back = unflatten({k: data[k] for k in data.files})
    for key, value in flatten(params).items():
        np.testing.assert_array_equal(flatten(back)[key], value)


def test_unknown_and_expired_runs_are_told_apart(engine):
    weights, cfg, _ = npz()
    runs.store(engine, "Expires1", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    with pytest.raises(KeyError):
        runs.load(engine, "Nothere1", NOW)
    assert runs.load(engine, "Expires1", NOW + runs.EXPIRE_DAYS * DAY - 1).id == "Expires1"
    with pytest.raises(runs.RunExpired):
        runs.load(engine, "Expires1", NOW + runs.EXPIRE_DAYS * DAY + 1)
    # the next store, a week later, deletes it: an expired run takes no room
    runs.store(engine, "Fresh123", "someone", "run", weights, cfg.to_dict(), {}, NOW + 8 * DAY)
    with pytest.raises(KeyError):
        runs.load(engine, "Expires1", NOW + 8 * DAY)


def test_a_session_keeps_its_newest_runs_only(engine):
    weights, cfg, _ = npz()
    ids = [f"Run{i:05d}" for i in range(runs.PER_SESSION + 2)]
    for i, run_id in enumerate(ids):
        runs.store(engine, run_id, "busy", "run", weights, cfg.to_dict(), {}, NOW + i)
    runs.store(engine, "OtherOne", "quiet", "run", weights, cfg.to_dict(), {}, NOW)
    assert runs.owned(engine, "busy") == ids[::-1][: runs.PER_SESSION]
    assert runs.owned(engine, "quiet") == ["OtherOne"]  # another session's run is not touched
    with pytest.raises(KeyError):
        runs.load(engine, ids[0], NOW)


def test_a_run_over_the_size_cap_is_refused_with_a_sentence(engine, monkeypatch):
    weights, cfg, _ = npz()
    monkeypatch.setattr(runs, "MAX_RUN_BYTES", len(weights) - 1)
    with pytest.raises(ValueError, match="over the"):
        runs.store(engine, "TooBig12", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    assert runs.owned(engine, "owner") == []


def test_ids_are_random_and_checked():
    ids = {runs.new_id() for _ in range(200)}
    assert len(ids) == 200 and all(runs.valid_id(i) for i in ids)
    assert not any(runs.valid_id(bad) for bad in ("", "short", "AbC123x!", "AbC123xyz", "../etc/p"))


def test_a_database_that_cannot_be_opened_gives_a_sentence(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    engine = sql.engine_for(f"sqlite:///{blocked / 'app.sqlite3'}")
    weights, cfg, _ = npz()
    with pytest.raises(sql.StoreError) as failed:
        runs.store(engine, "AbC123xy", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    assert "could not be" in str(failed.value)


def kept(engine, run_ids: list[str]) -> list[str]:
    """Which of `run_ids` can still be loaded."""
    found = []
    for run_id in run_ids:
        try:
            runs.load(engine, run_id, NOW)
            found.append(run_id)
        except KeyError:
            pass
    return found


def test_the_server_keeps_at_most_its_count_of_runs_from_everyone(engine, monkeypatch):
    """A script that opens a new session for every run meets the global cap: the oldest go first."""
    weights, cfg, _ = npz()
    monkeypatch.setattr(runs, "MAX_RUNS", 3)
    ids = [f"Flood{i:03d}" for i in range(5)]
    for i, run_id in enumerate(ids):
        runs.store(engine, run_id, f"session-{i}", "run", weights, cfg.to_dict(), {}, NOW + i)
    assert kept(engine, ids) == ids[2:]


def test_the_server_keeps_at_most_its_bytes_of_runs_from_everyone(engine, monkeypatch):
    weights, cfg, _ = npz()
    monkeypatch.setattr(runs, "MAX_TOTAL_BYTES", 2 * len(weights) + len(weights) // 2)
    ids = [f"Bytes{i:03d}" for i in range(4)]
    for i, run_id in enumerate(ids):
        runs.store(engine, run_id, f"session-{i}", "run", weights, cfg.to_dict(), {}, NOW + i)
    assert kept(engine, ids) == ids[2:]
    # a run stored again under its id is the newest now, and another's goes first
    runs.store(engine, ids[2], "session-2", "run", weights, cfg.to_dict(), {}, NOW + 10)
    runs.store(engine, "Bytes999", "session-9", "run", weights, cfg.to_dict(), {}, NOW + 11)
    assert kept(engine, [*ids, "Bytes999"]) == [ids[2], "Bytes999"]


def file_bytes(engine, path) -> int:
    """The SQLite file's size once its WAL is copied in and emptied: what the runs take on the disk."""
    raw = engine.raw_connection()
    try:
        raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()
    return path.stat().st_size + Path(f"{path}-wal").stat().st_size


def test_a_flood_of_runs_leaves_the_file_bounded_and_it_shrinks_when_they_go(tmp_path, monkeypatch):
    """Measured: 15 runs of 1 MB from 15 sessions take the file to about the 3 MB cap (15 MB without it), and once
    they have expired, the next store leaves it near empty (the freed pages go back to the disk)."""
    path = tmp_path / "app.sqlite3"
    engine = sql.engine_for(f"sqlite:///{path}")
    monkeypatch.setattr(runs, "MAX_TOTAL_BYTES", 3_000_000)
    try:
        for i in range(15):
            runs.store(engine, f"Flood{i:03d}", f"script-{i}", "run", os.urandom(1_000_000), {}, {}, NOW + i)
        flooded = file_bytes(engine, path)
        assert 3_000_000 < flooded < 4_200_000, flooded
        runs.store(engine, "Later123", "someone", "run", b"small", {}, {}, NOW + 8 * DAY)
        emptied = file_bytes(engine, path)
        assert emptied < 200_000, (flooded, emptied)
    finally:
        engine.dispose()


def test_a_file_from_before_reclaims_its_space_too(tmp_path):
    """A SQLite file made without auto-vacuum (by an older version) is converted once, then shrinks as the new."""
    path = tmp_path / "app.sqlite3"
    older = sqlite3.connect(path)
    with older:
        older.execute("CREATE TABLE kept (x BLOB)")
        older.execute("INSERT INTO kept VALUES (zeroblob(10000))")
    assert older.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    older.close()
    engine = sql.engine_for(f"sqlite:///{path}")
    try:
        for i in range(3):
            runs.store(engine, f"Older{i:03d}", "owner", "run", os.urandom(1_000_000), {}, {}, NOW + i)
        full = file_bytes(engine, path)
        runs.store(engine, "Later123", "someone", "run", b"small", {}, {}, NOW + 8 * DAY)
        assert file_bytes(engine, path) < full - 2_500_000
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2  # incremental
    finally:
        engine.dispose()


def test_an_id_in_use_by_another_session_is_never_replaced(engine):
    """new_id draws one of 62^8 ids: a draw already in use is refused (the page draws again), and the run it
    names stays whoever tries to store over it."""
    first, cfg, _ = npz(0)
    second, _, _ = npz(1)
    runs.store(engine, "Same1234", "owner-1", "theirs", first, cfg.to_dict(), {}, NOW)
    with pytest.raises(runs.RunIdTaken):
        runs.store(engine, "Same1234", "owner-2", "mine", second, cfg.to_dict(), {}, NOW + 1)
    kept = runs.load(engine, "Same1234", NOW + 2)
    assert (kept.name, kept.weights) == ("theirs", first)
    runs.store(engine, "Same1234", "owner-1", "theirs, again", second, cfg.to_dict(), {}, NOW + 3)
    assert runs.load(engine, "Same1234", NOW + 4).name == "theirs, again"  # its owner may store it anew


def test_the_page_draws_another_id_when_its_first_is_taken(engine, monkeypatch):
    from ui.compute import database, model_store

    weights, cfg, _ = npz(0)
    runs.store(engine, "Taken123", "someone-else", "theirs", weights, cfg.to_dict(), {}, NOW)
    drawn = iter(["Taken123", "Fresh123"])
    monkeypatch.setattr(runs, "new_id", lambda: next(drawn))
    monkeypatch.setattr(database, "engine", lambda: engine)
    stored, problem = model_store.keep_for_link(model_store.random_model(0), state={})
    assert problem is None and stored.meta["run_id"] == "Fresh123"
    assert runs.load(engine, "Taken123", NOW + 1).name == "theirs"

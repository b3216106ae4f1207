"""Trained runs kept for a link (ui.compute.run_store) on real databases: a SQLite file and PostgreSQL (the
class store's fixtures). A run comes back byte for byte; it expires; a session keeps only its newest few; a
run over the size cap is refused; a database that is not there gives a sentence."""

from __future__ import annotations

import io

import numpy as np
import pytest

from core.model import ModelConfig, init_params
from core.model_file import flatten, unflatten
from ui.compute import run_store, sql

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
    expires = run_store.store(make_engine(), "AbC123xy", "owner-1", "copy task · run 1", weights,
                              cfg.to_dict(), meta, NOW)
    assert expires == pytest.approx(NOW + run_store.EXPIRE_DAYS * DAY)
    other_process = make_engine()  # a second server process has its own engine
    got = run_store.load(other_process, "AbC123xy", NOW + DAY)
    assert (got.name, got.meta, ModelConfig(**got.config)) == ("copy task · run 1", meta, cfg)
    with np.load(io.BytesIO(got.weights), allow_pickle=False) as data:
        back = unflatten({k: data[k] for k in data.files})
    for key, value in flatten(params).items():
        np.testing.assert_array_equal(flatten(back)[key], value)


def test_unknown_and_expired_runs_are_told_apart(engine):
    weights, cfg, _ = npz()
    run_store.store(engine, "Expires1", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    with pytest.raises(KeyError):
        run_store.load(engine, "Nothere1", NOW)
    assert run_store.load(engine, "Expires1", NOW + run_store.EXPIRE_DAYS * DAY - 1).id == "Expires1"
    with pytest.raises(run_store.RunExpired):
        run_store.load(engine, "Expires1", NOW + run_store.EXPIRE_DAYS * DAY + 1)
    # the next store, a week later, deletes it: an expired run takes no room
    run_store.store(engine, "Fresh123", "someone", "run", weights, cfg.to_dict(), {}, NOW + 8 * DAY)
    with pytest.raises(KeyError):
        run_store.load(engine, "Expires1", NOW + 8 * DAY)


def test_a_session_keeps_its_newest_runs_only(engine):
    weights, cfg, _ = npz()
    ids = [f"Run{i:05d}" for i in range(run_store.PER_SESSION + 2)]
    for i, run_id in enumerate(ids):
        run_store.store(engine, run_id, "busy", "run", weights, cfg.to_dict(), {}, NOW + i)
    run_store.store(engine, "OtherOne", "quiet", "run", weights, cfg.to_dict(), {}, NOW)
    assert run_store.owned(engine, "busy") == ids[::-1][: run_store.PER_SESSION]
    assert run_store.owned(engine, "quiet") == ["OtherOne"]  # another session's run is not touched
    with pytest.raises(KeyError):
        run_store.load(engine, ids[0], NOW)


def test_a_run_over_the_size_cap_is_refused_with_a_sentence(engine, monkeypatch):
    weights, cfg, _ = npz()
    monkeypatch.setattr(run_store, "MAX_RUN_BYTES", len(weights) - 1)
    with pytest.raises(ValueError, match="over the"):
        run_store.store(engine, "TooBig12", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    assert run_store.owned(engine, "owner") == []


def test_ids_are_random_and_checked():
    ids = {run_store.new_id() for _ in range(200)}
    assert len(ids) == 200 and all(run_store.valid_id(i) for i in ids)
    assert not any(run_store.valid_id(bad) for bad in ("", "short", "AbC123x!", "AbC123xyz", "../etc/p"))


def test_a_database_that_cannot_be_opened_gives_a_sentence(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    engine = sql.engine_for(f"sqlite:///{blocked / 'app.sqlite3'}")
    weights, cfg, _ = npz()
    with pytest.raises(sql.StoreError) as failed:
        run_store.store(engine, "AbC123xy", "owner", "run", weights, cfg.to_dict(), {}, NOW)
    assert "could not be" in str(failed.value)

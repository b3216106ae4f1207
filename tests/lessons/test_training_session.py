"""The Training page's state machine, driven directly: start, tick, stop, resume, pause, divergence, bad input;
and what a run shows and hands to the model store (lessons/training/run.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import data as core_data
from core.model import ModelConfig
from core.model_file import flatten
from core.tokenize import CharTokenizer
from lessons.training import cached as training_cached
from lessons.training import session as ts
from lessons.training import setup as setup
from ui.compute import model_store, training_share
from ui.compute.model_store import Model

FAST = dict(corpus="copy", d_model=32, n_heads=2, n_layers=1, task_length=8, batch_size=16, lr=1e-2)
TEXT = "The quick brown fox jumps over the lazy dog. A stitch in time saves nine. " * 40  # ~3,000 characters


def settings(**changes) -> setup.Settings:
    return setup.Settings(**{**FAST, "steps": 50, **changes})


def train(session: ts.TrainingSession, s: setup.Settings, text=None, budget: float = 10.0):
    assert session.start(s, text), session.error
    while session.running:
        session.tick(budget)
    return session.run


def stopped_after_one_step(session: ts.TrainingSession, **changes):
    """A quick run with a stored model: one step, then Stop."""
    assert session.start(settings(**changes)), session.error
    session.tick(0.0)
    session.stop()
    return session.run


def params_of(model_or_trainer) -> dict:
    return {k: np.array(v) for k, v in flatten(model_or_trainer.params).items()}


def assert_same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_copy_loss_goes_down_and_the_model_is_stored():
    session = ts.TrainingSession()
    run = train(session, settings(steps=300))
    history = run.trainer.history
    assert run.state == "finished" and run.steps == 300 and len(history) == 300
    assert np.mean(history[-10:]) < np.mean(history[:10]) - 1.5  # ~2.87 -> ~0.01 here
    f = session.run.figures()
    assert f["val_loss"] < f["bigram_val_loss"] - 1.0 and f["val_step"] == 300
    assert session.run.attention()["mass"].max() > 0.5  # one head found the shifted diagonal

    # The stored model, as the Full model page takes it.
    assert list(session.models) == [run.name]
    model = session.models[run.name]
    assert isinstance(model, Model) and model.name == run.name and model.trained
    assert model.source == ("session", run.name, 300)
    assert isinstance(model.cfg, ModelConfig) and model.cfg == run.trainer.cfg
    assert isinstance(model.tokenizer, CharTokenizer) and model.tokenizer.vocab_size == model.cfg.vocab_size
    assert model.tokenizer.decode([1, 2, 17]) == "AB|"
    assert_same(params_of(model), params_of(run.trainer))
    for a in flatten(model.params).values():
        assert not a.flags.writeable  # a snapshot: later training cannot change it
        assert not np.shares_memory(a, run.trainer.params["wte"])
    meta = model.meta
    assert meta["tokenizer"] == {"kind": "char", "chars": "ABCDEFGHIJKLMNOP|"}
    assert meta["data"] == "copy" and meta["status"] == "finished" and meta["steps"] == 300
    assert meta["val_loss"] == pytest.approx(f["val_loss"]) and meta["bigram_val_loss"] > 2.5
    assert meta["task"] == {"kind": "copy", "length": 8, "n_symbols": 16}
    assert meta["pattern"]["mass"] > 0.5 and len(meta["history"]) == 300
    assert meta["train_config"]["lr"] == 1e-2 and meta["settings"]["n_layers"] == 1


def test_a_tick_is_bounded_and_the_curve_grows():
    session = ts.TrainingSession()
    assert session.start(settings(steps=2000))
    assert session.tick(0.0) == 1  # at least one step, even with no time left
    rows = []
    for _ in range(3):
        assert 1 <= session.tick(0.02) < 2000
        frame = session.run.loss_frame().frame()
        rows.append(int((frame["series"] == "training (batch)").sum()))
    assert rows == sorted(rows) and rows[-1] > rows[0]
    assert set(session.run.loss_frame().column("series")) == {"training (batch)", "validation", "bigram baseline",
                                                   "uniform guess (log V)"}
    assert session.running and session.models[session.run.name].source[2] == session.run.steps


def test_stop_keeps_the_model_and_resume_goes_on():
    session = ts.TrainingSession()
    assert session.start(settings(steps=2000))
    session.tick(0.05)
    session.stop()
    run = session.run
    assert run.state == "paused" and run.reason == "stopped" and session.resumable
    kept = session.models[run.name]
    assert kept.source[2] == run.steps and kept.meta["status"] == "stopped"
    before = params_of(kept)
    assert session.tick() == 0  # a stopped run does not train
    assert session.resume() and session.running
    session.tick(0.05)
    assert session.run.steps > kept.source[2]
    assert_same(params_of(kept), before)  # the old snapshot is untouched
    assert session.models[run.name].source[2] == session.run.steps


def test_a_second_start_while_running_is_ignored():
    session = ts.TrainingSession()
    assert session.start(settings(steps=2000))
    session.tick(0.0)
    run, steps = session.run, session.run.steps
    assert not session.start(settings(steps=100, seed=3))
    assert session.run is run and run.steps == steps and session.runs_started == 1 and not session.error


def test_learning_rate_1000_diverges_and_keeps_the_previous_model():
    session = ts.TrainingSession()
    first = stopped_after_one_step(session)
    before = params_of(session.models[first.name])
    assert session.start(settings(lr=1000.0))
    session.tick()
    run = session.run
    assert run.state == "diverged" and not session.running and not session.resumable
    assert "learning rate" in session.error and first.name in session.error
    assert list(session.models) == [first.name]  # the diverged run stored nothing
    assert_same(params_of(session.models[first.name]), before)
    assert all(np.isfinite(a).all() for a in flatten(run.trainer.params).values())  # restored, not NaN
    assert session.tick() == 0 and not session.resume()
    assert session.start(settings(seed=1)) and not session.error  # and a new run starts cleanly


def test_a_run_that_diverges_late_keeps_its_last_good_snapshot():
    session = ts.TrainingSession()
    assert session.start(settings(steps=2000))
    session.tick(0.05)
    run = session.run
    kept = session.models[run.name]
    before = params_of(kept)
    run.trainer.set_learning_rate(1e3)  # the rate jumps mid-run
    session.tick(1.0)
    assert run.state == "diverged" and f"step {kept.source[2]}" in session.error
    assert session.models[run.name] is kept
    assert_same(params_of(kept), before)


@pytest.mark.parametrize("raw, name, expected", [
    (None, "", "empty"),
    ("   \n\t ", "", "empty"),
    ("Too short to train on.", "", "too short"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.txt", "binary"),
    ("café au lait ".encode("latin-1") * 100, "latin.txt", "UTF-8"),
    (b"a" * (setup.UPLOAD_CAP_BYTES + 1), "big.txt", "200 KB"),
    ("é" * (setup.UPLOAD_CAP_BYTES // 2 + 1), "", "200 KB"),  # counted in UTF-8 bytes, as a file would be
])
def test_bad_text_is_refused_and_nothing_is_lost(raw, name, expected):
    session = ts.TrainingSession()
    first = stopped_after_one_step(session)
    before = params_of(session.models[first.name])
    assert not session.start(settings(corpus="text", context=16), raw, name)
    assert expected in session.error
    assert session.run is first and first.state == "paused" and session.resumable
    assert list(session.models) == [first.name]
    assert_same(params_of(session.models[first.name]), before)


def test_own_text_trains_a_character_model():
    session = ts.TrainingSession()
    run = train(session, settings(corpus="text", context=16, n_layers=2), TEXT.encode())
    model = session.models[run.name]
    assert run.name.startswith("your text") and model.meta["data"] == "your text"
    assert set(model.tokenizer.itos[1:]) == set(TEXT) and model.cfg.max_len == 16
    assert model.meta["truncated"] is False and "pattern" not in model.meta
    view = session.run.attention()
    assert view["weights"].shape == (2, 2, 16, 16) and "".join(view["chars"]) == run.data.tokenizer.decode(run.example)
    assert session.run.figures()["bigram_val_loss"] < math.log(model.cfg.vocab_size)


def test_a_run_left_alone_pauses_and_can_resume():
    session = ts.TrainingSession()
    assert session.start(settings(steps=2000))
    session.tick(0.0)
    run = session.run
    assert not session.pause_if_left(run.last_active + 1.0)
    assert session.pause_if_left(run.last_active + ts.PAUSE_AFTER_S + 1)
    assert run.state == "paused" and run.reason == "left" and run.name in session.models
    assert session.resume() and session.running and run.reason == ""


def test_without_the_corpus_file_the_bundled_corpus_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(core_data, "PYDOC_FILE", tmp_path / "pydoc_corpus.txt.gz")  # a copy without the file
    training_cached.bundled_problem.clear()
    training_cached.bundled_corpus.clear()
    try:
        assert "pydoc_corpus.txt.gz" in training_cached.bundled_problem()
        session = ts.TrainingSession()
        assert not session.start(settings(corpus="pydoc", context=16))
        assert "pydoc_corpus.txt.gz" in session.error and session.run is None
        assert session.start(settings())  # the others still work
    finally:
        monkeypatch.undo()
        training_cached.bundled_problem.clear()
        training_cached.bundled_corpus.clear()


def test_the_bundled_corpus_trains_a_step():
    assert training_cached.bundled_problem() is None  # it ships with the app: every Python has it
    session = ts.TrainingSession()
    assert session.start(settings(corpus="pydoc", context=16, d_model=16))
    assert session.tick(0.0) == 1
    assert session.run.data.name == "pydoc" and session.run.figures()["bigram_val_loss"] < 3.0


def test_at_most_max_models_are_kept_newest_first_out_last():
    session = ts.TrainingSession()
    names = []
    for seed in range(model_store.MAX_SESSION_MODELS + 2):
        names.append(stopped_after_one_step(session, seed=seed).name)
    assert list(session.models) == names[-model_store.MAX_SESSION_MODELS:]


def test_get_attaches_the_session_to_the_shared_models_dict():
    state: dict = {}
    session = ts.get(state)
    assert ts.get(state) is session and state[model_store.SESSION_KEY] is session.models == {}
    state[model_store.SESSION_KEY] = other = {}
    assert ts.get(state).models is other


def test_get_keeps_a_session_made_before_the_module_was_reimported():
    class TrainingSession:  # what the previous import of lessons.training.session left in session state
        pass

    old = TrainingSession()
    state = {ts.SESSION_KEY: old}
    assert ts.get(state) is old and old.models is state[model_store.SESSION_KEY]
    state[ts.SESSION_KEY] = "something else"
    assert isinstance(ts.get(state), ts.TrainingSession)


def test_training_sessions_of_one_process_share_it():
    """One student training gets the whole tick budget; ten at once share TRAIN_SHARE of the process between
    them, so the slider moves of everyone else keep the rest; a session that stopped ticking stops counting."""
    from ui.compute import training_share as ts

    ts.forget()
    assert ts.fair_budget(1, now=100.0) == training_share.TICK_BUDGET_S
    budgets = [ts.fair_budget(i, now=100.0 + i / 100) for i in range(1, 11)]
    assert budgets[-1] == pytest.approx(ts.TRAIN_SHARE * ts.TICK_EVERY_S / 10)
    assert sum(budgets[-1] for _ in range(10)) <= ts.TRAIN_SHARE * ts.TICK_EVERY_S + 1e-12
    later = 100.0 + ts.ACTIVE_WITHIN_S + 1  # the other nine have not ticked since
    assert ts.fair_budget(1, now=later) == training_share.TICK_BUDGET_S
    ts.forget()

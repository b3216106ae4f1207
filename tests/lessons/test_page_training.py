"""The Training page through AppTest: train, watch the curve grow, stop, resume, diverge, bad uploads, leave.

AppTest does not fire run_every timers: every at.run() is a full rerun, and the live fragment trains one
chunk in each, just as a timer tick would. training_share.TICK_BUDGET_S is lowered where a test needs many small chunks.
"""

from __future__ import annotations

import numpy as np
import pytest

from core import data as core_data
from core.model_file import flatten
from lessons.training import cached as training_cached
from lessons.training import session as ts
from lessons.training import setup as setup
from tests.apptest_helpers import SENT_ATOL, chart_by_title, chart_data, numbered_title, ok, run_app, run_page, texts
from ui.compute import training_share
from ui.compute.model_store import Model

PAGE = "lessons/training/page.py"
FAST = {"tr_layers": "1", "tr_steps": "50"}
LOSS = "Loss while training"
TEXT = "The quick brown fox jumps over the lazy dog. A stitch in time saves nine. " * 40



def session(at) -> ts.TrainingSession:
    return at.session_state[ts.SESSION_KEY]


def train_rows(at) -> int:
    df = chart_data(chart_by_title(at, LOSS))
    return int((df["series"] == "training (batch)").sum())


def until_done(at, max_runs: int = 40):
    for _ in range(max_runs):
        if not session(at).running:
            return at
        ok(at.run())
    raise AssertionError(f"still training after {max_runs} runs: step {session(at).run.steps}")


def test_defaults_show_the_controls_limits_and_an_idle_panel():
    at = ok(run_page(PAGE))
    shown = texts(at)
    assert at.title[0].value == numbered_title("training")
    assert at.sidebar.radio(key="tr_data").value == "copy"
    assert set(at.sidebar.radio(key="tr_data").options) >= {"copy", "reverse", "induction", "text"}
    assert "at most 2000 steps, d_model 64, 2 layers, context 64, batch 32" in shown
    assert "Press **Train** to start" in shown and "What to notice" in shown
    assert "The model is 2 layers, d_model 32, 2 heads of d_k = 16." in shown
    assert not at.button(key="tr_train").disabled
    assert at.button(key="tr_stop").disabled and at.button(key="tr_resume").disabled
    assert at.sidebar.select_slider(key="tr_heads").options == ["1", "2", "4", "8"]  # divisors of 32, <= 8
    at.sidebar.select_slider(key="tr_heads").set_value("1").run()
    assert "2 layers, d_model 32, 1 head of d_k = 32." in texts(ok(at))
    assert any(e.label == "Show the code" for e in at.expander)


def test_train_grows_the_curve_and_stores_the_model(monkeypatch):
    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 0.01)  # a few steps per rerun
    at = ok(run_page(PAGE, {**FAST, "tr_steps": "100"}))
    ok(at.button(key="tr_train").click().run())
    assert session(at).running and at.button(key="tr_train").disabled and not at.button(key="tr_stop").disabled
    rows = [train_rows(at)]
    for _ in range(3):
        rows.append(train_rows(ok(at.run())))
    assert rows == sorted(rows) and rows[-1] > rows[0], rows
    assert len(at.get("progress")) == 1
    assert chart_by_title(at, "Attention on a fixed example") and chart_by_title(at, "Weight on the key")

    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 1.0)
    until_done(at)
    run = session(at).run
    assert run.state == "finished" and run.steps == 100
    assert not at.button(key="tr_train").disabled and at.button(key="tr_stop").disabled
    models = at.session_state["session_models"]
    assert list(models) == [run.name]
    model = models[run.name]
    assert isinstance(model, Model) and model.trained and model.source == ("session", run.name, 100)
    assert model.meta["tokenizer"]["kind"] == "char" and model.meta["status"] == "finished"
    shown = texts(at)
    assert f"Saved in this session as “{run.name}”" in shown.replace("\\", "")
    assert "Open the Full model page" in shown
    history = model.meta["history"]
    assert np.mean(history[-10:]) < np.mean(history[:10])


def test_stop_keeps_the_model_and_resume_goes_on(monkeypatch):
    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 0.02)
    at = ok(run_page(PAGE, {**FAST, "tr_steps": "2000"}))
    ok(at.button(key="tr_train").click().run())
    ok(at.run())
    ok(at.button(key="tr_stop").click().run())
    run = session(at).run
    assert run.state == "paused" and 0 < run.steps < 2000
    kept = at.session_state["session_models"][run.name]
    assert kept.source[2] == run.steps and "Saved in this session" in texts(at)
    assert not at.button(key="tr_resume").disabled and not at.button(key="tr_train").disabled
    steps = run.steps
    ok(at.run())
    assert run.steps == steps  # stopped means stopped
    ok(at.button(key="tr_resume").click().run())
    assert session(at).running and run.steps > steps


def test_pressing_train_twice_is_harmless(monkeypatch):
    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 0.02)
    at = ok(run_page(PAGE, {**FAST, "tr_steps": "2000"}))
    ok(at.button(key="tr_train").click().run())
    run = session(at).run
    assert at.button(key="tr_train").disabled
    session(at).train_requested = True  # what a second click that beat the rerun does
    ok(at.run())
    assert session(at).run is run and session(at).runs_started == 1 and run.state == "running"
    assert any("Already training" in t.value for t in at.toast)
    assert list(at.session_state["session_models"]) == [run.name]


def test_learning_rate_1000_shows_an_error_and_keeps_the_previous_model():
    at = ok(run_page(PAGE, FAST))
    ok(at.button(key="tr_train").click().run())
    until_done(at)
    first = session(at).run.name
    before = {k: np.array(v) for k, v in flatten(at.session_state["session_models"][first].params).items()}
    ok(at.number_input(key="tr_lr_override").set_value(1000.0).run())
    ok(at.button(key="tr_train").click().run())
    until_done(at)
    assert session(at).run.state == "diverged"
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "learning rate 1000 is probably too high" in errors[0] and first in errors[0]
    # The diverged run keeps its own model too when a step before the blow-up was handed over in an earlier
    # tick (on a busy machine a tick can end after step 1); the message says which happened.
    models, run = at.session_state["session_models"], session(at).run
    assert next(iter(models)) == first and set(models) <= {first, run.name}
    assert ("(before it diverged) is kept" in errors[0]) == (run.name in models)
    for k, v in flatten(models[first].params).items():
        np.testing.assert_array_equal(v, before[k])
    assert at.button(key="tr_resume").disabled and not at.button(key="tr_train").disabled


def test_the_link_reaches_the_divergence_case():
    at = ok(run_page(PAGE, {**FAST, "tr_lr_override": "1000"}))
    assert at.number_input(key="tr_lr_override").value == 1000
    ok(at.button(key="tr_train").click().run())
    until_done(at)
    run, message = session(at).run, at.error[0].value
    assert run.state == "diverged" and "Pick a learning rate of 0.01 or lower" in message
    # Whether a model survives depends on timing: a step published between two ticks is kept; when the
    # blow-up comes in the same tick as the first step, nothing was handed over. The message says which.
    if session(at).kept is None:
        assert "This run kept no model" in message
    else:
        assert f"model from step {session(at).kept.source[2]} (before it diverged) is kept" in message


BAD = [
    ("upload", ("picture.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50, "text/plain"), "looks binary"),
    ("upload", ("latin.txt", "café crème ".encode("latin-1") * 200, "text/plain"), "not UTF-8"),
    ("upload", ("big.txt", b"word " * 50_000, "text/plain"), "the limit here is 200 KB"),
    ("upload", ("short.txt", b"Hello there.", "text/plain"), "too short"),
    ("paste", "", "The text is empty"),
    ("paste", "Just one sentence.", "too short"),
]


@pytest.mark.parametrize("how, value, expected", BAD, ids=["binary", "latin1", "over-cap", "short-file", "empty",
                                                           "short-paste"])
def test_bad_text_gets_a_clear_message(how, value, expected):
    at = ok(run_page(PAGE, {**FAST, "tr_data": "text"}))
    if how == "upload":
        at.file_uploader(key="tr_upload").set_value(value)
    else:
        at.text_area(key="tr_text").set_value(value)
    ok(at.run())
    if how == "upload" or value:  # said as soon as the text is there, before any press of Train
        assert [e.value for e in at.error] and expected in at.error[0].value, [e.value for e in at.error]
    else:
        assert not at.error
    ok(at.button(key="tr_train").click().run())
    assert session(at).run is None
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and expected in errors[0], errors


def test_pasted_text_trains_and_is_stored():
    at = ok(run_page(PAGE, {**FAST, "tr_data": "text", "tr_context": "16"}))
    ok(at.text_area(key="tr_text").set_value(TEXT).run())
    ok(at.button(key="tr_train").click().run())
    until_done(at)
    run = session(at).run
    assert run.state == "finished" and run.name.startswith("your text")
    assert at.session_state["session_models"][run.name].cfg.max_len == 16
    assert at.sidebar.slider(key="tr_context").value == 16


def test_leaving_mid_training_pauses_and_nothing_is_lost(monkeypatch):
    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 0.02)
    at = run_app(PAGE, {**FAST, "tr_steps": "2000"})
    ok(at.button(key="tr_train").click().run())
    ok(at.run())
    run = session(at).run
    ok(at.switch_page("lessons/qkv/page.py").run())
    steps = run.steps
    ok(at.run())
    assert run.steps == steps and run.name in at.session_state["session_models"]  # no training off-page
    run.last_active -= 2 * ts.PAUSE_AFTER_S  # as if the student read the other page for a while
    ok(at.switch_page(PAGE).run())
    assert run.state == "paused" and run.reason == "left" and run.steps == steps
    assert any("paused at step" in i.value for i in at.info)
    ok(at.button(key="tr_resume").click().run())
    assert session(at).running and run.steps > steps


def test_without_the_corpus_file_the_page_says_so_and_offers_the_others(monkeypatch, tmp_path):
    monkeypatch.setattr(core_data, "PYDOC_FILE", tmp_path / "pydoc_corpus.txt.gz")  # a copy without the file
    training_cached.bundled_problem.clear()
    try:
        at = ok(run_page(PAGE, {"tr_data": "pydoc"}))
        assert "pydoc" not in at.sidebar.radio(key="tr_data").options
        assert at.sidebar.radio(key="tr_data").value == "copy"
        assert any("pydoc_corpus.txt.gz" in w.value and "missing" in w.value for w in at.warning)
        assert any("not available here" in i.value for i in at.info)
    finally:
        monkeypatch.undo()
        training_cached.bundled_problem.clear()


def test_the_bundled_corpus_path_trains():
    assert training_cached.bundled_problem() is None  # it ships with the app: every Python has it
    at = ok(run_page(PAGE, {**FAST, "tr_data": "pydoc", "tr_context": "16", "tr_d_model": "16"}))
    ok(at.button(key="tr_train").click().run())
    run = session(at).run
    assert run.data.name == "pydoc" and run.steps >= 1
    assert chart_by_title(at, "Attention on a fixed example") is not None


def test_before_a_run_the_page_shows_the_untrained_model_and_the_baselines():
    """Not an empty panel: the maps of the model a press of Train starts from, and the baselines with why
    the copy task's bigram line is a uniform guess among its 16 letters."""
    at = ok(run_page(PAGE, {"tr_layers": "1"}))
    grid = chart_by_title(at, "Attention on a fixed example")
    frame = chart_data(grid)
    assert frame["panel"].nunique() == 2  # 1 layer x 2 heads
    sums = frame.groupby(["panel", "row_i"])["value"].sum()
    np.testing.assert_allclose(sums, 1.0, atol=frame["col_i"].nunique() * SENT_ATOL)  # real attention rows
    curve = chart_data(chart_by_title(at, LOSS))
    assert set(curve["series"]) == {"bigram baseline", "uniform guess (log V)"}
    assert "Before training" in texts(at)
    assert "The bigram baseline, 2.773, is a uniform guess among 16 symbols" in texts(at)
    assert "drawn uniformly and independently" in texts(at)
    bigram = training_cached.build_data(setup.Settings(corpus="copy", n_layers=1), setup.TextMemo())[1]
    assert [m.value for m in at.metric][:2] == [f"{bigram:.3f}", "2.890"]


@pytest.mark.parametrize("away", ["lessons/full_model/page.py", "lessons/qkv/page.py"])
def test_a_pasted_text_and_the_settings_are_there_after_a_visit_to_another_page(away):
    at = ok(run_app(PAGE, {**FAST, "tr_data": "text"}))
    ok(at.text_area(key="tr_text").set_value(TEXT).run())
    ok(at.sidebar.slider(key="tr_context").set_value(16).run())
    ok(at.switch_page(away).run())
    ok(at.switch_page(PAGE).run())
    assert at.text_area(key="tr_text").value == TEXT
    assert at.sidebar.slider(key="tr_context").value == 16
    ok(at.button(key="tr_train").click().run())
    assert session(at).run is not None and session(at).run.name.startswith("your text")
    assert not at.error


def test_an_uploaded_file_is_still_in_use_after_a_visit_to_another_page_until_forgotten():
    at = ok(run_app(PAGE, {**FAST, "tr_data": "text"}))
    at.file_uploader(key="tr_upload").upload("notes.txt", TEXT.encode("utf-16"), "text/plain")  # with its BOM
    ok(at.run())
    assert not at.error and any("Ready: " in c.value for c in at.caption)  # a UTF-16 file reads as text
    ok(at.switch_page("lessons/qkv/page.py").run())
    ok(at.switch_page(PAGE).run())
    assert any("uploaded earlier, “notes" in c.value for c in at.caption)
    ok(at.button(key="tr_train").click().run())
    assert session(at).run is not None and not at.error
    ok(at.button(key="tr_upload_forget").click().run())
    assert not any("uploaded earlier" in c.value for c in at.caption)

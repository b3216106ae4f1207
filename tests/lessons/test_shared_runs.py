"""A run trained on the Training page is kept in the app's database, and a Full model link names it: any browser
(here, a fresh AppTest session) opens it; an expired or unknown run says so and shows the shipped model; without
the database, training works and the link says it cannot carry the run."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from lessons.training import session as ts
from store import runs
from tests.apptest_helpers import ok, open_panels, run_app, texts
from ui.compute import database, model_store
from ui.frame import share

TRAINING, FULL = "lessons/training/page.py", "lessons/full_model/page.py"


@pytest.fixture
def app_database(tmp_path, monkeypatch) -> str:
    url = f"sqlite:///{tmp_path / 'app.sqlite3'}"
    monkeypatch.setenv(database.ENVIRONMENT, url)
    model_store._stored_run.clear()  # nothing read from another test's database
    return url


def trained(query: dict):
    at = ok(run_app(TRAINING, {"tr_layers": "1", "tr_steps": "50", **query}))
    ok(at.button(key="tr_train").click().run())
    for _ in range(60):
        if not at.session_state[ts.SESSION_KEY].running:
            break
        ok(at.run())
    return ok(at.run())


def kept_id(at) -> str:
    kept = at.session_state[ts.SESSION_KEY].kept
    assert kept is not None and runs.valid_id(kept.meta.get("run_id", "")), kept and kept.meta
    return kept.meta["run_id"]


def test_a_finished_run_opens_on_the_full_model_page_with_a_prompt_it_can_read(app_database):
    at = trained({"tr_data": "copy"})
    run_id = kept_id(at)
    assert f"run {run_id}" in texts(at).replace("`", "") and f"{runs.EXPIRE_DAYS} days" in texts(at)
    ok(at.switch_page(FULL).run())
    assert at.sidebar.selectbox(key="fm_model").value.startswith(f"run:{run_id} · copy task · run 1")
    prompt = at.sidebar.text_input(key="fm_prompt").value
    assert prompt.endswith("|") and len(prompt) == 9  # the copy task's 8 letters and its bar
    assert not [w.value for w in at.warning if "vocabulary" in w.value]  # every character is one it knows
    assert "Trained weights" in texts(at) and "trained on the copy task" in texts(at)


def test_a_link_to_the_run_opens_it_in_another_browser_session(app_database):
    run_id = kept_id(trained({"tr_data": "reverse"}))
    fresh = ok(run_app(FULL, {"fm_model": f"run:{run_id}", "fm_prompt": "ABCD|"}, opened=[share.OPEN_KEY]))
    assert fresh.sidebar.selectbox(key="fm_model").value.startswith(f"run:{run_id} · reverse task")
    assert "trained on the reverse task" in texts(fresh) and f"as run {run_id}" in texts(fresh).replace("`", "")
    assert any(f"fm_model=run%3A{run_id}" in c.value for c in fresh.code), [c.value for c in fresh.code]  # share link
    ok(fresh.toggle(key="fm_compare").set_value(True).run())  # its random twin has its shape


@pytest.mark.parametrize("case", ["expired", "unknown", "not an id"])
def test_an_expired_or_unknown_run_says_so_and_shows_the_shipped_model(app_database, case):
    run_id = kept_id(trained({"tr_data": "copy"}))
    if case == "expired":
        engine = runs.sql.engine_for(app_database)
        with engine.begin() as conn:
            conn.execute(update(runs.trained_runs).values(expires_at=1.0))
        engine.dispose()
    asked = {"expired": run_id, "unknown": "Zz9Zz9Zz", "not an id": "../../etc"}[case]
    at = ok(run_app(FULL, {"fm_model": f"run:{asked}"}))
    said = " ".join(w.value for w in at.warning)
    expected = {"expired": "has expired", "unknown": "No trained run", "not an id": "is not the id"}[case]
    assert expected in said and "Showing the shipped model instead" in said, said
    assert f"Trained weights: `{model_store.default_model()}`" in texts(at)


def test_without_the_database_training_works_and_the_link_says_it_cannot_carry_the_run(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    monkeypatch.setenv(database.ENVIRONMENT, f"sqlite:///{blocked / 'app.sqlite3'}")
    at = trained({"tr_data": "copy"})
    kept = at.session_state[ts.SESSION_KEY].kept
    assert kept is not None and "run_id" not in kept.meta
    assert any("A link cannot carry this run" in w.value and "could not be opened" in w.value
               for w in at.warning), [w.value for w in at.warning]
    ok(at.switch_page(FULL).run())
    assert at.sidebar.selectbox(key="fm_model").value == kept.name  # this tab still reads its own run
    ok(open_panels(at, share.OPEN_KEY).run())
    assert any("the link cannot carry it" in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_run_on_own_text_shares_none_of_the_text_and_is_not_called_the_readers(app_database):
    """The link's prompt is no stretch of the student's text, and whoever opens the link is not told that the run
    was trained on *their* text."""
    own = "the river bank was wet and the money bank was closed; " * 20
    at = ok(run_app(TRAINING, {"tr_layers": "1", "tr_steps": "50", "tr_data": "text"}))
    ok(at.text_area(key="tr_text").input(own).run())
    ok(at.button(key="tr_train").click().run())
    for _ in range(60):
        if not at.session_state[ts.SESSION_KEY].running:
            break
        ok(at.run())
    run_id = kept_id(ok(at.run()))
    ok(at.switch_page(FULL).run())
    assert at.sidebar.text_input(key="fm_prompt").value == " "  # "The " needs a capital T this text lacks
    fresh = ok(run_app(FULL, {"fm_model": f"run:{run_id}"}))
    said = texts(fresh)
    assert "a shared text" in said and "your text" not in said

"""Every bad number, database error and fault in the class mode is a sentence on the page, never a traceback:
the room's wildest numbers at a reveal, a question that cannot be drawn, a database that is locked when the
teacher presses Reveal. Pages through Streamlit's AppTest on a real SQLite file."""

from __future__ import annotations

import logging
import math
import sqlite3
import time
import warnings

import pytest
import streamlit as st

from classroom import asked, faults, teacher
from classroom.histogram import histogram
from classroom.questions import ClassQuestion, summary
from store import classes
from tests.classroom.test_pages import ok, started, texts, visit

WILD = ["1e308", "-1e308", "1.7976931348623157e308", "-1.7976931348623157e308", "5e-324", "-5e-324", "nan",
        "inf", "-inf", "1e999", "x" * 5000, "0.5", "0.25", "1/4", "64", "8"]


def number_question(answer: float = 0.25) -> ClassQuestion:
    return ClassQuestion(kind="number", prompt="How much?", answer=answer, tolerance=0.01,
                         explanation="Because.", source="test/number")


@pytest.mark.parametrize("answer", [0.25, 8.0, 0.0, -3.5, 1e-9, 1e300, -1e300])
@pytest.mark.parametrize("values", [WILD, ["1e308", "-1e308"], ["1e308"] * 3, ["-1e308", "0.25"], ["5e-324"] * 2])
def test_the_histogram_stays_finite_whatever_the_room_types(answer, values):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow on the way is a fault too, even when the result looks fine
        s = summary(number_question(answer), values)
    assert all(math.isfinite(e) for e in s["edges"]) and s["edges"] == sorted(s["edges"])
    assert s["edges"][0] < s["edges"][-1]
    assert sum(s["counts"]) + s["below"] + s["above"] + s["unreadable"] == len(values)


def test_a_slip_of_1e308_is_counted_apart_and_the_room_keeps_its_bars():
    h = histogram([0.25, 0.3, 0.2, 1e308, -1e308], 0.25)
    assert (h["below"], h["above"]) == (1, 1) and sum(h["counts"]) == 3
    assert h["edges"][-1] - h["edges"][0] < 1  # the bars are the room's, not 1e308 wide


def room_answers(db, code: str, key: str, qid: int, values: list[str]) -> None:
    for i, value in enumerate(values):
        token = f"student-token-{i:04d}-abcdefgh"
        classes.join(db, code, token, None, time.time())
        classes.answer(db, code, token, qid, value, time.time())


def test_the_projector_draws_a_reveal_of_1e308_and_minus_1e308(db):
    code, key = started(db)
    qid = asked.put(db, code, key, number_question())
    room_answers(db, code, key, qid, ["1e308", "-1e308", "0.25", "0.3"])
    classes.set_state(db, code, key, qid, "revealed", time.time())
    projector = ok(visit({"code": code, "view": "projector"}))
    assert "Far from the rest, not in a bar: 1 below and 1 above." in texts(projector)
    assert "Answer:" in texts(projector) and projector.get("vega_lite_chart")


def broken_question(db, code: str, key: str) -> int:
    """A question the pages cannot read (a spec of a version this code does not know): drawing it fails."""
    return classes.put_question(db, code, key, "number", {"question": {"version": 99}}, time.time())


def test_a_question_the_projector_cannot_draw_is_a_sentence_and_the_rest_stays(db, caplog):
    code, key = started(db)
    broken_question(db, code, key)
    with caplog.at_level(logging.ERROR, logger=faults.log.name):
        projector = ok(visit({"code": code, "view": "projector"}))
    assert faults.PROJECTOR in texts(projector)
    assert "Code **" in texts(projector)  # the join block is still there, above the sentence
    assert any(r.exc_info for r in caplog.records)  # the fault is in the server's log, with its traceback


def test_a_question_the_teacher_cannot_see_is_a_sentence_and_the_controls_stay(db):
    code, key = started(db)
    broken_question(db, code, key)
    at = ok(visit({"code": code, "key": key}))
    assert faults.TEACHER in texts(at)
    assert [b for b in at.button if b.label == "Reveal"]


def test_a_locked_database_on_reveal_is_a_sentence(db, tmp_path):
    code, key = started(db)
    qid = asked.put(db, code, key, number_question())
    at = ok(visit({"code": code, "key": key}))
    locker = sqlite3.connect(tmp_path / "class.sqlite3", isolation_level=None)
    try:
        locker.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the busy timeout
        at.button(key="class_revealed").click().run()
    finally:
        locker.close()
    assert "The class database is busy" in texts(ok(at))
    assert [b for b in at.button if b.label == "Put to the room"]  # the rest of the page is drawn
    assert classes.all_questions(db, code)[0].state == "open" and qid


def test_with_one_question_and_one_answer_the_export_is_there(db):
    code, key = started(db)
    qid = asked.put(db, code, key, number_question())
    at = ok(visit({"code": code, "key": key}))
    assert not at.get("download_button") and "No answers yet" in texts(at)
    room_answers(db, code, key, qid, ["0.25"])
    at.run()
    assert ok(at).get("download_button")


def test_the_results_refresh_themselves(db, monkeypatch):
    """Reveal reruns the controls' part alone, and answers arrive with no click: the results, the gain and the
    export are a part that refreshes on its own, or they stay as the page first drew them."""
    made = {}
    real = st.fragment

    def recording(func=None, *, run_every=None):
        made[getattr(func, "__name__", None)] = run_every
        return real(func, run_every=run_every)

    monkeypatch.setattr(st, "fragment", recording)
    code, key = started(db)
    asked.put(db, code, key, number_question())
    ok(visit({"code": code, "key": key}))
    assert made.get("results") is not None and made["results"] <= teacher.RESULTS_S


def test_each_number_is_in_one_bar_by_its_label_and_by_the_count():
    """A typed 0.6 on the edge of two bars is counted in the right one (np.histogram: a bar holds its left
    edge), and the labels say so; the answer on an edge makes one bar green, not two."""
    import numpy as np

    from classroom.reveal import bins

    edges = [0.5, 0.6, 0.7, 0.8]
    labels, right = bins(edges, 0.6)
    assert labels == ["0.5 to under 0.6", "0.6 to under 0.7", "0.7 to 0.8"] and right == [False, True, False]
    assert np.histogram([0.6], bins=edges)[0].tolist() == [0, 1, 0]
    assert bins(edges, 0.8)[1] == [False, False, True] and np.histogram([0.8], bins=edges)[0].tolist() == [0, 0, 1]

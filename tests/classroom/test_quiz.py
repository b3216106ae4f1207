"""The pre/post quiz: well-formed items (four distinct options, one right, nothing a test-wise student could guess
from), a student's score, and the class's normalised gain at its edges."""

from __future__ import annotations

import json
import math

import pytest

from classroom.questions import from_spec, grade, to_spec
from classroom.quiz import ITEMS, ROW, Gain, class_gain, normalised_gain, quiz, score

QUIZ = quiz()
RIGHT = {q.source: str(q.answer) for q in QUIZ}


def test_seven_items_on_the_core_ideas():
    assert [q.source for q in QUIZ] == [f"quiz/{name}" for name in
                                        ("score", "scaling", "mask", "head", "softmax_row", "residual", "weights")]
    assert quiz() == QUIZ


@pytest.mark.parametrize("q", QUIZ, ids=lambda q: q.source)
def test_an_item_has_four_distinct_options_and_one_right(q):
    assert q.kind == "choice" and len(q.options) == 4
    assert len({" ".join(o.casefold().split()) for o in q.options}) == 4
    assert [grade(q, str(i)) for i in range(4)].count(True) == 1
    assert q.prompt.rstrip().endswith("?") and len(q.explanation) > 100
    assert from_spec(json.loads(json.dumps(to_spec(q)))) == q


def test_nothing_gives_the_right_option_away():
    """Neither its place (the right ones are spread over the positions) nor its length (the longest option is
    right no more often than chance would make it)."""
    places = [q.answer for q in QUIZ]
    assert len(set(places)) >= 3, places
    longest = [q.source for q in QUIZ if len(q.options[q.answer]) == max(map(len, q.options))]
    assert len(longest) <= 2, longest


def test_the_softmax_row_is_a_softmax_row_and_its_average_is_written_out():
    assert all(w >= 0 for w in ROW) and math.fsum(ROW) == 1.0
    q = next(q for q in QUIZ if q.source == "quiz/softmax_row")
    right = q.options[q.answer]
    assert right.startswith(" + ".join(f"{w:g}·v{'₀₁₂₃'[j]}" for j, w in enumerate(ROW)))
    assert f"= {math.fsum(ROW):g})" in q.explanation


def test_the_mask_item_means_minus_infinity_before_the_softmax():
    q = next(q for q in QUIZ if q.source == "quiz/mask")
    assert "−∞" in q.options[q.answer] and "Before the softmax" in q.options[q.answer]
    assert "After the softmax" in q.options[1] and not grade(q, "1")


def test_the_items_are_plain_text_to_the_database():
    assert all(isinstance(v[0], str) and isinstance(v[3], str) for v in ITEMS.values())


# ---- a student's score ---------------------------------------------------------------------------------------


def test_a_students_score():
    assert score(RIGHT) == 100.0
    assert score({}) == 0.0  # nothing answered: nothing right
    wrong = {source: str((int(a) + 1) % 4) for source, a in RIGHT.items()}
    assert score(wrong) == 0.0
    three = dict(list(RIGHT.items())[:3])
    assert score(three) == pytest.approx(300 / 7)  # the other four unanswered count as wrong
    assert score(three | {"quiz/weights": "9"}) == pytest.approx(300 / 7)


def test_an_answer_to_another_question_is_refused():
    with pytest.raises(ValueError, match="qkv/score_count"):
        score(RIGHT | {"qkv/score_count": "49"})


# ---- the class's normalised gain ------------------------------------------------------------------------------


def test_hakes_gain_from_the_class_averages():
    g = normalised_gain({"a": 20, "b": 60, "c": 100}, {"a": 60, "b": 80, "c": 100, "d": 90})
    assert g.pre == 60.0 and g.post == 82.5
    assert g.gain == pytest.approx((82.5 - 60) / (100 - 60))  # everyone who took each quiz
    assert g.matched == 3 and g.matched_gain == pytest.approx((80 - 60) / (100 - 60))  # a, b and c only
    assert g.average_gain == pytest.approx(0.5) and g.at_ceiling == 1  # c was at 100% before: left out


def test_the_matched_students_own_gains_are_not_hakes():
    """Hake's ⟨g⟩ of the averages and the mean of single gains differ: (75 − 40) / 60 against (0.5 + 1) / 2."""
    g = normalised_gain({"a": 0.0, "b": 80.0}, {"a": 50.0, "b": 100.0})
    assert g.matched_gain == pytest.approx(35 / 60) and g.average_gain == pytest.approx(0.75)
    assert g.gain == g.matched_gain  # the same students took both


def test_a_class_that_scored_everything_before_has_no_gain():
    g = normalised_gain({"a": 100, "b": 100.0}, {"a": 100, "b": 50})
    assert g.gain is None and g.matched_gain is None and g.average_gain is None
    assert g.at_ceiling == 2 and g.pre == 100.0 and g.post == 75.0
    assert class_gain(100.0, 100.0) is None


def test_gain_edges():
    assert class_gain(50.0, 25.0) == -0.5  # the class did worse
    assert class_gain(0.0, 100.0) == 1.0 and class_gain(40.0, 40.0) == 0.0
    assert class_gain(None, 50.0) is None and class_gain(50.0, None) is None
    assert normalised_gain({}, {}) == Gain(None, None, None, 0, None, None, 0)
    only_pre = normalised_gain({"a": 30}, {})
    assert only_pre.pre == 30.0 and only_pre.gain is None and only_pre.matched == 0
    apart = normalised_gain({"a": 30}, {"b": 70})  # different students: a class gain, no matched one
    assert apart.gain == pytest.approx(40 / 70) and apart.matched == 0 and apart.matched_gain is None
    assert apart.average_gain is None


@pytest.mark.parametrize("bad", [101, -1, float("nan"), float("inf"), True, "50", None])
def test_a_score_that_is_not_a_percentage_is_refused(bad):
    with pytest.raises(ValueError, match="percentage from 0 to 100"):
        normalised_gain({"a": bad}, {"a": 50})
    with pytest.raises(ValueError, match="percentage from 0 to 100"):
        normalised_gain({"a": 50}, {"a": bad})


def test_scores_feed_the_gain():
    wrong = {source: str((int(a) + 1) % 4) for source, a in RIGHT.items()}
    g = normalised_gain({"a": score(wrong), "b": score({})}, {"a": score(RIGHT), "b": score(RIGHT)})
    assert g.gain == 1.0 and g.average_gain == 1.0

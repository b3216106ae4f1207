"""The pre/post quiz: well-formed items (four distinct options, one right, nothing a test-wise student could guess
from), a student's score, and the class's normalised gain at its edges."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from classroom.questions import from_spec, grade, to_spec
from classroom.quiz import (
    ITEMS,
    RESAMPLES,
    ROW,
    Gain,
    class_gain,
    gain_spread,
    normalised_gain,
    quiz,
    quiz_gain,
    score,
)

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
    for q in QUIZ:  # never the longest alone
        others = [len(o) for i, o in enumerate(q.options) if i != q.answer]
        assert len(q.options[q.answer]) <= max(others), q.source


@pytest.mark.parametrize("q", QUIZ, ids=lambda q: q.source)
def test_an_explanation_opens_with_its_idea_in_one_bold_line(q):
    assert q.explanation.startswith("**")
    first, rest = q.explanation[2:].split("**", 1)
    assert len(first) <= 110 and first.endswith(".") and rest.startswith(" ") and len(rest) > 100


def test_the_knockout_is_not_claimed_to_show_what_a_head_does():
    q = next(q for q in QUIZ if q.source == "quiz/weights")
    assert "tests what the head does" not in q.explanation
    assert "a head whose work another head duplicates can show no change" in q.explanation
    assert all(o.startswith("That") for o in q.options)  # one form: the right one is not the odd one out


def test_a_mask_applied_late_leaves_the_last_row_whole():
    q = next(q for q in QUIZ if q.source == "quiz/mask")
    assert "every row but the last summing to less than 1" in q.explanation


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


# ---- the gain over complete attempts -----------------------------------------------------------------------


def answers(right: int) -> dict[str, str]:
    """A complete attempt with the first `right` items right and the others wrong."""
    return {q.source: str(q.answer if n < right else (q.answer + 1) % 4) for n, q in enumerate(QUIZ)}


def test_the_gain_is_over_the_students_who_took_both():
    """The review's room: a, b and c before; a, b and d after. Only a and b count for ⟨g⟩; everyone's figures
    are kept apart."""
    pre = {"a": answers(3), "b": answers(7), "c": answers(0)}
    post = {"a": answers(6), "b": answers(7), "d": answers(7)}
    g = quiz_gain(pre, post)
    a_pre, a_post = 300 / 7, 600 / 7
    assert g.items == 7 and g.matched == 2 and g.partial_pre == g.partial_post == 0
    assert g.pre == pytest.approx((a_pre + 100) / 2) and g.post == pytest.approx((a_post + 100) / 2)
    assert g.gain == pytest.approx((g.post - g.pre) / (100 - g.pre))
    assert g.average_gain == pytest.approx((a_post - a_pre) / (100 - a_pre)) and g.at_ceiling == 1  # b: 100% before
    assert g.everyone.pre == pytest.approx((a_pre + 100) / 3) and g.everyone.post == pytest.approx((a_post + 200) / 3)
    assert g.everyone.gain == pytest.approx(class_gain(g.everyone.pre, g.everyone.post))
    assert g.everyone.gain != pytest.approx(g.gain)  # who came late or left early moves this one, not ⟨g⟩


def test_a_partial_attempt_is_left_out_not_counted_wrong():
    """e joined late and sent 2 items before; f left early and sent 3 after: neither counts in that round."""
    pre = {"a": answers(2), "e": dict(list(answers(7).items())[:2])}
    post = {"a": answers(5), "e": answers(7), "f": dict(list(answers(7).items())[:3])}
    g = quiz_gain(pre, post)
    assert g.matched == 1 and g.partial_pre == 1 and g.partial_post == 1
    assert g.pre == pytest.approx(200 / 7) and g.post == pytest.approx(500 / 7)
    assert g.everyone.pre == pytest.approx(200 / 7) and g.everyone.post == pytest.approx(600 / 7)  # a and e after


def test_an_unreadable_answer_is_sent_and_wrong():
    pre = {"a": answers(7) | {"quiz/mask": "x"}}
    g = quiz_gain(pre, {"a": answers(7)})
    assert g.matched == 1 and g.pre == pytest.approx(600 / 7) and g.gain == 1.0


def test_nobody_took_both():
    g = quiz_gain({"a": answers(3)}, {"b": answers(5)})
    assert g.matched == 0 and g.pre is None and g.post is None and g.gain is None and g.average_gain is None
    assert g.everyone.gain == pytest.approx(class_gain(300 / 7, 500 / 7))
    empty = quiz_gain({}, {})
    assert empty.matched == empty.partial_pre == empty.partial_post == 0 and empty.everyone == Gain(
        None, None, None, 0, None, None, 0)


def test_the_gain_on_the_items_asked():
    """Two items asked: a student who sent both is complete, whatever the other five."""
    two = QUIZ[:2]
    pre = {"a": {two[0].source: str(two[0].answer), two[1].source: "9"}}
    post = {"a": {q.source: str(q.answer) for q in two}}
    g = quiz_gain(pre, post, items=two)
    assert g.items == 2 and g.matched == 1 and g.pre == 50.0 and g.post == 100.0 and g.gain == 1.0
    with pytest.raises(ValueError, match="Not questions of the quiz"):
        quiz_gain({"a": answers(7)}, {}, items=two)
    with pytest.raises(ValueError, match="one item or more"):
        quiz_gain({}, {}, items=[])


def test_the_gain_spread_is_the_bootstrap_worked_by_hand():
    """The vectorised resampling against a plain loop over the same draws: each draw's ⟨g⟩, then their spread."""
    pre, post = [0.0, 100 / 7, 200 / 7, 300 / 7, 100.0, 50.0], [100 / 7, 300 / 7, 500 / 7, 300 / 7, 100.0, 100.0]
    draws = np.random.default_rng(0).integers(0, len(pre), size=(RESAMPLES, len(pre)))
    gains = []
    for draw in draws:
        before = sum(pre[i] for i in draw) / len(draw)
        after = sum(post[i] for i in draw) / len(draw)
        if before < 100:
            gains.append((after - before) / (100 - before))
    mean = sum(gains) / len(gains)
    by_hand = math.sqrt(sum((g - mean) ** 2 for g in gains) / len(gains))
    assert gain_spread(pre, post) == pytest.approx(by_hand, rel=1e-9)


def test_the_gain_spread_shrinks_with_the_class_and_needs_two_students():
    one = [20.0, 40.0, 60.0, 80.0], [60.0, 60.0, 80.0, 100.0]
    assert gain_spread(one[0] * 9, one[1] * 9) < gain_spread(*one)  # the same class, nine times the students
    assert gain_spread([50.0], [70.0]) is None
    assert gain_spread([100.0, 100.0], [100.0, 100.0]) is None  # no draw has a ⟨g⟩

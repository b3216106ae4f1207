"""A class question on its own: it checks itself, survives a database (to_spec / from_spec, through JSON), grades
a student's stored text, and sums up a room's answers for the projector."""

from __future__ import annotations

import json

import numpy as np
import pytest

from classroom.histogram import BINS, FAR, histogram
from classroom.questions import (
    ClassQuestion,
    answer_text,
    from_spec,
    grade,
    read_character,
    read_index,
    read_number,
    summary,
    to_spec,
)
from ui.frame import class_question
from ui.frame.class_question import number_text

CHOICE = ClassQuestion(kind="choice", prompt="Which?", options=("a", "b", "c"), answer=1, explanation="Because.",
                       source="test/choice")
NUMBER = ClassQuestion(kind="number", prompt="How much?", answer=0.125, tolerance=0.01, explanation="An eighth.",
                       source="test/number")
COUNT = ClassQuestion(kind="number", prompt="How many?", answer=49.0, tolerance=0.0, explanation="7 × 7.",
                      source="test/count")
KEY = ClassQuestion(kind="key", prompt="Which key?", options=("The", "cat", "the", "mat"), answer=0, also_right=(2,),
                    explanation="Tied.", source="predict/attend-most",
                    view={"tokens": ["The", "cat", "the", "mat"], "weights": [0.4, 0.1, 0.4, 0.1], "query": 3,
                          "masked": False})
CHAR = ClassQuestion(kind="char", prompt="Next?", answer=" ", explanation="A space.", source="predict/next-character",
                     view={"prompt": "return x", "model": "m", "top": [[" ", 0.5], ["e", 0.25]]})
QUOTE = ClassQuestion(kind="char", prompt="Next?", answer="'", explanation="A quote.", source="test/quote")
DECIMALS = ClassQuestion(kind="number", prompt="What weight? (3 decimals)", answer=0.45549, tolerance=0.002,
                         explanation="About 0.455.", source="test/decimals", decimals=3, technical=True)
ALL = [CHOICE, NUMBER, COUNT, KEY, CHAR, QUOTE, DECIMALS]


# ---- a spec survives a database ------------------------------------------------------------------------------


@pytest.mark.parametrize("q", ALL, ids=lambda q: q.source)
def test_spec_round_trip_is_exact(q):
    spec = to_spec(q)
    back = from_spec(json.loads(json.dumps(spec, allow_nan=False)))
    assert back == q and repr(back) == repr(q)  # the same types too: a float stays a float, a tuple a tuple
    assert to_spec(back) == spec
    assert from_spec(spec) == q


def test_a_spec_is_a_copy():
    spec = to_spec(KEY)
    spec["view"]["weights"][0] = 9.0
    assert KEY.view["weights"][0] == 0.4
    back = from_spec(to_spec(KEY))
    back.view["tokens"].append("x")
    assert KEY.view["tokens"] == ["The", "cat", "the", "mat"]


def test_a_spec_stored_before_decimals_and_technical_reads_back():
    old = {k: v for k, v in to_spec(COUNT).items() if k not in ("decimals", "technical")}
    assert from_spec(old) == COUNT and COUNT.decimals is None and COUNT.technical is False


def test_a_whole_number_answer_read_back_from_json_stays_a_float():
    spec = to_spec(COUNT) | {"answer": 49}
    assert from_spec(spec) == COUNT and isinstance(from_spec(spec).answer, float)


@pytest.mark.parametrize("spec", [None, [], {}, to_spec(CHOICE) | {"version": 2}, to_spec(CHOICE) | {"answer": 3},
                                  {k: v for k, v in to_spec(CHOICE).items() if k != "prompt"},
                                  to_spec(CHOICE) | {"options": None}, to_spec(CHOICE) | {"kind": "essay"}])
def test_what_is_not_a_spec_is_refused(spec):
    with pytest.raises(ValueError):
        from_spec(spec)


@pytest.mark.parametrize("changes", [
    {"kind": "essay"}, {"answer": 3}, {"answer": -1}, {"answer": True}, {"answer": 1.0}, {"options": ("a",)},
    {"options": ("a", "")}, {"prompt": " "}, {"explanation": ""}, {"source": ""}, {"also_right": (1,)},
    {"also_right": (0,)}, {"tolerance": -0.1}, {"view": {"shape": (2, 2)}}, {"view": {"x": float("nan")}},
    {"view": {"x": np.float64(0.5)}}, {"view": {1: "a"}}, {"decimals": 2}, {"technical": 1}, {"technical": None},
])
def test_a_question_checks_itself(changes):
    fields = to_spec(CHOICE) | {"options": CHOICE.options, "also_right": ()} | changes
    fields.pop("version")
    with pytest.raises(ValueError):
        ClassQuestion(**fields)


@pytest.mark.parametrize("decimals", [-1, 13, 2.0, True, "3"])
def test_decimals_are_a_small_whole_number(decimals):
    with pytest.raises(ValueError, match="decimals"):
        ClassQuestion(kind="number", prompt="?", answer=0.5, explanation=".", source="test/x", decimals=decimals)


@pytest.mark.parametrize(("kind", "answer"), [("number", 49), ("number", float("inf")), ("char", "ab"), ("char", ""),
                                              ("char", 1)])
def test_answers_of_the_wrong_type_are_refused(kind, answer):
    with pytest.raises(ValueError):
        ClassQuestion(kind=kind, prompt="?", answer=answer, explanation=".", source="test/x")


def test_the_largest_answer_is_as_far_as_the_histogram_reaches():
    """A question's answer is never further from 0 than the reveal's histogram can count a typed number from it."""
    assert class_question.FAR == FAR


def test_a_question_is_hashable_and_frozen():
    assert len({KEY, from_spec(to_spec(KEY))}) == 1
    with pytest.raises(AttributeError):
        KEY.answer = 1


# ---- grading a student's stored text ---------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "right"), [("1", True), (" 1 ", True), ("0", False), ("2", False),
                                              ("3", False), ("-1", False), ("1.0", False), ("01", True),
                                              ("", False), ("  ", False), ("b", False), ("١", False),
                                              ("9" * 40, False)])
def test_grading_a_choice(value, right):
    assert grade(CHOICE, value) is right


@pytest.mark.parametrize(("value", "right"), [("0.125", True), ("1/8", True), (" 0.125 ", True), ("2/16", True),
                                              (".125", True), ("125e-3", True), ("0.13", True), ("0.14", False),
                                              ("abc", False), ("", False), ("1/0", False), ("1e400", False),
                                              ("nan", False), ("inf", False), ("8", False)])
def test_grading_a_number(value, right):
    """The exercises' rule: parse_number reads it; right within the tolerance, absolute below 1."""
    assert grade(NUMBER, value) is right


@pytest.mark.parametrize(("value", "right"), [("49", True), ("49.0", True), (" 49 ", True), ("98/2", True),
                                              ("48", False), ("49.01", False), ("", False)])
def test_grading_a_count_needs_the_exact_number(value, right):
    assert grade(COUNT, value) is right


@pytest.mark.parametrize(("value", "right"), [("0", True), ("2", True), ("1", False), ("3", False), ("4", False),
                                              ("", False), ("the", False)])
def test_grading_a_key_accepts_its_ties(value, right):
    assert grade(KEY, value) is right


@pytest.mark.parametrize(("value", "right"), [(" ", True), ("", False), ("  ", False), ("x", False),
                                              ("␣", False), ("space", False)])
def test_a_space_is_typed_as_a_space(value, right):
    assert grade(CHAR, value) is right


@pytest.mark.parametrize(("value", "right"), [("'", True), ("’", True), ("‘", True), (" ' ", True), ('"', False),
                                              ("''", False)])
def test_a_phones_curly_quote_is_the_straight_one(value, right):
    assert grade(QUOTE, value) is right


def test_characters_are_read_as_typed():
    assert read_character("e") == "e" and read_character("E") == "E"  # capitals count
    assert read_character(" e ") == "e" and read_character("e\n") == "e"
    assert read_character("e\u0301") == "é"  # one character to a reader, once normalised
    assert read_character("ab") is None and read_character("") is None


def test_readers():
    assert read_index("2", 3) == 2 and read_index("3", 3) is None and read_index("+1", 3) is None
    assert read_number("1,000") == 1000.0 and read_number("1e400") is None and read_number("x") is None
    assert read_number("0,6") == pytest.approx(0.6) and read_number("1,2,3") is None  # a phone's decimal comma


# ---- the right answer, as shown ------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "decimals", "shown"), [
    (16640.0, None, "16,640"), (1024000.0, None, "1,024,000"), (-2.0, None, "-2"), (0.0, None, "0"),
    (49.0, 3, "49"),  # a whole number is exact, whatever the decimals asked
    (0.45549, 3, "0.455"), (0.0498, 3, "0.050"), (-1.3416, 3, "-1.342"), (-0.00001, 3, "0.000"),
    (0.0497870683678639, None, "0.04979"), (2.8904, None, "2.89"), (-0.15866, None, "-0.1587"),
    (16640.5, None, "16,640"), (9999.7, None, "10,000"), (123456.78, None, "123,500"), (0.6, None, "0.6"),
    (0.00012345, None, "0.0001234"), (999_999_999.5, None, "1,000,000,000"),  # 4 digits, rounded up to 1e9
    (5e-05, None, "5e-05"), (2.5e20, None, "2.5e+20"),  # outside the plain range: an exponent
])
def test_a_number_as_shown(x, decimals, shown):
    assert number_text(x, decimals) == shown


def test_numbers_between_the_plain_bounds_never_take_an_exponent():
    rng = np.random.default_rng(0)
    for x in 10 ** rng.uniform(-4, 9, 2000):
        for sign in (1, -1):
            text = number_text(float(sign * x))
            assert "e" not in text, (x, text)
            assert abs(float(text.replace(",", "")) - sign * x) <= 5e-4 * x, (x, text)  # 4 significant digits


def test_each_kind_of_answer_as_shown():
    assert answer_text(CHOICE) == "B. b"
    assert answer_text(KEY) == "The (and the: the same word, the same weight)"
    assert answer_text(CHAR) == "`␣` (a space)" and answer_text(QUOTE) == "`'`"
    tick = ClassQuestion(kind="char", prompt="Next?", answer="`", explanation="A tick.", source="test/tick")
    assert answer_text(tick) == "`` ` ``"  # a backtick cannot close its own code span
    assert answer_text(COUNT) == "49" and answer_text(NUMBER) == "0.125" and answer_text(DECIMALS) == "0.455"


# ---- what the projector shows ----------------------------------------------------------------------------------


def test_summary_of_a_choice():
    s = summary(CHOICE, ["1", "1", "0", " 2", "7", "", "x"])
    assert s == {"kind": "choice", "answered": 7, "right": 2, "counts": [1, 2, 1], "unreadable": 3}
    json.dumps(s, allow_nan=False)


def test_summary_of_a_key_counts_ties_as_right():
    s = summary(KEY, ["0", "2", "2", "1", "3"])
    assert s["counts"] == [1, 1, 2, 1] and s["right"] == 3 and s["unreadable"] == 0


def test_summary_of_characters():
    s = summary(CHAR, [" ", "e", "e ", "E", "", "ab", " "])
    assert s["counts"] == [[" ", 2], ["e", 2], ["E", 1]]  # most first, then in character order
    assert s["right"] == 2 and s["unreadable"] == 2 and s["answered"] == 7


def test_summary_of_numbers_into_bins():
    values = ["0.125", "1/8", "0.25", "0.5", "0.13", "abc", "", "0.125"]
    s = summary(NUMBER, values)
    assert s["answered"] == 8 and s["unreadable"] == 2 and s["right"] == 4  # 0.125 three times, and 0.13 (within 0.01)
    assert len(s["edges"]) == BINS + 1 and len(s["counts"]) == BINS
    assert s["edges"][0] == 0.125 and s["edges"][-1] == 0.5
    assert sum(s["counts"]) + s["below"] + s["above"] == 6
    assert s["counts"][0] == 4 and s["counts"][3] == 1 and s["counts"][-1] == 1  # 0.5 on the last edge
    json.dumps(s, allow_nan=False)


def test_a_slip_does_not_squash_the_histogram():
    """One 1e9 among answers near 8: counted above the bins, which span the others, 64 (d_k for √d_k) included."""
    numbers = [8.0] * 10 + [7.0, 9.0, 16.0, 64.0, 1e9, -1e9]
    h = histogram(numbers, 8.0)
    assert h["above"] == 1 and h["below"] == 1 and h["edges"][0] == 7.0 and h["edges"][-1] == 64.0
    assert sum(h["counts"]) == 14 and h["counts"][0] == 12 and h["counts"][-1] == 1


def test_a_slip_in_a_small_room_does_not_squash_it():
    """Four answers, one of them a slip: the slip cannot widen the fence that keeps it out (an interquartile range
    would: here it is the slip's own size)."""
    h = histogram([16640.0, 16640.0, 16000.0, 1e9], 16640.0)
    assert h["above"] == 1 and h["edges"][0] == 16000.0 and h["edges"][-1] == 16640.0
    assert h["counts"][0] == 1 and h["counts"][-1] == 2


def test_histogram_edges_always_hold_the_answer():
    h = histogram([1.0, 2.0, 3.0], 10.0)
    assert h["edges"][0] == 1.0 and h["edges"][-1] == 10.0 and sum(h["counts"]) == 3


def test_histogram_when_everyone_agrees_or_nobody_answered():
    same = histogram([49.0] * 5, 49.0)
    assert same["edges"][0] < 49.0 < same["edges"][-1] and sum(same["counts"]) == 5
    empty = histogram([], 0.125)
    assert sum(empty["counts"]) == 0 and empty["below"] == empty["above"] == 0
    assert empty["edges"][0] < 0.125 < empty["edges"][-1]


def test_histogram_when_most_typed_the_same():
    """Equal quartiles: the few who typed 64 (the misconception) still get their bar."""
    h = histogram([8.0] * 20 + [64.0] * 3, 8.0)
    assert h["above"] == 0 and h["counts"][0] == 20 and h["counts"][-1] == 3
    zeros = histogram([0.0] * 5 + [3.0], 0.0)  # a median of 0 and no spread: no fence at all
    assert zeros["above"] == 0 and sum(zeros["counts"]) == 6


@pytest.mark.parametrize("seed", range(5))
def test_histogram_counts_every_number_once(seed):
    rng = np.random.default_rng(seed)
    numbers = list(np.concatenate([rng.normal(0.5, 0.1, 25), rng.uniform(-1e6, 1e6, 3)]))
    h = histogram(numbers, 0.456)
    assert sum(h["counts"]) + h["below"] + h["above"] == len(numbers)
    inside = [x for x in numbers if h["edges"][0] <= x <= h["edges"][-1]]
    assert sum(h["counts"]) == len(inside)

"""The bank: every check-yourself exercise of every lesson as a class question, with the answer the lesson's
exercise has (and the one tests/lessons/test_exercises.py worked out independently)."""

from __future__ import annotations

import json
import re

import pytest

from classroom.questions import (
    answer_text,
    bank,
    from_bank,
    from_spec,
    grade,
    lesson_exercises,
    lesson_questions,
    read_number,
    to_spec,
)
from classroom.typed import asked_decimals
from lessons import COURSE
from lessons.masking.questions import causal_pictures
from tests.lessons.test_exercises import EXPECTED_NUMBERS, EXPECTED_OPTIONS, right_response, wrong_response
from ui.frame import page, prose
from ui.state.controls import DEFAULT_TEXT

CASES = [(lesson.url_path, ex) for lesson in COURSE for ex in lesson_exercises(lesson)]
IDS = [f"{url}/{ex.id}" for url, ex in CASES]
TITLES = {lesson.url_path: lesson.title for lesson in COURSE}


def test_every_lesson_hands_its_exercises_to_the_bank():
    for lesson in COURSE:
        assert lesson_questions(lesson).questions.__module__ == f"lessons.{lesson.name}.questions"


def test_the_bank_holds_every_exercise_in_course_order():
    assert [q.source for q in bank()] == IDS
    assert len(set(IDS)) == len(IDS)
    assert bank() is not bank() and bank() == bank()  # a new list each time, of the questions built once


def test_the_bank_shares_the_pages_exercises():
    """Built once per process, the way the pages build them: the very same exercise objects."""
    for lesson in COURSE:
        assert lesson_exercises(lesson) is page.built_questions(lesson_questions(lesson).questions)


@pytest.mark.parametrize(("url", "ex"), CASES, ids=IDS)
def test_a_bank_question_answers_as_its_exercise(url, ex):
    q = from_bank(f"{url}/{ex.id}")
    # "the page's" would name the Class page on a phone: the lesson is named instead, the rest is the exercise's
    said = re.sub(r"\b(?:this|the) page's\b", "PAGE", ex.prompt, flags=re.IGNORECASE)
    shown = re.sub(r"\b(?:the|the \w+) [\w ]+? lesson's\b", "PAGE", q.prompt)
    assert q.explanation == ex.explanation and shown.startswith(f"*{TITLES[url]} lesson.* {said}")
    assert not re.search(r"\bpage's\b", q.prompt, re.IGNORECASE)
    if ex.answer is None:
        assert (q.kind, q.options, q.answer) == ("choice", ex.options, ex.correct)
        assert EXPECTED_OPTIONS[(url, ex.id)] in q.options[q.answer]
    else:
        assert (q.kind, q.answer, q.tolerance) == ("number", float(ex.answer), ex.tolerance)
        assert grade(q, repr(EXPECTED_NUMBERS[(url, ex.id)]))  # the answer worked out without the lessons
    assert grade(q, str(right_response(ex)))  # what a student who knows it types, as on the page
    assert not grade(q, str(wrong_response(url, ex)))
    assert from_spec(json.loads(json.dumps(to_spec(q)))) == q


def test_code_goes_into_the_prompt_with_its_line_numbers():
    """'Which line has the bug?' needs the lines numbered as the page numbers them."""
    q = from_bank("scaling/bug_dv")
    ex = next(e for e in lesson_exercises(COURSE.lesson("scaling")) if e.id == "bug_dv")
    block = q.prompt.split("```python\n", 1)[1].rsplit("\n```", 1)[0].splitlines()
    assert [line.split("  ", 1)[1] for line in block] == ex.code.splitlines()
    bug = int(q.options[q.answer].split()[-1])
    assert block[bug - 1].startswith(f"{bug}  ") and "sqrt(d_v)" in block[bug - 1]


def test_a_figure_is_pointed_to_and_its_numbers_travel():
    figured = [(url, ex) for url, ex in CASES if ex.figure is not None]
    assert figured, "no exercise has a figure any more: this test has nothing to check"
    for url, ex in figured:
        q = from_bank(f"{url}/{ex.id}")
        where = f"on the projector (and on the {TITLES[url]} page, under Check yourself)" if q.view else \
            f"figure on the {TITLES[url]} page"
        assert where in q.prompt
    q = from_bank("masking/which_causal")
    assert "*The two pictures are on the projector (and on the Masking page, under Check yourself).*" in q.prompt
    maps = {m["title"]: m["values"] for m in q.view["heatmaps"]}
    assert set(maps) == set(q.options)
    seen = causal_pictures()["pictures"]
    for title, values in maps.items():
        assert values == seen[title].tolist()
    right = maps[q.options[q.answer]]
    assert all(right[i][j] == 0.0 for i in range(4) for j in range(i + 1, 4))  # nothing above the diagonal: causal
    assert all(abs(sum(row) - 1.0) < 1e-12 for row in right)


def test_questions_without_a_figure_show_nothing_extra():
    assert all(q.view == {} for q in bank() if q.source != "masking/which_causal")


def test_an_unknown_source_is_refused():
    with pytest.raises(ValueError, match="No lesson has a check-yourself question"):
        from_bank("qkv/no_such_question")


def test_a_question_out_of_its_lesson_says_what_the_lesson_showed():
    """On a phone, "the default sentence" is the lesson's: the prompt writes it in."""
    q = from_bank("qkv/score_count")
    assert q.prompt.startswith("*QKV projection lesson.* The default sentence has 7 tokens")
    assert f"*The lesson's default sentence is `{DEFAULT_TEXT}`.*" in q.prompt


def test_technical_questions_are_those_on_a_technical_section():
    """A question is Technical when the part it names is shown at the Technical level only, as the lesson's page
    hides it at the Simple level (ui.frame.page.shown_questions)."""
    for lesson in COURSE:
        for ex in lesson_exercises(lesson):
            q = from_bank(f"{lesson.url_path}/{ex.id}")
            assert q.technical is (ex.part in prose.technical_parts(lesson.name)), q.source
    assert {q.source for q in bank() if q.technical} == {"scaling/bug_dv", "scaling/overflow", "masking/late_mask",
                                                         "masking/multiplied", "tiles/rescale", "qkv/first_weight",
                                                         "training/uniform_loss"}


@pytest.mark.parametrize(("prompt", "decimals"), [
    ("What weight goes to k₁? (3 decimals)", 3), ("in nats? (2 decimals)", 2), ("to two decimals? (ReLU gives 0.)", 2),
    ("How many numbers?", None), ("to 1 decimal", 1)])
def test_the_decimals_a_prompt_asks_for(prompt, decimals):
    assert asked_decimals(prompt) == decimals


def test_every_number_answer_is_shown_as_its_question_asks():
    """Whole numbers exactly with thousands separators, "(3 decimals)" with 3, the rest with 4 significant digits,
    never with an exponent; typed back as shown, each is graded right."""
    shown = {q.source: answer_text(q) for q in bank() if q.kind == "number"}
    assert shown["multi-head/attn_params"] == "16,640" and shown["model/kv_cache"] == "1,024,000"
    assert shown["qkv/first_weight"] == "0.456" and shown["masking/multiplied"] == "0.289"
    assert shown["block/ln_first"] == "-1.342" and shown["block/gelu_minus_one"] == "-0.16"  # "to two decimals"
    assert shown["training/uniform_loss"] == "2.89" and shown["tiles/rescale"] == "0.050"
    for q in bank():
        if q.kind == "number":
            text = answer_text(q)
            assert "e" not in text and grade(q, text), (q.source, text)
            if q.decimals is not None and q.answer != round(q.answer):
                assert len(text.rsplit(".", 1)[1]) == q.decimals
            assert read_number(text) is not None


def test_a_choice_answer_is_its_letter_and_text():
    q = from_bank("masking/which_causal")
    assert answer_text(q) == f"{chr(65 + q.answer)}. {q.options[q.answer]}"

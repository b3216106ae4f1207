"""The bank: every check-yourself exercise of every lesson as a class question, with the answer the lesson's
exercise has (and the one tests/lessons/test_exercises.py worked out independently)."""

from __future__ import annotations

import json

import pytest

from classroom.questions import EXERCISES, bank, from_bank, from_spec, grade, lesson_exercises, to_spec
from lessons import COURSE
from lessons.masking.questions import causal_pictures
from tests.lessons.test_exercises import EXPECTED_NUMBERS, EXPECTED_OPTIONS, right_response, wrong_response
from ui.frame import page

CASES = [(lesson.url_path, ex) for lesson in COURSE for ex in lesson_exercises(lesson)]
IDS = [f"{url}/{ex.id}" for url, ex in CASES]


def test_every_lesson_hands_its_exercises_to_the_bank():
    assert set(EXERCISES) == {lesson.name for lesson in COURSE}
    for lesson in COURSE:
        assert EXERCISES[lesson.name].__module__ == f"lessons.{lesson.name}.questions"


def test_the_bank_holds_every_exercise_in_course_order():
    assert [q.source for q in bank()] == IDS
    assert len(set(IDS)) == len(IDS)
    assert bank() is not bank() and bank() == bank()  # a new list each time, of the questions built once


def test_the_bank_shares_the_pages_exercises():
    """Built once per process, the way the pages build them: the very same exercise objects."""
    for lesson in COURSE:
        assert lesson_exercises(lesson) is page.built_questions(EXERCISES[lesson.name])


@pytest.mark.parametrize(("url", "ex"), CASES, ids=IDS)
def test_a_bank_question_answers_as_its_exercise(url, ex):
    q = from_bank(f"{url}/{ex.id}")
    assert q.explanation == ex.explanation and q.prompt.startswith(ex.prompt)
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
        title = next(lesson.title for lesson in COURSE if lesson.url_path == url)
        assert f"figure on the {title} page" in q.prompt
    q = from_bank("masking/which_causal")
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

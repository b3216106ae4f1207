"""The CSV a teacher downloads: a nickname or an answer a spreadsheet would run as a formula is written as text."""

from __future__ import annotations

import csv
import io

import pytest

from classroom import export


@pytest.mark.parametrize("typed", [
    "=cmd|' /C calc'!A0", "=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "-", "--5",
    "-0.5x", "=1",
])
def test_a_text_a_spreadsheet_would_run_starts_with_an_apostrophe(typed):
    assert export.cell(typed) == "'" + typed


@pytest.mark.parametrize("typed", ["-0.5", "+3", "-1e-3", "-.5", "-12", "0.25", "1/8", "Ann", "", "a=b", " =1"])
def test_a_plain_number_or_a_harmless_text_is_left_as_it_is(typed):
    """-0.5 stays a number a spreadsheet can average; nothing in it can run."""
    assert export.cell(typed) == typed


def test_the_file_holds_every_cell_made_safe():
    rows = [{"question": 1, "nickname": "=cmd|' /C calc'!A0", "answer": "-0.5", "changes": 0},
            {"question": 2, "nickname": "Ann, \"the\" first", "answer": "@x", "changes": 3}]
    read = list(csv.DictReader(io.StringIO(export.csv_text(rows))))
    assert read == [{"question": "1", "nickname": "'=cmd|' /C calc'!A0", "answer": "-0.5", "changes": "0"},
                    {"question": "2", "nickname": "Ann, \"the\" first", "answer": "'@x", "changes": "3"}]
    assert export.csv_text([]) == ""


def test_a_teacher_can_grade_from_the_file_alone(engine):
    """Each row says which question (its round and text), the answer as the page reads it, the right answer and
    whether this one is right: the pages' own grading, with no other file to look up."""
    import time

    from classroom import asked, teacher
    from classroom.questions import ClassQuestion, grade
    from store import classes

    now = time.time()
    code, key = classes.start_session(engine, now)
    choice = ClassQuestion(kind="choice", prompt="Which *one*?", options=("cat", "dog", "`mat`"), answer=2,
                           explanation="Because.", source="test/choice")
    char = ClassQuestion(kind="char", source="predict/next-character", prompt="Next character?", options=(),
                         answer=" ", explanation="A space.")
    first = asked.put(engine, code, key, choice, "pre")
    second = asked.put(engine, code, key, char)
    sent = {("a", first): "2", ("b", first): "0", ("a", second): " ", ("b", second): "e"}
    tokens = {"a": "token-a-0123456789abcdef", "b": "token-b-0123456789abcdef"}
    for who, token in tokens.items():
        classes.join(engine, code, token, who.upper(), now)
    for (who, qid), value in sent.items():
        classes.set_state(engine, code, key, qid, "open", now)
        assert classes.answer(engine, code, tokens[who], qid, value, now) is None
    rows = teacher.graded(classes.export_rows(engine, code, key), classes.all_questions(engine, code))
    read = list(csv.DictReader(io.StringIO(export.csv_text(rows))))
    assert [(r["question"], r["round"], r["asked"], r["answer read as"], r["right answer"], r["right"])
            for r in read] == [("1", "pre", "Which one?", "C. mat", "C. mat", "yes"),
                               ("1", "pre", "Which one?", "A. cat", "C. mat", "no"),
                               ("2", "", "Next character?", "␣ (a space)", "␣ (a space)", "yes"),
                               ("2", "", "Next character?", "e", "␣ (a space)", "no")]
    assert all((r["right"] == "yes") == grade(q, r["answer"])
               for r, q in zip(read, (choice, choice, char, char)))

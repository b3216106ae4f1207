"""A question put to a class, independent of the pages that show it: how it is stored and read back, how a
student's stored answer is graded, and what the projector shows of the room's answers; and the bank, every lesson's
check-yourself exercises as class questions. The question's type and its four kinds are
ui.frame.class_question's (a lesson builds its predictions with it).

`answer_text` says the right answer as the projector and the phones show it (reading an answer as text is
classroom.typed's). `technical` marks a question on a section that the lessons show at the Technical level only (the
teacher's picker says so).

A student's answer is stored as text: an option or key index ("2"), a typed number ("1/8"), a character (" ").
`view` is what the projector draws beside the room's answers after the reveal.

The predictions, built from a lesson's settings and answered by core, are each lesson's (its questions.py).
"""

from __future__ import annotations

import copy
import functools
import re
from collections import Counter
from collections.abc import Sequence

from classroom.histogram import histogram
from classroom.typed import NUMBER_WORDS, asked_decimals, read_character, read_index, read_number
from lessons import COURSE
from lessons.bigram import questions as bigram
from lessons.block import questions as block
from lessons.circuit import questions as circuit
from lessons.communication import questions as communication
from lessons.full_model import questions as full_model
from lessons.ladder import questions as ladder
from lessons.masking import questions as masking
from lessons.multi_head import questions as multi_head
from lessons.qkv import questions as qkv
from lessons.scaling import questions as scaling
from lessons.tiles import questions as tiles
from lessons.training import questions as training
from ui.frame import page, prose
from ui.frame.class_question import ClassQuestion, char_text, number_text
from ui.frame.exercises import Exercise, is_close

SPEC_VERSION = 1  # a stored spec says which layout it has; from_spec refuses another


# ---- stored and read back ---------------------------------------------------------------------------------


def to_spec(q: ClassQuestion) -> dict:
    """The question as JSON values, for a database: from_spec(to_spec(q)) == q, through json.dumps and loads too."""
    return {"version": SPEC_VERSION, "kind": q.kind, "prompt": q.prompt, "options": list(q.options),
            "answer": q.answer, "tolerance": q.tolerance, "explanation": q.explanation, "source": q.source,
            "view": copy.deepcopy(q.view), "also_right": list(q.also_right), "decimals": q.decimals,
            "technical": q.technical}


def from_spec(spec: dict) -> ClassQuestion:
    """The question a spec holds; ValueError for anything that is not one (another version, a missing field).
    A spec stored before `decimals` and `technical` existed reads as None and False."""
    if not isinstance(spec, dict) or spec.get("version") != SPEC_VERSION:
        raise ValueError(f"Not a class question's spec of version {SPEC_VERSION}.")
    try:
        answer = spec["answer"]
        if spec["kind"] == "number" and isinstance(answer, int) and not isinstance(answer, bool):
            answer = float(answer)  # JSON writes 49.0 as 49 in some encoders
        return ClassQuestion(kind=spec["kind"], prompt=spec["prompt"], options=tuple(spec["options"]), answer=answer,
                             tolerance=spec["tolerance"], explanation=spec["explanation"], source=spec["source"],
                             view=copy.deepcopy(spec["view"]), also_right=tuple(spec["also_right"]),
                             decimals=spec.get("decimals"), technical=spec.get("technical", False))
    except (KeyError, TypeError) as err:
        raise ValueError(f"A class question's spec lacks or mangles {err}.") from None


# ---- a student's answer ------------------------------------------------------------------------------------


def grade(q: ClassQuestion, value: str) -> bool:
    """Whether a student's stored answer (text) is right."""
    if q.kind in ("choice", "key"):
        index = read_index(value, len(q.options))
        return index is not None and (index == q.answer or index in q.also_right)
    if q.kind == "number":
        number = read_number(value)
        return number is not None and is_close(number, q.answer, q.tolerance)
    return read_character(value) == q.answer


# ---- the right answer, as shown ------------------------------------------------------------------------------


def answer_text(q: ClassQuestion) -> str:
    """The right answer as Markdown, as the projector and the phones show it: "B. the option" for a choice, the key
    (and the keys tied with it) for a key, the character in a code span, the number by number_text."""
    if q.kind == "choice":
        return f"{chr(65 + q.answer)}. {q.options[q.answer]}"
    if q.kind == "key":
        also = [q.options[i] for i in q.also_right]
        return q.options[q.answer] + (f" (and {', '.join(also)}: the same word, the same weight)" if also else "")
    if q.kind == "char":
        return char_text(q.answer)
    return number_text(q.answer, q.decimals)


def summary(q: ClassQuestion, values: Sequence[str]) -> dict:
    """What the projector shows of a class's answers (JSON values): how many answered and how many are right, and
    "counts" per option or key (a list in option order), per character (pairs, most frequent first), or for
    numbers a histogram ("edges", "counts", "below", "above"); "unreadable" counts answers that read as none."""
    out = {"kind": q.kind, "answered": len(values), "right": sum(grade(q, v) for v in values)}
    if q.kind in ("choice", "key"):
        picked = [read_index(v, len(q.options)) for v in values]
        return out | {"counts": [picked.count(i) for i in range(len(q.options))], "unreadable": picked.count(None)}
    if q.kind == "char":
        typed = [read_character(v) for v in values]
        counts = Counter(c for c in typed if c is not None)
        return out | {"counts": [[c, n] for c, n in sorted(counts.items(), key=lambda cn: (-cn[1], cn[0]))],
                      "unreadable": typed.count(None)}
    numbers = [x for x in map(read_number, values) if x is not None]
    return out | histogram(numbers, q.answer) | {"unreadable": len(values) - len(numbers)}


# ---- every lesson's check-yourself exercises ------------------------------------------------------------------


def numbered_code(code: str) -> str:
    """A snippet as a Markdown code block with its line numbers written in (a question may ask for a line)."""
    lines = code.splitlines()
    width = len(str(len(lines)))
    fence = "`" * max(3, 1 + max(map(len, re.findall("`+", code)), default=0))
    return f"{fence}python\n" + "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(lines, 1)) + f"\n{fence}"


def _lesson(url_path: str):
    for lesson in COURSE:
        if lesson.url_path == url_path:
            return lesson
    raise ValueError(f"There is no lesson at /{url_path}; the lessons are at {[x.url_path for x in COURSE]}.")


# "this page's", said on the Class page, would name the Class page: the lesson's own words for it
THIS_PAGE = re.compile(r"\b(?:this|the) page's\b", re.IGNORECASE)


def _figure_line(title: str, view: dict) -> str:
    pictures = len(view.get("heatmaps", ()))
    if not pictures:
        return f"*Look at this question's figure on the {title} page, under Check yourself.*"
    shown = "The picture is" if pictures == 1 else f"The {_WORDS.get(pictures, pictures)} pictures are"
    return f"*{shown} on the projector (and on the {title} page, under Check yourself).*"


_WORDS = {n: word for word, n in NUMBER_WORDS.items()}


def from_exercise(lesson_url_path: str, exercise: Exercise) -> ClassQuestion:
    """A lesson's check-yourself exercise as a class question: a number or a choice, its prompt opened with its
    lesson's name (on a phone, "the page" is that lesson's), with its code and, for one with a figure, where the
    figure is (its numbers in `view`, for the projector, where the lesson hands them out). `technical` when its
    section is shown at the Technical level only; `decimals` when its prompt asks for a number of decimals."""
    lesson = _lesson(lesson_url_path)
    source = f"{lesson_url_path}/{exercise.id}"
    title = lesson.title[0].lower() + lesson.title[1:] if lesson.title.startswith("The ") else f"the {lesson.title}"
    prompt = f"*{lesson.title} lesson.* " + THIS_PAGE.sub(f"{title} lesson's", exercise.prompt)
    if exercise.said_in_class:
        prompt += "\n\n" + exercise.said_in_class
    if exercise.code:
        prompt += "\n\n" + numbered_code(exercise.code)
    view = {}
    if exercise.figure is not None:
        view = exercise.figure_view() if exercise.figure_view is not None else {}
        prompt += "\n\n" + _figure_line(lesson.title, view)
    common = dict(prompt=prompt, explanation=exercise.explanation, source=source, view=view,
                  technical=exercise.part in prose.technical_parts(lesson.name))
    if exercise.answer is not None:
        return ClassQuestion(kind="number", answer=float(exercise.answer), tolerance=float(exercise.tolerance),
                             decimals=asked_decimals(exercise.prompt), **common)
    return ClassQuestion(kind="choice", options=tuple(exercise.options), answer=int(exercise.correct), **common)


# Every lesson's questions module, imported by name so that a reader (and lint-imports) sees them; found by its
# folder (the bank reads them in COURSE's order; a test finds one for every lesson of COURSE).
_MODULES = {module.__name__.split(".")[1]: module for module in (
    bigram, block, circuit, communication, full_model, ladder, masking, multi_head, qkv, scaling, tiles, training)}


def lesson_questions(lesson):
    """A lesson's questions module (lessons/<name>/questions.py): its check-yourself exercises, and the predictions
    and settings it offers the class mode. KeyError for a lesson whose module is not imported above."""
    return _MODULES[lesson.name]


def lesson_exercises(lesson) -> tuple[Exercise, ...]:
    """A lesson's exercises as its page builds them: once per process, shared with the page
    (ui.frame.page.built_questions)."""
    return page.built_questions(lesson_questions(lesson).questions)


@functools.cache
def _bank() -> tuple[ClassQuestion, ...]:
    return tuple(from_exercise(lesson.url_path, ex) for lesson in COURSE for ex in lesson_exercises(lesson))


def bank() -> list[ClassQuestion]:
    """Every check-yourself exercise of every lesson as a class question, in course order (built once per process;
    some run a trained model to find their answer). Treat the questions' views as read-only: they are shared."""
    return list(_bank())


def from_bank(source: str) -> ClassQuestion:
    """The bank's question from `source` ("qkv/score_count"); ValueError when there is none."""
    for q in _bank():
        if q.source == source:
            return q
    raise ValueError(f"No lesson has a check-yourself question {source!r}.")

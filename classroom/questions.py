"""A question put to a class, independent of the pages that show it: what it asks, its answer (computed by core
when it is built), how a student's stored answer is graded, and what the projector shows of the room's answers.

Four kinds:
- "choice": pick one of `options`; `answer` is the right option's index.
- "number": type a number; right within `tolerance` (relative, absolute below 1: the exercises' rule).
- "key": pick a key of an attention row (`options` are the sentence's tokens); `answer` is the key with the largest
  weight, `also_right` the keys tied with it (a word twice has one embedding, so both copies get the same weight).
- "char": type the character that comes next; `answer` is the character model's most likely one.

`answer_text` says the right answer as the projector and the phones show it (reading and writing an answer as text
is classroom.typed's). `technical` marks a question on a
section that the lessons show at the Technical level only (the teacher's picker says so).

A student's answer is stored as text: an option or key index ("2"), a typed number ("1/8"), a character (" ").
`prompt`, `options` and `explanation` are Markdown we wrote; text that comes from a teacher's settings (a
sentence, a prompt) is escaped or put in a code span. `view` is what the projector draws beside the room's answers
after the reveal: plain JSON values (dicts, lists, strings, numbers), so a spec survives a database exactly.

The predict questions, built from a lesson's settings and answered by core, are in classroom.predict.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from classroom.histogram import FAR, histogram
from classroom.typed import (
    NUMBER_WORDS,
    asked_decimals,
    char_text,
    number_text,
    read_character,
    read_index,
    read_number,
)
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
from ui.frame.exercises import Exercise, is_close
from ui.state.controls import DEFAULT_TEXT
from ui.text import code_span

KINDS = ("choice", "number", "key", "char")
SPEC_VERSION = 1  # a stored spec says which layout it has; from_spec refuses another
MAX_DECIMALS = 12


@dataclass(frozen=True, kw_only=True)
class ClassQuestion:
    kind: str  # one of KINDS
    prompt: str  # Markdown we wrote (never a student's text)
    options: tuple[str, ...] = ()  # Markdown, for "choice" and "key"
    answer: int | float | str  # the right option's index, the number, or the character
    tolerance: float = 0.0  # for "number": relative, absolute below 1 (ui.frame.exercises.is_close)
    explanation: str  # Markdown, shown on the reveal
    source: str  # where it comes from: "qkv/score_count", "predict/attend-most", "quiz/score"
    view: dict = field(default_factory=dict, hash=False)  # what the projector draws after the reveal (JSON values)
    also_right: tuple[int, ...] = ()  # for "key": keys tied with the answer, right too
    decimals: int | None = None  # for "number": the decimals the question asks for ("(3 decimals)"), if any
    technical: bool = False  # about a section the lessons show at the Technical level only

    def __post_init__(self):
        _check(self)


def _is_index(i, n: int) -> bool:
    return isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n


def _check(q: ClassQuestion) -> None:
    """ValueError naming what is wrong with a question, whoever built it (a spec read back from a database too)."""
    if q.kind not in KINDS:
        raise ValueError(f"A question's kind is one of {KINDS}, got {q.kind!r}.")
    for name in ("prompt", "explanation", "source"):
        if not isinstance(getattr(q, name), str) or not getattr(q, name).strip():
            raise ValueError(f"A question needs a {name}.")
    if q.kind in ("choice", "key"):
        if len(q.options) < 2 or not all(isinstance(o, str) and o for o in q.options):
            raise ValueError(f"A {q.kind} question needs two options or more, each a text.")
        if not _is_index(q.answer, len(q.options)):
            raise ValueError(f"The answer must be an option's index, 0 to {len(q.options) - 1}, got {q.answer!r}.")
    elif q.options:
        raise ValueError(f"A {q.kind} question has no options.")
    if any(not _is_index(i, len(q.options)) or i == q.answer for i in q.also_right) or (
            q.also_right and q.kind != "key"):
        raise ValueError(f"also_right lists other keys of a key question, got {q.also_right!r}.")
    if q.kind == "number" and not (isinstance(q.answer, float) and abs(q.answer) <= FAR):
        raise ValueError(f"A number question's answer is a float of size {FAR:g} at most, got {q.answer!r}.")
    if q.kind == "char" and not (isinstance(q.answer, str) and len(q.answer) == 1):
        raise ValueError(f"A char question's answer is one character, got {q.answer!r}.")
    if not (isinstance(q.tolerance, float | int) and math.isfinite(q.tolerance) and q.tolerance >= 0):
        raise ValueError(f"The tolerance is a number >= 0, got {q.tolerance!r}.")
    if q.decimals is not None and (q.kind != "number" or not _is_index(q.decimals, MAX_DECIMALS + 1)):
        raise ValueError(f"decimals is None, or 0 to {MAX_DECIMALS} for a number question, got {q.decimals!r}.")
    if not isinstance(q.technical, bool):
        raise ValueError(f"technical is True or False, got {q.technical!r}.")
    if not isinstance(q.view, dict) or not _plain(q.view):
        raise ValueError("A question's view holds only dicts with text keys, lists, texts, finite numbers and None.")


def _plain(value) -> bool:
    """True for what JSON writes and reads back unchanged: no tuple (it comes back a list), no NumPy number (a float
    subclass that comes back a float), no NaN."""
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(map(_plain, value))
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) in (str, int, bool)


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


def _masking_pictures() -> dict:
    seen = masking.causal_pictures()
    return {"heatmaps": [{"title": title, "rows": seen["labels"], "columns": seen["labels"],
                          "values": weights.tolist()} for title, weights in seen["pictures"].items()]}


# An exercise's figure as numbers the projector can draw again, where the lesson hands them out.
FIGURES = {"masking/which_causal": _masking_pictures}


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


# A line a question needs once it has left its lesson's page: what "the default sentence" is, or what its lesson
# says only at the Technical level (on a phone in class, at either level); some are computed from the exercise.
SAID_WITH = {
    "qkv/score_count": lambda e: f"*The lesson's default sentence is {code_span(DEFAULT_TEXT)}.*",
    "qkv/first_weight": lambda e: "*The softmax gives each score s the weight e^s divided by the sum of e^s over "
                                  "the row.*",
    "block/ln_first": lambda e: "*Layer norm subtracts the row's mean, then divides by the square root of that "
                                "variance.*",
    "block/gelu_minus_one": lambda e: f"*GELU multiplies its input x by the chance that a standard normal number lies "
                                      f"below x; for x = −1 that chance is about {-e.answer:.3f}.*",
}
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
    if source in SAID_WITH:
        prompt += "\n\n" + SAID_WITH[source](exercise)
    if exercise.code:
        prompt += "\n\n" + numbered_code(exercise.code)
    view = {}
    if exercise.figure is not None:
        view = FIGURES[source]() if source in FIGURES else {}
        prompt += "\n\n" + _figure_line(lesson.title, view)
    common = dict(prompt=prompt, explanation=exercise.explanation, source=source, view=view,
                  technical=exercise.part in prose.technical_parts(lesson.name))
    if exercise.answer is not None:
        return ClassQuestion(kind="number", answer=float(exercise.answer), tolerance=float(exercise.tolerance),
                             decimals=asked_decimals(exercise.prompt), **common)
    return ClassQuestion(kind="choice", options=tuple(exercise.options), answer=int(exercise.correct), **common)


# Each lesson's questions() by its folder, imported by name so that a reader (and lint-imports) sees them.
EXERCISES = {"bigram": bigram.questions, "qkv": qkv.questions, "scaling": scaling.questions,
             "masking": masking.questions, "multi_head": multi_head.questions,
             "communication": communication.questions, "block": block.questions,
             "full_model": full_model.questions, "training": training.questions, "ladder": ladder.questions,
             "circuit": circuit.questions, "tiles": tiles.questions}


def lesson_exercises(lesson) -> tuple[Exercise, ...]:
    """A lesson's exercises as its page builds them: once per process, shared with the page
    (ui.frame.page.built_questions). KeyError for a lesson missing from EXERCISES (a test keeps it whole)."""
    return page.built_questions(EXERCISES[lesson.name])


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

"""A question put to a class, independent of the pages that show it: what it asks, its answer (computed by core
when it is built), how a student's stored answer is graded, and what the projector shows of the room's answers.

Four kinds:
- "choice": pick one of `options`; `answer` is the right option's index.
- "number": type a number; right within `tolerance` (relative, absolute below 1: the exercises' rule).
- "key": pick a key of an attention row (`options` are the sentence's tokens); `answer` is the key with the largest
  weight, `also_right` the keys tied with it (a word twice has one embedding, so both copies get the same weight).
- "char": type the character that comes next; `answer` is the character model's most likely one.

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
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lessons import COURSE
from lessons.bigram import questions as bigram
from lessons.block import questions as block
from lessons.circuit import questions as circuit
from lessons.communication import questions as communication
from lessons.full_model import questions as full_model
from lessons.masking import questions as masking
from lessons.multi_head import questions as multi_head
from lessons.qkv import questions as qkv
from lessons.scaling import questions as scaling
from lessons.tiles import questions as tiles
from lessons.training import questions as training
from ui.frame import page
from ui.frame.exercises import Exercise, is_close, parse_number

KINDS = ("choice", "number", "key", "char")
SPEC_VERSION = 1  # a stored spec says which layout it has; from_spec refuses another
BINS = 10  # bars of the histogram of a class's typed numbers
FENCE = 10.0  # a typed number this many scales from the room's median is counted apart (histogram)
MAX_INDEX_DIGITS = 6
# What phones type for ' and " (smart punctuation): the character model only knows the straight ones.
STRAIGHT_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


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
    if q.kind == "number" and not (isinstance(q.answer, float) and math.isfinite(q.answer)):
        raise ValueError(f"A number question's answer is a finite float, got {q.answer!r}.")
    if q.kind == "char" and not (isinstance(q.answer, str) and len(q.answer) == 1):
        raise ValueError(f"A char question's answer is one character, got {q.answer!r}.")
    if not (isinstance(q.tolerance, float | int) and math.isfinite(q.tolerance) and q.tolerance >= 0):
        raise ValueError(f"The tolerance is a number >= 0, got {q.tolerance!r}.")
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
            "view": copy.deepcopy(q.view), "also_right": list(q.also_right)}


def from_spec(spec: dict) -> ClassQuestion:
    """The question a spec holds; ValueError for anything that is not one (another version, a missing field)."""
    if not isinstance(spec, dict) or spec.get("version") != SPEC_VERSION:
        raise ValueError(f"Not a class question's spec of version {SPEC_VERSION}.")
    try:
        answer = spec["answer"]
        if spec["kind"] == "number" and isinstance(answer, int) and not isinstance(answer, bool):
            answer = float(answer)  # JSON writes 49.0 as 49 in some encoders
        return ClassQuestion(kind=spec["kind"], prompt=spec["prompt"], options=tuple(spec["options"]), answer=answer,
                             tolerance=spec["tolerance"], explanation=spec["explanation"], source=spec["source"],
                             view=copy.deepcopy(spec["view"]), also_right=tuple(spec["also_right"]))
    except (KeyError, TypeError) as err:
        raise ValueError(f"A class question's spec lacks or mangles {err}.") from None


# ---- a student's answer ------------------------------------------------------------------------------------


def read_index(value: str, n: int) -> int | None:
    """'2' -> 2 when 0 <= 2 < n; None for anything else (a sign, a decimal point, letters, out of range)."""
    text = str(value).strip()
    if not re.fullmatch(rf"[0-9]{{1,{MAX_INDEX_DIGITS}}}", text):
        return None
    return int(text) if int(text) < n else None


def read_number(value: str) -> float | None:
    """A typed number as the exercises read it ('1/8', ' 0.125 ', '1,000'); None when it is not a finite one."""
    try:
        number = parse_number(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def read_character(value: str) -> str | None:
    """The one character a student typed: a space typed alone is a space; one character with spaces around it
    (a phone's autocomplete) is that character; a phone's curly quote is the straight one. None otherwise."""
    text = unicodedata.normalize("NFC", str(value)).translate(STRAIGHT_QUOTES)
    if len(text) == 1:
        return text
    stripped = text.strip()
    return stripped if len(stripped) == 1 else None


def grade(q: ClassQuestion, value: str) -> bool:
    """Whether a student's stored answer (text) is right."""
    if q.kind in ("choice", "key"):
        index = read_index(value, len(q.options))
        return index is not None and (index == q.answer or index in q.also_right)
    if q.kind == "number":
        number = read_number(value)
        return number is not None and is_close(number, q.answer, q.tolerance)
    return read_character(value) == q.answer


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


def histogram(numbers: Sequence[float], answer: float, bins: int = BINS) -> dict:
    """Equal bins over the typed numbers and the answer: {"edges": (bins + 1,), "counts": (bins,), "below", "above"}.

    A number more than FENCE times the answers' scale (the larger of their interquartile range and their median's
    size) away from their median is counted apart, below or above the bins, so that one slip (1e9 typed for 8)
    does not squash the room's answers into one bar, while a misconception's answer (64 for 8) keeps its own.
    Every number is counted once: sum(counts) + below + above == len(numbers). The last bin includes its right edge.
    """
    x = np.asarray(numbers, dtype=np.float64)
    inside = x
    if x.size:
        q1, median, q3 = np.percentile(x, [25, 50, 75])
        scale = max(q3 - q1, abs(median))
        if scale > 0:
            inside = x[np.abs(x - median) <= FENCE * scale]
    lo = min(answer, float(inside.min())) if inside.size else answer
    hi = max(answer, float(inside.max())) if inside.size else answer
    if hi == lo:  # everyone typed the answer (or nobody typed): one bar around it
        half = 0.05 * max(1.0, abs(lo))
        lo, hi = lo - half, hi + half
    edges = np.linspace(lo, hi, bins + 1)
    counts, _ = np.histogram(x[(x >= lo) & (x <= hi)], bins=edges)
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts],
            "below": int((x < lo).sum()), "above": int((x > hi).sum())}


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


def _lesson_title(url_path: str) -> str:
    for lesson in COURSE:
        if lesson.url_path == url_path:
            return lesson.title
    raise ValueError(f"There is no lesson at /{url_path}; the lessons are at {[x.url_path for x in COURSE]}.")


def from_exercise(lesson_url_path: str, exercise: Exercise) -> ClassQuestion:
    """A lesson's check-yourself exercise as a class question: a number or a choice, with its code in the prompt and,
    for one with a figure, a pointer to the lesson's figure (and the figure's numbers in `view` where there are)."""
    title = _lesson_title(lesson_url_path)
    source = f"{lesson_url_path}/{exercise.id}"
    prompt = exercise.prompt
    if exercise.code:
        prompt += "\n\n" + numbered_code(exercise.code)
    view = {}
    if exercise.figure is not None:
        prompt += f"\n\n*Look at this question's figure on the {title} page, under Check yourself.*"
        view = FIGURES[source]() if source in FIGURES else {}
    common = dict(prompt=prompt, explanation=exercise.explanation, source=source, view=view)
    if exercise.answer is not None:
        return ClassQuestion(kind="number", answer=float(exercise.answer), tolerance=float(exercise.tolerance),
                             **common)
    return ClassQuestion(kind="choice", options=tuple(exercise.options), answer=int(exercise.correct), **common)


# Each lesson's questions() by its folder, imported by name so that a reader (and lint-imports) sees them.
EXERCISES = {"bigram": bigram.questions, "qkv": qkv.questions, "scaling": scaling.questions,
             "masking": masking.questions, "multi_head": multi_head.questions,
             "communication": communication.questions, "block": block.questions,
             "full_model": full_model.questions, "training": training.questions, "circuit": circuit.questions,
             "tiles": tiles.questions}


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

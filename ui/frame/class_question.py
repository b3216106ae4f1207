"""A question put to a class, as any part of the app may build one: its kind, prompt, options and answer (computed
by the core when it is built), and what the projector draws of it (`view`); and an answer written as the room sees
it (a number to the digits its question asks for, a character in a code span). A lesson builds its predictions with
these (its questions.py); the class mode stores, grades and shows them (classroom.questions, classroom.typed).

Four kinds:
- "choice": pick one of `options`; `answer` is the right option's index.
- "number": type a number; right within `tolerance` (relative, absolute below 1: the exercises' rule).
- "key": pick a key of an attention row (`options` are the sentence's tokens); `answer` is the key with the largest
  weight, `also_right` the keys tied with it (a word twice has one embedding, so both copies get the same weight).
- "char": type the character that comes next; `answer` is the character model's most likely one.

`prompt`, `options` and `explanation` are Markdown we wrote; text that comes from a teacher's settings (a sentence,
a prompt) is escaped or put in a code span. `view` holds plain JSON values (dicts, lists, strings, numbers), so a
spec survives a database exactly. `technical` marks a question on a section that the lessons show at the Technical
level only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ui.drawing.charts import visible
from ui.text import code_span

SIGNIFICANT = 4  # digits of a number answer when its question asks for no number of decimals
PLAIN_RANGE = (1e-4, 1e9)  # sizes written without an exponent: 0.0001 and 999,999,999 read better than 1e-04
FAR = 1e300  # the largest answer: the reveal's histogram counts a typed number this far from it apart (its FAR)
KINDS = ("choice", "number", "key", "char")
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


def char_text(c: str) -> str:
    """A character as a code span that shows it: a space as `␣` (a space), a line break as `⏎`."""
    return f"{code_span(visible(c))} (a space)" if c == " " else code_span(visible(c))


def number_text(x: float, decimals: int | None = None) -> str:
    """A number answer as shown: a whole number exactly, with thousands separators (16,640); else to the decimals
    its question asks for (0.456 for "(3 decimals)"); else to SIGNIFICANT digits (0.04979, 2.89), without an
    exponent between PLAIN_RANGE's bounds."""
    if x == round(x) and abs(x) < 2**53:  # exact in a float: every digit is the answer's
        return f"{round(x):,}"
    if decimals is not None:
        shown = f"{x:,.{decimals}f}"
        return shown.lstrip("-") if float(shown.replace(",", "")) == 0 else shown  # -0.0001 -> 0.000, not -0.000
    if not PLAIN_RANGE[0] <= abs(x) < PLAIN_RANGE[1]:
        return f"{x:.{SIGNIFICANT}g}"
    places = SIGNIFICANT - 1 - math.floor(math.log10(abs(x)))  # decimals that keep SIGNIFICANT digits
    rounded = round(x, places)
    if places <= 0:
        return f"{int(rounded):,}"
    return f"{rounded:,.{places}f}".rstrip("0").rstrip(".")

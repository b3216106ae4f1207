"""Check yourself: predict a number, pick a picture or find the bug, with feedback and explanation.

Answers are computed by the core when the exercise is defined, never typed in by hand, and a
student's answer is only ever parsed as a number or matched against the options: nothing a student
types is executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import streamlit as st

from ui.state import kept
from ui.text import escape_md

PROGRESS = "exercise_progress"  # {lesson url_path: {exercise id: solved}} for this session
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Exercise:
    id: str
    prompt: str  # Markdown written by us (never user text)
    explanation: str  # shown after any answer
    answer: float | None = None  # a number to predict, or
    options: tuple[str, ...] = ()  # choices, with
    correct: int | None = None  # the index of the right one
    tolerance: float = 0.01  # relative tolerance for numbers (absolute below 1)
    code: str | None = None  # a snippet shown above the question (find the bug)
    figure: Callable[[], None] | None = field(default=None, compare=False)  # draws a picture to reason about
    part: str = ""  # the lesson's prose part (section) it asks about: a Technical part hides it at the Simple level
    # once it has left its page (asked in class, on a phone): a line it then needs, such as what "the default
    # sentence" is or what its lesson says only at the Technical level; and its figure as numbers the projector
    # can draw again ({"heatmaps": [{"title", "rows", "columns", "values"}]})
    said_in_class: str = ""
    figure_view: Callable[[], dict] | None = field(default=None, compare=False)


def parse_number(text: str) -> float:
    """'0.125', '1/8', '-3', '2e10', '1,000', '0,125' -> float; ValueError with a hint otherwise.

    A comma is read as the thousands separator wherever it can be one (1,000 and 16,640: groups of three digits
    after a first group that does not start with 0; the answers count parameters and bytes in thousands), and as
    a decimal comma where it can only be that (0,6 and 3,14: the only separator, and not before a group of three
    digits). Any other comma is refused: "0,6" read as 6 would mark a right answer wrong without saying why."""
    cleaned = text.strip().replace(" ", "")
    if not cleaned:
        raise ValueError("Type a number first.")
    parts = [_dotted(part) for part in cleaned.split("/")] if cleaned.count("/") == 1 else [_dotted(cleaned)]
    if len(parts) == 2:
        top, bottom = parts
        if _NUMBER.match(top) and _NUMBER.match(bottom) and float(bottom) != 0:
            return float(Fraction(top) / Fraction(bottom))
    elif _NUMBER.match(parts[0]):
        return float(parts[0])
    raise ValueError("That is not a number. Write it like 0.125, 1/8 or 2e10.")


_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$")  # 1,000 or 1,234,567.5
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")  # 0,6 or ,5: one comma and no point


def _dotted(text: str) -> str:
    """A number's text with its commas read (see parse_number): 1,000 -> 1000, 0,6 -> 0.6; ValueError for a
    comma that could mean either or neither."""
    if "," not in text:
        return text
    if _THOUSANDS.match(text):
        return text.replace(",", "")
    if _DECIMAL_COMMA.match(text):
        return text.replace(",", ".")
    raise ValueError(f"This box cannot read the commas in “{text[:20]}”. Write decimals with a point (0.6) and "
                     "thousands with commas in groups of three (16,640).")


def is_close(guess: float, answer: float, tolerance: float) -> bool:
    return abs(guess - answer) <= tolerance * max(1.0, abs(answer))


def check(ex: Exercise, response) -> tuple[bool, str]:
    """(correct?, feedback) for a response: the typed text for numbers, the option index for choices."""
    if ex.answer is not None:
        try:
            guess = parse_number(str(response))
        except ValueError as err:
            return False, str(err)
        if is_close(guess, ex.answer, ex.tolerance):
            return True, f"Right: {ex.answer:.6g}."
        typed = str(response).strip().replace(" ", "")
        if re.fullmatch(r"[+-]?\d{1,3},\d{3}", typed):  # a comma read as thousands: was a decimal comma meant?
            meant = float(typed.replace(",", "."))
            if is_close(meant, ex.answer, ex.tolerance):
                return False, (f"Not quite: you said {guess:.6g}, the comma read as a thousands separator. With a "
                               f"decimal point, {meant:g}, it would be right.")
        return False, f"Not quite: you said {guess:.6g}."
    if response is None:
        return False, "Pick one of the options first."
    if int(response) == ex.correct:
        return True, "Right."
    return False, "Not this one."


def progress(lesson: str) -> dict:
    return st.session_state.setdefault(PROGRESS, {}).setdefault(lesson, {})


def total_progress() -> tuple[int, int]:
    """(solved, attempted) over every lesson this session."""
    done = st.session_state.get(PROGRESS, {})
    flat = [ok for lesson in done.values() for ok in lesson.values()]
    return sum(flat), len(flat)


def _is_attempt(ex: Exercise, response) -> bool:
    """An answer that was checked: an option picked, or text that reads as a number (not empty, not a typo)."""
    if ex.answer is None:
        return response is not None
    try:
        parse_number(str(response))
    except ValueError:
        return False
    return True


def _render_one(lesson: str, ex: Exercise, number: int) -> None:
    key = f"ex_{lesson}_{ex.id}"
    st.markdown(f"**{number}.** {ex.prompt}")
    if ex.code:
        st.code(ex.code, language="python", line_numbers=True)
    if ex.figure:
        ex.figure()
    kept.restore(f"{key}_answer")  # the answer last checked, there again after a visit to another page
    with st.form(key=f"{key}_form", border=False):
        if ex.answer is not None:
            response = st.text_input("Your answer", key=f"{key}_answer", max_chars=40,
                                     placeholder="a number, e.g. 0.125 or 1/8")
        else:
            response = st.radio("Your answer", range(len(ex.options)), format_func=lambda i: ex.options[i],
                                index=None, key=f"{key}_answer")
        submitted = st.form_submit_button("Check")
    kept.remember(f"{key}_answer")
    if submitted:
        ok, feedback = check(ex, response)
        if ok or _is_attempt(ex, response):
            progress(lesson)[ex.id] = progress(lesson).get(ex.id, False) or ok
        (st.success if ok else st.error)(feedback)
        st.info(ex.explanation)
    elif progress(lesson).get(ex.id):
        st.caption("✓ Solved earlier in this session.")


def open_key(lesson: str) -> str:
    """The session-state key of the lesson's 'Check yourself' expander (True while it is open)."""
    return f"ex_open_{lesson}"


def render(lesson: str, exercises: Sequence[Exercise]) -> None:
    """The 'Check yourself' section of a lesson page."""
    if not exercises:
        return
    # A fixed label: a label that changed with the score would close the expander on every answer.
    # Filled only while open (the forms cost every slider move otherwise); opening it reruns the page.
    box = st.expander("Check yourself", icon=":material/edit:", key=open_key(lesson), on_change="rerun")
    if not box.open:
        return
    with box:
        # Filled in after the exercises: an answer checked in this run must count in the score above it.
        score = st.empty()
        for number, ex in enumerate(exercises, start=1):
            _render_one(lesson, ex, number)
            if number < len(exercises):
                st.divider()
        done = progress(lesson)
        solved = sum(done.get(ex.id, False) for ex in exercises)
        score.caption(f"{solved} of {len(exercises)} solved in this session.")


def describe(ex: Exercise) -> str:
    """A one-line summary for tests and logs (plain text)."""
    return escape_md(ex.prompt[:80])

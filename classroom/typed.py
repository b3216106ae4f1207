"""Answers as text: what a student typed, read as an option's index, a number or a character; and an answer written
as the room sees it (a number to the digits its question asks for, a character in a code span). No page, no
database: classroom.questions grades and shows with these."""

from __future__ import annotations

import math
import re
import unicodedata

from ui.drawing.charts import visible
from ui.frame.exercises import parse_number
from ui.text import code_span

MAX_INDEX_DIGITS = 6
SIGNIFICANT = 4  # digits of a number answer when its question asks for no number of decimals
PLAIN_RANGE = (1e-4, 1e9)  # sizes written without an exponent: 0.0001 and 999,999,999 read better than 1e-04
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# "(3 decimals)" or "to two decimals" in an exercise's prompt: the decimals its answer is given to
ASKED_DECIMALS = re.compile(r"\((\d+) decimals?\)|\bto (\d+|" + "|".join(NUMBER_WORDS) + r") decimals?\b")
# What phones type for ' and " (smart punctuation): the character model only knows the straight ones.
STRAIGHT_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


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


def asked_decimals(prompt: str) -> int | None:
    """The decimals a prompt asks for: "(3 decimals)" -> 3, "to two decimals" -> 2, none -> None."""
    found = ASKED_DECIMALS.search(prompt)
    if found is None:
        return None
    said = found.group(1) or found.group(2)
    return int(said) if said.isdigit() else NUMBER_WORDS[said]

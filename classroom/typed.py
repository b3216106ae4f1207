"""Answers as text: what a student typed, read as an option's index, a number or a character, and the decimals a
prompt asks for (an answer written as the room sees it is ui.frame.class_question's). No page, no database:
classroom.questions grades and shows with these."""

from __future__ import annotations

import math
import re
import unicodedata

from ui.frame.exercises import parse_number

MAX_INDEX_DIGITS = 6
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


def asked_decimals(prompt: str) -> int | None:
    """The decimals a prompt asks for: "(3 decimals)" -> 3, "to two decimals" -> 2, none -> None."""
    found = ASKED_DECIMALS.search(prompt)
    if found is None:
        return None
    said = found.group(1) or found.group(2)
    return int(said) if said.isdigit() else NUMBER_WORDS[said]

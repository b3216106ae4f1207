"""How much each lesson says at each level, and how hard it is to read: words and a grade-level figure.

Every lesson page is rendered as a reader first opens it (default controls, panels closed) at the Simple and the
Technical level, and the running text a reader reads is collected: the Markdown, the captions and the boxes (what
names a picture, a chart's title or a control's label, is the same at both levels and is left out, as are the tables
of numbers). For each level it prints the words and the Flesch-Kincaid grade (a US school grade: the years of school
a reader needs, 0.39 x words per sentence + 11.8 x syllables per word - 15.59). The formula is three numbers, so it
is written here; the syllables come from pyphen's hyphenation dictionary (offline), as the readability packages
count them (theirs either download a pronouncing dictionary at first use or need setuptools' pkg_resources). Simple
is meant to be its own shorter, plainer text: the share of words it keeps is the third column.

    python -m tools.reading_level            # every lesson
    python -m tools.reading_level masking    # some (folder names)

tests/lessons/test_simple_text.py holds the same figures to their aims and prints them.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass

import pyphen

from lessons import COURSE
from tests.apptest_helpers import ASIDE_KEYS, ok, run_page
from ui.drawing import tables

READ = ("markdown", "caption", "info", "warning", "error", "success")  # the kinds of element that are prose
# a link keeps its words (its address and hover text go, a hover text may hold brackets); emphasis, code marks,
# headings and table bars go
_MARKUP = re.compile(r"\[([^\]]*)\]\((?:[^()\s\"]*)(?:\s+\"[^\"]*\")?\)|[*_`#>|]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_HYPHENATION = pyphen.Pyphen(lang="en_US")


def plain(markdown: str) -> str:
    """The words of a Markdown text, without its markup (a link keeps its text)."""
    return _MARKUP.sub(lambda m: m.group(1) or " ", markdown)


def words(text: str) -> int:
    return len(_WORD.findall(text))


def syllables(word: str) -> int:
    """A word's syllables as the hyphenation dictionary splits it: its break points, plus one."""
    return len(_HYPHENATION.positions(word)) + 1


def grade(text: str) -> float:
    """The Flesch-Kincaid grade level of the text (0 for a text without words)."""
    found = _WORD.findall(text)
    if not found:
        return 0.0
    sentences = max(1, len(_SENTENCE_END.findall(text)))
    return 0.39 * len(found) / sentences + 11.8 * sum(map(syllables, found)) / len(found) - 15.59


@dataclass(frozen=True)
class Level:
    words: int
    grade: float  # Flesch-Kincaid grade level


@dataclass(frozen=True)
class Reading:
    lesson: str
    simple: Level
    technical: Level

    @property
    def share(self) -> float:
        """The Simple text's words as a share of the Technical text's."""
        return self.simple.words / self.technical.words


def page_text(path: str, level: str) -> str:
    """The prose of a lesson page at this level, as first opened but for its asides (open: a reader at that level
    may read them), one paragraph per element (a table of numbers, drawn as Markdown, is not prose)."""
    at = ok(run_page(path, {"level": level}, timeout=300, opened=ASIDE_KEYS))
    return "\n\n".join(plain(str(el.value)) for kind in READ for el in getattr(at, kind)
                         if tables.read(str(el.value)) is None)


def measure(level: str, text: str) -> Level:
    return Level(words(text), grade(text))


def reading(lesson) -> Reading:
    return Reading(lesson.name, *(measure(level, page_text(lesson.path, level)) for level in ("simple", "technical")))


def table(readings: list[Reading]) -> str:
    rows = [f"{'lesson':<14} {'Simple words':>12} {'Technical words':>15} {'share':>6} {'grade S':>8} {'grade T':>8}"]
    rows += [f"{r.lesson:<14} {r.simple.words:>12} {r.technical.words:>15} {r.share:>6.1%} "
             f"{r.simple.grade:>8.1f} {r.technical.grade:>8.1f}" for r in readings]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson folders (default: every lesson)")
    names = parser.parse_args(argv).lessons
    chosen = [lesson for lesson in COURSE if not names or lesson.name in names]
    print(table([reading(lesson) for lesson in chosen]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A lesson's teaching text, kept in lessons/<lesson>/prose.md beside the code that draws its screen.

The file is Markdown cut into named parts by lines of the form `[[name]]`. A page shows a part with
`prose.show("masking", "idea")`; a part that quotes live numbers writes them as {name} placeholders and
the page passes them: `prose.show("masking", "leak", row=..., T=...)`. Braces are only filled when
values are passed, so LaTeX in a part without placeholders is left alone.

Two levels of the same lesson (the sidebar's Level switch, bound to the link as level=simple), each its own
text. The Technical text is prose.md: the idea, the formulas, proofs, mistakes and code; a line of a part
(a paragraph or a list item) that starts with `[technical]` is said at that level only. The Simple text is
lessons/<lesson>/simple.md, cut into parts of the same names: written for a first-year student alone, in
shorter sentences and everyday words, a picture or an analogy where the Technical text has a formula. A part
simple.md does not hold is not shown at the Simple level, and neither is a part written `[[name technical]]`
(so a question about it is not asked there). A term written [words](term:id) becomes a link to its glossary
entry (ui/frame/glossary.py).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st

from ui.frame import glossary

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
_PART = re.compile(r"^\[\[([a-z0-9_]+)( technical)?\]\]\s*$", re.MULTILINE)
_TECHNICAL_LINE = re.compile(r"^(\s*(?:[-*+] |\d+\. )?)\[technical\] ?", re.MULTILINE)  # its mark
_TECHNICAL_DROP = re.compile(r"^\s*(?:[-*+] |\d+\. )?\[technical\].*(?:\n|$)", re.MULTILINE)  # the whole line

LEVEL_KEY = "level"  # the link's level=simple
LEVELS = ("simple", "technical")
DEFAULT_LEVEL = "technical"  # a link without level= shows everything


def technical() -> bool:
    """True at the Technical level (the default), False at the Simple one."""
    return st.session_state.get(LEVEL_KEY, DEFAULT_LEVEL) != "simple"


@functools.lru_cache(maxsize=64)
def _read(lesson: str, file: str = "prose.md") -> tuple[dict[str, str], frozenset[str]]:
    path = LESSONS / lesson / file
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pieces = _PART.split(text)  # [before the first part, name, flag, body, name, flag, body, ...]
    names, flags, bodies = pieces[1::3], pieces[2::3], pieces[3::3]
    return ({name: glossary.expand(body.strip()) for name, body in zip(names, bodies)},
            frozenset(name for name, flag in zip(names, flags) if flag))


def parts(lesson: str) -> dict[str, str]:
    """{part name: Markdown} of lessons/<lesson>/prose.md (the Technical text), read once per process: terms
    linked to the glossary, [technical] lines still marked (text() reads them for the level)."""
    return _read(lesson)[0]


def simple_parts(lesson: str) -> dict[str, str]:
    """{part name: Markdown} of lessons/<lesson>/simple.md (the Simple text), read once per process."""
    return _read(lesson, "simple.md")[0]


def technical_parts(lesson: str) -> frozenset[str]:
    """The names of the parts shown at the Technical level only: written [[name technical]], or not in the
    Simple text."""
    full, marked = _read(lesson)
    return marked | (full.keys() - simple_parts(lesson).keys())


def at_level(markdown: str, full: bool) -> str:
    """The Markdown with its [technical] lines kept (unmarked) when `full`, dropped when not."""
    if full:
        return _TECHNICAL_LINE.sub(r"\1", markdown)
    return re.sub(r"\n{3,}", "\n\n", _TECHNICAL_DROP.sub("", markdown)).strip()


def text(lesson: str, part: str, **values) -> str:
    """The part's Markdown at the reader's level (prose.md's or simple.md's), with {placeholders} filled from
    values when any are given; "" for a part the Simple text does not hold, at the Simple level."""
    if technical():
        body = at_level(parts(lesson)[part], True)
    elif part in technical_parts(lesson):
        return ""
    else:
        body = simple_parts(lesson)[part]
    return body.format(**values) if values else body


def show(lesson: str, part: str, **values) -> None:
    """The part as Markdown (nothing for a part hidden at this level)."""
    if body := text(lesson, part, **values):
        st.markdown(body)


def section(heading: str, lesson: str, part: str, **values) -> None:
    """A section's heading and the part that opens it, sent as one Markdown element: a slider move costs
    about the same per element whatever it holds, so a heading and a paragraph apart cost twice as much.
    Neither is drawn when the part is hidden at this level."""
    if body := text(lesson, part, **values):
        st.markdown(f"## {heading}\n\n{body}")

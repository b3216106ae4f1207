"""A lesson's teaching text, kept in lessons/<lesson>/prose.md beside the code that draws its screen.

The file is Markdown cut into named parts by lines of the form `[[name]]`. A page shows a part with
`prose.show("masking", "idea")`; a part that quotes live numbers writes them as {name} placeholders and
the page passes them: `prose.show("masking", "leak", row=..., T=...)`. Braces are only filled when
values are passed, so LaTeX in a part without placeholders is left alone.

Two levels of the same lesson (the sidebar's Level switch, bound to the link as level=simple): Simple keeps
the idea, the pictures and the exercises; Technical adds the formulas, proofs, mistakes and code. A part
written `[[name technical]]` is shown at the Technical level only, and so is a line of a part (a paragraph
or a list item) that starts with `[technical]`. A term written [words](term:id) becomes a link to its
glossary entry (ui/frame/glossary.py).
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


@functools.lru_cache(maxsize=32)
def _read(lesson: str) -> tuple[dict[str, str], frozenset[str]]:
    text = (LESSONS / lesson / "prose.md").read_text(encoding="utf-8")
    pieces = _PART.split(text)  # [before the first part, name, flag, body, name, flag, body, ...]
    names, flags, bodies = pieces[1::3], pieces[2::3], pieces[3::3]
    return ({name: glossary.expand(body.strip()) for name, body in zip(names, bodies)},
            frozenset(name for name, flag in zip(names, flags) if flag))


def parts(lesson: str) -> dict[str, str]:
    """{part name: Markdown} of lessons/<lesson>/prose.md, read once per process: terms linked to the
    glossary, [technical] lines still marked (text() reads them for the level)."""
    return _read(lesson)[0]


def technical_parts(lesson: str) -> frozenset[str]:
    """The names of the parts shown at the Technical level only ([[name technical]])."""
    return _read(lesson)[1]


def at_level(markdown: str, full: bool) -> str:
    """The Markdown with its [technical] lines kept (unmarked) when `full`, dropped when not."""
    if full:
        return _TECHNICAL_LINE.sub(r"\1", markdown)
    return re.sub(r"\n{3,}", "\n\n", _TECHNICAL_DROP.sub("", markdown)).strip()


def text(lesson: str, part: str, **values) -> str:
    """The part's Markdown at the reader's level, with {placeholders} filled from values when any are given;
    "" for a Technical part at the Simple level."""
    body = parts(lesson)[part]
    if part in technical_parts(lesson) and not technical():
        return ""
    body = at_level(body, technical())
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

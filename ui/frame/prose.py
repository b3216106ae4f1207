"""A lesson's teaching text, kept in lessons/<lesson>/prose.md beside the code that draws its screen.

The file is Markdown cut into named parts by lines of the form `[[name]]`. A page shows a part with
`prose.show("masking", "idea")`; a part that quotes live numbers writes them as {name} placeholders and
the page passes them: `prose.show("masking", "leak", row=..., T=...)`. Braces are only filled when
values are passed, so LaTeX in a part without placeholders is left alone.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
_PART = re.compile(r"^\[\[([a-z0-9_]+)\]\]\s*$", re.MULTILINE)


@functools.lru_cache(maxsize=32)
def parts(lesson: str) -> dict[str, str]:
    """{part name: Markdown} of lessons/<lesson>/prose.md, read once per process."""
    text = (LESSONS / lesson / "prose.md").read_text(encoding="utf-8")
    pieces = _PART.split(text)  # [before the first part, name, body, name, body, ...]
    return {name: body.strip() for name, body in zip(pieces[1::2], pieces[2::2])}


def text(lesson: str, part: str, **values) -> str:
    """The part's Markdown, with {placeholders} filled from values when any are given."""
    body = parts(lesson)[part]
    return body.format(**values) if values else body


def show(lesson: str, part: str, **values) -> None:
    st.markdown(text(lesson, part, **values))


def section(heading: str, lesson: str, part: str, **values) -> None:
    """A section's heading and the part that opens it, sent as one Markdown element: a slider move costs
    about the same per element whatever it holds, so a heading and a paragraph apart cost twice as much."""
    st.markdown(f"### {heading}\n\n{text(lesson, part, **values)}")

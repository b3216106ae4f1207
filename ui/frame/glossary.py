"""The glossary: every term the lessons use, kept in lessons/glossary/terms.md, and its links from the lessons.

A lesson's prose links a term where the course first uses it, written [words](term:softmax). On the page that
link leads to the glossary's entry (the glossary page, #softmax) and shows the term's short definition when the
pointer rests on it. `expand` turns the written form into that link; `Term` is one entry of the file.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

TERMS_FILE = Path(__file__).resolve().parents[2] / "lessons" / "glossary" / "terms.md"
URL_PATH = "glossary"  # the glossary page's address in the app's navigation
LINK = re.compile(r"\[([^\]]+)\]\(term:([a-z0-9-]+)\)")  # [words](term:id) in a lesson's prose
_ENTRY = re.compile(r"^### (.+?) \{#([a-z0-9-]+)\}\s*$", re.MULTILINE)
_FIELD = re.compile(r"^(also|short|formula|see): ?(.*)$")


@dataclass(frozen=True)
class Term:
    id: str  # its anchor on the glossary page
    title: str
    also: tuple[str, ...]  # the words that name it in a lesson's text (whole words, any case)
    short: str  # one plain sentence: shown where a lesson first uses it
    formula: str = ""  # LaTeX, shown at the Technical level
    see: tuple[str, ...] = ()  # related terms, by id
    body: str = ""  # the longer explanation, Markdown

    @property
    def anchor_url(self) -> str:
        return f"/{URL_PATH}#{self.id}"

    def matches(self, query: str) -> bool:
        """Whether a search for `query` (any case) should show this term: its title, names or definitions."""
        needle = query.strip().lower()
        return not needle or any(needle in s.lower() for s in (self.title, self.short, self.body, *self.also))

    def mentioned_at(self, text: str) -> int | None:
        """Where the text first names the term (by any of its words, whole words, any case), or None."""
        hits = [m.start() for word in self.also for m in [_word(word).search(text)] if m]
        return min(hits) if hits else None


@functools.cache
def _word(word: str) -> re.Pattern:
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)


def _entry(title: str, term_id: str, text: str) -> Term:
    fields, rest = {}, text.strip().splitlines()
    while rest and (m := _FIELD.match(rest[0])):
        fields[m.group(1)] = m.group(2).strip()
        rest = rest[1:]
    if not fields.get("short"):
        raise ValueError(f"The glossary entry {term_id!r} has no 'short:' line.")
    return Term(term_id, title.strip(), _listed(fields, "also") or (title.strip(),), fields["short"],
                fields.get("formula", ""), _listed(fields, "see"), "\n".join(rest).strip())


def _listed(fields: dict, key: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in fields.get(key, "").split(",") if s.strip())


@functools.cache
def terms() -> dict[str, Term]:
    """{id: Term} of lessons/glossary/terms.md, in the file's order, read once per process."""
    pieces = _ENTRY.split(TERMS_FILE.read_text(encoding="utf-8"))  # [preamble, title, id, text, ...]
    found = [_entry(title, term_id, text) for title, term_id, text in zip(pieces[1::3], pieces[2::3], pieces[3::3])]
    table = {term.id: term for term in found}
    if len(table) != len(found):
        raise ValueError("Two glossary entries share an id.")
    return table


def term(term_id: str) -> Term:
    try:
        return terms()[term_id]
    except KeyError:
        raise KeyError(f"No glossary entry {term_id!r} in {TERMS_FILE.name}: add one, or fix the link.") from None


def link(words: str, term_id: str) -> str:
    """Markdown for a term's mention: a link to its glossary entry whose hover text is its short definition."""
    short = term(term_id).short.replace("\\", "").replace('"', "'")
    return f'[{words}]({term(term_id).anchor_url} "{short}")'


def expand(markdown: str) -> str:
    """Every [words](term:id) in a lesson's text made a link to the glossary (an unknown id raises KeyError)."""
    return LINK.sub(lambda m: link(m.group(1), m.group(2)), markdown)


def linked_ids(markdown: str) -> list[str]:
    """The ids of the terms a text links, [words](term:id), in order."""
    return [m.group(2) for m in LINK.finditer(markdown)]


@functools.cache
def first_links(lessons: tuple[str, ...]) -> dict[str, str]:
    """{term id: the first of `lessons` (folder names, in the course's order) whose prose links the term}."""
    first: dict[str, str] = {}
    for name in lessons:
        for term_id in linked_ids((TERMS_FILE.parents[1] / name / "prose.md").read_text(encoding="utf-8")):
            first.setdefault(term_id, name)
    return first

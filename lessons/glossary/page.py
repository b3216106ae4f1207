"""The glossary: every term the lessons use, with its short definition, a longer explanation, its formula
(Technical level) and the lesson that first uses it. A search box bound to the link (?term=softmax) narrows it."""

import streamlit as st

from lessons import COURSE
from ui.frame import glossary, page
from ui.state import controls
from ui.text import escape_md


def search() -> list[glossary.Term]:
    """The search box (bound to the link as term=...) and the terms it lets through."""
    query = controls.text("term", "Find a term", "", max_chars=40, container=st, width=360,
                          help="Part of a term's name or definition, e.g. softmax or mask. Empty shows them all.")
    controls.show_url_notes()
    every = list(glossary.terms().values())
    shown = [t for t in every if t.matches(query)]
    if not shown:
        st.info(f"No term matches “{escape_md(query)}”. Clear the box to see all {len(every)}.",
                icon=":material/search_off:")
    elif len(shown) < len(every):
        st.caption(f"{len(shown)} of {len(every)} terms match “{escape_md(query)}”.")
    return shown


def index(shown: list[glossary.Term]) -> None:
    """One line of links to the entries below (in-page anchors)."""
    st.markdown(" · ".join(f"[{t.title}](#{t.id})" for t in shown))


def entry(t: glossary.Term, first: dict[str, str]) -> None:
    """One term: its title (the anchor the lessons link to), its definition and explanation, its formula at the
    Technical level, then where the course first uses it and the related terms."""
    st.header(t.title, anchor=t.id)
    st.markdown(f"**{t.short}**" + (f"\n\n{t.body}" if t.body else ""))
    if t.formula and page.technical():
        st.latex(t.formula)
    notes = []
    if t.id in first:
        lesson = COURSE.lesson(first[t.id])
        notes.append(f"First used in [{COURSE.number(lesson)} · {lesson.title}](/{lesson.url_path})")
    related = [glossary.term(i) for i in t.see]
    if related:
        notes.append("See also " + ", ".join(f"[{r.title}](#{r.id})" for r in related))
    if notes:
        st.caption(" · ".join(notes))


page.switches()
st.title("Glossary")
st.markdown("Every term the lessons use, in the order the course first links them (a term no lesson links "
            "comes last). Each lesson links a term where the course first uses it: rest the pointer on such a link "
            "to read its short definition, or follow it here. The Technical level adds each term's formula.")
terms = search()
if terms:
    index(terms)
    first = glossary.first_links(tuple(lesson.name for lesson in COURSE))
    for term in terms:
        entry(term, first)
page.remember_settings()

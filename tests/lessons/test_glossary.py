"""The glossary: its entries are well formed, every term the lessons' prose uses is linked where the course first
uses it (at both levels: a link inside a Technical part does not reach a Simple reader), and the glossary page
lists, finds and anchors every term."""

from __future__ import annotations

import re

import pytest

from lessons import COURSE
from lessons.glossary import PAGE
from tests.apptest_helpers import ok, run_app, run_page
from ui.frame import glossary, prose

TERMS = glossary.terms()
# What the course must define (issue: "every term explained where it first appears").
REQUIRED = ("token", "vocabulary", "embedding", "query", "key", "value", "dot-product", "score", "softmax",
            "temperature", "logits", "probability-distribution", "entropy", "cross-entropy", "perplexity",
            "gradient", "backpropagation", "learning-rate", "adamw", "causal-mask", "head", "d-model", "d-k",
            "positional-encoding", "residual", "layer-norm", "feed-forward", "gelu", "kv-cache", "top-k", "top-p",
            "bigram", "induction-head", "block", "context-window")
_MARKED = re.compile(r"\[([^\]]+)\]\(T([a-z0-9-]+)\)")  # a link once its target is renamed so it names no term
_PLACEHOLDER = re.compile(r"\{[a-z_0-9]*(?::[^}]*)?\}")


def readable(body: str) -> str:
    """A part as a reader sees its words: placeholders, emphasis and code marks out, and each link's target
    written as (T<id>), so that only the words of a link count as a mention."""
    body = glossary.LINK.sub(lambda m: f"[{m.group(1)}](T{m.group(2)})", body)
    return _PLACEHOLDER.sub("", body).replace("*", "").replace("`", "")


def course_parts(simple: bool):
    """(lesson, part, text) along the course, each lesson's parts in file order, as a reader at that level
    reads them (LaTeX parts left out: a formula holds no link): simple.md at the Simple level, prose.md at the
    Technical one."""
    for lesson in COURSE:
        path = prose.LESSONS / lesson.name / ("simple.md" if simple else "prose.md")
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        pieces = prose._PART.split(text)
        for name, flag, body in zip(pieces[1::3], pieces[2::3], pieces[3::3]):
            body = body.strip()
            if body.startswith("\\") or (simple and flag):
                continue
            yield lesson.name, name, readable(prose.at_level(body, full=not simple))


def first_use(term: glossary.Term, simple: bool):
    """The first part along the course that names or links the term: (lesson, part, linked there first?)."""
    for lesson, part, text in course_parts(simple):
        named = term.mentioned_at(text)
        links = [m.start() for m in _MARKED.finditer(text) if m.group(2) == term.id]
        if named is not None or links:
            return lesson, part, bool(links) and (named is None or links[0] <= named)
    return None


def test_the_glossary_has_every_required_term():
    assert not set(REQUIRED) - set(TERMS), set(REQUIRED) - set(TERMS)


@pytest.mark.parametrize("term_id", list(TERMS))
def test_an_entry_is_well_formed(term_id):
    term = TERMS[term_id]
    # the short definition travels as a link's hover text and through str.format: one plain sentence
    assert term.short.endswith(".") and 40 <= len(term.short) <= 260, term.short
    assert not set(term.short) & set('{}"\\'), term.short
    assert all(glossary.term(other) for other in term.see)
    assert term.formula.count("{") == term.formula.count("}"), term.formula
    assert term.matches(term.title) and term.matches("") and not term.matches("no such words here")


def test_no_two_terms_share_a_name():
    names = [word.lower() for term in TERMS.values() for word in term.also]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def test_every_link_in_the_lessons_names_an_entry():
    for lesson in COURSE:
        text = (prose.LESSONS / lesson.name / "prose.md").read_text(encoding="utf-8")
        unknown = set(glossary.linked_ids(text)) - set(TERMS)
        assert not unknown, f"{lesson.name}/prose.md links terms the glossary lacks: {sorted(unknown)}"
        assert "](term:" not in "".join(prose.parts(lesson.name).values())  # every one became a real link


@pytest.mark.parametrize("level", ["technical", "simple"])
@pytest.mark.parametrize("term_id", list(TERMS))
def test_a_term_is_linked_where_the_course_first_uses_it(term_id, level):
    term = TERMS[term_id]
    found = first_use(term, simple=level == "simple")
    if found is None:  # no lesson uses it (at this level): nothing to link
        return
    lesson, part, linked = found
    message = (f"{term.title!r} is first used in lessons/{lesson}/prose.md, part [[{part}]], at the {level} level: "
               f"link that first use as [words](term:{term_id})")
    assert linked, message


def test_the_entries_come_in_the_order_the_course_first_links_them():
    """The glossary page says so: each term where the course first links it, lesson by lesson and part by part;
    a term no lesson links comes after them."""
    order: list[str] = []
    for lesson in COURSE:
        for term_id in glossary.linked_ids((prose.LESSONS / lesson.name / "prose.md").read_text(encoding="utf-8")):
            if term_id not in order:
                order.append(term_id)
    assert list(TERMS)[: len(order)] == order
    assert "in the order the course first links them" in ok(run_page(PAGE)).markdown[0].value


def test_a_link_leads_to_the_glossary_and_carries_the_definition():
    idea = prose.parts("qkv")["idea"]
    softmax = TERMS["softmax"]
    assert f'[softmax](/{glossary.URL_PATH}#softmax "{softmax.short}")' in idea


# ---- the page -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glossary_page():
    return ok(run_page(PAGE))


def test_the_page_lists_every_term_with_its_anchor(glossary_page):
    at = glossary_page
    assert [(h.value, h.proto.anchor) for h in at.header] == [(t.title, t.id) for t in TERMS.values()]
    shown = "\n".join(m.value for m in at.markdown)
    assert all(t.short in shown for t in TERMS.values())
    assert len(at.latex) == sum(bool(t.formula) for t in TERMS.values())  # the Technical level, by default
    # where the course first links a term, and the terms related to it
    first = glossary.first_links(tuple(lesson.name for lesson in COURSE))
    lesson = COURSE.lesson(first["softmax"])
    assert any(f"First used in [{COURSE.number(lesson)} · {lesson.title}](/{lesson.url_path})" in c.value
               for c in at.caption)


def test_the_search_is_in_the_link():
    at = ok(run_page(PAGE, {"term": "mask"}))
    titles = [h.value for h in at.header]
    assert "Causal mask" in titles and "Token" not in titles
    assert all(t.matches("mask") for t in TERMS.values() if t.title in titles)
    assert at.text_input(key="term").value == "mask"
    assert f"of {len(TERMS)} terms match “mask”" in at.caption[0].value


def test_a_search_that_finds_nothing_says_so():
    at = ok(run_page(PAGE, {"term": "*zebra*"}))
    assert not at.header
    assert "No term matches “\\*zebra\\*”" in at.info[0].value


def test_the_simple_level_leaves_out_the_formulas():
    at = ok(run_page(PAGE, {"level": "simple"}))
    assert len(at.header) == len(TERMS) and not at.latex


def test_the_page_is_in_the_navigation():
    at = run_app()
    ok(at.switch_page(PAGE).run())
    assert at.title[0].value == "Glossary" and len(at.header) == len(TERMS)

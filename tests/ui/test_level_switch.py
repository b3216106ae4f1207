"""The Simple / Technical switch: bound to the link as level=simple, carried from page to page. Simple keeps the
idea, the pictures and the exercises; Technical (the default) adds the formulas, proofs, mistakes and code."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from lessons import COURSE
from lessons.masking import mistakes
from lessons.scaling import mistake
from tests.apptest_helpers import charts, ok, run_app, run_page, texts
from ui.frame import exercises, prose, share
from ui.text import CODE_KEY

LESSONS = {lesson.url_path: lesson for lesson in COURSE}


def run(lesson: str, query: dict | None = None) -> AppTest:
    """The lesson with its code listing, share panel, questions and (Masking, Scaling) its mistakes open (what Simple
    hides must be hidden even when asked for)."""
    opened = [CODE_KEY, share.OPEN_KEY, exercises.open_key(lesson), mistakes.OPEN_KEY,
              mistake.OPEN_KEY]
    return ok(run_page(LESSONS[lesson].path, query, opened=opened))


def level(at: AppTest) -> str:
    return at.sidebar.radio(key=prose.LEVEL_KEY).value


def link(at: AppTest) -> dict:
    return parse_qs(urlsplit(str(at.sidebar.code[0].value)).query)


def headings(at: AppTest) -> str:
    return "\n".join([*(str(h.value) for h in at.header), *(str(m.value) for m in at.markdown)])


def code_listing(at: AppTest) -> bool:
    return any(e.label == "Show the code" for e in at.expander)


# what each page adds at the Technical level: (a heading or text it shows, how many formulas it draws)
ASIDES = {"scaling": mistake.TITLE, "masking": mistakes.TITLE}  # and the mistakes, each an aside of its own
TECHNICAL_ONLY = {
    "scaling": ("## Why √d_k?", "## Large scores and the computer: overflow"),
    "masking": ("## Mistake 1: masking after the softmax", "## Mistake 4: building the mask",
                "## Three ways to write the same mask"),
    "multi-head": ("Three ways to write it, one answer",),
}


@pytest.mark.parametrize("lesson", ["scaling", "masking", "multi-head", "training"])
def test_simple_leaves_out_the_formulas_mistakes_and_code(lesson):
    technical, simple = run(lesson), run(lesson, {"level": "simple"})
    assert level(technical) == "technical" and level(simple) == "simple"
    assert code_listing(technical) and not code_listing(simple)
    for shown in TECHNICAL_ONLY.get(lesson, ()):
        assert shown in headings(technical) and shown not in headings(simple), shown
    if lesson in ASIDES:
        assert ASIDES[lesson] in [e.label for e in technical.expander]
        assert ASIDES[lesson] not in [e.label for e in simple.expander]
    if lesson in ("scaling", "multi-head", "training"):
        assert technical.latex and not simple.latex
    # what Simple keeps: the title and idea, the pictures, the questions, the guided path, no stray marks
    assert [t.value for t in simple.title] == [t.value for t in technical.title]
    # the idea in the Simple text's own words (lessons/<lesson>/simple.md), not the Technical paragraph
    assert simple.markdown[0].value != technical.markdown[0].value or lesson == "training"
    assert len(charts(simple)) <= len(charts(technical))
    assert charts(simple) or lesson == "training"
    assert any(e.label == "Check yourself" for e in simple.expander)
    assert "Try this" in headings(simple)
    assert "[technical]" not in texts(technical) + texts(simple)


def test_a_marked_line_is_left_out_at_the_simple_level():
    technical, simple = run("masking"), run("masking", {"level": "simple"})
    line = "masking after the softmax leaves rows that sum to less than 1"
    assert line in texts(technical) and line not in texts(simple)
    assert "The masked weights are zero above the diagonal" in texts(simple)


def test_the_link_carries_the_level():
    at = run("qkv", {"level": "simple"})
    assert link(at)["level"] == ["simple"]
    other = run("qkv", {k: v[0] for k, v in link(at).items()})
    assert level(other) == "simple" and not code_listing(other)
    assert link(run("qkv"))["level"] == ["technical"]


def test_the_switch_changes_the_page():
    at = run("multi-head")
    at.sidebar.radio(key=prose.LEVEL_KEY).set_value("simple")
    ok(at.run())
    assert not at.latex and not code_listing(at) and link(at)["level"] == ["simple"]
    at.sidebar.radio(key=prose.LEVEL_KEY).set_value("technical")
    ok(at.run())
    assert at.latex and code_listing(at)


def test_a_bad_level_in_the_link_says_so_and_uses_technical():
    at = run("multi-head", {"level": "xyz"})
    assert level(at) == "technical" and at.latex and code_listing(at)
    assert any("level" in i.value and "xyz" in i.value and "using technical" in i.value for i in at.info)


def test_the_level_goes_with_the_reader_to_the_next_page():
    at = ok(run_app(LESSONS["scaling"].path, {"level": "simple"}))
    assert level(at) == "simple" and not at.latex
    ok(at.switch_page(LESSONS["multi-head"].path).run())
    assert level(at) == "simple" and not at.latex
    ok(at.switch_page("lessons/glossary/page.py").run())
    assert level(at) == "simple" and not at.latex
    ok(at.switch_page(LESSONS["training"].path).run())
    assert level(at) == "simple" and not at.latex


@pytest.mark.parametrize("full", [True, False])
def test_no_part_shows_a_level_mark(full, monkeypatch):
    monkeypatch.setattr(prose, "technical", lambda: full)
    for lesson in COURSE:
        for part in prose.parts(lesson.name):
            shown = prose.text(lesson.name, part)
            assert "[technical]" not in shown, (lesson.name, part)
            assert bool(shown) == (full or part not in prose.technical_parts(lesson.name)), (lesson.name, part)

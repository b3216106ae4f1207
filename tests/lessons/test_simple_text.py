"""The Simple level is its own text (lessons/<lesson>/simple.md), not the Technical one with lines taken out.

Its parts carry the names of the Technical text's parts (a page shows a part by name at either level), fill in
only numbers the page passes to that part (every number computed, none typed), and never say a step of Try
this the page has not got. The reading figures are printed (`pytest -s`) and held to their aims: Simple at most
60% of the Technical text's words on every lesson, at a lower Flesch-Kincaid grade.
"""

from __future__ import annotations

import re
import string

import pytest

from lessons import COURSE
from tools import reading_level
from ui.frame import prose

LESSONS = [lesson.name for lesson in COURSE]
STEP = re.compile(r"^(\d+)\. ", re.MULTILINE)
SHARE_AIM = 0.60


def placeholders(markdown: str) -> set[str]:
    """The {names} a part fills in (LaTeX braces are not names: a part with LaTeX has no placeholders)."""
    try:
        return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(markdown) if name}
    except ValueError:
        return set()


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_has_a_simple_text_whose_parts_the_page_shows(lesson):
    simple, full = prose.simple_parts(lesson), prose.parts(lesson)
    assert (prose.LESSONS / lesson / "simple.md").exists()
    assert simple, f"{lesson}: simple.md has no [[part]]"
    assert not simple.keys() - full.keys(), f"{lesson}: parts no page shows: {sorted(simple.keys() - full.keys())}"
    marked = prose._read(lesson)[1]
    assert not simple.keys() & marked, f"{lesson}: a Technical-only part in simple.md: {sorted(simple.keys() & marked)}"
    assert "idea" in simple, f"{lesson}: the Simple text opens with no idea"
    for name, body in simple.items():
        assert body.strip(), f"{lesson}: [[{name}]] is empty in simple.md (leave the part out instead)"
        assert "[technical]" not in body, f"{lesson}: [[{name}]] marks a Technical line in the Simple text"


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_simple_part_fills_in_only_the_numbers_its_page_passes(lesson):
    full = prose.parts(lesson)
    for name, body in prose.simple_parts(lesson).items():
        extra = placeholders(body) - placeholders(full[name])
        assert not extra, f"{lesson}: [[{name}]] in simple.md fills in {sorted(extra)}, which the page does not pass"


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_simple_try_this_has_only_steps_the_page_tests(lesson):
    simple = STEP.findall(prose.simple_parts(lesson).get("try_this", ""))
    full = STEP.findall(prose.parts(lesson).get("try_this", ""))
    assert set(simple) <= set(full), f"{lesson}: Simple's Try this has steps {simple}, the tested ones are {full}"


@pytest.fixture(scope="module")
def readings() -> dict[str, reading_level.Reading]:
    found = {lesson.name: reading_level.reading(lesson) for lesson in COURSE}
    print("\n" + reading_level.table(list(found.values())))
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_simple_text_is_shorter_and_plainer(lesson, readings):
    r = readings[lesson]
    assert r.share <= SHARE_AIM, f"{lesson}: Simple keeps {r.share:.0%} of the Technical text's words"
    assert r.simple.grade <= r.technical.grade, f"{lesson}: Simple reads at grade {r.simple.grade}, " \
                                                f"Technical at {r.technical.grade}"

"""The whole app through AppTest: the home page, navigation to every lesson, and deep links."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from lessons import COURSE
from tests.apptest_helpers import ROOT, TIMEOUT, captions, ok, run_app

LESSONS_NOW = COURSE
IDS = [lesson.url_path for lesson in LESSONS_NOW]



def titles(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.title]


def shows_lesson(at: AppTest, lesson) -> None:
    ok(at)
    heading = titles(at)
    assert len(heading) == 1, heading
    assert lesson.title.lower() in heading[0].lower(), (lesson.title, heading)


def deep_link(url_path: str, query: dict | None = None) -> AppTest:
    """The first run of a fresh session opened at /<url_path>?<query>, as a browser's deep link makes it.

    st.Page identifies a page by the hash of its url_path; AppTest's switch_page would need a run on
    the home page first, which a deep link does not have, so the first run asks for that hash directly.
    """
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at._page_hash = calc_hash(url_path)
    return at.run()


@pytest.fixture(scope="module")
def home():
    return ok(run_app())


def test_home_page(home):
    assert titles(home) == ["Attention Lab"]
    diagram = "".join(str(h.proto.body) for h in home.get("html"))
    for step in ("embeddings X", "softmax", "weighted sum", "logits → next token"):
        assert step in diagram, f"the pipeline diagram lacks {step!r}"
    assert "Attention(Q, K, V)" in captions(home)


def test_home_links_every_lesson(home):
    links = {link.proto.page: link.proto.label for link in home.get("page_link")}
    assert set(links) == {lesson.url_path for lesson in COURSE}, "one link per lesson, no more"
    for number, lesson in enumerate(COURSE, start=1):
        assert lesson.url_path in links, f"no link to {lesson.path}"
        assert links[lesson.url_path] == f"{number}. {lesson.title}"


def test_every_lesson_is_a_folder_with_its_page_prose_and_questions():
    """A renamed or missing file fails here, not as a lesson silently left out of the navigation."""
    assert len({lesson.url_path for lesson in COURSE}) == len(COURSE)
    assert len({lesson.path for lesson in COURSE}) == len(COURSE)
    for lesson in COURSE:
        folder = ROOT / lesson.path.removesuffix("/page.py")
        assert lesson.path == f"lessons/{folder.name}/page.py", "pages/ would turn on Streamlit's old auto-routing"
        for part in ("page.py", "prose.md", "questions.py", "__init__.py"):
            assert (folder / part).is_file(), f"{lesson.title} has no {part}"
    assert not (ROOT / "pages").exists()


@pytest.mark.parametrize("lesson", LESSONS_NOW, ids=IDS)
def test_every_lesson_through_the_app(lesson):
    at = run_app(lesson.path)
    shows_lesson(at, lesson)
    assert not at.warning, [w.value for w in at.warning]  # the defaults are a valid view


@pytest.mark.parametrize("lesson", LESSONS_NOW, ids=IDS)
def test_deep_link_with_no_settings(lesson):
    at = deep_link(lesson.url_path)
    shows_lesson(at, lesson)
    url_notes = [i.value for i in at.info if i.icon == ":material/link:"]  # the controls' notes on a link
    assert not url_notes  # nothing in the link, nothing to correct


@pytest.mark.parametrize("lesson", LESSONS_NOW, ids=IDS)
def test_deep_link_with_hostile_settings(lesson):
    query = {"seq_len": "100000", "d_k": "-3", "d_model": "abc", "heads": "7", "seed": "1e9", "attn_temp": "nan",
             "sample_temp": "nan",
             "text": "<img src=x onerror=alert(1)>", "present": "maybe"}
    at = deep_link(lesson.url_path, query)
    shows_lesson(at, lesson)
    notes = [str(i.value) for i in at.info if i.icon == ":material/link:"]
    assert notes, "a link full of unusable values must say what was used instead"
    for note in notes:
        # user text is escaped in the notes: no raw tag, no link syntax
        assert not re.search(r"(?<!\\)<|(?<!\\)\]\(", note), note


def test_walk_every_page_in_one_session():
    """Moving between lessons keeps one session state: a value one page allows must not break the next."""
    at = ok(run_app())
    for lesson in LESSONS_NOW + LESSONS_NOW[::-1]:
        at.switch_page(lesson.path).run()
        shows_lesson(at, lesson)
        for slider in at.sidebar.slider:  # leave every slider at its top before moving on
            slider.set_value(slider.max).run()
            ok(at)


def test_each_title_is_numbered_by_its_place_in_the_navigation():
    """Walking the navigation in order, page n is titled "n · its title": the numbers a student reads on the
    pages are the ones the sidebar and the home page list them by."""
    at = ok(run_app())
    listed = [str(link.proto.label) for link in at.get("page_link")]
    assert listed == [f"{n}. {lesson.title}" for n, lesson in enumerate(COURSE, start=1)]
    for number, lesson in enumerate(COURSE, start=1):
        ok(at.switch_page(lesson.path).run())
        assert titles(at) == [f"{number} · {lesson.title}"]


def test_the_page_icon_needs_no_network(monkeypatch):
    """The browser draws an emoji icon itself; a Material icon as page icon made it fetch the picture from a
    font server (and fail offline). The navigation's Material icons come from a font the app serves."""
    import streamlit as st
    from streamlit.string_util import is_emoji

    asked = {}
    real = st.set_page_config
    monkeypatch.setattr(st, "set_page_config", lambda **kw: (asked.update(kw), real(**kw))[1])
    ok(run_app())
    icon = asked.get("page_icon")
    assert isinstance(icon, str) and is_emoji(icon), icon

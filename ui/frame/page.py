"""What every lesson page shares around its content: presenter mode, sharing, the lesson path, exports.

A lesson page calls `opening(COURSE, name)` first and `closing(COURSE, name, questions, code)` last; everything
between is its own. Its controls and the sections they drive go in one function handed to `live()`, so that
moving a control reruns that function alone. A section meant for the Technical level only (a proof, a mistake,
a formula) is drawn under `if page.technical():`; a prose part can be marked so instead (ui/frame/prose.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ui.compute import turns
from ui.drawing import export
from ui.frame import exercises, nav, prose, share
from ui.state import controls, parts, presenter
from ui.text import show_code

_SEEN = "_settings_seen"  # every URL-bound setting a lesson has drawn in this session


def keep_settings() -> None:
    """Carry the settings over a move to another lesson (sidebar, or the previous / next links).

    A widget that stops being drawn loses its value, and a page switch stops every widget of the old
    page: the next lesson would open with an empty text and every slider at its minimum ("no tokens").
    Assigning a value through st.session_state before its widget is drawn makes it the program's value,
    which Streamlit keeps; the controls then check it against this page's range, as for a link.
    """
    for key in st.session_state.get(_SEEN, ()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def technical() -> bool:
    """True at the Technical level (the default): the page adds its formulas, proofs, mistakes and code."""
    return prose.technical()


def level_switch() -> str:
    """The sidebar's Simple / Technical switch, bound to the link as level=simple (technical is the default)."""
    # the options are written as the link writes them: a bound radio compares its value with its labels
    return controls.option(prose.LEVEL_KEY, "Level", prose.LEVELS, prose.DEFAULT_LEVEL, horizontal=True,
                           help="Simple: each lesson told in plain words, with the same pictures and exercises. "
                                "Technical: the fuller text, with the formulas, proofs, common mistakes and the "
                                "code.")


def switches() -> None:
    """What every page of the app begins with: the settings carried over from the last page, the presenter and
    level switches at the top of the sidebar, and the page's style."""
    keep_settings()
    controls.toggle(presenter.KEY, "Presenter mode", help="Large type and cells for a projector; the sidebar "
                    "starts collapsed when a link with present=true is opened.")
    level_switch()
    presenter.apply_style()


def opening(course: nav.Course, name: str, formula: str = "") -> None:
    """The sidebar's presenter and level switches and share panel, then the page's numbered title and the idea it
    opens with (the lesson's prose part "idea"; `formula`, a prose part in LaTeX shown beneath it, Technical)."""
    switches()
    share.share_panel()
    lesson = course.lesson(name)
    st.title(f"{course.number(lesson)} · {lesson.title}")
    prose.show(name, "idea")
    if formula and technical():
        st.latex(prose.text(name, formula))


def live(body: Callable[..., None], *args, name: str = "", run_every: float | None = None) -> None:
    """Run body(*args), controls and the sections they drive, as one st.fragment: a live part of the page.

    A move of one of its controls then reruns body alone, not the whole script: the navigation, the
    header and footer, the exercises and the code listing stay on screen as they are, since none of them
    depends on a lesson's controls (bench/bench_pages.py measures a move; docs/LOAD.md has the figures).
    The controls stay bound to the URL, so a link still reproduces the view.

    Live parts nest. A section whose controls reach nothing else is a live part of its own inside the
    lesson's (the masking lesson's no-peeking check, the geometry of two arrows): a move of its controls
    reruns that section alone and sends nothing else, while a move of a control the whole lesson reads
    reruns the lesson's part, this section included. name: the part's name, unique in its page (default: where
    body is defined, so give one to a body drawn twice). run_every: seconds between reruns on the part's own
    timer (the training run's panel).

    What the page records as it draws (the settings for the share link, the matrices for the export
    panel) is tagged with the parts it was drawn in; a part rerunning alone replaces what it recorded last
    time and leaves the rest (ui.state.parts). The export panel lies outside the parts: while it is open, a
    rerun of a part asks for a full run, so that its downloads hold the matrices now on screen (unless the
    page holds them: a training run). The share popover closes when a control is touched; opening it runs
    the whole page.
    """
    part = name or _where(body)
    enclosing = parts.current()
    ran = [False]  # set by the enclosing run's own call: every later call is a rerun of body alone

    def run_body(*args) -> None:
        alone, ran[0] = ran[0], True
        with turns.turn(), parts.drawing(part, enclosing):  # a rerun alone takes its turn (ui/compute/turns.py)
            if alone:
                controls.forget_part(part)
            export.part_begins(part, alone)
            try:
                body(*args)
            finally:
                export.part_ends(alone)
        if alone and export.panel_open() and not export.held():
            st.rerun(scope="app")

    st.fragment(run_body, run_every=run_every)(*args)


def _where(body: Callable) -> str:
    """Where a function is defined (module, name, line): one name per part, lambdas included."""
    code = getattr(body, "__code__", None)
    return f"{getattr(body, '__module__', '')}.{getattr(body, '__qualname__', repr(body))}:" + \
        (str(code.co_firstlineno) if code else "")


def link(lesson: nav.Lesson, label: str, container=st, query: dict | None = None) -> None:
    """A link to another lesson (with these settings in its address); a plain link when the page runs outside
    the app's navigation (tests)."""
    try:
        container.page_link(lesson.path, label=label, icon=lesson.icon, query_params=query)
    except StreamlitAPIException:
        address = f"/{lesson.url_path}" + (f"?{urlencode(query)}" if query else "")
        container.markdown(f"[{label}]({address})")


def remember_settings() -> None:
    """Note every setting this page drew, so that keep_settings() carries it to the next page."""
    st.session_state.setdefault(_SEEN, set()).update(controls.current_view())


@functools.cache
def built_questions(questions: Callable[[], list[exercises.Exercise]]) -> tuple[exercises.Exercise, ...]:
    """A lesson's questions, built once per process: their answers come from the page's defaults, never from a
    session's settings, and some run a model to find them."""
    return tuple(questions())


def shown_questions(name: str, questions: Sequence[exercises.Exercise]) -> tuple[exercises.Exercise, ...]:
    """The questions a reader at this level sees: at the Simple level none about a section it hides (a question
    names its section's prose part; a Technical part is hidden)."""
    hidden = () if technical() else prose.technical_parts(name)
    return tuple(ex for ex in questions if ex.part not in hidden)


def closing(course: nav.Course, name: str, questions: Callable[[], list[exercises.Exercise]],
            code: Sequence[Callable] = ()) -> None:
    """What to notice (the prose part "notice", if the lesson has one) and the code behind the page (Technical,
    not in presenter mode); then its check-yourself questions, its guided path (the part "try_this"), the
    previous and next lessons, and the export panel."""
    lesson = course.lesson(name)
    parts = prose.parts(name)
    if "notice" in parts:
        prose.show(name, "notice")
    if code and technical() and not presenter.presenting():
        show_code(*code)
    st.divider()
    exercises.render(lesson.url_path, shown_questions(name, built_questions(questions)))
    if "try_this" in parts and (steps := prose.text(name, "try_this")):
        st.markdown("## Try this\n\n" + steps)
    # previous at the left edge, next at the right: one horizontal container, not a block per column
    previous, following = course.neighbours(lesson)
    links = st.container(horizontal=True, horizontal_alignment="distribute")
    if previous:
        link(previous, f"← Previous: {previous.title}", links)
    if following:
        link(following, f"Next: {following.title} →", links)
    remember_settings()
    share.fill_share_panel()
    if not presenter.presenting():
        export.export_panel()

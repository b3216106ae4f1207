"""A control moved on a lesson page reruns only the lesson's live part (ui.frame.page.live), on the real server.

AppTest reruns the whole script for every widget change, so these checks speak Streamlit's websocket
protocol as the browser does (bench/streamlit_client.py): a move of a control drawn inside a fragment
is sent with that fragment's id, and the server reruns only the fragment. What a user would check:
the page redraws without an error, the address bar follows the move, that address reopens the same view,
and the share link and the export panel hold what is on screen now, not what was there before the move.
The export panel's files are still there when the browser fetches them, however many runs of other
students' pages end in between.
"""

from __future__ import annotations

import asyncio
import io
import re
import urllib.error
import urllib.request

import pytest
from streamlit.testing.v1 import AppTest

from bench.streamlit_client import Server, Session
from lessons import COURSE
from lessons.qkv.maths import average_or_attend
from tests.apptest_helpers import ROOT
from ui.drawing.charts import unique_labels
from ui.frame import page

pytestmark = pytest.mark.timeout(240)

LIVE = [lesson for lesson in COURSE if "page.live(" in (ROOT / lesson.path).read_text()]
EXPORT = "Export the matrices on this page (CSV, PNG, SVG)"
SHARE = "Share this view"


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def server():
    with Server.start() as srv:
        yield srv



@pytest.mark.parametrize("lesson", LIVE, ids=lambda lesson: lesson.url_path)
def test_every_control_moved_as_a_browser_moves_it_redraws_without_an_error(server, lesson):
    """Every slider of the page moved in turn, its ends included, three rounds: each move reruns the part it is
    drawn in (a section's own part, or the lesson's, which draws that section again, perhaps in another place
    after a caption came or went) and draws without an exception. A part a move left unreachable would not
    answer at all: the move times out."""
    async def go():
        s, first = await Session.open(server.url, lesson.url_path)
        s.timeout = 60
        assert not first.exceptions, first.exceptions
        for round_ in range(3):
            for key in sorted(s.sliders):
                slider = s.sliders.get(key)
                if slider is None:
                    continue
                values = slider.values()
                value = (values[0], values[-1], values[len(values) // 3])[round_]
                moved = await s.move(slider, value)
                assert not moved.exceptions, (key, value, moved.exceptions)
                assert moved.status in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"), moved.status
        await s.close()

    run(go())

def matrices_counted(captions: list[str]) -> int:
    """The export panel's count line, "16 matrices on this page."."""
    counts = [int(m.group(1)) for c in captions if (m := re.match(r"(\d+) matri(?:x|ces) on this page", c))]
    assert len(counts) == 1, captions
    return counts[0]


def test_every_lesson_has_a_live_part():
    assert [lesson.url_path for lesson in LIVE] == [lesson.url_path for lesson in COURSE]


@pytest.mark.parametrize("lesson", LIVE, ids=lambda lesson: lesson.url_path)
def test_a_seed_move_reruns_the_live_part_and_the_link_reopens_it(server, lesson):
    async def go():
        s, first = await Session.open(server.url, lesson.url_path)
        assert not first.exceptions and not first.fragment_ids
        seed = first.sliders["seed"]
        moved = await s.move(seed, 5)
        assert moved.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY", moved.status
        assert moved.fragment_ids and not moved.exceptions, moved.exceptions
        # the controls are drawn again by the live part, and the address bar follows the move
        assert "seed" in moved.sliders and set(moved.sliders) <= set(first.sliders)
        assert "seed=5" in s.query.split("&")
        # ...but not the page's title or footer: they stay on screen from the full run
        assert first.title and first.title not in moved.headings
        await s.close()
        # the address bar's link opens the same view: same sections, same numbers in the captions
        other, reopened = await Session.open(server.url, lesson.url_path, s.query)
        assert not reopened.exceptions
        assert set(moved.headings) <= set(reopened.headings)
        assert moved.captions == [c for c in reopened.captions if c in moved.captions]
        assert set(moved.captions) <= set(reopened.captions)
        await other.close()

    run(go())


def live_part_run_three_times():
    import numpy as np
    import streamlit as st

    from ui.drawing import export
    from ui.frame import page
    from ui.state import controls

    controls.start_run()
    export.start_run()
    export.record("drawn before", np.eye(2), ["a", "b"], ["a", "b"], {})

    def body():
        export.record("drawn inside", np.ones((2, 2)), ["a", "b"], ["a", "b"], {})

    page.live(body)
    st.markdown(" | ".join(item["title"] for item in export.drawn()))


def test_a_rerun_alone_records_its_matrices_again_instead_of_adding_them(monkeypatch):
    # As the server does: the fragment runs in the full run, then alone on each move (here twice). A page
    # moved 500 times would otherwise keep 500 copies of its matrices in the session.
    monkeypatch.setattr(page.st, "fragment", lambda run, run_every=None: lambda *args: [run(*args) for _ in range(3)])
    at = AppTest.from_function(live_part_run_three_times).run()
    assert not at.exception
    assert at.markdown[-1].value == "drawn before | drawn inside"


FRAGMENTS: list = []  # the fragment bodies the script below made, in order (st.fragment replaced by the test)


def nested_live_parts():
    """A lesson's live part holding a section that is a live part of its own, each with a control and a matrix.
    After the page's run, the moves: the inner part reruns alone twice, then the outer part once (which runs the
    inner part again, as a part of its own run)."""
    import numpy as np
    import streamlit as st

    from tests.system.test_live import FRAGMENTS
    from ui.drawing import export
    from ui.frame import page
    from ui.state import controls

    controls.start_run()
    export.start_run()

    def inner(n: int):
        controls.record("inner_k", n, 1)  # what a control of the part records (a widget is drawn once a run)
        export.record(f"inner map {n}", np.eye(2), ["a", "b"], ["a", "b"], {})

    def outer():
        controls.record("outer_k", 2, 2)
        export.record("outer map 1", np.eye(2), ["a", "b"], ["a", "b"], {})
        page.live(inner, len(FRAGMENTS), name="inner")
        export.record("outer map 2", np.eye(2), ["a", "b"], ["a", "b"], {})

    page.live(outer, name="outer")
    export.record("after both", np.eye(2), ["a", "b"], ["a", "b"], {})
    (outer_run, _), (inner_run, inner_args) = FRAGMENTS[:2]
    inner_run(*inner_args)
    inner_run(*inner_args)
    st.markdown(" | ".join(item["title"] for item in export.drawn()))
    outer_run()
    st.markdown(" | ".join(item["title"] for item in export.drawn()))
    st.markdown(" | ".join(sorted(controls.current_view())))


def test_a_nested_part_rerun_alone_replaces_its_own_records_in_place(monkeypatch):
    def fragment(run, run_every=None):
        def call(*args):  # the enclosing run's own call; the moves call the stored body again
            FRAGMENTS.append((run, args))
            run(*args)
        return call

    FRAGMENTS.clear()
    monkeypatch.setattr(page.st, "fragment", fragment)
    at = AppTest.from_function(nested_live_parts).run()
    assert not at.exception, [e.message for e in at.exception]
    # the inner part's map stays between the outer part's two, once, after two moves of its own
    assert at.markdown[-3].value == "outer map 1 | inner map 1 | outer map 2 | after both"
    # the outer part's move draws the inner part afresh (a third fragment body: its argument is 2)
    assert at.markdown[-2].value == "outer map 1 | inner map 2 | outer map 2 | after both"
    assert at.markdown[-1].value == "inner_k | outer_k"



def test_the_export_panel_counts_each_matrix_once_after_moves_and_follows_a_move_while_open(server):
    async def go():
        s, first = await Session.open(server.url, "masking")
        seed = first.sliders["seed"]
        opened = await s.set_panel(first, EXPORT, True)
        n = matrices_counted(opened.captions)
        assert n >= 10
        await s.set_panel(opened, EXPORT, False)
        for value in (3, 4, 5):  # closed: moves rerun the live part alone
            assert (await s.move(seed, value)).fragment_ids
        reopened = await s.set_panel(first, EXPORT, True)
        assert matrices_counted(reopened.captions) == n  # recorded once, not once per move
        # open: a move runs the whole page, so the panel's downloads are the matrices now on screen
        moved = await s.move(seed, 6)
        assert not moved.fragment_ids and moved.status == "FINISHED_SUCCESSFULLY"
        assert matrices_counted(moved.captions) == n and not moved.exceptions
        await s.close()

    run(go())


def fetch(url: str) -> tuple[int, str, bytes]:
    """GET a file as the browser does after a click on a download button: status, type, body."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.headers.get_content_type(), response.read()
    except urllib.error.HTTPError as error:
        return error.code, "", b""


def test_the_export_panel_files_outlast_other_students_runs(server):
    # Streamlit deletes a file no session holds at the second end of a run, anyone's: a file made at the
    # click was such a file, and in a busy class it was gone before the browser asked for it.
    async def go():
        s, first = await Session.open(server.url, "qkv")
        opened = await s.set_panel(first, EXPORT, True)
        csv_path = opened.downloads.get("CSV")
        assert csv_path, f"the CSV button holds no file: {opened.downloads}"
        made = await s.press("make_png")  # the first press makes the PNG; the button in its place saves it
        assert made.fragment_ids and not made.exceptions
        png_path = made.downloads.get("Save PNG")
        assert png_path, f"no Save PNG button after the press: {made.downloads}, buttons {list(made.buttons)}"
        other, _ = await Session.open(server.url, "scaling")
        for _ in range(3):
            await other.rerun()
        await other.close()
        status, kind, body = fetch(server.url + csv_path)
        assert (status, kind) == (200, "text/csv"), status
        header = next(csv_lines := io.StringIO(body.decode("utf-8")))
        # the page's first matrix: the row of "bank" in the opening's first sentence, averaged then attended
        first_sentence = average_or_attend()["sentences"][0]["tokens"]
        assert header.rstrip("\r\n").split(",")[1:] == unique_labels(first_sentence)
        assert len(list(csv_lines)) == 2
        status, kind, body = fetch(server.url + png_path)
        assert (status, kind) == (200, "image/png") and body[:8] == b"\x89PNG\r\n\x1a\n", status
        await s.close()

    run(go())


def test_the_share_link_after_moves_carries_every_setting_of_the_page(server):
    async def go():
        s, first = await Session.open(server.url, "masking", "d_k=4")
        seed = first.sliders["seed"]
        await s.move(seed, 7)
        await s.move(seed, 8)
        shared = await s.set_panel(first, SHARE, True)
        assert not shared.fragment_ids and not shared.exceptions
        link = next(code for code in shared.code if "masking" in code)
        settings = dict(part.split("=", 1) for part in link.split("?", 1)[1].split("&"))
        assert settings["seed"] == "8" and settings["d_k"] == "4"
        await s.close()

    run(go())


@pytest.mark.parametrize("page, control, part", [("model", "fm_bytes", {"fm_bytes"}),
                                                   ("scaling", "scaling_T", {"scaling_T", "scaling_trials"})])
def test_a_second_live_part_reruns_alone_and_a_seed_move_leaves_it_on_screen(server, page, control, part):
    # The full model's costs and the scaling experiment do not follow the seed: a live part of their own.
    async def go():
        s, first = await Session.open(server.url, page)
        by_seed = await s.move(first.sliders["seed"], 3)
        assert not part & set(by_seed.sliders) and not by_seed.exceptions
        slider = first.sliders[control]
        value = slider.values()[-1]
        by_control = await s.move(slider, value)
        assert by_control.fragment_ids and by_control.fragment_ids != by_seed.fragment_ids
        assert set(by_control.sliders) == part and not by_control.exceptions
        assert f"{control}={slider.url_text(value)}" in s.query.split("&") and "seed=3" in s.query.split("&")
        await s.close()

    run(go())


def test_full_model_opened_without_a_prompt_then_given_one_fills_its_maps_further_down(server):
    """Full model's reading part draws the attention maps into a place further down the page (its Screen, made by
    the page's full run). Opened with an empty prompt it draws no maps; the prompt typed then reruns that part
    alone, which must still find the maps' place: a place the last full run left unwritten is gone."""
    async def go():
        s, first = await Session.open(server.url, "model", query="fm_prompt=")
        assert not first.exceptions and not any(h.startswith("Every attention map") for h in first.headings)
        typed = await s.fill("fm_prompt", "def main():")
        assert not typed.exceptions, typed.exceptions
        assert typed.fragment_ids and typed.status == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
        assert any(h.startswith("Every attention map") for h in typed.headings), typed.headings
        assert "fm_prompt=def+main%28%29%3A" in s.query
        await s.close()

    run(go())

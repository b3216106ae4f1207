"""A fresh server warms every page before it answers (ui/compute/warm.py), and a visit that comes meanwhile
waits for it and is then served as usual.

`streamlit run streamlit_app.py` finds the st.App that the entry script defines and starts through it; the
app's lifespan runs every page once, for no one. What a teacher would check before class: the log says every
page was warmed, none failed, and a student's first view works. How long the first view takes after a start
is measured, not tested: `python bench/bench_first_view.py`.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.error
import urllib.request

import pytest

from bench.streamlit_client import Server, Session, port_is_free
from lessons import COURSE
from ui.compute import warm
from ui.frame import glossary

pytestmark = pytest.mark.timeout(420)

PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH, "class"]
WARMED = re.compile(r" warmed (\d+) pages in [\d.]+ s(.*)")


async def first_view(url: str, page: str):
    session, render = await Session.open(url, page)
    await session.close()
    return render


def ready(server: Server) -> tuple[int, str]:
    """What a readiness probe sees at GET /api/ready: its status and text."""
    try:
        with urllib.request.urlopen(server.url + warm.READY_PATH, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_a_fresh_server_warms_every_page_before_it_answers():
    server = Server()  # started, not waited for
    try:
        deadline = time.monotonic() + 60
        while port_is_free(server.port):  # listening: a request now waits in the queue, it is not refused
            assert server.proc.poll() is None and time.monotonic() < deadline, server.output()
            time.sleep(0.05)
        # a student opening the page now: the view comes after the warm-up, and is a warm one
        render = asyncio.run(first_view(server.url, "qkv"))
        assert render.title.endswith("QKV projection") and not render.exceptions, render
        found = WARMED.search(server.output())
        assert found, f"answered before the 'warmed N pages' line:\n{server.output()[-3000:]}"
        assert int(found.group(1)) == len(PAGES) and not found.group(2), found.group(0)
        # what it loaded is out of the garbage collector's way
        aside = re.search(r" set aside (\d+) objects from the garbage collector", server.output())
        assert aside and int(aside.group(1)) > 10_000, server.output()[-3000:]
        # and ready says so from the first answer on
        assert ready(server) == (200, "ok")
        assert "Traceback" not in server.output(), server.output()[-3000:]
    finally:
        server.stop()


def test_a_warm_up_that_outlasts_its_wait_goes_on_while_the_server_answers(monkeypatch):
    """On a machine too slow to warm every page within WARM_BEFORE_SERVING_S, the server answers anyway and the
    warm-up goes on behind it; ready says 503 until it ends, then 200."""
    monkeypatch.setenv("ATTENTION_LAB_WARM_BEFORE_SERVING_S", "0.5")
    with Server.start() as server:
        status, text = ready(server)
        assert status == 503 and text.startswith("warming up: "), (status, text)
        render = asyncio.run(first_view(server.url, "qkv"))  # served while the rest warms
        assert render.title.endswith("QKV projection") and not render.exceptions, render
        deadline = time.monotonic() + warm.RUN_TIMEOUT_S * 2
        while (status := ready(server))[0] != 200 and time.monotonic() < deadline:
            assert status[0] == 503, status
            time.sleep(0.5)
        assert status == (200, "ok"), status
        found = WARMED.search(server.output())
        assert found and int(found.group(1)) == len(PAGES) and not found.group(2), server.output()[-3000:]


def test_a_server_told_not_to_warm_is_ready_as_soon_as_it_is_up(monkeypatch):
    monkeypatch.setenv(warm.SWITCH, "0")
    with Server.start() as server:
        assert ready(server) == (200, "ok")
        assert WARMED.search(server.output()) is None

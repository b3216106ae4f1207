"""A fresh server warms every page in the background (ui/compute/warm.py), and a visit during or after it is
served as usual.

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

from bench.streamlit_client import Server, Session
from lessons import COURSE
from ui.compute import warm
from ui.frame import glossary

pytestmark = pytest.mark.timeout(420)

PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH]
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


def test_a_fresh_server_warms_every_page_and_serves_a_visit_meanwhile():
    with Server.start() as server:
        # up (health says ok) but not ready: the warm-up takes seconds of a core, and has only begun
        assert server.health() == "ok"
        status, text = ready(server)
        assert status == 503 and text.startswith("warming up: "), (status, text)
        # a student arriving while the warm-up runs is served at once, with no error
        render = asyncio.run(first_view(server.url, "qkv"))
        assert render.title.endswith("QKV projection") and not render.exceptions, render
        deadline = time.monotonic() + warm.RUN_TIMEOUT_S * 2
        while (status := ready(server))[0] != 200 and time.monotonic() < deadline:
            assert status[0] == 503, status
            time.sleep(0.5)
        # ready says ok once the warm-up has ended, and not before: its log line is written first
        assert status == (200, "ok"), status
        found = WARMED.search(server.output())
        assert found, f"ready before the 'warmed N pages' line:\n{server.output()[-3000:]}"
        assert int(found.group(1)) == len(PAGES) and not found.group(2), found.group(0)
        assert "Traceback" not in server.output(), server.output()[-3000:]


def test_a_server_told_not_to_warm_is_ready_as_soon_as_it_is_up(monkeypatch):
    monkeypatch.setenv(warm.SWITCH, "0")
    with Server.start() as server:
        assert ready(server) == (200, "ok")
        assert WARMED.search(server.output()) is None

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


def test_a_fresh_server_warms_every_page_and_serves_a_visit_meanwhile():
    with Server.start() as server:
        # a student arriving while the warm-up runs is served at once, with no error
        render = asyncio.run(first_view(server.url, "qkv"))
        assert render.title.endswith("QKV projection") and not render.exceptions, render
        deadline = time.monotonic() + warm.RUN_TIMEOUT_S * 2
        while (found := WARMED.search(server.output())) is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert found, f"no 'warmed N pages' line in the log:\n{server.output()[-3000:]}"
        assert int(found.group(1)) == len(PAGES) and not found.group(2), found.group(0)
        assert "Traceback" not in server.output(), server.output()[-3000:]

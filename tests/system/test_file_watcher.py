"""A file changed under a running server does not reach the students' sessions.

`.streamlit/config.toml` turns Streamlit's file watcher off (`server.fileWatcherType = "none"`): with it on,
every session's first run walks every imported module, and a saved file reruns every open page while the
changed module is evicted from `sys.modules` under other sessions' scripts (a load test once showed a student
`KeyError: 'core.layers'`). Cloud turns `runOnSave` on whatever the file says, so the test does too: with the
project's settings, a module edited under the server sends no session a run it did not ask for. The same
edit with the watcher switched back on (`--server.fileWatcherType poll`, as the README's live-edit command
does) does rerun the open page, so the wait below is long enough to see it.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from bench.streamlit_client import ROOT, Server, Session

pytestmark = pytest.mark.timeout(300)

APP = ("streamlit_app.py", ".streamlit", "classroom", "core", "lessons", "store", "tools", "ui")
EDITED = Path("core/attention.py")  # imported by every lesson page
EDIT_FOR_S = 12  # the polling watcher looks every fraction of a second; a slow machine gets ample time


def copy_of_the_app(folder: Path) -> Path:
    for name in APP:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    return folder


async def runs_pushed_while_editing(url: str, module: Path) -> int:
    """Open QKV, then edit `module` again and again for EDIT_FOR_S seconds (an edit made before the watcher
    has registered the module is missed; a later one is not); the runs the server sent meanwhile."""
    session, first = await Session.open(url, "qkv")
    try:
        assert first.title.endswith("QKV projection") and not first.exceptions, first
        before, text = session.runs_finished, module.read_text()
        deadline = time.monotonic() + EDIT_FOR_S
        for n in range(10**6):
            if time.monotonic() > deadline or session.runs_finished > before:
                break
            module.write_text(f"{text}\n# edited {n}\n")
            await asyncio.sleep(0.5)
        await asyncio.sleep(2)  # a run the last edit started
        return session.runs_finished - before
    finally:
        await session.close()


@pytest.mark.parametrize(("watcher", "pushed"), [(None, False), ("poll", True)],
                         ids=["project settings: not watched", "watcher on: rerun on save"])
def test_an_edited_module_reruns_no_session_unless_the_watcher_is_on(tmp_path, monkeypatch, watcher, pushed):
    monkeypatch.setenv("ATTENTION_LAB_WARM_UP", "0")  # the warm-up's runs are not what this is about
    root = copy_of_the_app(tmp_path)
    extra = ("--server.runOnSave", "true") + (("--server.fileWatcherType", watcher) if watcher else ())
    with Server.start(root=root, extra=extra) as server:
        runs = asyncio.run(runs_pushed_while_editing(server.url, root / EDITED))
        assert (runs > 0) is pushed, f"{runs} runs pushed to the session; log:\n{server.output()[-2000:]}"
        assert "Traceback" not in server.output(), server.output()[-3000:]

"""The browser's per-move budget (bench/browser_moves.py --check, run by .ci/run) fails on charts rebuilt every move.

A copy of the app whose charts are rebuilt on every move (what a careless change to the chart path does: the maps
drawn as svg, thousands of elements each, and every spec sent with something new in it, so the browser cannot keep
a drawn chart and builds a new view for each) is measured against this checkout's browser budgets: the check must
name QKV as past its budget and exit 1. The run is short (one lesson, three moves, measured again once found wrong)
and reads time and DOM mutations as multiples of a bare page's move in the same run, so a busy machine does not
decide the outcome. The app as it is needs no twin here: .ci/run checks every lesson with the real check.

It needs Chromium and Playwright, as the browser tests do: without them it is skipped, unless REQUIRE_BROWSER=1
(CI), where that is a failure (tests/browser/harness.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apptest_helpers import ROOT
from tests.browser import harness  # noqa: F401  (importing it skips or fails this module without a browser)
from tests.system.app_copy import changed_copy

pytestmark = pytest.mark.timeout(900)

# The maps drawn as svg, never on a canvas.
CANVAS = 'else "canvas"'
SEND = "    streamlit_internals.send_vega_lite_chart(text, {DATASET: table}, width, alt)\n"
# Every spec sent with a nonce of its own: a new design on every move, so the browser builds every chart anew.
SEND_ANEW = '''    import time as _time
    spec = json.loads(text)
    spec.setdefault("usermeta", {})["nonce"] = _time.time_ns()
    text = json.dumps(spec)
''' + SEND


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "browser_moves.py"), "--check", "--page", "qkv",
                           "--moves", "3", "--root", str(root)], cwd=ROOT, capture_output=True, text=True,
                          timeout=840)


@pytest.fixture(scope="module")
def slowed(tmp_path_factory) -> Path:
    """A copy of the app whose chart path rebuilds every chart on every move."""
    return changed_copy(tmp_path_factory.mktemp("slowed"), {"ui/drawing/charts.py": (CANVAS, 'else "svg"'),
                                                            "ui/drawing/send.py": (SEND, SEND_ANEW)})


def test_the_browser_budget_check_fails_on_charts_rebuilt_on_every_move(slowed):
    done = check(slowed)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Found wrong, measured twice" in done.stdout, done.stdout
    assert re.search(r"^- qkv: (time|mutations) [\d.]+x a bare move, past its budget", done.stdout, re.M), done.stdout

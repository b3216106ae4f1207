"""The per-move budget (bench/budget.py, run by .ci/run with --check) fails on a lesson made slower on purpose.

A copy of the app whose Masking lesson does some needless work on every move (what a careless change to a
lesson does: a sum computed and never used) is measured against this checkout's budgets: the check must name
Masking as past its budget and exit 1. The same page of the app as it is passes. Both runs are short (a few
moves each) and read server CPU time as a multiple of a bare page's move, so a busy machine does not decide
the outcome; the slowed lesson costs several times its budget.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.apptest_helpers import ROOT
from tests.system.app_copy import changed_copy

pytestmark = pytest.mark.timeout(600)

# Counted on every move of the page's live part: about thirty bare moves' worth of server CPU. Plain arithmetic,
# no objects made: needless JSON built and thrown away cost several times more while every garbage collection
# walked the whole process, and far less once the warm-up's objects were set aside (ui/compute/warm.py).
NEEDLESS_WORK = '''
    _needless = 0
    for _i in range(4_000_000):
        _needless += _i * _i
'''
MARKER = '    """The page\'s controls and the sections they drive: a move of a control reruns this alone."""\n'


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "budget.py"), "--check", "--page", "masking",
                           "--moves", "8", "--root", str(root)], cwd=ROOT, capture_output=True, text=True,
                          timeout=540)


@pytest.fixture(scope="module")
def slowed(tmp_path_factory) -> Path:
    """A copy of the app whose masking lesson wastes CPU on every move."""
    page = "lessons/masking/page.py"
    return changed_copy(tmp_path_factory.mktemp("slowed"), {page: (MARKER, MARKER + NEEDLESS_WORK)})


def test_the_budget_check_fails_on_a_lesson_made_slower(slowed):
    done = check(slowed)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "masking defaults:" in done.stdout and "past its budget" in done.stdout, done.stdout


def test_the_budget_check_passes_the_lesson_as_it_is():
    done = check(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Every lesson is within its budget." in done.stdout

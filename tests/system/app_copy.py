"""A copy of the app with a few lines changed on purpose: what the budget tests measure to show that a check fails
on a change that makes a move slower (tests/system/test_budget.py, test_browser_budget.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.apptest_helpers import ROOT


def changed_copy(where: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """The app copied into where/app (no git, virtual environments or caches), each file named in edits ({path
    from the root: (text there, its replacement)}) changed once; a text that is not there fails the test, so a
    change to the app cannot leave the copy unchanged and its check passing for the wrong reason."""
    copy = where / "app"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".pytest_cache"))
    for path, (old, new) in edits.items():
        file = copy / path
        text = file.read_text()
        assert old in text, f"{path} no longer holds the text a budget test changes: {old!r}"
        file.write_text(text.replace(old, new, 1))
    return copy

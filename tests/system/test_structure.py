"""The shape of the tree, as a reader meets it: the import contracts hold (classroom -> lessons -> ui -> core, ui's
groups in layers, a pure-NumPy core and lessons' maths, no lesson importing another, no import cycle;
pyproject.toml's [tool.importlinter]), one model forward, no modules loaded by name, and files short enough to read
in one sitting."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_PAGE_LINES = 150  # a lesson page.py reads as the lesson's outline (docs/LAYOUT.md)
MAX_LINES = 350  # STYLE.md: a module a reader takes in at one sitting


def test_the_import_contracts_hold():
    """import-linter checks the contracts in pyproject.toml; a broken one names the import that breaks it."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint, "import-linter is not installed (requirements-dev.txt)"
    run = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "0 broken" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]


def test_no_module_is_loaded_by_name():
    """importlib hides a dependency from the reader (and from the cycle check above)."""
    users = [p.relative_to(ROOT).as_posix() for folder in ("core", "ui", "store", "lessons", "classroom", "tools")
             for p in (ROOT / folder).rglob("*.py") if "importlib" in p.read_text(encoding="utf-8")]
    assert users == []


def test_the_model_has_one_forward():
    """One forward pass in core: the backward passes read its trace instead of computing the model again."""
    forwards = [f"{p.relative_to(ROOT)}:{m.group(1)}" for p in (ROOT / "core").rglob("*.py")
                for m in re.finditer(r"^def (\w*forward\w*)\(", p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert forwards == ["core/model.py:forward"]


@pytest.mark.parametrize("folder", ["core", "store", "classroom", "lessons", "ui"])
def test_files_stay_short(folder):
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / folder).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"over {MAX_LINES} lines: {long}"


def test_lesson_pages_read_as_outlines():
    """A lesson's page.py is its outline (docs/LAYOUT.md): a section that grows moves to a module beside it."""
    long = {p.relative_to(ROOT).as_posix(): n for p in (ROOT / "lessons").glob("*/page.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_PAGE_LINES}
    assert long == {}, f"{MAX_PAGE_LINES} lines or more: {long}"


def test_ui_holds_only_what_lessons_share():
    """A module that one lesson alone uses belongs in that lesson's folder, not in ui/."""
    graph = grimp.build_graph("lessons", "ui", "core", "tools")
    alone = {}
    for module in sorted(m for m in graph.modules if m.startswith("ui.") and not graph.find_children(m)):
        importers = graph.find_modules_that_directly_import(module)
        lessons = {name.split(".")[1] for name in importers if name.startswith("lessons.")}
        if len(lessons) == 1 and not any(name.startswith("ui.") for name in importers):
            alone[module] = lessons.pop()
    assert alone == {}, f"used by one lesson only: {alone}"

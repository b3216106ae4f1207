"""The shape of the tree, as a reader meets it: one model forward, a core that knows nothing of the UI,
no import loop in ui/, no modules loaded by name, and files short enough to read in one sitting."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSON_MAX_LINES = 150
UI_MAX_LINES = 300


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, wherever the import statement stands (top level, function, branch)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def ui_graph() -> dict[str, set[str]]:
    """ui module -> the ui modules it imports."""
    modules = {p.stem: p for p in (ROOT / "ui").glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name, path in modules.items():
        targets = {m.split(".")[1] for m in imports_of(path) if m.startswith("ui.") and m.count(".") >= 1}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A list of modules that import each other in a ring, or None (depth-first search with colours)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt] if nxt in path else [node, nxt]
            if nxt not in state and (ring := visit(nxt, [*path, nxt])):
                return ring
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (ring := visit(start, [start])):
            return ring
    return None


def test_find_cycle_finds_a_ring_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_ui_has_no_import_cycle():
    assert find_cycle(ui_graph()) is None


def test_no_module_is_loaded_by_name():
    """importlib hides a dependency from the reader (and from the cycle check above)."""
    users = [p.relative_to(ROOT).as_posix() for folder in ("core", "ui", "lessons", "tools")
             for p in (ROOT / folder).rglob("*.py") if "importlib" in p.read_text(encoding="utf-8")]
    assert users == []


def test_core_knows_nothing_of_the_ui():
    for path in (ROOT / "core").rglob("*.py"):
        ui_modules = {m for m in imports_of(path) if m.split(".")[0] in ("streamlit", "altair", "pandas", "ui")}
        assert not ui_modules, f"{path.relative_to(ROOT)} imports {sorted(ui_modules)}"


def test_the_model_has_one_forward():
    """One forward pass in core: the backward passes read its trace instead of computing the model again."""
    forwards = [f"{p.relative_to(ROOT)}:{m.group(1)}" for p in (ROOT / "core").rglob("*.py")
                for m in re.finditer(r"^def (\w*forward\w*)\(", p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert forwards == ["core/model.py:forward"]


def test_the_teaching_core_has_no_command_line_or_process_tuning():
    for path in (ROOT / "core").rglob("*.py"):
        tooling = imports_of(path) & {"argparse", "ctypes"}
        assert not tooling, f"{path.relative_to(ROOT)} imports {sorted(tooling)}"


@pytest.mark.parametrize("folder, limit", [("lessons", LESSON_MAX_LINES), ("ui", UI_MAX_LINES)])
def test_files_stay_short(folder, limit):
    long = {p.name: n for p in (ROOT / folder).glob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit}
    assert long == {}, f"over {limit} lines: {long}"

"""Every name a docstring gives in dotted form exists: `core.model_file.load`, `ui.frame.page.closing`, or, in a file
that binds a module by an import (`from ui.frame import page`), `page.closing`. A function renamed or moved
otherwise leaves its old name in the docstrings that send a reader to it.

A name is resolved as Python would: the longest prefix that is a module, then an attribute at a time. A module that
draws a page when imported (a lesson's page.py) is never imported: its top-level names are read from its source.
Globs (`core.demos.*`, `lessons.{qkv,masking}`) and file names (`ui/frame/page.py`, `prose.md`) are not names.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "ui", "store", "lessons", "classroom", "tools", "bench")
FILES = sorted([p for package in PACKAGES for p in (ROOT / package).rglob("*.py")] + [ROOT / "streamlit_app.py"])
# A dotted name ends where the identifiers end: `page.live(...)`, `core.model.` at a sentence's end and `core/x.py`
# give `page.live`, `core.model` and nothing.
DOTTED = r"(?<![\w./-]){head}(?:\.[A-Za-z_]\w*)+(?P<glob>\.[*{{])?"
FULL_NAME = re.compile(DOTTED.format(head=f"(?:{'|'.join(PACKAGES)})"))
FILE_SUFFIXES = {"py", "md", "toml", "json", "npz", "txt", "gz", "csv", "png", "svg", "zip", "html", "js", "log"}


def docstrings(tree: ast.Module, source: str):
    """(line, raw text) of the module's docstring and of every class's and function's, as written in the file."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                yield first.value.lineno, ast.get_source_segment(source, first.value)


@cache
def module_path(name: str) -> Path | None:
    """The file of module `name`, or None when there is no such module (nothing of it is run, its parents aside)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # a parent is not a package, or is not there
        return None
    return Path(spec.origin) if spec and spec.origin else None


@cache
def draws_when_imported(path: Path) -> bool:
    """A Streamlit script (a lesson's page): calls at its top level, beyond the imports and definitions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) for node in tree.body)


@cache
def top_level_names(path: Path) -> frozenset[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(names)


@cache
def exists(dotted: str) -> bool:
    parts = dotted.split(".")
    while parts and parts[-1] in FILE_SUFFIXES:  # `prose.md`, `pydoc_corpus.txt.gz`: a file, named by its module
        parts.pop()
    found = 0  # how many leading parts name a module
    while found < len(parts) and (path := module_path(".".join(parts[: found + 1]))) is not None:
        found += 1
        if draws_when_imported(path):
            return found == len(parts) or parts[found] in top_level_names(path)
    if found == 0:
        return False
    obj = importlib.import_module(".".join(parts[:found]))
    for attr in parts[found:]:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def bound_modules(tree: ast.Module) -> dict[str, str]:
    """The project's modules a file binds to a short name by an import: {"page": "ui.frame.page", ...}."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                if module_path(full := f"{node.module}.{alias.name}") is not None:
                    bound[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.split(".")[0] in PACKAGES:
                    bound[alias.asname] = alias.name
    return bound


def names_in(path: Path):
    """(line, name as written, the full name it stands for) of every dotted name in the file's docstrings."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    bound = bound_modules(tree)
    short = re.compile(DOTTED.format(head=f"(?:{'|'.join(map(re.escape, bound))})")) if bound else None
    for line, text in docstrings(tree, source):
        for pattern in (FULL_NAME, short):
            for match in pattern.finditer(text) if pattern else ():
                if match.group("glob"):
                    continue
                written = match.group(0)
                head, _, rest = written.partition(".")
                full = written if pattern is FULL_NAME else f"{bound[head]}.{rest}"
                yield line + text.count("\n", 0, match.start()), written, full


def test_every_dotted_name_in_a_docstring_exists():
    missing = [f"{path.relative_to(ROOT)}:{line}: {written}" + (f" ({full})" if full != written else "")
               for path in FILES for line, written, full in names_in(path) if not exists(full)]
    assert not missing, "docstrings name what does not exist:\n" + "\n".join(missing)


def test_the_check_sees_a_stale_name_and_a_true_one(tmp_path):
    """The check itself: a full name, a short one through an import, a page script's name, and what it skips."""
    assert exists("ui.frame.page.closing") and exists("core.model_file.load") and exists("core.model.ModelConfig.d_k")
    assert not exists("ui.frame.page.footer") and not exists("core.model.save") and not exists("core.nowhere")
    assert exists("lessons.full_model.page.Screen") and not exists("lessons.full_model.page.footer")
    probe = tmp_path / "probe.py"
    probe.write_text('"""Drawn by page.footer (page.py), then core.model.load(); core.demos.* and ui/frame/page.py are '
                     'not names."""\nfrom ui.frame import page\n', encoding="utf-8")
    found = [(line, written, full, exists(full)) for line, written, full in names_in(probe)]
    assert sorted(found) == [(1, "core.model.load", "core.model.load", False),
                             (1, "page.footer", "ui.frame.page.footer", False),
                             (1, "page.py", "ui.frame.page.py", True)]

"""Every third-party package the app imports is named in requirements.txt, and every one the tests, benchmarks
and deploy scripts import in requirements-dev.txt: a fresh install (Community Cloud's, CI's) has nothing else, and a
package present on a developer's machine by chance hides a missing line until a class opens the page."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ("core", "ui", "store", "lessons", "classroom", "streamlit_app.py")
DEV = ("tests", "bench", "deploy", "tools")
OWN = {"core", "ui", "store", "lessons", "classroom", "tests", "bench", "deploy", "tools", "streamlit_app"}
# Imported only when present, and said so where: not something a fresh install must have
OPTIONAL = {"torch"}  # bench/bench_core.py compares the NumPy attention with PyTorch's when it is installed


def imported_top_names(parts: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for part in parts:
        path = ROOT / part
        for file in [path] if path.is_file() else path.rglob("*.py"):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return names - OWN - OPTIONAL - set(sys.stdlib_module_names)


def named_in(*files: str) -> set[str]:
    """The distribution names the files list, normalised as pip compares them."""
    names = set()
    for file in files:
        for line in (ROOT / file).read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line.split("#")[0])
            if match and not line.lstrip().startswith("-r"):
                names.add(normal(match.group(1)))
    return names


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing(parts: tuple[str, ...], *files: str) -> list[str]:
    owners = packages_distributions()
    listed = named_in(*files)
    gaps = []
    for module in sorted(imported_top_names(parts)):
        distributions = {normal(d) for d in owners.get(module, [])}
        if not distributions & listed:
            gaps.append(f"{module} (from {', '.join(sorted(distributions)) or 'no installed package'})")
    return gaps


def test_every_package_the_app_imports_is_in_requirements_txt():
    assert missing(APP, "requirements.txt") == []


@pytest.mark.parametrize("part", DEV)
def test_every_package_the_tests_and_tools_import_is_in_a_requirements_file(part):
    assert missing((part,), "requirements.txt", "requirements-dev.txt") == []

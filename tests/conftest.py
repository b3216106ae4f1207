"""What the tests share: a marker per folder, and the page fixtures of the lesson tests.

The folders are the layers: core/ (the NumPy core), ui/ (the pieces lessons share), lessons/ (each page through
AppTest), classroom/ (the class mode; its store on real SQLite and PostgreSQL databases, tests/classroom/conftest.py),
browser/ (the app in Chromium), system/ (real servers, the tree's contracts) and bench/ (the benchmarks' browser
protocol client, without a server). A test in browser/ is marked `browser`, one in system/ `system`, so the fast
loop is `pytest -m "not browser and not system"`.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pytest

from tests.apptest_helpers import ok, run_page
from ui.compute import database
from ui.text import CODE_KEY

HERE = Path(__file__).resolve().parent
MARKED_FOLDERS = ("browser", "system")


def _scan_installed_components_once() -> None:
    """Every AppTest run starts a runtime that scans all installed packages for custom components (0.13 s of a
    tiny script's 0.16 s, mostly reading package metadata). A server does it once; the packages cannot change
    during a test session, so the tests scan once too."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a Streamlit without that scanner has nothing to speed up
        return
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_scan_installed_components_once()


def _show_error_details_in_page_tests() -> None:
    """The app hides an error's details from visitors (.streamlit/config.toml, client.showErrorDetails); a page
    test that fails on an exception should say which one. Servers the tests start read the file as it is."""
    import streamlit.config

    streamlit.config.set_option("client.showErrorDetails", "full")


_show_error_details_in_page_tests()


def pytest_configure(config) -> None:
    """Pages that keep something in the app's database (a trained run a link shares) keep it in a file of this
    test session's own, never in the one a server on this machine uses; a test that needs another sets its own."""
    if not os.environ.get(database.ENVIRONMENT):
        folder = Path(tempfile.mkdtemp(prefix="attention-lab-tests-"))
        os.environ[database.ENVIRONMENT] = f"sqlite:///{folder / 'app.sqlite3'}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(item.fspath).resolve().relative_to(HERE).parts[0]
        if folder in MARKED_FOLDERS:
            item.add_marker(folder)


@pytest.fixture(scope="module")
def default_page(request):
    """The test module's PAGE at its defaults, run once for the module, with "Show the code" open (and the panels
    the module names in OPENED)."""
    return ok(run_page(request.module.PAGE, timeout=120, opened=[CODE_KEY, *getattr(request.module, "OPENED", ())]))

"""One server and one Chromium per browser test module (tests/browser/harness.py builds both).

harness is imported inside the fixtures: importing it skips a module when Chromium or Playwright is missing,
which the test modules want and a conftest must not do.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def server():
    from tests.browser import harness

    yield from harness.one_server()


@pytest.fixture(scope="module")
def browser():
    from tests.browser import harness

    yield from harness.chromium()

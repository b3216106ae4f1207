"""One server and one Chromium per browser test module (tests/browser/harness.py builds both).

harness is imported inside the fixtures: importing it skips a module when Chromium or Playwright is missing,
which the test modules want and a conftest must not do.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def server(request):
    """A module that measures where Vega put each label and legend sets CHART_RENDERER = "svg": the maps are then
    drawn as svg, laid out exactly as on a canvas, their text elements there to measure."""
    import functools

    from tests.browser import harness
    from ui.drawing.charts import RENDERER_ENV

    renderer = getattr(request.module, "CHART_RENDERER", None)
    make = functools.partial(harness.Server, env={RENDERER_ENV: renderer}) if renderer else harness.Server
    yield from harness.one_server(make)


@pytest.fixture(scope="module")
def browser():
    from tests.browser import harness

    yield from harness.chromium()

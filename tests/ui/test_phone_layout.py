"""On a phone a grid of maps stands two to a row inside the phone's column (ui.sections.views.grid_layout); the
phone is known by its browser's User-Agent (ui.state.phone.on_phone). In Chromium: tests/browser/test_phone.py."""

from __future__ import annotations

import pytest

from ui.sections import views
from ui.state import phone

ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari"
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
IPAD = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari"


class Headers(dict):
    pass


@pytest.fixture
def agent(monkeypatch):
    """Set the User-Agent the page's run sees."""
    def use(value: str | None) -> None:
        headers = Headers() if value is None else Headers({"User-Agent": value})
        monkeypatch.setattr(phone.st, "context", type("Context", (), {"headers": headers})())
    return use


@pytest.mark.parametrize(("ua", "expected"), [(ANDROID, True), (IPHONE, True), (DESKTOP, False), (IPAD, False),
                                              (None, False)])
def test_a_phone_is_known_by_its_user_agent(agent, ua, expected):
    agent(ua)
    assert phone.on_phone() is expected


@pytest.mark.parametrize("T", [4, 7, 12])
def test_a_grid_on_a_phone_fits_its_column_two_to_a_row(agent, T):
    agent(DESKTOP)
    wide_cell, wide_columns = views.grid_layout(T, 4, width_px=1000, panel_px=240)
    agent(ANDROID)
    cell, columns = views.grid_layout(T, 4, width_px=1000, panel_px=240)
    assert wide_columns > columns == 2
    assert columns * (cell * T + 70) <= phone.COLUMN_PX  # each map and its labels' room, side by side
    assert cell <= wide_cell

"""Helpers for driving pages through Streamlit's AppTest and reading what they show."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60


def run_page(page: str, query: dict | None = None, timeout: float = TIMEOUT) -> AppTest:
    """Run one lesson page (e.g. "lessons/qkv.py") on its own, with URL query parameters set."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def run_app(page: str | None = None, query: dict | None = None, timeout: float = TIMEOUT) -> AppTest:
    """Run the whole app (entry script + navigation), optionally switched to a page, as a deep link would."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def charts(at: AppTest) -> list:
    """Every chart element on the page (rendered with st.vega_lite_chart)."""
    return list(at.get("vega_lite_chart"))


def chart_spec(chart) -> dict:
    return json.loads(chart.proto.spec)


def chart_title(chart) -> str:
    title = chart_spec(chart).get("title", "")
    return title if isinstance(title, str) else title.get("text", "")


def chart_data(chart) -> pd.DataFrame:
    """The DataFrame a chart was drawn from."""
    raw = chart.proto.data.data
    if not raw:
        return pd.DataFrame()
    return pa.ipc.open_stream(raw).read_all().to_pandas()


def chart_by_title(at: AppTest, title: str):
    """The first chart whose title starts with `title`."""
    for chart in charts(at):
        if chart_title(chart).startswith(title):
            return chart
    raise AssertionError(f"No chart titled {title!r}; titles: {[chart_title(c) for c in charts(at)]}")


def matrix(chart) -> pd.DataFrame:
    """A heatmap's data back as a matrix (rows x columns, in display order)."""
    df = chart_data(chart)
    return df.pivot(index="row_i", columns="col_i", values="value").sort_index().sort_index(axis=1)


def texts(at: AppTest) -> str:
    """All visible text of markdown, captions, info/warning/error boxes, joined (for 'is shown' checks)."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader", "header"):
        parts += [str(el.value) for el in getattr(at, kind)]
    return "\n".join(parts)


def type_everywhere(at: AppTest, value_for):
    """Type value_for(box) into every text box: first those outside forms, then run; then each form's boxes
    (the exercises' answers) and press its submit button, as a form sends its values with the press.
    Yields after every run."""
    for box in [*at.text_input, *at.text_area]:
        if not box.proto.form_id:
            box.set_value(value_for(box))
    at.run()
    yield
    forms = sorted({b.proto.form_id for b in at.button if b.proto.is_form_submitter})
    for form in forms:
        for box in [*at.text_input, *at.text_area]:
            if box.proto.form_id == form:
                box.set_value(value_for(box))
        next(b for b in at.button if b.proto.is_form_submitter and b.proto.form_id == form).click()
        at.run()
        yield

"""Helpers for driving pages through Streamlit's AppTest and reading what they show."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from lessons import COURSE
from lessons.masking import mistakes as masking_mistakes
from lessons.scaling import mistake as scaling_mistake
from ui import text
from ui.drawing import export, render, softmax, tables
from ui.drawing.chart_data import DATASET, LABELS_PREFIX, SHAPE_LINE, TITLE, ChartData
from ui.frame import exercises, page, share
from ui.state import chart_controls as ui_chart_controls

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60
# A chart's numbers travel rounded to 4 decimals or 4 significant digits (ui.drawing.chart_data.numbers): compare
# them with this.
SENT_RTOL = 5e-4
SENT_ATOL = 5e-5  # half of the last decimal sent
# Every lesson's check-yourself questions by url path, as the page's footer builds them (once per process).
BANK = {lesson.url_path: importlib.import_module(lesson.path.removesuffix("/page.py").replace("/", ".") + ".questions")
        .questions for lesson in COURSE}


def for_lesson(url_path: str) -> tuple[exercises.Exercise, ...]:
    return page.built_questions(BANK[url_path])


def numbered_title(name: str) -> str:
    """A lesson's title as its page shows it: its place in the course, then its name ("2 · QKV projection").
    The navigation test checks these numbers against the sidebar; page tests use this so a new order
    does not mean editing every one of them."""
    lesson = COURSE.lesson(name)
    return f"{COURSE.number(lesson)} · {lesson.title}"


def ok(at: AppTest) -> AppTest:
    """The page ran without an exception (and the message says which, if not)."""
    assert not at.exception, [e.message for e in at.exception]
    return at


# ---- the lazy panels ------------------------------------------------------------------------------------
# The panels that do not follow the sliders (share, export, exercises, code) are filled only while open, and so
# are a lesson's asides (its common mistakes). A test opens one as a click would: its state key set to True before
# the run (see open_panels).

ASIDE_KEYS = (masking_mistakes.OPEN_KEY, scaling_mistake.OPEN_KEY)  # every lesson's asides (ui.state.controls.aside)


def panel_keys(lesson: str | None = None) -> tuple[str, ...]:
    """The state keys of every lazy panel: share, export, code, every aside, and the exercises of `lesson` (a url
    path)."""
    keys = (share.OPEN_KEY, export.OPEN_KEY, text.CODE_KEY, *ASIDE_KEYS)
    return (*keys, exercises.open_key(lesson)) if lesson else keys


def open_panels(at: AppTest, *keys: str) -> AppTest:
    """Open the panels with these state keys (e.g. ui.frame.share.OPEN_KEY) for the next run, as a click would."""
    for key in keys:
        at.session_state[key] = True
    return at


def run_page(page: str, query: dict | None = None, timeout: float = TIMEOUT, opened: Iterable[str] = ()) -> AppTest:
    """Run one lesson page (e.g. "lessons/qkv/page.py") on its own, with URL query parameters set and the lazy
    panels named in `opened` (state keys, see panel_keys) open."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return open_panels(at, *opened).run()


def run_app(page: str | None = None, query: dict | None = None, timeout: float = TIMEOUT,
            opened: Iterable[str] = ()) -> AppTest:
    """Run the whole app (entry script + navigation), optionally switched to a page, as a deep link would;
    the lazy panels named in `opened` open."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    open_panels(at, *opened)
    at.run()
    if page:
        at.switch_page(page).run()
    return at


class Aside:
    """A part of a page shut until opened (ui.state.controls.aside), handled like a widget: its key (in the link),
    value (open or not), the value it is drawn with by default, and set_value, which opens or shuts it as a click
    would (for the next run)."""

    def __init__(self, at: AppTest, expander) -> None:
        self.at, self.proto = at, expander.proto
        self.key, self.label = self.proto.query_param_key, expander.label

    @property
    def value(self) -> bool:
        return self.proto.expanded

    @property
    def default(self) -> bool:
        return self.proto.default_expanded

    def set_value(self, value: bool) -> AppTest:
        self.at.session_state[self.key] = bool(value)
        return self.at


def asides(at: AppTest) -> dict[str, Aside]:
    """Every aside on the page, by the key that holds it in the link."""
    found = (Aside(at, e) for e in at.expander)
    return {a.key: a for a in found if a.key}


def charts(at: AppTest) -> list:
    """Every chart element on the page (rendered with st.vega_lite_chart)."""
    return list(at.get("vega_lite_chart"))


def chart_spec(chart) -> dict:
    """A chart's spec with the numbers it was sent beside (its dataset) put inside it, as a file would hold it: a
    subtitle and a title it reads from its data (ui.drawing.render.heading) written in."""
    tables = {d.name: d.data.data for d in chart.proto.datasets}
    if DATASET in tables:
        data = ChartData.from_arrow(tables[DATASET])
        shape_line, title = (data.columns.pop(name, [None])[0] for name in (SHAPE_LINE, TITLE))
        return render.file_spec(chart.proto.spec, data, shape_line=shape_line, title=title)
    return json.loads(chart.proto.spec)


def sent_spec(chart) -> dict:
    """A chart's spec as sent: no numbers in it, its data a dataset's name."""
    return json.loads(chart.proto.spec)


def panels_on_one_scale(at: AppTest, title: str) -> tuple[object, dict]:
    """The chart of panels whose title starts with `title` ("Outputs, "), checked to say it is on one colour scale
    and to share that scale among its panels (ui.drawing.panels, shared); with its facet, as sent."""
    chart = next(c for c in charts(at) if chart_title(c).startswith(title))
    assert chart_title(chart).endswith(", on one colour scale")
    facet = sent_spec(chart)["vconcat"][0]  # a chart of panels is sent as the one view of a vconcat
    assert facet["resolve"]["scale"]["color"] == "shared"
    return chart, facet


def chart_alt(chart) -> str:
    """The text a screen reader reads for a chart: sent beside its spec (the element's alt), or, for a chart that
    reports clicks, its spec's description."""
    return chart.proto.alt or chart_spec(chart).get("description", "")


def chart_title(chart) -> str:
    if isinstance(chart, Panel):
        return chart.name
    title = chart_spec(chart).get("title", "")
    return title if isinstance(title, str) else title.get("text", "")


def _unpacks(step: dict) -> bool:
    """A transform that ChartData.inline() added to unpack the data (not part of the chart's design)."""
    return "flatten" in step or str(step.get("calculate", "")).startswith(f"datum['{LABELS_PREFIX}")


def design(spec: dict) -> dict:
    """A drawn chart's spec as its builder made it: the one view inside the data wrapper (marks, encodings,
    layers, facet, params and its own transforms), without the data and the transforms that unpack it,
    and with the wrapper's title, size and config merged back. Fails on a spec that is not so wrapped."""
    wrapped = spec.get("layer") or spec.get("vconcat")
    assert isinstance(wrapped, list) and len(wrapped) == 1, f"not a chart with its data inside: {list(spec)}"
    inner = dict(wrapped[0])
    assert "values" in inner.pop("data", {}), "the wrapped view carries no data"
    steps = inner.pop("transform", [])
    n = 0
    while n < len(steps) and _unpacks(steps[n]):
        n += 1
    assert n, "the data is not unpacked by a flatten transform"
    if steps[n:]:
        inner["transform"] = steps[n:]
    outer = {k: v for k, v in spec.items() if k not in ("layer", "vconcat")}
    assert not set(outer) & set(inner), set(outer) & set(inner)
    return {**outer, **inner}


def chart_design(chart) -> dict:
    """design() of a chart on the page."""
    return design(chart_spec(chart))


@dataclass(frozen=True)
class Panel:
    """One map of a chart of panels (ui.drawing.panels), by its name: chart_data() and matrix() read its cells."""

    chart: object
    name: str


def chart_data(chart) -> pd.DataFrame:
    """The table a chart was drawn from (it travels beside the spec, as a named dataset; see
    ui/drawing/chart_data.py); of a Panel, its own rows."""
    if isinstance(chart, Panel):
        df = chart_data(chart.chart)
        return df[df["panel"] == chart.name].reset_index(drop=True)
    assert not chart.proto.data.data, "chart data should travel as the named dataset, not as the chart's own"
    return ChartData.from_spec(chart_spec(chart)).frame()


def panels(chart) -> list[Panel]:
    """A chart of panels' maps, in their order (none for a chart that is not one)."""
    return [Panel(chart, name) for name in panel_names(chart)]


def panel_names(chart) -> list[str]:
    """The names of a chart's panels, in their order (none for a chart that is not a chart of panels)."""
    df = chart_data(chart)
    return df.drop_duplicates("panel_i").sort_values("panel_i")["panel"].tolist() if "panel" in df else []


def chart_by_title(at: AppTest, title: str):
    """The first map whose title starts with `title`: a panel of a chart of panels (a Panel), else a chart."""
    for chart in charts(at):
        if name := next((n for n in panel_names(chart) if n.startswith(title)), None):
            return Panel(chart, name)
    for chart in charts(at):
        if chart_title(chart).startswith(title):
            return chart
    raise AssertionError(f"No chart titled {title!r}; titles: {[chart_title(c) for c in charts(at)]}")


def matrix(chart) -> pd.DataFrame:
    """A heatmap's data back as a matrix (rows x columns, in display order): its values, or the scores of a map
    whose weights the browser works out from them (ui.drawing.softmax)."""
    df = chart_data(chart)
    column = "value" if "value" in df else "score"
    # as floats: a null (NaN, ±inf) is NaN, even in a matrix of nothing else (a column of None alone is objects)
    df[column] = df[column].astype(float)
    return df.pivot(index="row_i", columns="col_i", values=column).sort_index().sort_index(axis=1)


def shown_tables(at: AppTest) -> list[pd.DataFrame]:
    """Every table on the page (ui/drawing/tables.py: a Markdown table of text, or the grid where a column draws
    a bar), as a frame: a column whose every cell reads as a number (1,234  -0.125  +0.051  25%  -inf  NaN) comes
    back as numbers, a percentage as its fraction. A number comes back as printed: compare it with the
    precision of its column's format."""
    frames = [*markdown_tables(at), *(element.value for element in at.dataframe)]
    return [frame.rename(columns=_unescaped).apply(_as_numbers) for frame in frames]


def markdown_tables(at: AppTest) -> list[pd.DataFrame]:
    """Every Markdown table on the page (ui/drawing/tables.py), its headings and cells as written (Markdown markers
    still escaped)."""
    return [frame for element in at.markdown if (frame := tables.read(str(element.value))) is not None]


def _unescaped(text):
    """A table's text as a reader sees it: ui/drawing/tables.py escapes every Markdown marker in it."""
    return re.sub(r"\\(.)", r"\1", text) if isinstance(text, str) else text


def _as_numbers(column: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return column
    column = column.map(_unescaped)
    try:
        return pd.Series([_number(cell) for cell in column], index=column.index, name=column.name)
    except (TypeError, ValueError):
        return column


def _number(cell) -> float | int:
    """A printed number back as one; ValueError for text that is not."""
    if not isinstance(cell, str):
        raise TypeError(cell)
    text = cell.strip().replace(",", "").replace("\u2212", "-")
    if text.endswith("%"):
        return float(text[:-1]) / 100
    if text.lstrip("+-").isdigit():
        return int(text)
    return float(text)  # also "inf", "-inf", "nan" and "1e-09"


def shown_table(at: AppTest, column: str) -> pd.DataFrame:
    """The first table on the page with this column (see shown_tables)."""
    for frame in shown_tables(at):
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with a column {column!r}: {[list(f.columns) for f in shown_tables(at)]}")


def texts(at: AppTest) -> str:
    """All visible text of markdown, captions, info/warning/error boxes and the charts' subtitles, joined (for
    'is shown' checks)."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader", "header"):
        parts += [str(el.value) for el in getattr(at, kind)]
    return "\n".join([*parts, *chart_subtitles(at)])


def chart_subtitles(at: AppTest) -> list[str]:
    """The grey line under each chart's title: a matrix's shape, 'Q · shape (7, 8) = (T, d_k)'."""
    titles = [chart_spec(c).get("title") for c in charts(at)]
    return [t["subtitle"] for t in titles if isinstance(t, dict) and t.get("subtitle")]


def captions(at: AppTest) -> str:
    """What is written under and over the charts: every caption and every chart's subtitle, joined."""
    return "\n".join([*(str(c.value) for c in at.caption), *chart_subtitles(at)])


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


def seq_len(at) -> int:
    """The seq_len slider's value (at: the app, or its sidebar); 1 where the text has one token or none (the slider
    is then not drawn: a range of 1 to 1 has nothing to choose)."""
    found = [s for s in getattr(at, "sidebar", at).slider if s.key == "seq_len"]
    return found[0].value if found else 1


# ---- controls a chart draws itself (ui.state.chart_controls) ---------------------------------------------------


def chart_controls(at: AppTest) -> dict:
    """Every control a chart of the page draws itself, by its key in the link: (the chart's widget key, the
    Control, its value now)."""
    names = at.session_state[ui_chart_controls.NAMES] if ui_chart_controls.NAMES in at.session_state else ()
    found = {}
    for name in names:
        pinned = at.session_state[ui_chart_controls.pinned_key(name)]
        for control, now in zip(pinned["controls"], pinned["now"]):
            found[control.key] = (pinned["key"], control, now)
    return found


def move_chart_control(at: AppTest, key: str, value) -> AppTest:
    """What the browser reports when a chart's own control `key` is moved to `value` (a check box clicked, a slider
    dragged): the chart's selection of it, beside the ones it reported before. Run the page after."""
    chart_key, control, _ = chart_controls(at)[key]
    try:
        before = dict(at.session_state[chart_key]["selection"])
    except KeyError:
        before = {}
    at.session_state[chart_key] = {"selection": {**before, key: ui_chart_controls.selected(control, value)}}
    return at


class ChartControl:
    """A control a chart draws itself (ui.state.chart_controls), handled like a widget: set_value does what a move
    of its check box or slider does, the chart reporting its selection for the next run."""

    def __init__(self, at, key: str, control, value) -> None:
        self.at, self.key, self.control, self.value = at, key, control, value

    def set_value(self, value):
        return move_chart_control(self.at, self.key, value)


def chart_control_widgets(at) -> dict[str, ChartControl]:
    """Every control a chart of the page draws itself, by its key in the link."""
    return {key: ChartControl(at, key, control, now) for key, (_, control, now) in chart_controls(at).items()}


def exported(at: AppTest, title: str):
    """The matrix the export panel holds for the last map drawn whose title starts with `title` (for a map the
    browser works out from scores, the weights it shows now)."""
    found = [item for item in at.session_state[export._DRAWN]
             if isinstance(item, dict) and item.get("title", "").startswith(title)]
    assert found, f"no exported matrix titled {title!r}"
    return found[-1]["matrix"]


def shown_frame(at: AppTest, chart) -> pd.DataFrame:
    """A heatmap's table as the browser shows it. A map drawn from scores (ui.drawing.softmax) gets the weights it
    shows at its slider's value now, as core computes them (tests/ui/test_softmax.py holds the browser's formula to
    core's), and their printed text; any other map is its table."""
    df = chart_data(chart)
    if "score" not in df:
        return df
    own = chart_controls(at)
    [tau] = [own[p["name"]][2] for p in chart_spec(chart).get("params", []) if p.get("name") in own]
    scores = matrix(chart).to_numpy()
    w = softmax.weights(scores, tau)[df["row_i"].to_numpy(), df["col_i"].to_numpy()]
    return df.assign(value=w, text=[f"{v:.{softmax.DECIMALS}f}" for v in w])


def shown_matrix(at: AppTest, chart) -> pd.DataFrame:
    """matrix() of what the browser shows (shown_frame)."""
    df = shown_frame(at, chart)
    return df.pivot(index="row_i", columns="col_i", values="value").astype(float).sort_index().sort_index(axis=1)

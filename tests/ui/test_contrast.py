"""Every number a page prints in a heatmap cell reads on that cell, and every token is an axis label.

For each lesson page at its defaults (through AppTest), each heatmap's cells are coloured the way Vega
colours them, from the spec's own colour scale (its scheme, its fixed domain or else the data's extent,
its domainMid), and each number's colour is what the spec's own text-colour rule picks: its transforms
and its condition are evaluated here, cell by cell. The WCAG contrast of the two must be at least 4.5:1,
over the light and over the dark theme's background.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

from core.tokenize import word_tokens
from lessons import COURSE
from tests.apptest_helpers import ROOT, chart_data, chart_design, chart_title, charts, run_page, shown_frame
from ui.drawing import charts as ui_charts
from ui.drawing import colours
from ui.state import controls

AA = 4.5
BACKGROUNDS = {"light": "#ffffff", "dark": "#0e1117"}  # Streamlit's two page backgrounds
LOWEST: dict[str, tuple[float, str]] = {}  # theme -> (lowest ratio seen, where): printed by the last test
WORD_PAGES = {"qkv", "scaling", "masking", "multi-head"}  # pages whose charts are indexed by the sentence's words


def walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def layers(spec: dict) -> list[dict]:
    """The layers of a chart's design (tests.apptest_helpers.design: the view inside the data wrapper)."""
    inner = spec.get("spec", spec)  # a faceted grid keeps its layers one level down
    return inner.get("layer", [])


def mark_type(layer: dict) -> str:
    mark = layer["mark"]
    return mark if isinstance(mark, str) else mark["type"]


# ---- Vega, re-done in Python --------------------------------------------------------------------------


def js(expr: str, extra: dict | None = None):
    """A Vega expression as a Python function of a datum (the few operators and functions the specs use)."""
    py = re.sub(r"datum\.(\w+)", r'd["\1"]', expr)
    py = py.replace("!==", "!=").replace("===", "==")
    py = py.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    py = re.sub(r"\bif\(", "iff(", py)
    num = lambda *xs: [0 if x is None else x for x in xs]  # noqa: E731 - JavaScript reads null as 0 in Math.min
    names = {"iff": lambda c, a, b: a if c else b, "min": lambda *xs: min(num(*xs)), "max": lambda *xs: max(num(*xs)),
             "clamp": lambda v, lo, hi: min(max(v, lo), hi), "isValid": lambda v: v is not None and v == v,
             "isFinite": lambda v: v is not None and math.isfinite(v), **(extra or {})}
    code = compile(py.strip(), expr, "eval")
    return lambda d: eval(code, {"__builtins__": {}}, {**names, "d": d})


def scale_position(value: float, scale: dict, lo: float, hi: float) -> float:
    """Where Vega's colour scale puts value (0..1): a sequential scale over [lo, hi], or with domainMid a
    diverging one over the sorted [lo, mid, hi] (d3's scaleSequential / scaleDiverging, clamped)."""
    if "domain" in scale:
        lo, hi = scale["domain"]
    if "domainMid" in scale:
        d0, d1, d2 = sorted([lo, hi, scale["domainMid"]])
        k = (0 if d1 == d0 else 0.5 / (d1 - d0)) if value < d1 else (0 if d2 == d1 else 0.5 / (d2 - d1))
        t = 0.5 + (value - d1) * k
    else:
        t = 0.5 if hi == lo else (value - lo) / (hi - lo)
    return min(max(t, 0.0), 1.0)


def over(fill, opacity: float, background: str):
    """A fill seen through its opacity over the page background, as 0..255 RGB."""
    bg = [int(background[k:k + 2], 16) for k in (1, 3, 5)]
    if isinstance(fill, str):
        fill = [int(fill[k:k + 2], 16) for k in (1, 3, 5)]
    return [opacity * f + (1 - opacity) * b for f, b in zip(fill, bg)]


def run_transforms(steps: list[dict], rows: list[dict]) -> None:
    """Vega-Lite's joinaggregate and calculate transforms run over rows (dicts), in order, as Vega runs them."""
    functions = {"length": len}
    for step in steps:
        if "joinaggregate" in step:
            for agg in step["joinaggregate"]:
                valid = [d[agg["field"]] for d in rows if d[agg["field"]] is not None
                         and d[agg["field"]] == d[agg["field"]]]
                result = {"min": min, "max": max}[agg["op"]](valid) if valid else None
                for d in rows:
                    d[agg["as"]] = result
        elif "calculate" in step:
            fn = js(step["calculate"], functions)
            for d in rows:
                try:
                    d[step["as"]] = fn(d)
                except TypeError:  # arithmetic on a missing cell's null (its _t is never read)
                    d[step["as"]] = None
        else:
            raise AssertionError(f"a transform this test does not know: {step}")


def cell_contrasts(spec: dict, df) -> list[tuple[float, float, str]]:
    """(ratio over the light background, over the dark one, cell) for every printed number of a heatmap, or of
    each panel of a chart of panels (ui.drawing.panels: the facet's own transforms run over every panel, the
    layer's over each; its colour scale is each panel's own, or shared by all)."""
    ls = layers(spec)
    rect = next(la for la in ls if mark_type(la) == "rect" and "color" in la.get("encoding", {}))
    missing = next(la for la in ls if mark_type(la) == "rect" and la is not rect)
    text = next(la for la in ls if mark_type(la) == "text")
    facet = next((d for d in walk(spec) if "facet" in d and "spec" in d), None)
    shared = facet is None or facet.get("resolve", {}).get("scale", {}).get("color") != "independent"
    scale = rect["encoding"]["color"]["scale"]
    scheme = scale["scheme"]
    opacity = rect["mark"].get("opacity", 1.0) if isinstance(rect["mark"], dict) else 1.0
    panels = df["panel"].tolist() if facet is not None else [""] * len(df)
    rows = [{"value": None if not math.isfinite(v) else np.float64(v), "text": t, "_cell": (r, c, t), "_panel": p}
            for v, t, r, c, p in zip(df["value"].to_numpy(dtype=float), df["text"], df["row"], df["col"], panels)]
    groups = {}
    for d in rows:
        groups.setdefault(d["_panel"], []).append(d)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        run_transforms(facet.get("transform", []) if facet else [], rows)  # before the facet splits the table
        for group in groups.values():  # then the text layer's own transforms, in each panel, and its colour rule
            run_transforms(text.get("transform", []), group)
        colour = text["encoding"]["color"]
        rule, when_true, otherwise = js(colour["condition"]["test"]), colour["condition"]["value"], colour["value"]
        inks = [when_true if rule(d) else otherwise for d in rows]
    extents = {name: extent(rows if shared else group) for name, group in groups.items()}
    out = []
    for d, ink in zip(rows, inks):
        row, col, printed = d["_cell"]
        if not printed:
            continue
        v = d["value"]
        if v is None or not math.isfinite(v):
            fill, alpha = missing["mark"]["fill"], 1.0
        else:
            fill, alpha = colours.scheme_rgb(scheme, scale_position(v, scale, *extents[d["_panel"]])), opacity
        ratios = [colours.contrast(ink, over(fill, alpha, bg)) for bg in BACKGROUNDS.values()]
        out.append((*ratios, f"{d['_panel']} {row} x {col} = {printed}".strip()))
    return out


def extent(rows: list[dict]) -> tuple[float, float]:
    """The finite values' extent, as a colour scale with no domain of its own takes it from its data."""
    finite = [d["value"] for d in rows if d["value"] is not None and math.isfinite(d["value"])]
    return (min(finite), max(finite)) if finite else (0.0, 1.0)


# ---- the pages ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=COURSE, ids=lambda lesson: lesson.url_path)
def page(request):
    at = run_page(request.param.path, timeout=120)
    assert not at.exception, [e.message for e in at.exception]
    return request.param, at


def annotated(at) -> list:
    return [c for c in charts(at) if any(mark_type(la) == "text" and "color" in la.get("encoding", {})
                                         and "condition" in la["encoding"]["color"] for la in layers(chart_design(c)))]


def test_every_printed_number_reads_on_its_cell(page):
    lesson, at = page
    found = annotated(at)
    if lesson.url_path in WORD_PAGES:
        assert found, "a word page draws annotated heatmaps"
    for chart in found:
        df = shown_frame(at, chart)  # a map the browser works out from scores: the weights it prints
        for light, dark, where in cell_contrasts(chart_design(chart), df):
            for theme, ratio in (("light", light), ("dark", dark)):
                here = f"{lesson.url_path} · {chart_title(chart)} · {where}"
                if theme not in LOWEST or ratio < LOWEST[theme][0]:
                    LOWEST[theme] = (ratio, here)
                assert ratio >= AA, f"{here}: contrast {ratio:.2f} in the {theme} theme"


def test_contrast_test_catches_a_bad_rule():
    """The check above can fail: the old rule (dark text above 55% of the matrix's own range) fails it."""
    df = ui_charts.heatmap_frame([[0.15, 0.16, 0.17]], ["q"], ["a", "b", "c"]).frame()
    spec = ui_charts.heatmap_chart(domain=(0.0, 1.0)).to_dict()
    good = min(r for r, _, _ in cell_contrasts(spec, df))
    text = next(la for la in spec["layer"] if mark_type(la) == "text")
    text["encoding"]["color"]["condition"]["test"] = "(datum.value - 0.15) / 0.02 > 0.55"
    bad = min(r for r, _, _ in cell_contrasts(spec, df))
    assert good >= AA > bad


def test_lowest_contrast_is_reported():
    """Prints the lowest ratio found (run with -s to see it); at least one number was checked."""
    assert LOWEST, "no printed numbers were checked"
    for theme, (ratio, where) in LOWEST.items():
        print(f"lowest contrast, {theme} theme: {ratio:.2f}:1 at {where}")
        assert ratio >= AA


# ---- every token is an axis label -----------------------------------------------------------------------


def token_axes(spec: dict) -> list[dict]:
    return [d["axis"] for d in walk(spec) if d.get("field") in ("row", "col") and isinstance(d.get("axis"), dict)]


def test_every_token_is_a_label_of_every_token_chart(page):
    lesson, at = page
    tokens = None
    if lesson.url_path in WORD_PAGES:
        tokens = ui_charts.unique_labels(word_tokens(controls.DEFAULT_TEXT, 16))
    elif lesson.url_path == "model":
        source = (ROOT / lesson.path).read_text()  # the page's default prompt, read without running the page
        prompt = re.search(r'^DEFAULT_PROMPT = "(.*)"$', source, re.M).group(1)
        tokens = ui_charts.unique_labels(list(prompt))
    token_charts = 0
    for chart in charts(at):
        spec, df = chart_design(chart), chart_data(chart)
        if not {"row", "col"} <= set(df.columns):
            continue
        # no axis may hide a label to avoid overlap
        assert token_axes(spec) and all(a.get("labelOverlap") is False for a in token_axes(spec)), chart_title(chart)
        for field in ("row", "col"):
            shown = [str(x) for x in df[field].unique()]
            assert all(s.strip() for s in shown), f"{chart_title(chart)}: a blank {field} label"
            assert df[f"{field}_i"].nunique() == len(shown)  # one label per row / column
            if tokens and set(tokens) & set(shown):
                token_charts += 1
                missing = [t for t in tokens if t not in shown]
                assert not missing, f"{chart_title(chart)}: tokens {missing} are not {field} labels"
    if tokens:
        assert token_charts, "no chart indexed by the tokens was found"


def test_the_written_out_text_bands_are_the_schemes_own():
    """The bands the chart designs use (written out, so a fresh server samples no colours) are what sampling each
    scheme gives."""
    for scheme, bands in colours.DARK_TEXT_BANDS.items():
        assert colours.dark_text_bands(scheme) == bands, scheme
    assert set(colours.DARK_TEXT_BANDS) == set(colours.SCHEME_STOPS)

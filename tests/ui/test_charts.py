"""ui/drawing/charts.py without a server: the data frames match the arrays, the specs are the designed ones."""

from __future__ import annotations

import json
import re

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ui.drawing import charts, colours, plots
from ui.drawing import heatmap as heatmap_path  # the app's path; `heatmap` below builds the design alone
from ui.drawing.chart_data import ChartData, numbers
from ui.drawing.chart_files import file_spec

# Colour-blind-safe schemes that Vega ships: the perceptually uniform sequential maps and ColorBrewer's
# colour-blind-safe diverging maps (plus Vega's blue-orange).
CB_SAFE_SEQUENTIAL = {"viridis", "cividis", "magma", "inferno", "plasma"}
CB_SAFE_DIVERGING = {"purpleorange", "blueorange", "brownbluegreen", "purplegreen", "pinkyellowgreen",
                     "redblue", "redyellowblue"}


def heatmap(matrix, row_labels, col_labels, **settings):
    """A heatmap design with its data, in one call."""
    m = np.asarray(matrix)
    data = charts.heatmap_frame(m, row_labels, col_labels).frame()
    return charts.heatmap_chart(data=data, **settings)


def labels(n: int, prefix: str = "t") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def without_data(spec: dict) -> dict:
    """A spec minus its numbers: what ui.drawing.render caches.

    Altair names a view that carries a selection after a hash of the chart, data included; the name is
    only a label that the selection param points to, so it is replaced by a placeholder here (and
    test_select_rows_adds_pick_param checks that the param and the view agree).
    """
    text = json.dumps({k: v for k, v in spec.items() if k not in ("data", "datasets")}, sort_keys=True)
    return json.loads(re.sub(r"view_[0-9a-f]+_(\d+)", r"view_\1", text))


def walk(node):
    """Every dict inside a spec (depth first)."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def layer_marks(spec: dict) -> list[str]:
    marks = []
    for layer in spec.get("layer", []):
        mark = layer["mark"]
        marks.append(mark if isinstance(mark, str) else mark["type"])
    return marks


def colour_scales(spec: dict) -> list[dict]:
    return [d["color"]["scale"] for d in walk(spec)
            if isinstance(d.get("color"), dict) and "scale" in d["color"]]


# ---- heatmap_frame ----------------------------------------------------------------------------------


def test_heatmap_frame_matches_matrix():
    m = np.arange(12, dtype=float).reshape(3, 4) / 7 - 0.5
    rows, cols = ["a", "b", "c"], ["w", "x", "y", "z"]
    df = charts.heatmap_frame(m, rows, cols).frame()
    assert len(df) == 12
    for rec in df.itertuples():
        assert rec.value == pytest.approx(m[rec.row_i, rec.col_i], rel=5e-4, abs=5e-5)  # sent to 4 decimals
        assert rec.row == rows[rec.row_i]
        assert rec.col == cols[rec.col_i]
        assert rec.text == f"{m[rec.row_i, rec.col_i]:.2f}"
    # pivoting back gives the matrix in display order
    back = df.pivot(index="row_i", columns="col_i", values="value").to_numpy()
    np.testing.assert_allclose(back, m, rtol=5e-4, atol=5e-5)  # sent to 4 decimals


def test_heatmap_frame_decimals():
    df = charts.heatmap_frame([[1 / 3]], ["a"], ["b"], decimals=4).frame()
    assert df["text"].tolist() == ["0.3333"]


def test_unique_labels_for_repeated_tokens():
    assert charts.unique_labels(["the", "cat", "the", "mat"]) == ["the (0)", "cat", "the (2)", "mat"]
    assert charts.unique_labels(["a", "b"]) == ["a", "b"]
    assert charts.unique_labels([]) == []
    df = charts.heatmap_frame(np.eye(3), ["x", "x", "y"], ["x", "x", "y"]).frame()
    assert df["row"].nunique() == 3 and df["col"].nunique() == 3
    assert set(df["row"]) == {"x (0)", "x (1)", "y"}


def test_characters_that_draw_nothing_get_a_visible_label():
    """A character-level model reads 👩‍💻 as 👩, U+200D, 💻 and ❤️ as ❤, U+FE0F: the joiner and the variation
    selector draw nothing alone, so their labels name them; a skin tone and whole emoji draw as themselves."""
    assert charts.unique_labels(list("👩\u200d💻 ❤\ufe0f")) == ["👩", "U+200D", "💻", "␣", "❤", "U+FE0F"]
    for label, shown in [("\u200d", "U+200D"), ("\ufe0e", "U+FE0E"), ("\u0301", "U+0301"), ("\x00", "U+0000"),
                         ("\u00a0", "U+00A0"), ("\u200b\u200d", "U+200B U+200D"), ("\t\r", "⇥␍"), ("", "∅"),
                         ("🏽", "🏽"), ("❤\ufe0f", "❤\ufe0f"), ("👩\u200d💻", "👩\u200d💻"), ("e\u0301", "e\u0301")]:
        assert charts.visible(label) == shown, (label, charts.visible(label))
    df = charts.heatmap_frame(np.eye(3), list("❤\ufe0f!"), list("❤\ufe0f!")).frame()
    assert list(df["row"].unique()) == ["❤", "U+FE0F", "!"]


def test_character_labels_of_the_model_pages_are_visible():
    """ui.sections.model_views.shown labels the Full model page's maps and bars and the Bigram page's characters."""
    from ui.sections.model_views import shown

    assert [shown(c) for c in "👩\u200d💻 ❤\ufe0f\n"] == ["👩", "U+200D", "💻", "␣", "❤", "U+FE0F", "⏎"]


def test_nan_and_inf_cells_are_formatted():
    m = np.array([[np.nan, np.inf], [-np.inf, 0.5]])
    df = charts.heatmap_frame(m, ["a", "b"], ["c", "d"]).frame()
    assert df["text"].tolist() == ["NaN", "inf", "-inf", "0.50"]
    # non-finite cells carry no number (the colour scale skips them); they sit on a light grey cell
    # of their own (tests/ui/test_contrast.py checks their text reads on it)
    assert df["value"].isna().tolist() == [True, True, True, False]


def test_all_non_finite_matrix_does_not_raise():
    df = charts.heatmap_frame(np.full((2, 2), -np.inf), ["a", "b"], ["a", "b"]).frame()
    assert df["text"].tolist() == ["-inf"] * 4


@pytest.mark.parametrize(("rows", "cols"), [(["a"], ["c", "d"]), (["a", "b", "c"], ["c", "d"]),
                                            (["a", "b"], ["c"]), (["a", "b"], [])])
def test_wrong_label_counts_raise(rows, cols):
    with pytest.raises(ValueError, match="labels"):
        charts.heatmap_frame(np.zeros((2, 2)), rows, cols)


@pytest.mark.parametrize("matrix", [np.zeros(3), np.zeros((2, 2, 2))])
def test_non_2d_matrix_raises(matrix):
    with pytest.raises(ValueError, match="2-D"):
        charts.heatmap_frame(matrix, ["a", "b"], ["a", "b"])


# ---- heatmap_chart ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_rows", "n_cols", "text_layer"), [
    (1, 1, True), (7, 7, True), (16, 16, True), (16, 8, True), (17, 16, False), (16, 17, False), (32, 32, False),
])
def test_annotated_only_up_to_16(n_rows, n_cols, text_layer):
    """The app's one path (ui.drawing.heatmap) prints numbers up to 16 x 16 unless told."""
    sent = json.loads(heatmap_path.made(np.zeros((n_rows, n_cols)), labels(n_rows), labels(n_cols, "k")).text)
    marks = layer_marks(sent["layer"][0])  # the design's layers sit in the view that holds the numbers
    assert marks[0] == "rect"
    assert ("text" in marks) is text_layer


def test_annotate_can_be_forced():
    assert "text" not in layer_marks(charts.heatmap_chart(annotate=False).to_dict())
    assert "text" in layer_marks(charts.heatmap_chart(annotate=True).to_dict())


@pytest.mark.parametrize("domain", [None, (-2.0, 2.0)])
def test_diverging_scale_is_centred_on_zero(domain):
    spec = charts.heatmap_chart(diverging=True, domain=domain).to_dict()
    scales = colour_scales(spec)
    assert scales, "no colour scale in the spec"
    for scale in scales:
        assert scale["domainMid"] == 0
        assert scale["scheme"] in CB_SAFE_DIVERGING
        if domain:
            assert scale["domain"] == list(domain)


def test_sequential_scale():
    scales = colour_scales(charts.heatmap_chart(domain=(0.0, 1.0)).to_dict())
    assert scales
    for scale in scales:
        assert scale["scheme"] in CB_SAFE_SEQUENTIAL
        assert "domainMid" not in scale
        assert scale["domain"] == [0.0, 1.0]


@pytest.mark.parametrize(("values", "said"), [((-13.3, 11.8), ["−10", "0", "10"]), ((0.0, 1.0), ["0", "0.5", "1"]),
                                             ((0.0, 12_000.0), ["0", "5000", "10000"])])
def test_the_legend_says_its_numbers_plainly(values, said):
    """The colour legend's labels as Vega draws them: no trailing zeros, and never a power of ten ("1e+1" was how a
    map of scores reaching 13 labelled 10)."""
    import vl_convert

    m = np.array([[values[0], values[1]], [0.5, 0.25]])
    chart = heatmap(m, ["a", "b"], ["c", "d"], diverging=values[0] < 0, annotate=False)
    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    legend = svg[svg.index("role-legend"):]
    assert re.findall(r"<text[^>]*>([^<]*)</text>", legend)[:len(said)] == said


def test_colour_schemes_are_colour_blind_safe():
    assert charts.SEQUENTIAL in CB_SAFE_SEQUENTIAL
    assert charts.DIVERGING in CB_SAFE_DIVERGING


def test_select_rows_adds_pick_param():
    spec = charts.heatmap_chart(select_rows=True).to_dict()
    params = [p for d in walk(spec) for p in d.get("params", []) if isinstance(p, dict)]
    pick = [p for p in params if p.get("name") == "pick"]
    assert len(pick) == 1
    assert pick[0]["select"]["type"] == "point"
    assert pick[0]["select"]["fields"] == ["row_i"]
    # the selection is bound to the rect layer by name: the spec is self-consistent without its data
    named = [layer for layer in spec["layer"] if "name" in layer]
    assert len(named) == 1 and named[0]["mark"]["type"] == "rect"
    assert pick[0]["views"] == [named[0]["name"]]
    plain = charts.heatmap_chart().to_dict()
    assert not any(p.get("name") == "pick" for d in walk(plain) for p in d.get("params", []))


@pytest.mark.parametrize(("n_cols", "cell_px"), [(3, 34), (5, 22), (40, 34), (128, 34)])
def test_a_wide_map_shrinks_its_cells_to_its_room(n_cols, cell_px):
    """heatmap.size decides a map's cells once: as asked, shrunk so the columns fit the room, never below 8 px."""
    size = heatmap_path.size(n_cols, cell_px, room_px=520, scale=1.0, printed=0)
    assert size.cell == size.row == charts.cell_size(n_cols, cell_px, 520)
    assert 8 <= size.cell <= cell_px
    assert size.fits == (size.cell * n_cols <= 520)


def test_a_map_whose_numbers_do_not_fit_takes_its_column_with_rows_tall_enough_for_them():
    narrow = heatmap_path.size(30, 34, room_px=300, scale=1.0, printed=5)  # "-0.12" in 10 px cells
    assert not narrow.fits and narrow.cell >= round(charts.CELL_TEXT_PX * 1.6)
    roomy = heatmap_path.size(4, 34, room_px=300, scale=1.0, printed=4)  # "0.12"
    assert roomy.fits and roomy.cell == 34


def test_across_sizes_the_cells_for_another_count_than_the_columns():
    """A (T, 2) map whose T rows must not grow tall is sized as if it were T wide."""
    assert heatmap_path.size(2, 34, 420, 1.0, 0, across=32).cell == charts.cell_size(32, 34, 420)
    assert heatmap_path.size(2, 34, 420, 1.0, 0).cell == 34


def test_a_drawn_map_has_the_cells_its_size_decided():
    m = np.zeros((4, 6))
    spec = json.loads(heatmap_path.made(m, labels(4), labels(6, "k"), cell_px=22).text)
    assert spec["width"] == spec["height"] == {"step": heatmap_path.size(6, 22, heatmap_path.ROOM_PX, 1.0, 4).cell}


@pytest.mark.parametrize("settings", [
    {}, {"diverging": True}, {"select_rows": True, "domain": (0.0, 1.0)}, {"diverging": True, "title": "Q"},
])
@pytest.mark.parametrize("shape", [(3, 3), (7, 16), (20, 20)])
def test_spec_does_not_depend_on_the_data(shape, settings):
    """Two matrices of one shape give the same spec once the data is removed: caching the spec is valid."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape) * 100 + 5
    b[0, 0] = np.nan
    rows, cols = labels(shape[0]), labels(shape[1], "k")
    spec_a = heatmap(a, rows, cols, **settings).to_dict()
    spec_b = heatmap(b, rows, cols, **settings).to_dict()
    assert spec_a["datasets"] != spec_b["datasets"]  # the numbers did reach the charts
    assert without_data(spec_a) == without_data(spec_b)
    # the numbers live only at the top level, where ui.drawing.render strips them; no layer carries its own data
    assert not any("data" in layer for layer in spec_a.get("layer", []))
    # and the data-free design is exactly what the builder makes with no data at all
    empty = charts.heatmap_chart(**settings).to_dict()
    assert without_data(empty) == without_data(spec_a)


def test_tooltips_have_row_col_and_value():
    spec = heatmap(np.ones((3, 3)), labels(3), labels(3)).to_dict()
    for layer in spec["layer"]:
        fields = {t["field"] for t in layer["encoding"]["tooltip"]}
        assert {"row", "col", "value"} <= fields


def test_axes_keep_matrix_order():
    spec = charts.heatmap_chart().to_dict()
    for layer in spec["layer"]:
        assert layer["encoding"]["x"]["sort"]["field"] == "col_i"
        assert layer["encoding"]["y"]["sort"]["field"] == "row_i"


def test_title_is_set():
    assert charts.heatmap_chart(title="scores").to_dict()["title"] == "scores"
    assert "title" not in charts.heatmap_chart().to_dict()


# ---- the other builders -----------------------------------------------------------------------------


def test_grid_chart_builds_and_validates():
    rng = np.random.default_rng(1)
    weights = rng.dirichlet(np.ones(5), size=(4, 5))  # (H, T, T), rows sum to 1
    df = charts.grid_frame(weights, [f"head {h}" for h in range(4)], labels(5), labels(5)).frame()
    assert len(df) == 4 * 5 * 5
    np.testing.assert_allclose(df.groupby("panel_i")["value"].sum(), 5.0, atol=25 * 5e-5)  # 4 decimals each
    spec = charts.grid_chart(columns=2, title="heads", data=df).to_dict()  # validates
    assert spec["facet"]["field"] == "panel"
    assert spec["columns"] == 2
    assert spec["title"] == "heads"
    assert without_data(charts.grid_chart(columns=2, title="heads").to_dict()) == without_data(spec)
    for scale in colour_scales(spec):
        assert scale["domain"] == [0.0, 1.0]
        assert scale["scheme"] in CB_SAFE_SEQUENTIAL


def test_bar_chart_builds_and_validates():
    df = plots.bar_frame(["a", "b", "a"], [0.5, 0.3, 0.2]).frame()
    assert df["label"].tolist() == ["a (0)", "b", "a (2)"]
    assert df["order"].tolist() == [0, 1, 2]
    spec = plots.bar_chart(title="next", data=df).to_dict()
    assert layer_marks(spec)[-1] == "text" and "bar" in layer_marks(spec)
    assert spec["width"] == "container"
    assert isinstance(plots.bar_chart(domain=(0.0, 1.0)).to_dict(), dict)


def test_bar_axis_reaches_just_past_the_longest_bar():
    """At temperature 1 the top bar may be 0.27: the axis must not run to 1 (three quarters empty)."""
    import vl_convert

    df = plots.bar_frame(list("abc"), [0.27, 0.2, 0.1]).frame()
    sg = vl_convert.vegalite_to_scenegraph({**plots.bar_chart(data=df).to_dict(), "width": 400})
    bars = [item for mark in walk(sg) if mark.get("marktype") == "rect" and mark.get("role") == "mark"
            for item in mark["items"] if item.get("fill") == plots.BAR_FILL]
    longest = max(b["width"] for b in bars)
    assert 400 / 1.4 <= longest <= 400 / 1.1  # a little headroom, no more
    # the numbers are printed inside the plot, on the light track, in black: they read in both themes
    texts = [item for mark in walk(sg) if mark.get("marktype") == "text" and mark.get("role") == "mark"
             for item in mark["items"]]
    assert sorted(t["text"] for t in texts) == ["0.100", "0.200", "0.270"]
    assert all(t["x"] <= 400 and t["fill"] == colours.DARK_TEXT for t in texts)
    assert colours.contrast(colours.DARK_TEXT, plots.BAR_TRACK) >= 4.5
    # the bars keep the frame's order (most likely first), not the alphabet's
    labels = [item for mark in walk(sg) if mark.get("marktype") == "text" and mark.get("role") == "axis-label"
              for item in mark["items"] if item["text"] in "abc"]
    assert [t["text"] for t in sorted(labels, key=lambda t: t["y"])] == ["a", "b", "c"]
    df = plots.bar_frame(list("zam"), [0.3, 0.2, 0.1]).frame()
    sg = vl_convert.vegalite_to_scenegraph({**plots.bar_chart(data=df).to_dict(), "width": 400})
    labels = [item for mark in walk(sg) if mark.get("marktype") == "text" and mark.get("role") == "axis-label"
              for item in mark["items"] if item["text"] in "zam"]
    assert [t["text"] for t in sorted(labels, key=lambda t: t["y"])] == ["z", "a", "m"]


def test_log_axes_use_one_notation():
    spec = plots.line_chart("T", "bytes", log_x=True, log_y=True).to_dict()
    assert spec["encoding"]["x"]["axis"]["format"] == ",d"
    assert spec["encoding"]["y"]["axis"]["format"] == "~s"
    # and Vega writes every tick of a wide log range that way: no "1e+13" beside "100,000,000,000"
    import vl_convert

    df = plots.line_frame([2 ** k for k in range(21)], {"bytes": [4.0 ** k for k in range(21)]}).frame()
    sg = vl_convert.vegalite_to_scenegraph({**plots.line_chart("T", "bytes", log_x=True, log_y=True,
                                                                data=df).to_dict(), "width": 600})
    ticks = [i["text"] for m in walk(sg) if m.get("role") == "axis-label" for i in m["items"]]
    assert ticks and not any("e+" in t or "e-" in t for t in ticks), ticks
    assert "1,048,576" in ticks and "1T" in ticks


@pytest.mark.parametrize("builder", [charts.heatmap_chart, charts.grid_chart, plots.bar_chart,
                                     lambda **k: plots.line_chart("x", "y", **k)])
def test_font_scale_reaches_every_text(builder):
    """Presenter mode (font_scale 1.5) prints every axis label and title at 18 px or more."""
    spec = builder(font_scale=1.5).to_dict()
    sizes = [v for d in walk(spec) for k, v in d.items() if k.endswith("FontSize") or k == "fontSize"]
    assert sizes and min(sizes) >= 18, sizes
    normal = builder().to_dict()
    assert min(v for d in walk(normal) for k, v in d.items() if k.endswith("FontSize") or k == "fontSize") >= 12


def axes_of(spec: dict) -> list[dict]:
    """The axes of the encodings (not the config's shared axis colours)."""
    encodings = {k: v for k, v in spec.items() if k != "config"}
    return [d["axis"] for d in walk(encodings) if isinstance(d.get("axis"), dict)]


def test_token_axes_drop_labels_only_on_cells_smaller_than_the_type():
    spec = charts.heatmap_chart(cell_px=12).to_dict()
    axes = axes_of(spec)
    assert axes and all(a["labelOverlap"] is False for a in axes)
    # down to the smallest type, every label is drawn at its cell's size
    assert all(a["labelOverlap"] is False and a["labelFontSize"] == 8 for a in axes_of(charts.heatmap_chart(
        cell_px=charts.MIN_LABEL_PX).to_dict()))
    # on a projector, type never shrinks below 18 px: a dense map (64 positions on 8 px cells) keeps its labels
    # at 18 px and Vega leaves out every other label that would overlap
    dense = charts.heatmap_chart(cell_px=8, font_scale=1.5).to_dict()
    axes = axes_of(dense)
    assert axes and all(a["labelFontSize"] >= 18 and a["labelOverlap"] == "parity" for a in axes)
    roomy = charts.heatmap_chart(cell_px=51, font_scale=1.5).to_dict()
    assert all(a["labelOverlap"] is False for a in axes_of(roomy))
    assert charts.unique_labels(["a", " ", "b", " "]) == ["a", "␣ (1)", "b", "␣ (3)"]
    assert charts.unique_labels(["\n", ""]) == ["⏎", "∅"]


@pytest.mark.parametrize("builder", [charts.heatmap_chart, charts.grid_chart])
@pytest.mark.parametrize("cell_px", [1, 2, 4, 6, 7, 8, 9, 12, 26, 34])
def test_labels_never_shrink_below_the_smallest_type(builder, cell_px):
    """Small cells (a 26-character prompt gives the Full model grid 6 px cells, 64 give 4 px) keep their
    labels at MIN_LABEL_PX: 6 px type drew letters 4 px high. Labels that would overlap are left out."""
    axes = axes_of(builder(cell_px=cell_px).to_dict())
    assert axes
    for axis in axes:
        assert axis["labelFontSize"] >= charts.MIN_LABEL_PX >= 8
        assert axis["labelOverlap"] == ("parity" if cell_px < axis["labelFontSize"] else False)


@pytest.mark.parametrize(("T", "cell_px"), [(26, 6), (64, 4)])
def test_vega_draws_every_other_label_of_a_long_prompt(T, cell_px):
    """Rendered by Vega: the labels it keeps on each axis of a grid of small cells are at least MIN_LABEL_PX,
    the first label among them, and at least one in four of them is drawn."""
    import vl_convert

    tokens = [chr(ord("a") + i % 26) for i in range(T)]
    weights = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # (T, T), causal rows summing to 1
    frame = charts.grid_frame(np.stack([weights] * 2), ["head 1", "head 2"], tokens, tokens)
    sg = vl_convert.vegalite_to_scenegraph(frame.inline(charts.grid_chart(cell_px=cell_px, columns=2).to_dict()))
    axes = [m["items"] for m in walk(sg) if m.get("role") == "axis-label"]
    assert len(axes) >= 2
    for items in axes:
        drawn = [i for i in items if i.get("opacity", 1) != 0]
        assert len(items) == T and T // 4 <= len(drawn) < T
        assert drawn[0]["text"] == charts.unique_labels(tokens)[0]
        assert min(i["fontSize"] for i in drawn) >= charts.MIN_LABEL_PX


def test_vendored_schemes_match_vega():
    """The stops in ui/drawing/charts.py are Vega's own: a chart rendered by Vega colours its cells the same."""
    import vl_convert

    values = np.linspace(0, 1, 21)
    for scheme in colours.SCHEME_STOPS:
        df = pd.DataFrame({"x": [str(i) for i in range(len(values))], "i": range(len(values)), "v": values})
        chart = alt.Chart(df).mark_rect().encode(x=alt.X("x:N", sort=alt.EncodingSortField("i")),
                                                 color=alt.Color("v:Q", scale=alt.Scale(scheme=scheme, domain=[0, 1])))
        sg = vl_convert.vegalite_to_scenegraph(chart.to_dict())
        fills = sorted((item["x"], item["fill"]) for mark in walk(sg) if mark.get("marktype") == "rect"
                       and mark.get("role") == "mark" for item in mark["items"])
        for (_, fill), t in zip(fills, values):
            got = [int(c) for c in re.findall(r"\d+", fill)][:3]
            assert np.allclose(got, colours.scheme_rgb(scheme, t), atol=1.0), (scheme, t, fill)


def test_line_chart_builds_and_validates():
    df = plots.line_frame([1, 2, 4, 8], {"scaled": [0.5, 0.4, 0.3, 0.3], "unscaled": [0.5, 0.6, 0.8, 0.9]}).frame()
    assert len(df) == 8
    assert set(df["series"]) == {"scaled", "unscaled"}
    spec = plots.line_chart("d_k", "max weight", title="saturation", log_x=True, data=df).to_dict()
    enc = spec["encoding"]
    assert enc["x"]["scale"]["type"] == "log"
    # the series is told apart by line style as well as colour, so it reads without colour vision
    assert enc["strokeDash"]["field"] == "series"
    assert {t["field"] for t in enc["tooltip"]} == {"series", "x", "y"}
    assert isinstance(plots.line_chart("x", "y", log_y=True).to_dict(), dict)


def test_builders_accept_empty_frames():
    """ui.drawing.render builds every spec with no data; each builder must validate like that."""
    for chart in (charts.heatmap_chart(), charts.grid_chart(columns=2), plots.bar_chart(),
                  plots.line_chart("x", "y")):
        assert isinstance(chart, alt.TopLevelMixin)
        assert "$schema" in chart.to_dict()


def test_frame_serialises_as_json():
    """The tables go to the browser inside the spec as JSON: plain strings, ints and floats, null for
    what JSON cannot write (NaN, ±inf), so the browser's strict JSON parser takes every one."""
    data = charts.heatmap_frame([[1.0, np.nan], [-np.inf, np.float32(0.5)]], ["猫", "<b>"], ["🐱", "a"])
    spec = data.inline(charts.heatmap_chart().to_dict())
    text = json.dumps(spec, allow_nan=False)  # raises on NaN or inf
    assert json.loads(text) == spec
    assert data.column("value") == [1.0, None, None, 0.5]
    assert ChartData.from_spec(spec).column("row") == ["猫", "猫", "<b>", "<b>"]


# ---- chart data sent inside the spec ----------------------------------------------------------------


def test_numbers_keep_what_a_tooltip_prints():
    """Each number keeps the 4 decimals a tooltip prints, and a number smaller than that its 4 significant
    digits, so a -1e9 mask fill beside scores near 0.1 does not flatten them and a weight of 3e-8 is not 0."""
    x = np.array([0.123456789, -1e9, 3.14159265e-8, 0.0, 123456789.123, 1 / 3, -0.0123456])
    got = np.array(numbers(x))
    assert got.tolist() == [0.1235, -1e9, 3.142e-08, 0.0, 123456789.123, 0.3333, -0.01235]
    wide = np.random.default_rng(0).standard_normal(10_000) * 10.0 ** np.arange(-5, 5).repeat(1000)
    np.testing.assert_allclose(numbers(wide), wide, rtol=5e-4)  # 4 significant digits or better
    large = np.abs(wide) >= 1e-3  # below that, 4 significant digits are more than 4 decimals
    assert np.abs(np.array(numbers(wide))[large] - wide[large]).max() <= 5e-5 * (1 + 1e-9)  # the tooltip's digits


def test_a_table_of_cells_sends_what_a_table_of_lists_sends():
    """A matrix's cells travel as an array (number_array, NaN for a missing value) and a chart's other columns as
    lists: the Arrow table, the JSON datum and every column read back are the same either way, a missing value a
    null; the printed numbers are the same as one format call a number gives, "inf" and "NaN" included."""
    m = np.array([[0.123456, np.nan, -np.inf], [np.inf, -2.5e-7, 1.0]])
    fast = charts.heatmap_frame(m, ["a", "b"], ["x", "y", "z"])
    assert isinstance(fast.columns["value"], np.ndarray)
    slow = ChartData({**fast.columns, "value": numbers(m)}, fast.labels, fast.grid)
    assert fast.column("value") == slow.column("value") == [0.1235, None, None, None, -2.5e-07, 1.0]
    for shape_line, title in ((None, None), ("(2, 3)", "a title")):
        tables = [pa.ipc.open_stream(data.arrow(shape_line, title)).read_all() for data in (fast, slow)]
        assert tables[0].equals(tables[1])  # the same values and nulls (what a null slot holds is nobody's)
        back = ChartData.from_arrow(fast.arrow(shape_line, title))
        assert back.column("value") == slow.column("value") and back.column("row") == ["a"] * 3 + ["b"] * 3
    assert fast.datum() == slow.datum()
    json.dumps(fast.datum(), allow_nan=False)  # no NaN reaches JSON
    assert fast.columns["text"] == [charts._fmt(v, 2) for v in m.ravel().tolist()]
    assert fast.columns["text"][:3] == ["0.12", "NaN", "-inf"]
    finite = np.random.default_rng(0).standard_normal((5, 7))
    assert charts.heatmap_frame(finite, list("abcde"), list("abcdefg")).columns["text"] == \
        [charts._fmt(v, 2) for v in finite.ravel().tolist()]
    grid = charts.grid_frame(np.ones((2, 2, 3)) / 2, ["h1", "h2"], ["a", "b"], ["x", "y", "z"])
    assert ChartData.from_arrow(grid.arrow()).column("panel") == ["h1"] * 6 + ["h2"] * 6  # its indices, made once
    assert ChartData.from_arrow(grid.arrow()).column("col_i") == [0, 1, 2] * 4  # per shape, are the same each time


def test_inline_round_trips_through_every_builder():
    """What inline() puts into a spec, from_spec() reads back, for a layered chart, a unit chart and a
    faceted grid; Streamlit finds no top-level data to move out (it converts that to Arrow)."""
    heat = charts.heatmap_frame(np.arange(6.0).reshape(2, 3), ["a", "b"], ["x", "y", "z"])
    grid = charts.grid_frame(np.ones((2, 2, 2)) / 2, ["h1", "h2"], ["a", "b"], ["a", "b"])
    line = plots.line_frame([1, 2], {"s": [0.5, 0.25], "t": [1.0, 2.0]})
    for data, chart in ((heat, charts.heatmap_chart(title="t")), (grid, charts.grid_chart(columns=2)),
                        (line, plots.line_chart("x", "y"))):
        spec = data.inline(chart.to_dict())
        assert "data" not in spec and "datasets" not in spec
        assert spec.get("$schema") and "config" in spec
        pd.testing.assert_frame_equal(ChartData.from_spec(spec).frame(), data.frame())
    assert "vconcat" in grid.inline(charts.grid_chart(columns=2).to_dict())  # a facet cannot sit in a layer


def test_inline_charts_draw_their_cells():
    """The browser's own compiler (vl-convert) draws one rect per cell from an inlined spec: the flatten
    and label transforms unpack the columns, labels and all (in a file, where each cell is described)."""
    import vl_convert

    m = np.arange(12.0).reshape(3, 4)
    data = charts.heatmap_frame(m, ["a", "b", "c"], ["w", "x", "y", "z"])
    svg = vl_convert.vegalite_to_svg(file_spec(data.inline(charts.heatmap_chart(title="m").to_dict())))
    for r, row in enumerate("abc"):
        for c, col in enumerate("wxyz"):
            assert f'aria-label="key: {col}; query: {row}; value: {m[r, c]:g}' in svg


def test_inline_grid_numbers_its_cells_in_the_browser():
    """A grid sends only its values; the browser works out each cell's panel, row and column from its row
    number (a window transform), so cell (h, r, c) must show value m[h, r, c] in panel h."""
    import vl_convert

    m = np.arange(12.0).reshape(2, 2, 3)
    data = charts.grid_frame(m, ["h1", "h2"], ["a", "b"], ["x", "y", "z"])
    assert set(data.columns) == {"value"}  # no index columns travel
    svg = vl_convert.vegalite_to_svg(file_spec(data.inline(charts.grid_chart(columns=2).to_dict())))
    cells = re.findall(r'aria-label="key: (\w); query: (\w); value: (\d+)', svg)
    expected = [(col, row, f"{m[h, r, c]:g}") for h in range(2) for r, row in enumerate("ab")
                for c, col in enumerate("xyz")]
    assert cells == expected


def test_a_strip_has_rows_tall_enough_for_its_labels_and_its_legend_underneath():
    """The block lesson's (3, D) layer-norm strips: 12 px rows under 12 px labels drew "x̂" over "x", and a
    legend beside them stood five times taller than the strip."""
    m = np.random.default_rng(0).standard_normal((3, 64))
    rows, cols = ["x (the row)", "x̂ (normalised)", "γ·x̂ + β (output)"], [f"d{j}" for j in range(64)]
    for strip in (True, False):
        spec = json.loads(heatmap_path.made(m, rows, cols, cell_px=13, max_width=900, diverging=True,
                                            strip=strip).text)
        width, height = spec["width"]["step"], spec["height"]["step"]
        label_px = charts.label_look(width)[0]
        legends = [layer["encoding"]["color"]["legend"] for layer in spec["layer"][0]["layer"]
                   if "legend" in layer.get("encoding", {}).get("color", {})]
        assert legends
        # every heatmap's legend lies under it, across (beside a phone-wide map the frame cut it)
        assert all(leg.get("orient") == "bottom" and leg.get("direction") == "horizontal" for leg in legends)
        if strip:
            assert height >= 1.5 * label_px and height == charts.strip_row(width)
        else:  # a heatmap that is no strip keeps square cells
            assert height == width


def test_a_map_on_a_canvas_describes_no_cell_and_its_file_describes_every_cell(monkeypatch):
    """A canvas has no element per cell for a screen reader to visit: the design drawn on one asks Vega-Lite for no
    sentence per mark, which Vega would otherwise write for every cell on every move; the chart as a whole keeps its
    text. A file drawn from it (an SVG a reader can walk) describes every cell again, as a map drawn as svg does."""
    import vl_convert

    monkeypatch.delenv(charts.RENDERER_ENV, raising=False)  # the app's own renderer: canvas

    m = np.arange(12.0).reshape(3, 4)
    data = charts.heatmap_frame(m, ["a", "b", "c"], ["w", "x", "y", "z"])
    for design in (charts.heatmap_chart(title="m").to_dict(), charts.grid_chart(columns=2).to_dict()):
        assert design["config"]["aria"] is False
        assert design["config"]["axis"]["labelColor"]  # added to the theme's config, not in place of it
    page_svg = vl_convert.vegalite_to_svg(data.inline(charts.heatmap_chart(title="m").to_dict()))
    assert page_svg.count('aria-label="key: ') == 0
    file_svg = vl_convert.vegalite_to_svg(file_spec(data.inline(charts.heatmap_chart(title="m").to_dict())))
    assert file_svg.count('aria-label="key: ') == 2 * m.size  # the cells and their printed numbers
    clickable = charts.heatmap_chart(title="m", select_rows=True).to_dict()  # svg on the page: its rows stay
    assert "aria" not in clickable.get("config", {})  # described, for a keyboard and a screen reader
    monkeypatch.setenv(charts.RENDERER_ENV, "svg")
    assert "aria" not in charts.heatmap_chart(title="m").to_dict().get("config", {})

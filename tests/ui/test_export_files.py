"""The PNG and SVG files of the export panel (ui.drawing.chart_files), made from chart specs without a page.

A file is drawn on the server from the chart's spec as the page sent it: the tests build that spec the way
ui.drawing.render does (the cached design, the numbers put inside it) and read the files back: the SVG's text and
cells, the PNG's pixels.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile

import numpy as np
import pytest
from PIL import Image

from ui.drawing import chart_files, charts, export, heatmap, render

TOKENS = "The cat sat on the warm mat".split()
TITLE = "softmax(Q Kᵀ / √d_k): click a row"
# Characters beyond ASCII that the pages put in titles and subtitles (ᵀ, √, ×, ·, the minus Vega prints), and
# in labels for a space, a new line, a tab and an empty token. (No sans-serif font at hand has ␍, for a
# carriage return: such a label alone falls back to another font.)
GLYPHS = "ᵀ√×·−␣⏎⇥∅"


def heatmap_spec(matrix, title: str = "", **settings) -> dict:
    """A heatmap's spec as ui.drawing.render sends it: the cached design with the numbers inside."""
    settings.setdefault("cell_px", charts.CELL_PX)
    design = render.spec_for(charts.heatmap_chart, title=title, font_scale=1.0, **settings)
    return charts.heatmap_frame(matrix, TOKENS, TOKENS).inline(design)


def scores() -> np.ndarray:
    """Raw scores of a 7-token sentence: signed, printed as '-3.74', five characters."""
    return np.random.default_rng(0).normal(scale=3.0, size=(7, 7))


def weights() -> np.ndarray:
    e = np.exp(scores())
    return e / e.sum(axis=1, keepdims=True)


def png_image(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def cells(svg: str) -> list[tuple[float, float, float, float, tuple[int, int, int]]]:
    """Every heatmap cell of an SVG: x, y, width, height in the file's pixels, and its fill."""
    ox, oy = map(float, re.search(r'<g fill="none" stroke-miterlimit="10" transform="translate\(([\d.]+),([\d.]+)\)"',
                                  svg).groups())
    found = re.findall(r'aria-roledescription="rect mark" d="M([\d.]+),([\d.]+)h([\d.]+)v([\d.]+)h-[\d.]+Z" '
                       r'fill="rgb\((\d+), (\d+), (\d+)\)"', svg)
    return [(ox + float(x), oy + float(y), float(w), float(h), (int(r), int(g), int(b)))
            for x, y, w, h, r, g, b in found]


def ink_per_cell(png: bytes, svg: str, scale: int = 2, inset: int = 3) -> list[int]:
    """Pixels inside each cell (away from its border) that are far from the cell's fill: its number."""
    image = png_image(png)
    counts = []
    for x, y, w, h, fill in cells(svg):
        x0, y0 = int((x + inset) * scale), int((y + inset) * scale)
        x1, y1 = int((x + w - inset) * scale), int((y + h - inset) * scale)
        inside = image[y0:y1, x0:x1]
        counts.append(int((np.abs(inside - np.array(fill)).max(axis=2) > 80).sum()))
    return counts


def text_marks(svg: str) -> list[tuple[str, str]]:
    """(the cell's printed text as the chart carries it, the text drawn) for every number of a heatmap."""
    marks = re.findall(r'<text aria-label="[^"]*; text: ([^;"]*);[^"]*"[^>]*aria-roledescription="text mark"'
                       r'[^>]*?(?:/>|>([^<]*)</text>)', svg)
    return [(want, got) for want, got in marks]


def without_numbers(spec: dict) -> dict:
    """The same file with no layer of numbers: same cells, same size."""
    spec = chart_files.file_spec(spec)
    inner = spec["layer"][0]
    inner["layer"] = [view for view in inner["layer"] if view["mark"]["type"] != "text"]
    return spec


# ---- the numbers in the cells ---------------------------------------------------------------------------


def test_the_numbers_did_not_fit_the_design_cells():
    """Why a diverging map lost its numbers in files: its numbers ('-3.74') are wider than its 34 px cells
    allow, so the chart prints none. On the page such a map takes its column's width and its cells grow;
    a file is drawn at the design's own size."""
    widest = max(len(t) for t in charts.heatmap_frame(scores(), TOKENS, TOKENS).columns["text"])
    assert widest == 5 and charts.CELL_PX < widest * charts.CHAR_EM * charts.CELL_TEXT_PX + 4
    spec = chart_files.file_spec(heatmap_spec(scores(), diverging=True))
    assert spec["width"]["step"] >= widest * charts.CHAR_EM * charts.CELL_TEXT_PX + 4
    assert spec["height"] == {"step": charts.CELL_PX}  # rows were tall enough already


def test_cells_that_fit_their_numbers_keep_their_size():
    spec = heatmap_spec(weights(), domain=(0.0, 1.0))  # '0.38': four characters fit 34 px
    assert chart_files.file_spec(spec)["width"] == spec["width"] == {"step": charts.CELL_PX}


def test_file_spec_leaves_the_drawn_spec_alone():
    spec = heatmap_spec(scores(), diverging=True)
    before = repr(spec)
    chart_files.file_spec(spec)
    assert repr(spec) == before  # the page's spec is cached and shared


@pytest.mark.parametrize("diverging", [True, False], ids=["purple-orange", "viridis"])
def test_png_and_svg_print_every_number(diverging):
    """Each cell of an annotated heatmap carries its number in the SVG, and the PNG draws it: inside every
    cell there is ink of another colour than the cell's, which the same file without its numbers lacks."""
    m = scores() if diverging else weights()
    spec = heatmap_spec(m, TITLE, diverging=diverging, **({} if diverging else {"domain": (0.0, 1.0)}))
    svg = chart_files.chart_file("svg", spec)
    printed = text_marks(svg)
    assert len(printed) == m.size
    assert all(got == want and want for want, got in printed), printed[:5]
    png = chart_files.chart_file("png", spec)
    ink = ink_per_cell(png, svg)
    assert len(ink) == m.size and min(ink) >= 20, ink
    bare = without_numbers(spec)
    blank = ink_per_cell(chart_files.chart_file("png", bare), chart_files.chart_file("svg", bare))
    assert len(blank) == m.size and max(blank) == 0, blank  # what counts as ink is the numbers alone


# ---- a clickable heatmap, and a file that cannot be made -------------------------------------------------


def test_a_clickable_heatmap_exports_as_png_and_svg():
    """The weights a student clicks a row of carry a selection: its parameters stay on the spec's outer
    view, where the converter finds their signals."""
    spec = heatmap_spec(weights(), TITLE, domain=(0.0, 1.0), select_rows=True)
    assert any(p["name"] == "pick" for p in spec["params"])
    svg = chart_files.chart_file("svg", spec)
    assert svg.lstrip().startswith("<svg") and chart_files.file_title(TITLE) in svg
    assert svg.count('aria-roledescription="rect mark"') >= weights().size
    image = png_image(chart_files.chart_file("png", spec))
    assert image.shape[1] > 2 * 7 * charts.CELL_PX and image.shape[0] > 2 * 7 * charts.CELL_PX


OUTLINE = (255, 75, 75)  # #ff4b4b, the outline of the picked row on the page


def red_pixels(png: bytes) -> int:
    return int((np.abs(png_image(png) - np.array(OUTLINE)).max(axis=2) < 40).sum())


def test_a_file_is_the_matrix_not_the_page_interaction(monkeypatch):
    """A clickable heatmap with its third row picked: on the page its title says "click a row" and the row is
    outlined in red; its files have neither (the title keeps the matrix's name) and no click selection."""
    picked = heatmap.with_param(heatmap_spec(weights(), TITLE, domain=(0.0, 1.0), select_rows=True),
                               charts.SHOWN_ROW, 2)
    with monkeypatch.context() as kept:  # drawn with the page's interaction, the outline is there to see
        kept.setattr(chart_files, "_without_interaction", lambda spec: None)
        assert red_pixels(chart_files._draw_file("png", picked)) > 100
    spec = chart_files.file_spec(picked)
    assert spec["title"]["text"] == "softmax(Q Kᵀ / √d_k)"
    assert [p for p in spec["params"] if p["name"] == charts.SHOWN_ROW] == [{"name": charts.SHOWN_ROW, "value": -1}]
    assert not any("select" in p for p in spec["params"])
    svg = chart_files.chart_file("svg", picked)
    assert "click" not in svg and "softmax(Q Kᵀ / √d_k)" in svg
    assert "#ff4b4b" not in svg.lower() and "rgb(255, 75, 75)" not in svg
    assert red_pixels(chart_files.chart_file("png", picked)) == 0


@pytest.mark.parametrize("title, name", [
    ("softmax(Q Kᵀ / √d_k): click a row", "softmax-q-kt-sqrt-d-k"),
    ("Head 2 weights: click a row", "head-2-weights"),
    ("Attention, layer 1 · head 2", "attention-layer-1-head-2"),
    ("α = 0.5 × β²", "alpha-0-5-x-beta-2"),
    ("P(next = b | a)", "p-next-b-a"),
    ("日本", "matrix"),
])
def test_file_names_spell_out_symbols_and_greek_letters(title, name):
    assert export.slug(title) == name


def test_zip_names_are_readable_and_unique():
    """Two titles that differ only by a Greek letter or a symbol keep different, readable names in a ZIP."""
    items = [{"title": title, "matrix": np.eye(2), "rows": ["a", "b"], "cols": ["a", "b"]}
             for title in ("scores Q Kᵀ", "scores Q K", "weights, α = 1", "weights, β = 1", "weights, β = 1")]
    with zipfile.ZipFile(io.BytesIO(export.all_csv_zip(items))) as zf:
        names = zf.namelist()
    assert names == ["01-scores-q-kt.csv", "02-scores-q-k.csv", "03-weights-alpha-1.csv", "04-weights-beta-1.csv",
                     "05-weights-beta-1.csv"]
    assert len(set(names)) == len(names) and all(n.isascii() for n in names)


def test_a_conversion_that_fails_says_why():
    """A selection declared one level down (as the page sent it before params stayed outside) cannot be
    drawn: the error names the problem, without the converter's script stack."""
    spec = heatmap_spec(weights(), TITLE, domain=(0.0, 1.0), select_rows=True)
    spec["layer"][0]["params"] = spec.pop("params")
    with pytest.raises(chart_files.ExportError) as failed:
        chart_files.chart_file("png", spec)
    said = str(failed.value)
    assert "Unrecognized signal name" in said and "PNG" in said
    assert "\n" not in said and " at " not in said, said


def test_a_file_is_made_once_for_a_click_and_a_failure_is_tried_again(monkeypatch):
    """A click asks for its file twice at once (the download, and the rerun that checks it): one is made."""
    calls, release = [], threading.Event()

    def slow(kind, spec):
        calls.append(kind)
        release.wait(5)
        return b"file"

    monkeypatch.setattr(chart_files, "_draw_file", slow)
    monkeypatch.setattr(chart_files, "_MADE", {})
    spec = {"mark": "point", "description": "made once"}
    got = []
    askers = [threading.Thread(target=lambda: got.append(chart_files.chart_file("png", spec))) for _ in range(2)]
    for asker in askers:
        asker.start()
    release.set()
    for asker in askers:
        asker.join(10)
    assert got == [b"file", b"file"] and calls == ["png"]

    def broken(kind, spec):
        calls.append(kind)
        raise RuntimeError("Vega-Lite to SVG conversion failed:\nError: no\n    at f (x.js:1:1)")

    monkeypatch.setattr(chart_files, "_draw_file", broken)
    for _ in range(2):
        with pytest.raises(chart_files.ExportError, match=r"SVG conversion failed: Error: no$"):
            chart_files.chart_file("svg", spec)
    assert calls == ["png", "svg", "svg"]  # not remembered: a later click tries again


# ---- one font ---------------------------------------------------------------------------------------------


def test_the_file_font_ships_with_the_requirements_and_has_every_glyph():
    """DejaVu Sans comes with matplotlib, which requirements.txt installs: no system font is assumed."""
    folder = chart_files.font_directory()
    assert folder is not None, "the file font is missing: requirements.txt must install matplotlib"
    ttlib = pytest.importorskip("fontTools.ttLib")  # installed with matplotlib
    for name in ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf"):  # titles are bold, labels regular
        covered = ttlib.TTFont(folder / name).getBestCmap()
        missing = [c for c in GLYPHS if ord(c) not in covered]
        assert not missing, (name, missing)


def test_every_text_of_a_file_is_in_the_file_font():
    spec = heatmap_spec(weights(), TITLE, domain=(0.0, 1.0), subtitle="weights · shape (7, 7) = (T, T)")
    svg = chart_files.chart_file("svg", spec)
    families = set(re.findall(r'font-family="([^"]*)"', svg))
    assert families == {chart_files.FILE_FONTS}, families
    title = re.escape(chart_files.file_title(TITLE))  # the file's title, without the page's "click a row"
    assert re.search(rf'font-family="{chart_files.FILE_FONTS}"[^>]*>{title}</text>', svg)


def title_png(text: str) -> np.ndarray:
    """A chart of nothing but its title, large, as a file draws it; the title's ink as True."""
    spec = {"title": {"text": text, "anchor": "start", "fontSize": 40}, "width": 300, "height": 10,
            "mark": "rect", "data": {"values": []}}
    return png_image(chart_files.chart_file("png", spec)).min(axis=2) < 128


def test_a_title_with_a_superscript_stays_in_one_sans_serif_font():
    """The K of 'Kᵀ' is drawn exactly as the K of 'K' (a title with a glyph the font lacked was drawn
    whole in a serif font), and the ᵀ is a raised T, not the box of a missing glyph."""
    plain, raised = title_png("K"), title_png("Kᵀ")
    assert plain.shape == raised.shape
    columns = np.flatnonzero(plain.any(axis=0))
    rows = np.flatnonzero(plain.any(axis=1))
    k_start, k_end = columns[0], columns[-1] + 1
    left = k_start + (k_end - k_start) * 3 // 4  # the ᵀ's bar reaches over the K's right arm
    np.testing.assert_array_equal(raised[:, :left], plain[:, :left])
    extra = raised[:, k_end:]
    assert extra.any(), "the ᵀ is not drawn"
    extra_rows = np.flatnonzero(extra.any(axis=1))
    cap_top, baseline = rows[0], rows[-1]
    assert extra_rows[-1] < cap_top + 0.7 * (baseline - cap_top), "drawn down to the baseline: a missing glyph"

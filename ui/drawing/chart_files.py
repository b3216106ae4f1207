"""Chart files: a chart drawn on the server as a PNG or an SVG, from the spec the page sent, for the export panel.

A file is drawn from the chart's spec with two changes (file_spec): one font that has every character the
titles use, and cells wide enough for their numbers. vl-convert draws it (Vega-Lite in a JavaScript engine
inside the Python package: no browser and no network), imported on first use, since only an export needs it.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import re
import sys
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ui.drawing.chart_data import ChartData
from ui.drawing.charts import CHAR_EM, SHOWN_ROW

# The files' font. The converter's own sans-serif font lacks ␣, which labels use, and the older copy of it a
# server may have lacks ᵀ too: a title with one was drawn whole in a serif font that had it, or with a box
# where no font had it. DejaVu Sans has them all; matplotlib ships it, so every machine that installs the
# requirements has it.
FILE_FONT = "DejaVu Sans"
FILE_FONTS = f"{FILE_FONT}, sans-serif"
FILE_CHAR_EM = 0.6  # the width of a printed number's character in DejaVu Sans, in ems (a digit is 0.64)
CONTAINER_PX = 480  # the width of a file of a chart that takes its column's width on the page (bars, lines)
_FONTS_LOCK = threading.Lock()  # the font is given to the converter once, whichever file is asked for first


class ExportError(RuntimeError):
    """A chart that could not be drawn as a file; the message says why, as the converter put it."""


def _marks(view: dict):
    """The mark definitions of a view and of the views inside it (layers, concatenations, a facet's spec)."""
    if isinstance(view.get("mark"), dict):
        yield view["mark"]
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for inner in view.get(key, []):
            yield from _marks(inner)
    if isinstance(view.get("spec"), dict):
        yield from _marks(view["spec"])


def _room_for_numbers(spec: dict, text_px: float) -> None:
    """Widen an annotated heatmap's cells to fit its widest number in the file's font. A heatmap prints numbers
    only in cells wide enough for them (ui.drawing.charts.heatmap_chart): on the page a map whose numbers do not fit
    takes its column's width and its cells grow, but a file is drawn at the design's own cell size."""
    texts = ChartData.from_spec(spec).columns.get("text") or []
    widest = max(map(len, texts), default=0)
    if not widest:
        return
    # at least the chart's own test (CHAR_EM a character), so the cells pass it
    need = {"width": math.ceil(widest * max(FILE_CHAR_EM, CHAR_EM) * text_px) + 4, "height": text_px + 2}
    for side, px in need.items():
        size = spec.get(side)
        if isinstance(size, dict) and size.get("step", px) < px:
            spec[side] = {**size, "step": px}


# What a title says of how to use the chart on the page: a file has no such use, so its title leaves it out.
_HINT = re.compile(r"\s*[:·]\s*click (?:a|any|one) (?:row|cell|bar)\b.*$", re.IGNORECASE)


def file_title(title: str) -> str:
    """A chart's title without its hint of how to use it on the page: 'weights: click a row' -> 'weights'."""
    return _HINT.sub("", title)


def _without_interaction(spec: dict) -> None:
    """The file draws the matrix, not the page's interaction: no hint in the title, no outlined row (the
    clickable heatmap's SHOWN_ROW parameter set to none) and no click selection (a plain parameter of its name
    holding no click, for the outline that reads it); a selection bound to an input
    (a chart's own control: ui.state.chart_controls) stays, without its input, at the value the page shows."""
    title = spec.get("title")
    if isinstance(title, str):
        spec["title"] = file_title(title)
    elif isinstance(title, dict) and isinstance(title.get("text"), str):
        spec["title"] = {**title, "text": file_title(title["text"])}
    if "params" in spec:
        clicks = [p["name"] for p in spec["params"] if "select" in p and "bind" not in p]
        spec["params"] = [{**p, "value": -1} if p.get("name") == SHOWN_ROW else
                          {k: v for k, v in p.items() if k != "bind"} for p in spec["params"]
                          if "select" not in p or "bind" in p]
        spec["params"] += [{"name": name, "value": {}} for name in clicks]  # a click read by an outline: none made
        if not spec["params"]:
            del spec["params"]


def file_spec(spec: dict) -> dict:
    """The chart as a file draws it: in the file font throughout, its numbers with room to print, every mark
    described for a screen reader, and none of the page's interaction (_without_interaction)."""
    spec = copy.deepcopy(spec)
    _without_interaction(spec)
    if spec.get("width") == "container":  # bars and lines take their column's width on the page; a file has none
        spec["width"] = CONTAINER_PX
    marks = list(_marks(spec))
    for mark in marks:
        if "font" in mark:
            mark["font"] = FILE_FONTS
    # a file's marks are described for a screen reader, each cell its own sentence (a map drawn on a canvas on the
    # page leaves them out: ui.drawing.charts.on_canvas)
    spec["config"] = {**{k: v for k, v in spec.get("config", {}).items() if k != "aria"}, "font": FILE_FONTS}
    text_px = [mark["fontSize"] for mark in marks if mark.get("type") == "text" and "fontSize" in mark]
    if text_px:
        _room_for_numbers(spec, max(text_px))
    return spec


def font_directory() -> Path | None:
    """The folder of the file font's TrueType files: matplotlib's data files, looked up on the import path
    without importing it (nothing else of matplotlib is used, and its import costs a few hundred ms)."""
    for entry in sys.path:
        folder = Path(entry or ".") / "matplotlib" / "mpl-data" / "fonts" / "ttf"
        if (folder / "DejaVuSans.ttf").is_file():
            return folder
    return None


@functools.cache
def _fonts_registered() -> bool:
    """Give the converter the file font, once per process (callers hold _FONTS_LOCK)."""
    import vl_convert

    folder = font_directory()
    if folder is None:
        warnings.warn(f"{FILE_FONT} was not found (matplotlib ships it): chart files fall back to another font "
                      "and may draw ᵀ and √ in a serif font, or not at all.", stacklevel=2)
        return False
    vl_convert.register_font_directory(str(folder))
    return True


def _draw_file(kind: str, spec: dict) -> bytes | str:
    import vl_convert  # imported on first use: only an export needs it

    with _FONTS_LOCK:
        _fonts_registered()
    spec = file_spec(spec)
    return vl_convert.vegalite_to_png(spec, scale=2) if kind == "png" else vl_convert.vegalite_to_svg(spec)


def _reason(error: Exception) -> str:
    """What went wrong, without the converter's script stack: 'Vega-Lite to PNG conversion failed: Error: …'."""
    said = " ".join(line for line in map(str.strip, str(error).splitlines()) if line and not line.startswith("at "))
    return said[:300] or type(error).__name__


@dataclass
class _Made:
    done: threading.Event = field(default_factory=threading.Event)
    file: bytes | str = b""
    error: ExportError | None = None


_MADE: dict[bytes, _Made] = {}  # the last few files made, by what they were made from, oldest first
_MADE_MAX = 8
_MADE_LOCK = threading.Lock()


def chart_key(kind: str, spec: dict) -> bytes:
    """What a chart file is made from, as a digest: the file's kind and the chart's spec."""
    return hashlib.blake2b(json.dumps([kind, spec], sort_keys=True).encode(), digest_size=16).digest()


def chart_file(kind: str, spec: dict) -> bytes | str:
    """The chart as a PNG (bytes) or an SVG (text). A class asks for the same chart at about the same time
    (the lesson's default view): the first press asks the converter, the others wait for its answer.
    Raises ExportError."""
    key = chart_key(kind, spec)
    with _MADE_LOCK:
        made = _MADE.get(key)
        mine = made is None
        if mine:
            made = _MADE[key] = _Made()
            while len(_MADE) > _MADE_MAX:
                del _MADE[next(iter(_MADE))]
    if mine:
        try:
            made.file = _draw_file(kind, spec)
        except Exception as error:  # whatever the converter raises, the student is told
            made.error = ExportError(_reason(error))
            with _MADE_LOCK:  # a later click tries again
                _MADE.pop(key, None)
        finally:
            made.done.set()
    made.done.wait()
    if made.error is not None:
        raise made.error
    return made.file

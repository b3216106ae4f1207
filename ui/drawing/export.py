"""Export what is on screen: every matrix as CSV, every chart as PNG or SVG, all matrices as one ZIP.

The heatmap helper in ui.drawing.render records each matrix it draws in this run; the page's footer offers
them here, in a panel filled only while it is open, so an ordinary slider move costs the panel nothing.

Every button holds its file's bytes, made in the run that drew it, never a function to call at the click:
Streamlit stores a file made at a click without tying it to the session, and deletes such a file at the
second end of a run anywhere on the server, so in a busy class the browser's fetch of it could come too
late. A file made in a run stays until this session's next full run, or until a rerun of the panel puts
another in its place. The CSV of the picked matrix is made in every run of the open panel (about a
millisecond); the PNG, the SVG and the ZIP cost more (the converter, every matrix), so their first press
makes the file and a Save button under it saves it. A page whose matrices change on their
own (Training, while it trains) holds the panel: it says why and offers no file (hold).

A chart file is drawn from the chart's spec with two changes (file_spec): one font that has every character
the titles use, and cells wide enough for their numbers. A file that could not be made is said in the panel.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import io
import json
import math
import re
import sys
import threading
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from ui.drawing.chart_data import ChartData
from ui.drawing.charts import CHAR_EM, unique_labels
from ui.text import escape_md

_DRAWN = "_drawn_matrices"
_HELD = "_export_held"  # why the page's matrices cannot be exported now (they change on their own), or absent
_MADE_FILES = "_export_made"  # the last file made on request of each kind: {kind: (what it was made from, bytes)}
_FAILED = "_export_failed"  # the message of a PNG or SVG that could not be made, for the panel to show once
PICK_KEY = "export_pick"  # prefix of the matrix picker's key
OPEN_KEY = "export_open"  # the export expander's state: True while it is open
# The files' font. The converter's own sans-serif font lacks ␣, which labels use, and the older copy of it a
# server may have lacks ᵀ too: a title with one was drawn whole in a serif font that had it, or with a box
# where no font had it. DejaVu Sans has them all; matplotlib ships it, so every machine that installs the
# requirements has it.
FILE_FONT = "DejaVu Sans"
FILE_FONTS = f"{FILE_FONT}, sans-serif"
FILE_CHAR_EM = 0.6  # the width of a printed number's character in DejaVu Sans, in ems (a digit is 0.64)
_FONTS_LOCK = threading.Lock()  # the font is given to the converter once, whichever download comes first


class ExportError(RuntimeError):
    """A chart that could not be drawn as a file; the message says why, as the converter put it."""


def start_run() -> None:
    """A full run of the page: its matrices are recorded afresh."""
    st.session_state[_DRAWN] = []
    st.session_state.pop(_HELD, None)  # a page that holds its matrices says so again in each run


def record(title: str, matrix, row_labels, col_labels, spec: dict | Callable[[], dict]) -> None:
    """Remember a drawn heatmap (its numbers, and its chart as drawn, data included) for the export panel.
    spec may be a function that builds it, for a chart not drawn as such (a map of a grid)."""
    st.session_state.setdefault(_DRAWN, []).append(
        {"title": title or "matrix", "matrix": np.asarray(matrix), "rows": list(row_labels),
         "cols": list(col_labels), "spec": spec})


def drawn() -> list[dict]:
    return list(st.session_state.get(_DRAWN, []))


def keep_only(items: list[dict]) -> None:
    """Forget every matrix recorded after `items` (a drawn() taken earlier in this script run): a part of
    the page that reruns alone (page.live) records its matrices again."""
    st.session_state.setdefault(_DRAWN, [])[:] = items


def panel_open() -> bool:
    return bool(st.session_state.get(OPEN_KEY))


def slug(title: str) -> str:
    """A safe file name from a chart title: letters, digits, dashes only."""
    name = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()
    return name[:60] or "matrix"


def matrix_csv(matrix, row_labels, col_labels) -> str:
    """The matrix with its labels as CSV: first column the row token, header the column tokens."""
    df = pd.DataFrame(np.asarray(matrix), index=unique_labels(list(row_labels)),
                      columns=unique_labels(list(col_labels)))
    return df.to_csv(float_format="%.6g")


def spec_of(item: dict) -> dict:
    """A recorded chart's spec (built now if it was recorded as a function)."""
    spec = item["spec"]
    return spec() if callable(spec) else spec


# ---- chart files ----------------------------------------------------------------------------------------


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


def file_spec(spec: dict) -> dict:
    """The chart as a file draws it: in the file font throughout, its numbers with room to print."""
    spec = copy.deepcopy(spec)
    marks = list(_marks(spec))
    for mark in marks:
        if "font" in mark:
            mark["font"] = FILE_FONTS
    spec["config"] = {**spec.get("config", {}), "font": FILE_FONTS}
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


def _chart_key(kind: str, spec: dict) -> bytes:
    return hashlib.blake2b(json.dumps([kind, spec], sort_keys=True).encode(), digest_size=16).digest()


def chart_file(kind: str, spec: dict) -> bytes | str:
    """The chart as a PNG (bytes) or an SVG (text). A class asks for the same chart at about the same time
    (the lesson's default view): the first press asks the converter, the others wait for its answer.
    Raises ExportError."""
    key = _chart_key(kind, spec)
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


def item_csv(item: dict) -> str:
    return matrix_csv(item["matrix"], item["rows"], item["cols"])


def all_csv_zip(items: list[dict]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, item in enumerate(items):
            zf.writestr(f"{i + 1:02d}-{slug(item['title'])}.csv", item_csv(item))
    return buf.getvalue()


# ---- the panel ------------------------------------------------------------------------------------------

# The files made on request: the button's label and help, the saved file's name (None: the picked matrix's
# name), its type.
ON_REQUEST = {
    "png": ("PNG", "Makes a PNG picture of the picked matrix's chart; a Save button under it then saves it.", None,
            "image/png"),
    "svg": ("SVG", "Makes an SVG drawing of the picked matrix's chart; a Save button under it then saves it.", None,
            "image/svg+xml"),
    "zip": ("All as CSV (ZIP)", "Makes one ZIP holding a CSV of every matrix on this page; a Save button under it "
            "then saves it.", "attention-lab.zip", "application/zip"),
}


def hold(reason: str | None) -> None:
    """A page whose matrices change on their own (training) says why the panel offers no file now, or None."""
    if reason:
        st.session_state[_HELD] = reason
    else:
        st.session_state.pop(_HELD, None)


def _source(kind: str, items: list[dict], index: int) -> bytes:
    """What a file of this kind is made from, as a digest: the picked chart's spec for PNG and SVG, every
    matrix with its title and labels for the ZIP. A made file is offered while its source is on screen."""
    if kind != "zip":
        return _chart_key(kind, spec_of(items[index]))
    digest = hashlib.blake2b(digest_size=16)
    for item in items:
        digest.update(json.dumps([item["title"], item["rows"], item["cols"], item["matrix"].shape,
                                  str(item["matrix"].dtype)]).encode())
        digest.update(np.ascontiguousarray(item["matrix"]).tobytes())
    return digest.digest()


def _make(kind: str, items: list[dict], index: int) -> None:
    """The first press of PNG, SVG or ZIP (its callback: the matrices are those of the run that drew the
    button, the ones on screen). A file that cannot be made is said in the panel instead."""
    try:
        data = all_csv_zip(items) if kind == "zip" else chart_file(kind, spec_of(items[index]))
    except ExportError as error:
        title = escape_md(items[index]["title"])
        st.session_state[_FAILED] = (f"**The {kind.upper()} of “{title}” could not be made.** The chart "
                                     f"converter said: {escape_md(error)}. Its numbers are still in the CSV.")
        return
    st.session_state.setdefault(_MADE_FILES, {})[kind] = (_source(kind, items, index), data)


def _file_button(column, kind: str, items: list[dict], index: int, name: str) -> None:
    """PNG, SVG or ZIP: a button that makes the file and, under it once the file is made from what is on screen
    and picked now, one that saves it. The first stays where it was, so a keyboard keeps its focus there and
    the next Tab reaches Save. (The source is compared only once a file of this kind was made.)"""
    label, help_text, file_name, mime = ON_REQUEST[kind]
    file_name = file_name or f"{name}.{kind}"
    column.button(label, key=f"make_{kind}", on_click=_make, args=(kind, items, index), help=help_text)
    made = st.session_state.get(_MADE_FILES, {}).get(kind)
    if made is not None and made[0] == _source(kind, items, index):
        column.download_button(f"Save {kind.upper()}", made[1], file_name=file_name, mime=mime,
                               key=f"export_{kind}", on_click="ignore", icon=":material/download:")


def export_panel() -> None:
    """An expander: pick any matrix drawn on this page and download it as CSV, PNG or SVG, or all as a ZIP.

    One picker and four buttons whatever the number of matrices: a button per matrix would cost
    a widget each on every rerun (a page with 30 heatmaps would draw 90 buttons).
    """
    if not drawn():
        return
    # Filled only while open, so a slider move does not draw the picker and the buttons; opening it reruns
    # the page. The label says no count: a label that changed would close the expander.
    box = st.expander("Export the matrices on this page (CSV, PNG, SVG)", key=OPEN_KEY, on_change="rerun")
    if box.open:
        with box:  # a fragment: a pick or a press reruns the panel alone
            st.fragment(_panel)()


def _panel() -> None:
    items = drawn()
    if not items:  # a part of the page that reran alone and failed part way: nothing to offer until it draws
        return
    held = st.session_state.get(_HELD)
    if held:
        st.info(held, icon=":material/pause_circle:")
        return
    st.caption(f"{len(items)} {'matrix' if len(items) == 1 else 'matrices'} on this page.")
    # Named by title alone, not shape: a slider that reshapes a matrix keeps the choice on that matrix
    # (and a stored choice whose text changed under it would no longer be among the options).
    names = [f"{i + 1}. {item['title']}" for i, item in enumerate(items)]
    chosen = st.selectbox("Matrix", names, key=PICK_KEY)
    index = names.index(chosen) if chosen in names else 0
    st.caption(f"shape {'×'.join(str(n) for n in items[index]['matrix'].shape)}")
    name = slug(items[index]["title"])
    cols = st.columns(4)
    cols[0].download_button("CSV", item_csv(items[index]), file_name=f"{name}.csv", mime="text/csv",
                            key="export_csv", on_click="ignore")
    for col, kind in zip(cols[1:], ON_REQUEST):
        _file_button(col, kind, items, index, name)
    st.caption("CSV saves at once. PNG, SVG and the ZIP take a moment to make: a press makes the file, and the "
               "Save button that appears under it saves it.")
    failed = st.session_state.pop(_FAILED, None)  # said once, in the run the press started
    if failed:
        st.error(failed, icon=":material/error:")

"""Export what is on screen: each matrix drawn as CSV, its chart as PNG or SVG, every CSV in one ZIP.

Whatever draws a matrix records it for this run (record): a heatmap (ui.drawing.heatmap.draw), a chart drawn
with its numbers as a matrix (ui.drawing.render.show), each map of a layers x heads grid
(ui.sections.views.record_maps) and the knockout table (ui.sections.knockout_views.record_table). The page's
footer (ui.frame.page.closing) offers them here, outside presenter mode, in a panel filled only while it is open,
so an ordinary slider move costs the panel nothing.

Every button holds its file's bytes, made in the run that drew it, never a function to call at the click:
Streamlit stores a file made at a click without tying it to the session, and deletes such a file at the
second end of a run anywhere on the server, so in a busy class the browser's fetch of it could come too
late. A file made in a run stays until this session's next full run, or until a rerun of the panel puts
another in its place. The CSV of the picked matrix is made in every run of the open panel (about a
millisecond); the PNG, the SVG and the ZIP cost more (the converter, every matrix), so their first press
makes the file and a Save button under it saves it. A page whose matrices change on their
own (Training, while it trains) holds the panel: it says why and offers no file (hold).

PNG and SVG files are drawn by ui.drawing.chart_files; one that could not be made is said in the panel.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import unicodedata
import zipfile
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from ui.drawing.chart_files import ExportError, chart_file, chart_key, file_title
from ui.drawing.charts import unique_labels
from ui.state import parts
from ui.text import escape_md

_DRAWN = "_drawn_matrices"  # in page order: the matrices drawn, and a mark where each live part begins
_AT = "_export_at"  # while a live part reruns alone: where its records go, in place of its last ones
_HELD = "_export_held"  # why the page's matrices cannot be exported now (they change on their own), or absent
_MADE_FILES = "_export_made"  # the last file made on request of each kind: {kind: (what it was made from, bytes)}
_FAILED = "_export_failed"  # the message of a PNG or SVG that could not be made, for the panel to show once
PICK_KEY = "export_pick"  # prefix of the matrix picker's key
OPEN_KEY = "export_open"  # the export expander's state: True while it is open


def start_run() -> None:
    """A full run of the page: its matrices are recorded afresh."""
    st.session_state[_DRAWN] = []
    st.session_state.pop(_AT, None)
    st.session_state.pop(_HELD, None)  # a page that holds its matrices says so again in each run


def _put(entry: dict) -> None:
    """Add a record in page order: at the end, or where a live part rerunning alone puts its own."""
    items = st.session_state.setdefault(_DRAWN, [])
    at = st.session_state.get(_AT)
    if at is None:
        items.append(entry)
    else:
        items.insert(at, entry)
        st.session_state[_AT] = at + 1


def record(title: str, matrix, row_labels, col_labels, spec: dict | Callable[[], dict] | None) -> None:
    """Remember a drawn heatmap (its numbers, and its chart as drawn, data included) for the export panel.
    spec may be a function that builds it (a chart not drawn as such, a map of a grid; or one drawn as JSON),
    or None for numbers drawn as a table: those are offered as CSV only. A title's hint of how to use the chart on
    the page (": click a row") is left out: the file is the matrix, not the interaction."""
    _put({"title": file_title(title) or "matrix", "matrix": np.asarray(matrix), "rows": list(row_labels),
          "cols": list(col_labels), "spec": spec, "parts": parts.current()})


def drawn() -> list[dict]:
    """The matrices on the page, in the order it drew them."""
    return [item for item in st.session_state.get(_DRAWN, []) if "matrix" in item]


def part_begins(part: str, alone: bool) -> None:
    """A live part (ui.frame.page.live) starts to draw, inside ui.state.parts.drawing(part). In the page's run
    it marks its place; rerunning alone, it forgets what it recorded last time (its own parts' too), and what
    it records now goes in that place until part_ends."""
    items = st.session_state.setdefault(_DRAWN, [])
    mark = next((i for i, item in enumerate(items) if item.get("part") == part), None)
    if not alone or mark is None:
        _put({"part": part, "parts": parts.current()[:-1]})
        return
    end = mark + 1
    while end < len(items) and part in items[end]["parts"]:
        end += 1
    del items[mark + 1:end]
    st.session_state[_AT] = mark + 1


def part_ends(alone: bool) -> None:
    """The live part that began (part_begins) has drawn: records go at the end again."""
    if alone:
        st.session_state.pop(_AT, None)


def held() -> bool:
    """The page holds its matrices now (they change on their own): the panel offers no file."""
    return _HELD in st.session_state


def panel_open() -> bool:
    return bool(st.session_state.get(OPEN_KEY))


# Symbols the titles use, spelled out in a file name (Greek letters are spelled by their Unicode names).
_SPELLED = {"√": " sqrt ", "×": " x ", "−": "-", "·": " ", "Σ": " sum ", "→": " to ", "∞": " inf ",
            "⊙": " times ", "∅": " empty ", "␣": " space ", "⏎": " newline ", "⇥": " tab "}


def _spelled(char: str) -> str:
    """One character of a title in ASCII: as it is, spelled out (α -> alpha, √ -> sqrt), its plain form
    (ᵀ -> T, ² -> 2, ₖ -> k), or nothing."""
    if char.isascii():
        return char
    if char in _SPELLED:
        return _SPELLED[char]
    name = unicodedata.name(char, "")
    if name.startswith(("GREEK SMALL LETTER ", "GREEK CAPITAL LETTER ")):
        return f" {name.split()[-1].lower()} "
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    return plain or " "


def slug(title: str) -> str:
    """A safe file name from a chart title, readable: letters, digits, dashes only, with the symbols and Greek
    letters spelled out ('softmax(Q Kᵀ / √d_k)' -> 'softmax-q-kt-sqrt-d-k', 'α' -> 'alpha')."""
    ascii_title = "".join(map(_spelled, file_title(title)))
    name = re.sub(r"[^A-Za-z0-9]+", "-", ascii_title).strip("-").lower()
    return name[:60].rstrip("-") or "matrix"


def matrix_csv(matrix, row_labels, col_labels) -> str:
    """The matrix with its labels as CSV: first column the row token, header the column tokens."""
    df = pd.DataFrame(np.asarray(matrix), index=unique_labels(list(row_labels)),
                      columns=unique_labels(list(col_labels)))
    return df.to_csv(float_format="%.6g")


def spec_of(item: dict) -> dict:
    """A recorded chart's spec (built now if it was recorded as a function)."""
    spec = item["spec"]
    return spec() if callable(spec) else spec


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
        return chart_key(kind, spec_of(items[index]))
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

"""Export what is on screen: every matrix as CSV, every chart as PNG or SVG, all matrices as one ZIP.

The heatmap helper in ui.render records each matrix it draws in this run; the page's footer offers
them here. Files are made only when a button is clicked (download_button with a callable), so an
export costs nothing on an ordinary slider move.
"""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pandas as pd
import streamlit as st

from ui.charts import unique_labels

_DRAWN = "_drawn_matrices"
PICK_KEY = "export_pick"  # prefix of the matrix picker's key
OPEN_KEY = "export_open"  # the export expander's state: True while it is open


def start_run() -> None:
    st.session_state[_DRAWN] = []


def record(title: str, matrix, row_labels, col_labels, spec: dict) -> None:
    """Remember a drawn heatmap (its numbers, and its chart as drawn, data included) for the export panel."""
    st.session_state.setdefault(_DRAWN, []).append(
        {"title": title or "matrix", "matrix": np.asarray(matrix), "rows": list(row_labels),
         "cols": list(col_labels), "spec": spec})


def drawn() -> list[dict]:
    return list(st.session_state.get(_DRAWN, []))


def keep_only(items: list[dict]) -> None:
    """Forget every matrix recorded after `items` (a drawn() taken earlier in this script run): a part of
    the page that reruns alone (page.live) records its matrices again."""
    st.session_state[_DRAWN] = list(items)


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


def chart_svg(spec: dict) -> str:
    import vl_convert  # imported on first use: only an export needs it

    return vl_convert.vegalite_to_svg(spec)


def chart_png(spec: dict) -> bytes:
    import vl_convert

    return vl_convert.vegalite_to_png(spec, scale=2)


def all_csv_zip(items: list[dict]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, item in enumerate(items):
            zf.writestr(f"{i + 1:02d}-{slug(item['title'])}.csv",
                        matrix_csv(item["matrix"], item["rows"], item["cols"]))
    return buf.getvalue()


def export_panel() -> None:
    """An expander: pick any matrix drawn on this page and download it as CSV, PNG or SVG, or all as a ZIP.

    One picker and four buttons whatever the number of matrices: a button per matrix would cost
    a widget each on every rerun (a page with 30 heatmaps would draw 90 buttons).
    """
    items = drawn()
    if not items:
        return
    # Filled only while open, so a slider move does not draw the picker and the buttons; opening it reruns
    # the page. The label says no count: a label that changed would close the expander.
    box = st.expander("Export the matrices on this page (CSV, PNG, SVG)", key=OPEN_KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption(f"{len(items)} {'matrix' if len(items) == 1 else 'matrices'} on this page.")
        # Named by title alone, not shape: a slider that reshapes a matrix keeps the choice on that matrix
        # (and a stored choice whose text changed under it would no longer be among the options).
        names = [f"{i + 1}. {item['title']}" for i, item in enumerate(items)]
        chosen = st.selectbox("Matrix", names, key=PICK_KEY)
        item = items[names.index(chosen) if chosen in names else 0]
        st.caption(f"shape {'×'.join(str(n) for n in item['matrix'].shape)}")
        name = slug(item["title"])
        cols = st.columns(4)
        cols[0].download_button("CSV", lambda: matrix_csv(item["matrix"], item["rows"], item["cols"]),
                                file_name=f"{name}.csv", mime="text/csv", key="export_csv", on_click="ignore")
        cols[1].download_button("PNG", lambda: chart_png(item["spec"]), file_name=f"{name}.png",
                                mime="image/png", key="export_png", on_click="ignore")
        cols[2].download_button("SVG", lambda: chart_svg(item["spec"]), file_name=f"{name}.svg",
                                mime="image/svg+xml", key="export_svg", on_click="ignore")
        cols[3].download_button("All as CSV (ZIP)", lambda: all_csv_zip(items), file_name="attention-lab.zip",
                                mime="application/zip", key="export_zip", on_click="ignore")

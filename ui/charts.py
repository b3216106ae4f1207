"""Chart builders: arrays and labels in, alt.Chart out. No Streamlit here, so every builder is unit-tested.

Every builder has two halves: a `*_frame` function that turns arrays into a tidy DataFrame (the data),
and a `*_chart` function that designs the chart from a few small settings (the spec). The spec does not
depend on the numbers, only on the shape and settings, so ui.render caches it once and sends only the
data on every slider move.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

# Colour-blind-safe, and monotone in lightness so they also read in greyscale and on a washed-out projector.
SEQUENTIAL = "viridis"  # weights, probabilities: 0..1
DIVERGING = "purpleorange"  # signed values (Q, K, V, scores): centred on 0
ANNOTATE_MAX_CELLS = 16  # print values in cells up to 16 x 16; beyond that the text is unreadable
CELL_PX = 34
FONT = "sans-serif"


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Axis labels must be unique: a repeated token gets its position, 'the' -> 'the (4)'."""
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return [f"{t} ({i})" if counts[t] > 1 else t for i, t in enumerate(tokens)]


def heatmap_frame(matrix, row_labels: Sequence[str], col_labels: Sequence[str], decimals: int = 2,
                  with_text: bool = True) -> pd.DataFrame:
    """(R, C) matrix -> one row per cell: row, col, their indices, value, the printed text, text colour.

    with_text=False leaves out the text and its colour, for a chart that prints no numbers: every
    column is sent to the browser on every rerun.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"A heatmap needs a 2-D matrix, got shape {m.shape}.")
    R, C = m.shape
    rows, cols = unique_labels(list(row_labels)), unique_labels(list(col_labels))
    if len(rows) != R or len(cols) != C:
        raise ValueError(f"{R} x {C} matrix but {len(rows)} row labels and {len(cols)} column labels.")
    ri, ci = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    flat = m.ravel()
    finite = np.isfinite(flat)
    lo = flat[finite].min() if finite.any() else 0.0
    hi = flat[finite].max() if finite.any() else 1.0
    span = (hi - lo) or 1.0
    # Cell text is only printed up to 16 x 16; formatting 16,000 unprinted strings cost a third of a
    # large page's rerun. Categorical labels travel to the browser as a small dictionary.
    printed = max(R, C) <= ANNOTATE_MAX_CELLS
    frame = pd.DataFrame({
        "row": pd.Categorical.from_codes(ri.ravel(), categories=pd.Index(rows, dtype=object)),
        "col": pd.Categorical.from_codes(ci.ravel(), categories=pd.Index(cols, dtype=object)),
        "row_i": ri.ravel(),
        "col_i": ci.ravel(),
        "value": np.where(finite, flat, np.nan),
        "text": [_fmt(v, decimals) for v in flat] if printed else np.full(flat.shape, "", dtype=object),
        # dark text on light cells: viridis is light at its top end, the diverging scale near its middle
        # non-finite cells (NaN, -inf from a mask) sit on a light grey cell, so their text is dark too
        "dark_text": ((flat - lo) / span > 0.55) | ~finite,
        "dark_text_div": (np.abs(flat) < 0.5 * max(abs(lo), abs(hi), 1e-12)) | ~finite,
    })
    return frame if with_text else frame.drop(columns=["text", "dark_text", "dark_text_div"])


def _fmt(v: float, decimals: int) -> str:
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    return f"{v:.{decimals}f}"


# The normal sizes and, for presenter mode, each of them times 1.5.
_CELL_SIZES = (8, 10, 12, 14, 15, 16, 18, 21, 22, 24, 26, 27, 30, 33, 34, 39, 40, 45, 46, 51, 52, 60, 69, 78)


def cell_size(n_cols: int, cell_px: int = CELL_PX, max_width: int = 520) -> int:
    """Cell edge in pixels: cell_px, shrunk so n_cols fit in max_width, snapped to a few sizes.

    Snapping keeps the number of distinct chart designs small, so their cached specs are reused
    across slider moves instead of being rebuilt for every new shape.
    """
    fit = min(cell_px, max_width // max(n_cols, 1))
    return max([c for c in _CELL_SIZES if c <= fit], default=_CELL_SIZES[0])


def heatmap_chart(
    n_rows: int | None = None,
    n_cols: int | None = None,
    title: str = "",
    x_title: str = "key",
    y_title: str = "query",
    diverging: bool = False,
    domain: tuple[float, float] | None = None,
    annotate: bool | None = None,
    cell_px: int = CELL_PX,
    select_rows: bool = False,
    data: pd.DataFrame | None = None,
) -> alt.Chart:
    """An annotated heatmap: square cells, token labels on both axes, exact values on hover.

    The size comes from the data: each cell is a `cell_px` step, so one design fits every shape.
    n_rows and n_cols, when given, only choose the defaults (annotate up to 16 x 16, shrink wide
    matrices); ui.render passes neither, so its cached spec does not depend on the shape.
    Pass `data` (a heatmap_frame) to embed the numbers, or leave it out and let ui.render attach them.
    select_rows adds a click selection on the query row.
    """
    if annotate is None:
        annotate = n_rows is None or max(n_rows, n_cols or 0) <= ANNOTATE_MAX_CELLS
    if n_cols is not None:
        cell_px = cell_size(n_cols, cell_px)
    scale = alt.Scale(scheme=DIVERGING, domainMid=0) if diverging else alt.Scale(scheme=SEQUENTIAL)
    if domain is not None:
        scale = alt.Scale(scheme=DIVERGING if diverging else SEQUENTIAL, domain=list(domain),
                          **({"domainMid": 0} if diverging else {}))
    x = alt.X("col:N", sort=alt.EncodingSortField("col_i"), title=x_title,
              axis=alt.Axis(labelAngle=-45, labelLimit=90, orient="top"))
    y = alt.Y("row:N", sort=alt.EncodingSortField("row_i"), title=y_title, axis=alt.Axis(labelLimit=90))
    base = alt.Chart(data if data is not None else pd.DataFrame()).encode(x=x, y=y)
    tooltip = [alt.Tooltip("row:N", title=y_title), alt.Tooltip("col:N", title=x_title),
               alt.Tooltip("value:Q", title="value", format=".4f")]
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("value:Q", scale=scale, title=None,
                        legend=alt.Legend(gradientLength=160)),
        tooltip=tooltip,
    )
    if select_rows:
        pick = alt.selection_point(name="pick", fields=["row_i"], on="click", clear="dblclick")
        rect = rect.add_params(pick).encode(
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.35)),
        )
    # Cells with no finite value (NaN, or -inf where a mask struck a score) are drawn light grey,
    # not left as holes, so "-inf" and "NaN" read as values in both themes.
    missing = base.transform_filter("!isValid(datum.value) || !isFinite(datum.value)").mark_rect(
        fill="#d9d9d9", stroke="white", strokeWidth=0.5).encode(tooltip=tooltip)
    layers = [missing, rect]
    if annotate:
        font_size = max(8, min(14, cell_px // 3))
        layers.append(base.mark_text(fontSize=font_size, font=FONT).encode(
            text="text:N",
            color=alt.condition("datum.dark_text_div" if diverging else "datum.dark_text",
                                alt.value("#111111"), alt.value("#ffffff")),
            tooltip=tooltip,
        ))
    chart = alt.layer(*layers).properties(width=alt.Step(cell_px), height=alt.Step(cell_px))
    return chart.properties(title=title) if title else chart


def heatmap(matrix, row_labels, col_labels, **settings) -> alt.Chart:
    """Convenience for tests and one-off use: frame and chart in one call."""
    df = heatmap_frame(matrix, row_labels, col_labels)
    m = np.asarray(matrix)
    return heatmap_chart(m.shape[0], m.shape[1], data=df, **settings)


def grid_frame(matrices, panel_labels: Sequence[str], row_labels, col_labels) -> pd.DataFrame:
    """Small multiples: (P, R, C) matrices -> one heatmap_frame per panel, with a `panel` column."""
    frames = []
    for i, (m, name) in enumerate(zip(matrices, panel_labels)):
        df = heatmap_frame(m, row_labels, col_labels)
        df["panel"] = name
        df["panel_i"] = i
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def grid_chart(n_rows: int | None = None, n_cols: int | None = None, columns: int = 4, title: str = "",
               cell_px: int = 18, x_title: str = "key", y_title: str = "query",
               data: pd.DataFrame | None = None) -> alt.Chart:
    """Small multiples of attention maps (one per head, or per layer x head), shared 0..1 colour scale.

    Sized by steps like heatmap_chart: n_cols, when given, only shrinks the cells of wide maps.
    """
    if n_cols is not None:
        cell_px = cell_size(n_cols, cell_px, max_width=260)
    inner = heatmap_chart(x_title=x_title, y_title=y_title, domain=(0.0, 1.0), annotate=False, cell_px=cell_px)
    chart = alt.layer(*inner.layer, data=data if data is not None else pd.DataFrame()).properties(
        width=alt.Step(cell_px), height=alt.Step(cell_px)
    ).facet(facet=alt.Facet("panel:N", sort=alt.EncodingSortField("panel_i"), title=None), columns=columns)
    return chart.properties(title=title) if title else chart


def bar_chart(title: str = "", x_title: str = "probability", y_title: str = "token",
              domain: tuple[float, float] | None = (0.0, 1.0), data: pd.DataFrame | None = None) -> alt.Chart:
    """Horizontal bars from a frame with columns label, value (and order, to keep the given order)."""
    base = alt.Chart(data if data is not None else pd.DataFrame()).encode(
        y=alt.Y("label:N", sort=alt.EncodingSortField("order"), title=y_title),
        x=alt.X("value:Q", title=x_title, scale=alt.Scale(domain=list(domain)) if domain else alt.Undefined),
        tooltip=[alt.Tooltip("label:N", title=y_title), alt.Tooltip("value:Q", format=".4f", title=x_title)],
    )
    bars = base.mark_bar(color="#3b528b")
    text = base.mark_text(align="left", dx=3, font=FONT).encode(text=alt.Text("value:Q", format=".3f"))
    chart = alt.layer(bars, text).properties(width="container")
    return chart.properties(title=title) if title else chart


def bar_frame(labels: Sequence[str], values) -> pd.DataFrame:
    values = np.asarray(values, dtype=np.float64)
    return pd.DataFrame({"label": unique_labels(list(labels)), "value": values, "order": np.arange(len(values))})


def line_chart(x_title: str, y_title: str, title: str = "", log_x: bool = False, log_y: bool = False,
               data: pd.DataFrame | None = None) -> alt.Chart:
    """Lines from a tidy frame with columns x, y, series (one line per series, colour-blind-safe palette)."""
    x_scale = alt.Scale(type="log", base=2) if log_x else alt.Scale(zero=False)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    chart = alt.Chart(data if data is not None else pd.DataFrame()).mark_line(point=True).encode(
        x=alt.X("x:Q", title=x_title, scale=x_scale),
        y=alt.Y("y:Q", title=y_title, scale=y_scale),
        color=alt.Color("series:N", title=None, scale=alt.Scale(scheme="tableau10")),
        # line style too, for greyscale readers; legend=None here would hide the merged colour legend as well
        strokeDash=alt.StrokeDash("series:N", title=None),
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("x:Q", title=x_title),
                 alt.Tooltip("y:Q", title=y_title, format=".4f")],
    ).properties(width="container", height=280)
    return chart.properties(title=title) if title else chart


def line_frame(x, series: dict[str, Sequence[float]]) -> pd.DataFrame:
    """{name: ys} over a shared x -> tidy frame (x, y, series)."""
    x = np.asarray(x, dtype=np.float64)
    frames = [pd.DataFrame({"x": x, "y": np.asarray(ys, dtype=np.float64), "series": name})
              for name, ys in series.items()]
    return pd.concat(frames, ignore_index=True)

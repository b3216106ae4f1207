"""A heatmap's design for other cells, from the one built for the default cells: a copy with a few numbers changed.

Building a heatmap's design with Altair costs about 35 ms (its channels are validated against the Vega-Lite
schema, its layers copied again at every step; `python bench/design_cost.py`). A design depends on the cells'
size only through its steps (each cell's width and height) and how its axis labels are drawn
(charts.axis_labels), so a slider that changes a matrix's width, and with it the cells, made the first student to
reach each new size wait for a new design. Here each design is built once per process, for charts.CELL_PX, and
every other size is that dict with its steps and its axis labels set: the same dict the builder gives
(tests/ui/test_resize.py holds them equal for every label look), in well under a tenth of a millisecond.
"""

from __future__ import annotations

from ui.drawing import charts

RESIZABLE = (charts.heatmap_chart, charts.grid_chart)  # builders whose design depends on cell_px only so


def for_cells(spec: dict, cell_px: int, font_scale: float = 1.0) -> dict:
    """spec (a RESIZABLE builder's design as a dict, built for any cells) as that builder would build it for cells
    of cell_px: a new dict, spec left as it was."""
    x_labels, y_labels = charts.axis_labels(cell_px, font_scale)
    labels = {"x": x_labels, "y": y_labels}

    def redo(node):
        if isinstance(node, list):
            return [redo(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: redo(value) for key, value in node.items()}
        for side in ("width", "height"):
            if isinstance(out.get(side), dict) and "step" in out[side]:
                out[side] = {**out[side], "step": cell_px}
        encoding = out.get("encoding")
        for channel, look in labels.items():
            axis = encoding.get(channel, {}).get("axis") if isinstance(encoding, dict) else None
            if isinstance(axis, dict):
                encoding[channel] = {**encoding[channel], "axis": {**axis, **look}}
        return out

    return redo(spec)

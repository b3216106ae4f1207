"""ui/drawing/resize.py: a design resized for other cells is the very dict its builder builds for them."""

from __future__ import annotations

import copy
import json
import re

import pytest

from ui.drawing import charts, render, resize

SCALES = (1.0, 1.5)  # a screen's type, and presenter mode's
HEATMAPS = (  # the settings the pages give heatmap_chart, each way it can change the design
    {"annotate": True, "x_title": "key", "y_title": "query"},
    {"annotate": False, "diverging": True, "domain": (-2.0, 2.0), "x_title": "dimension", "y_title": "token"},
    {"select_rows": True, "annotate": True},
    {"annotate": False, "colour_scale": "sqrt", "x_title": "next", "y_title": "current"},
)


def built(builder, **settings) -> dict:
    spec = builder(**settings).to_dict(validate=False)
    spec.pop("data", None)
    spec.pop("datasets", None)
    return spec


def named_alike(spec: dict) -> dict:
    """spec with Altair's name for a clickable map's view (view_<a hash of the chart>_1, which a selection names
    as the view it listens to) written as one name: a resized design keeps the name of the one it came from."""
    return json.loads(re.sub(r"view_[0-9a-f]+_(\d+)", r"view_\1", json.dumps(spec)))


def cells(scale: float) -> list[int]:
    """Every label look there is (the smallest cell of each), and a few sizes between them."""
    looks = sorted({charts.design_cell(c, scale) for c in range(1, 120)})
    return sorted({*looks, 7, 13, 33, charts.CELL_PX, 61})


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("settings", HEATMAPS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_a_resized_heatmap_is_the_one_built_for_its_cells(settings, scale):
    base = built(charts.heatmap_chart, cell_px=charts.CELL_PX, font_scale=scale, **settings)
    kept = copy.deepcopy(base)
    looks = set()
    for cell in cells(scale):
        resized = resize.for_cells(base, cell, scale)
        assert named_alike(resized) == named_alike(built(charts.heatmap_chart, cell_px=cell, font_scale=scale,
                                                         **settings)), cell
        looks.add(charts.label_look(cell, scale))
    assert base == kept  # the design it was resized from is shared: left as it was
    assert len(looks) >= 3  # small type, parity, upright: the cells above reach every way labels change


@pytest.mark.parametrize("scale", SCALES)
def test_a_resized_grid_is_the_one_built_for_its_cells(scale):
    base = built(charts.grid_chart, cell_px=charts.CELL_PX, font_scale=scale, columns=2)
    for cell in cells(scale):
        assert resize.for_cells(base, cell, scale) == built(charts.grid_chart, cell_px=cell, font_scale=scale,
                                                            columns=2), cell


def test_a_design_is_built_once_for_every_size_of_cells(monkeypatch):
    """render builds a heatmap's design once; every other cell size is resized from it, not built again."""
    render._SPECS.clear()
    calls = []
    original = charts.heatmap_chart

    def counting(**settings):
        calls.append(settings["cell_px"])
        return original(**settings)

    monkeypatch.setattr(resize, "RESIZABLE", (counting,))
    for cell in (8, 12, 21, 34, 51):
        spec = render._spec(counting, tuple(sorted({"cell_px": cell, "annotate": True, "font_scale": 1.0}.items())))
        assert spec == built(original, cell_px=cell, annotate=True, font_scale=1.0)
    assert calls == [charts.CELL_PX]
    render._SPECS.clear()

"""The clickable weights map as Vega itself draws it (vl-convert runs the same Vega as the browser), without a
server: its selection resolves, the picked row is outlined, its subtitle reads on either theme.

A spec whose selection sat one level down in the inlined data passed every AppTest test and drew nothing
in the browser ("Unrecognized signal name"); rendering it here fails the same way.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import vl_convert as vlc

from ui.drawing import charts, colours, heatmap, render
from ui.drawing.chart_data import OUTER

TOKENS = ["The", "cat", "sat", "on", "the", "warm", "mat"]
OUTLINE = "#ff4b4b"


def clickable_spec(picked: int, font_scale: float = 1.0, subtitle: str = "· shape (7, 7)") -> dict:
    weights = np.random.default_rng(0).dirichlet(np.ones(len(TOKENS)), size=len(TOKENS))
    design = render._spec(charts.heatmap_chart, tuple(sorted(dict(
        select_rows=True, cell_px=34, annotate=True, domain=(0.0, 1.0), font_scale=font_scale).items())))
    spec = charts.heatmap_frame(weights, TOKENS, TOKENS).inline(
        {**design, "title": {"text": "weights", "subtitle": subtitle, "subtitleColor": colours.subtitle_colour()}})
    return heatmap.with_param(spec, charts.SHOWN_ROW, picked)


def outlined_rows(svg: str) -> set[str]:
    """The query labels of the cells drawn with the red outline."""
    paths = [p for p in re.findall(r"<path[^>]*>", svg) if f'stroke="{OUTLINE}"' in p]
    return {m.group(1) for p in paths if (m := re.search(r'aria-label="[^"]*query: ([^;"]*);', p))}


def test_the_selection_sits_on_the_outer_view():
    spec = clickable_spec(2)
    assert "params" in OUTER
    names = {p["name"] for p in spec["params"]}
    assert {"pick", charts.SHOWN_ROW} <= names
    assert "params" not in spec["layer"][0]  # not one level down, where Vega makes no signal for it
    # the selection still names the layer whose marks it listens to, and that layer is there
    (pick,) = [p for p in spec["params"] if p["name"] == "pick"]
    layer_names = {layer.get("name") for layer in spec["layer"][0]["layer"]}
    assert set(pick["views"]) <= layer_names


@pytest.mark.parametrize("font_scale", [1.0, 1.5])
@pytest.mark.parametrize("picked", [0, 3, 6])
def test_vega_draws_it_and_outlines_the_picked_row(picked, font_scale):
    svg = vlc.vegalite_to_svg(clickable_spec(picked, font_scale))
    assert svg.count('aria-roledescription="rect mark"') >= len(TOKENS) ** 2
    assert outlined_rows(svg) == {TOKENS[picked]}


@pytest.mark.parametrize(("shown", "clicked"), [(6, 2), (0, 0), (3, 5)])
def test_a_row_clicked_is_outlined_at_once_in_place_of_the_row_shown(shown, clicked):
    """A click outlines its row in the browser before the rerun it starts: the click selection, as Vega holds it
    after a click on a cell of that row, outranks the row the page last worked out."""
    spec = clickable_spec(shown)
    spec["params"] = [{**p, "value": [{"row_i": clicked}]} if p["name"] == charts.PICK else p for p in spec["params"]]
    assert outlined_rows(vlc.vegalite_to_svg(spec)) == {TOKENS[clicked]}


def test_png_export_of_it_works():
    png = vlc.vegalite_to_png(clickable_spec(1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000


@pytest.mark.parametrize(("ground", "wanted"), [(None, colours.SUBTITLE_ON_LIGHT),
                                                ("#ffffff", colours.SUBTITLE_ON_LIGHT),
                                                ("#0e1117", colours.SUBTITLE_ON_DARK)])
def test_the_subtitle_follows_the_background(ground, wanted):
    spec = clickable_spec(0)
    if ground:
        spec["config"] = {**spec.get("config", {}), "background": ground}
    svg = vlc.vegalite_to_svg(spec)
    subtitle = re.search(r'role-title-subtitle.*?<text[^>]*fill="(#[0-9a-fA-F]+)"', svg, re.S)
    assert subtitle and subtitle.group(1).lower() == wanted.lower()
    assert colours.contrast(wanted, ground or "#ffffff") >= 4.5

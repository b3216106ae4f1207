"""A slider move that changes only numbers leaves every chart's spec as it was, so the browser updates the charts
it drew instead of building them again (ui/drawing/chart_data.py; MEASURED.md, "What a move costs in the browser").

The browser keeps a Vega view while the spec it is sent stays the same byte for byte, and swaps the new rows of
its dataset into it; any change to the spec (a title, a description, a size that carries a number) throws the
view away and draws it from nothing. So does a change of the element's alt, which Streamlit's frontend writes
into the spec's description before it compares. Each case of MOVES moves one control whose move changes values,
never shapes, and compares the specs and alts sent before and after; the numbers themselves must have changed
somewhere. Circuit's seed also changes its maps' labels (the random letters drawn): labels are data too.

Each case of MOVES_OF_SHAPE changes a matrix's shape but not its cells' size (d_k from 8 to 10 on Masking: Q and K
grow two columns, their cells as they were), and keeps every spec too: a map's size is its cells' (its steps), its
shape line, the grey line under its title, is read from its data (ui.drawing.render.heading), and its alt text names
no count (ui.drawing.alt_text). That the browser draws the new line in the chart it kept is checked in Chromium
(tests/browser/test_browser_drawings.py).

Each case of MOVES_OF_TITLE changes what a title says (the row looked at, a temperature, a head): such a title is
read from the chart's data as the shape line is, and the text for screen readers says the title without it.
"""

from __future__ import annotations

import pytest

from tests.apptest_helpers import chart_subtitles, chart_title, charts, move_chart_control, ok, run_page, texts

MOVES = [  # (lesson, slider key, a new value): moves that change numbers only
    ("bigram", "bg_alpha", 0.5),
    ("qkv", "seed", 5),
    ("scaling", "seed", 7),
    ("masking", "masking_pos", 2),
    ("masking", "seed", 3),
    ("multi_head", "seed", 4),
    ("communication", "seed", 2),
    ("block", "seed", 9),
    ("tiles", "seed", 6),
    ("circuit", "seed", 3),
    ("ladder", "ld_train_steps", 500),
]


def _sent(at) -> list[tuple[str, tuple, bytes]]:
    """Each chart's title, what the browser compares to keep its drawn view (its spec, its alt, and a clickable
    chart's widget id: a new key is a new widget), and its numbers."""
    return [(chart_title(c), (c.proto.spec, c.proto.alt, c.proto.id), b"".join(d.data.data for d in c.proto.datasets))
            for c in charts(at)]


def _control(at, key: str):
    """The slider or select slider of this key."""
    return next(s for s in [*at.slider, *at.select_slider] if s.key == key)


def _moved_keeping_every_spec(at, lesson: str, key: str, value) -> tuple[list, list]:
    """Move the control `key` of the page drawn in `at` to value and run it; every chart kept its spec, alt and
    widget id. Returns what was sent before and after (_sent)."""
    before = _sent(at)
    slider = _control(at, key)
    assert slider.value != value
    slider.set_value(type(slider.value)(value))
    after = _sent(ok(at.run(timeout=120)))
    assert len(after) == len(before) > 0
    moved = [title for (title, spec, _), (_, spec_after, _) in zip(before, after) if spec != spec_after]
    assert not moved, f"{lesson}: a move of {key} changed the spec or alt of {moved}: the browser draws them again"
    return before, after


@pytest.mark.parametrize(("lesson", "key", "value"), MOVES)
def test_a_move_of_numbers_keeps_every_spec(lesson, key, value):
    at = ok(run_page(f"lessons/{lesson}/page.py", timeout=120))
    before, after = _moved_keeping_every_spec(at, lesson, key, value)
    assert any(data != data_after for (*_, data), (*_, data_after) in zip(before, after)), "no number moved"


def test_a_move_of_a_charts_own_slider_sends_every_chart_as_it_was():
    """Scaling's τ is the weights map's own slider (ui.drawing.softmax): the browser has recoloured the map by the
    time the rerun comes, so the rerun sends every chart exactly as before, and its words. The one number it sends
    again is the weights map's column of weights at the new τ, for its Show data table (softmax.with_weights): the
    map's spec, and its scores, stay as they were."""
    from ui.drawing.chart_data import ChartData
    from ui.drawing.softmax import WEIGHT

    at = ok(run_page("lessons/scaling/page.py", timeout=120))
    before, words = _sent(at), texts(at)
    after = _sent(ok(move_chart_control(at, "attn_temp", 0.5).run(timeout=120)))
    changed = [(b, a) for b, a in zip(before, after) if b != a]
    assert len(after) == len(before) and [b[0] for b, _ in changed] == ["weights: click a row"]
    ((_, shown, data), (_, shown_after, data_after)), = changed
    assert shown_after == shown  # the same spec, alt and widget: the browser keeps the map it drew

    def without_weights(data: bytes) -> dict:
        return {name: v for name, v in ChartData.from_arrow(data).columns.items() if name != WEIGHT}

    assert without_weights(data_after) == without_weights(data)
    assert ChartData.from_arrow(data_after).columns[WEIGHT] != ChartData.from_arrow(data).columns[WEIGHT]
    assert "τ = 0.50" in texts(at) and "τ = 0.50" not in words


MOVES_OF_SHAPE = [  # (lesson, slider key, a new value): moves that change a matrix's shape, not its cells' size
    # QKV's W_Q, W_K, W_V and Q, K, V, and Masking's outputs, stand as the panels of one chart each, whose cells
    # shrink as d_k grows so that the panels still fit a row (ui.drawing.panels.layout): from d_k 8, 7 keeps their
    # cells, 9 does not
    ("qkv", "d_k", 7),
    ("masking", "d_k", 7),
]


@pytest.mark.parametrize(("lesson", "key", "value"), MOVES_OF_SHAPE)
def test_a_move_of_shape_keeps_every_spec_and_says_the_new_shape(lesson, key, value):
    at = ok(run_page(f"lessons/{lesson}/page.py", timeout=120))
    lines_before = chart_subtitles(at)
    _moved_keeping_every_spec(at, lesson, key, value)
    lines_after = chart_subtitles(at)
    new = [line for line in lines_after if line not in lines_before]
    assert any(f", {value})" in line for line in new), f"no shape line says d_k = {value}: {new}"


MOVES_OF_TITLE = [  # (lesson, slider key, a new value, a title that says it): moves that change what a title says
    ("qkv", "qkv_angle_a", 35, "a · b = 0.906"),
    ("block", "block_pos", 8, "row 8 “h” through layer norm"),
    ("block", "block_layer", 2, "block 2's ln_1: γ and β"),
    ("full_model", "sample_temp", 0.5, "P(next | prompt), temperature 0.5"),
    ("full_model", "fm_top_k", 3, "P(next | prompt), temperature 1, top-3"),
    ("multi_head", "mh_head", 2, "Head 2 weights: click a row"),
]


@pytest.mark.parametrize(("lesson", "key", "value", "title"), MOVES_OF_TITLE)
def test_a_move_that_a_title_says_keeps_every_spec_and_shows_the_new_title(lesson, key, value, title):
    """Such a title is read from the chart's table (ui.drawing.render.heading's title_read), and the text for a
    screen reader names the chart without what the control set (ui.drawing.alt_text)."""
    at = ok(run_page(f"lessons/{lesson}/page.py", timeout=120))
    assert title not in [chart_title(c) for c in charts(at)]
    _moved_keeping_every_spec(at, lesson, key, value)
    assert title in [chart_title(c) for c in charts(at)]

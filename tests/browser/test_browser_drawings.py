"""Drawings a user reads at a glance, measured in Chromium: the home page's pipeline has no arrow pointing at
nothing where its rows wrap, the block lesson's layer-norm strips have row labels apart and a colour legend
no taller than the strip, and a map's shape line and a chart's title follow a move in the chart drawn before it.
What it needs and how it skips without it: tests/browser/harness.py."""

from __future__ import annotations

import itertools

import pytest

from tests.browser.harness import CHART, EXCEPTION, RERUN_TIMEOUT_MS, expect, wait_until_drawn

# These tests measure where Vega put each strip's rows, labels and legend. The maps are drawn as svg here, laid out
# exactly as on the canvas a student sees, so that every label is an element to measure (conftest.py).
CHART_RENDERER = "svg"

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SCREENS = {"projector": {"width": 1280, "height": 720}, "tablet": {"width": 820, "height": 1180},
           "phone": {"width": 390, "height": 844}}

# Every arrow of the pipeline, with the box it stands before: where each is, and the box's row.
ARROWS = """() => [...document.querySelectorAll('.pipeline .arrow')].map(a => {
    const box = a.nextElementSibling, r = a.getBoundingClientRect(), s = box && box.getBoundingClientRect();
    return {arrow: [r.left, r.right, (r.top + r.bottom) / 2],
            box: box && box.classList.contains('step') ? [s.left, s.top, s.bottom, box.textContent] : null};
})"""
# The pipeline's rows: the text of the last thing drawn in each (a box, never an arrow).
ROW_ENDS = """() => {
    const items = [...document.querySelectorAll('.pipeline li')], ends = [];
    items.forEach((li, i) => {
        const next = items[i + 1];
        if (!next || next.getBoundingClientRect().top > li.getBoundingClientRect().bottom - 1)
            ends.push(li.lastElementChild.className);
    });
    return ends;
}"""


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_every_pipeline_arrow_points_at_a_box_beside_it(server, browser, screen):
    context = browser.new_context(viewport=SCREENS[screen])
    try:
        page = context.new_page()
        page.goto(server.url)
        wait_until_drawn(page)
        expect(page.locator(".pipeline .step").last).to_be_visible()
        arrows, ends = page.evaluate(ARROWS), page.evaluate(ROW_ENDS)
        assert len(arrows) == page.locator(".pipeline .step").count() - 1  # one between each two steps
        for a in arrows:
            assert a["box"] is not None, "an arrow with no box after it"
            left, top, bottom, text = a["box"]
            assert left >= a["arrow"][1] - 1 and top <= a["arrow"][2] <= bottom, (text, a)  # beside it, same row
        assert len(ends) >= 2, ends  # the boxes do wrap: the check above is about rows' ends
        assert set(ends) == {"step"}, ends  # every row ends with a box
    finally:
        context.close()


# A chart's heatmap: where its cells lie, its row labels (left of the cells) and its colour legend.
STRIP = """(chart) => {
    const cells = [...chart.querySelectorAll('path[aria-roledescription="rect mark"]')]
        .map(c => c.getBoundingClientRect()).filter(r => r.width > 0);
    const plot = {left: Math.min(...cells.map(r => r.left)), right: Math.max(...cells.map(r => r.right)),
                  top: Math.min(...cells.map(r => r.top)), bottom: Math.max(...cells.map(r => r.bottom))};
    const rows = [...chart.querySelectorAll('.role-axis-label text')].map(t => t.getBoundingClientRect())
        .filter(r => r.right <= plot.left + 1 && r.top >= plot.top - 4)
        .map(r => [r.top, r.bottom]).sort((a, b) => a[0] - b[0]);
    const l = chart.querySelector('.role-legend').getBoundingClientRect();
    return {plot, rows, legend: {left: l.left, right: l.right, top: l.top, bottom: l.bottom, height: l.height}};
}"""


@pytest.mark.parametrize("screen", ["projector", "phone"])
@pytest.mark.parametrize("title, n_rows", [("through layer norm", 3), ("γ and β", 2)])
def test_layer_norm_strips_read(server, browser, screen, title, n_rows):
    context = browser.new_context(viewport=SCREENS[screen])
    try:
        page = context.new_page()
        page.goto(f"{server.url}/block")
        wait_until_drawn(page)
        chart = page.locator(CHART, has_text=title).first
        expect(chart.locator('path[aria-roledescription="rect mark"]')).to_have_count(n_rows * 64)
        chart.scroll_into_view_if_needed()
        s = chart.evaluate(STRIP)
        plot, rows, legend = s["plot"], s["rows"], s["legend"]
        assert len(rows) == n_rows, s
        for (_, above), (below, _) in itertools.pairwise(rows):
            assert below >= above - 0.5, f"row labels overlap: {rows}"
        assert legend["top"] >= plot["bottom"] - 0.5, s  # under the strip, not beside it
        # about as tall as the strip (beside it, it stood five times taller), and within the strip's width
        assert legend["height"] <= 1.25 * (plot["bottom"] - plot["top"]), s
        assert legend["left"] >= plot["left"] - 1 and legend["right"] <= plot["right"] + 1, s
    finally:
        context.close()


SUBTITLE = "g.role-title-subtitle text"  # the grey line under a chart's title, in Vega's svg
TITLE = "g.role-title-text text"  # a chart's title


def test_a_shape_line_follows_a_move_in_the_chart_drawn_before(server, browser):
    """d_k 8 -> 7 on QKV: the grey line under the title of Q, K and V (the panels of one chart, ui.drawing.panels,
    whose cells stay as they were from d_k 7 to 8) says their new shape, read from the chart's data
    (ui.drawing.render.heading), in the very svg drawn before the move: the browser kept the chart and swapped its
    rows in, as it does when a move changes numbers only."""
    context = browser.new_context(viewport=SCREENS["projector"])
    try:
        _follows(server, context.new_page(), "qkv", SUBTITLE, "each map · shape (7, 8) = (T, d_k)",
                 '[data-testid="stSidebar"]', "d_k (query/key size)", "d_k=7", "each map · shape (7, 7) = (T, d_k)",
                 key="ArrowLeft")
    finally:
        context.close()


def test_a_title_follows_a_move_in_the_chart_drawn_before(server, browser):
    """The direction of a, 30 -> 35 degrees on QKV: the arrows' title says their new dot product, read from the
    chart's data (render.heading's title_read), in the very svg drawn before the move."""
    context = browser.new_context(viewport=SCREENS["projector"])
    try:
        _follows(server, context.new_page(), "qkv", TITLE, "a · b = 0.866", "main", "Direction of a (degrees)",
                 "qkv_angle_a=35", "a · b = 0.906")
    finally:
        context.close()


def _follows(server, page, path: str, selector: str, before: str, within: str, slider_name: str, in_url: str,
             after: str, key: str = "ArrowRight") -> None:
    """On page `path`, the text `before` (a title's or a shape line's, by selector) becomes `after` in the svg that
    drew it once the slider named slider_name (in `within`) moves a step (right, or as `key` says) and the link says
    in_url."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/{path}")
    wait_until_drawn(page)
    expect(page.locator(selector, has_text=before)).to_have_count(1, timeout=RERUN_TIMEOUT_MS)
    page.evaluate("""([selector, before]) => { for (const t of document.querySelectorAll(selector))
        if (t.textContent === before) t.closest('svg').dataset.drawnBefore = 'yes'; }""", [selector, before])
    slider = page.locator(within).get_by_role("slider", name=slider_name)
    slider.focus()
    page.keyboard.press(key)
    page.wait_for_url(f"**{in_url}**", timeout=RERUN_TIMEOUT_MS)
    kept = page.locator(f"svg[data-drawn-before=yes] {selector}", has_text=after)
    expect(kept).to_have_count(1, timeout=RERUN_TIMEOUT_MS)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    assert not errors, errors

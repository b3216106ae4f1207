"""Export: every heatmap on a lesson can be taken away as CSV (alone or all in a ZIP), PNG or SVG.

Every download button holds its file, made in the run that drew it (a file made at the click could be
deleted before the browser fetched it: tests/system/test_live.py). The CSV is made in every run of the open
panel; PNG, SVG and the ZIP are made by a press, after which a Save button under it holds the file. The tests
read the files the page handed to Streamlit (the `saved` fixture), by file name.

The export expander is filled only while open: the tests of its content open it first (its state key
ui.drawing.export.OPEN_KEY set, as a click would); test_closed_export_panel_draws_nothing checks the closed one.
"""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from lessons import COURSE
from lessons.training import session as ts
from tests.apptest_helpers import (
    ASIDE_KEYS,
    chart_alt,
    chart_by_title,
    chart_spec,
    chart_title,
    charts,
    matrix,
    ok,
    panels,
    run_app,
    run_page,
    shown_matrix,
)
from ui.compute import training_share
from ui.drawing import chart_files, export
from ui.drawing.chart_data import ChartData
from ui.drawing.charts import CHAR_EM, unique_labels
from ui.frame import page

LESSONS = {lesson.url_path: lesson for lesson in COURSE}
WITH_HEATMAPS = [url for url in ("qkv", "scaling", "masking", "multi-head", "model") if url in LESSONS]
BUTTONS = ("export_csv", "make_png", "make_svg", "make_zip")  # as the panel opens: CSV, then the make buttons
LABEL = "Export the matrices on this page (CSV, PNG, SVG)"


def heatmaps(at: AppTest) -> list:
    """The heatmaps on screen: the charts drawn by ui.drawing.heatmap, each named "Heatmap, ..." for a screen
    reader, and each map of a chart of panels (ui.drawing.panels, "Heatmaps titled ...") as a Panel."""
    return [m for c in charts(at) for m in ([c] if chart_alt(c).startswith("Heatmap, ") else
                                            panels(c) if chart_alt(c).startswith("Heatmaps titled ") else [])]


def drawn(at: AppTest) -> list[dict]:
    """The matrices the page recorded for the export panel (leaving out the marks where its live parts begin)."""
    items = at.session_state["_drawn_matrices"] if "_drawn_matrices" in at.session_state else []
    return [item for item in items if "matrix" in item]


def read_csv(text: str) -> pd.DataFrame:
    """A CSV as a spreadsheet would read it: labels stay text, numbers (and inf / empty for NaN) are numbers."""
    df = pd.read_csv(io.StringIO(text), index_col=0, dtype=str, keep_default_na=False)
    return df.apply(lambda col: col.map(lambda cell: float(cell) if cell else np.nan))


def assert_same_numbers(got, want, what: str) -> None:
    """Equal to the 6 significant digits a CSV keeps, non-finite cells in the same places."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want), err_msg=what)
    # a chart's numbers are sent to 4 decimals (or 4 significant digits)
    np.testing.assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=5e-4, atol=5e-5, err_msg=what)


@pytest.fixture
def saved(monkeypatch):
    """The file each download button holds, by file name (the latest run's): (bytes, type). A button given
    a function instead (a file made at the click) fails the test."""
    files = {}
    real_add = MediaFileManager.add

    def add(self, path_or_data, mimetype, coordinates, file_name=None, is_for_static_download=False):
        if is_for_static_download:
            files[file_name] = (path_or_data, mimetype)
        return real_add(self, path_or_data, mimetype, coordinates, file_name, is_for_static_download)

    def add_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        pytest.fail(f"{file_name} is made at the click: in a busy class it can be gone before it is fetched")

    monkeypatch.setattr(MediaFileManager, "add", add)
    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return files


def text(saved: dict, name: str) -> str:
    return saved[name][0].decode("utf-8")


def buttons_in_panel(at: AppTest) -> dict:
    """The panel's buttons by key: download buttons (CSV, and Save once a file is made) and make buttons."""
    return {b.key: b for b in [*at.get("download_button"), *at.button]
            if b.key and b.key.startswith(("export_", "make_"))}


def press(at: AppTest, kind: str) -> AppTest:
    """Press PNG, SVG or ZIP: the run that follows shows the Save button holding the file."""
    return ok(at.button(key=f"make_{kind}").click().run())


def panel(at: AppTest):
    found = [e for e in at.expander if e.label.startswith("Export")]
    assert len(found) == 1, [e.label for e in at.expander]
    assert found[0].label == LABEL  # a fixed label: one that changed would close the expander
    return found[0]


def count_caption(at: AppTest) -> str:
    """The count of matrices the open panel names, e.g. "9 matrices on this page." """
    (caption,) = [str(c.value) for c in panel(at).caption if "on this page" in str(c.value)]
    return caption


def run_open(page: str, query: dict | None = None) -> AppTest:
    """The page with its export panel open, in the app (whose entry script starts each run's list of
    matrices afresh, so that a rerun after a press lists them once)."""
    return ok(run_app(page, query, opened=[export.OPEN_KEY]))


# ---- what is recorded -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lesson", WITH_HEATMAPS)
def test_every_heatmap_is_recorded_once_and_its_csv_is_what_is_shown(lesson):
    at = ok(run_page(LESSONS[lesson].path))
    # the heatmaps drawn as such (Full model records its bars, grid maps, head view and table too: tested below)
    shown, items = heatmaps(at), [i for i in drawn(at) if export.spec_of(i).get("description", "").startswith(
        "Heatmap, ")]
    assert items, "nothing to export"
    # named as on screen, without a hint of how to use the chart there (": click a row"): a file has no rows to click
    assert [i["title"] for i in items] == [chart_files.file_title(chart_title(c)) for c in shown]
    assert not any("click" in i["title"] for i in items)
    for item, chart in zip(items, shown):
        title = item["title"]
        on_screen = shown_matrix(at, chart)  # a map the browser works out from scores: its weights
        df = read_csv(export.matrix_csv(item["matrix"], item["rows"], item["cols"]))
        # the labels a student sees on the axes are the CSV's header and first column
        assert list(df.columns) == unique_labels(item["cols"]), title
        assert [str(i) for i in df.index] == unique_labels(item["rows"]), title
        csv = df.to_numpy()
        assert_same_numbers(csv, item["matrix"], title)  # the file is the matrix, −∞ and NaN included
        frame = on_screen.to_numpy()
        finite = np.isfinite(frame)
        np.testing.assert_allclose(csv[finite], frame[finite], rtol=5e-4, atol=5e-5, err_msg=title)  # sent: 4 decimals
        # cells blank on screen (NaN, −∞) are blank or infinite in the file, never a made-up number
        assert (~np.isfinite(csv[~finite])).all(), title


def picker(at: AppTest):
    """The export panel's matrix picker."""
    return at.selectbox(key=export.PICK_KEY)


@pytest.mark.parametrize("lesson", WITH_HEATMAPS)
def test_export_panel_lists_every_matrix(lesson, saved):
    at = run_open(LESSONS[lesson].path)
    items = drawn(at)
    n = len(items)
    assert count_caption(at) == f"{n} {'matrix' if n == 1 else 'matrices'} on this page."
    pick = picker(at)
    assert pick.options == [f"{i + 1}. {item['title']}" for i, item in enumerate(items)]
    buttons = buttons_in_panel(at)
    assert set(buttons) == set(BUTTONS)
    assert buttons["export_csv"].proto.url and not buttons["export_csv"].proto.deferred_file_id
    assert "attention-lab.zip" not in saved  # made by a press, not on every run
    # the ZIP holds one CSV per matrix, in page order, each the matrix's own CSV
    at = press(at, "zip")
    save = buttons_in_panel(at)["export_zip"]
    assert save.label == "Save ZIP" and save.proto.url and "make_zip" in buttons_in_panel(at)  # both, one above
    data, mime = saved["attention-lab.zip"]
    assert mime == "application/zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        assert names == [f"{i + 1:02d}-{export.slug(item['title'])}.csv" for i, item in enumerate(items)]
        for name, item in zip(names, items):
            want = export.matrix_csv(item["matrix"], item["rows"], item["cols"])
            assert zf.read(name).decode("utf-8") == want, name


def test_rerun_does_not_pile_up_matrices():
    """In the app (the entry script starts every run afresh) a rerun lists each matrix once, not again."""
    at = ok(run_app(LESSONS["qkv"].path, opened=[export.OPEN_KEY]))
    n = len(drawn(at))
    assert n == len(heatmaps(at))
    for _ in range(2):
        ok(at.run())
        assert len(drawn(at)) == n
        assert count_caption(at) == f"{n} matrices on this page."
        assert len(picker(at).options) == n


def test_csv_button_follows_the_picker(saved):
    """Pick the scores in the picker: the CSV button now hands out the scores, labelled with the tokens."""
    at = run_open(LESSONS["qkv"].path)
    items = drawn(at)
    first_name = f"{export.slug(items[0]['title'])}.csv"  # the picker starts on the page's first matrix
    assert saved[first_name][1] == "text/csv"
    first = read_csv(text(saved, first_name))
    assert_same_numbers(first.to_numpy(), items[0]["matrix"], items[0]["title"])
    target = next(i for i, item in enumerate(items) if item["title"].startswith("scores"))
    saved.clear()
    picker(at).set_value(picker(at).options[target])
    ok(at.run())
    name = f"{export.slug(items[target]['title'])}.csv"
    scores = read_csv(text(saved, name))
    tokens = "The cat sat on the warm mat".split()
    assert list(scores.columns) == unique_labels(tokens) and list(scores.index) == unique_labels(tokens)
    assert scores.shape == (7, 7)
    on_screen = next(c for c in heatmaps(at) if chart_title(c).startswith("scores"))
    assert_same_numbers(scores.to_numpy(), matrix(on_screen).to_numpy(), "scores")


def test_csv_of_masked_scores_keeps_minus_infinity():
    """The masked scores are −∞ above the diagonal: blank (grey) on screen, -inf in the file."""
    at = ok(run_page(LESSONS["masking"].path, opened=ASIDE_KEYS))  # the mistakes open: the naive softmax's NaN
    item = next(i for i in drawn(at) if i["title"].startswith("masked scores"))
    df = read_csv(export.matrix_csv(item["matrix"], item["rows"], item["cols"]))
    values = df.to_numpy()
    T = values.shape[0]
    upper = np.triu(np.ones((T, T), dtype=bool), 1)
    assert np.isneginf(values[upper]).all()
    assert np.isfinite(values[~upper]).all()
    naive = next(i for i in drawn(at) if i["title"].startswith("naive softmax"))
    row0 = read_csv(export.matrix_csv(naive["matrix"], naive["rows"], naive["cols"])).to_numpy()[0]
    assert np.isnan(row0).all()  # NaN is written as an empty cell, read back as NaN


def test_csv_labels_with_commas_quotes_and_repeats():
    """Token labels that would break a naive CSV (commas, quotes, repeats) come back exactly."""
    text = 'the " , the ; = +1'
    at = ok(run_page(LESSONS["qkv"].path, {"text": text}))
    item = next(i for i in drawn(at) if i["title"].startswith("scores"))
    df = read_csv(export.matrix_csv(item["matrix"], item["rows"], item["cols"]))
    assert list(df.columns) == unique_labels(item["cols"]) == [str(i) for i in df.index]
    assert len(set(df.columns)) == len(df.columns)


def test_full_model_exports_positions_with_their_numbers():
    at = ok(run_page(LESSONS["model"].path))
    (item,) = [i for i in drawn(at) if "positional encoding" in i["title"]]
    df = read_csv(export.matrix_csv(item["matrix"], item["rows"], item["cols"]))
    assert [str(i) for i in df.index] == [str(p) for p in range(item["matrix"].shape[0])]
    assert_same_numbers(df.to_numpy(), item["matrix"], item["title"])


def test_full_model_exports_what_the_page_shows(saved):
    """The next-character bars, every attention map of the grid, the head view and the knockout table, each
    with its own numbers (computed here again by the page's own cached calls), then the positions; each a
    picture too (the table as a map of its cells)."""
    from lessons.full_model.page import DEFAULT_PROMPT
    from ui.compute import model_store
    from ui.sections import knockout_views, model_views

    at = run_open(LESSONS["model"].path)
    items = drawn(at)
    titles = [i["title"] for i in items]
    model = model_store.load_model(model_store.default_model())
    ids = tuple(model.tokenizer.encode(DEFAULT_PROMPT))
    seen = model_views.read_prompt(model.source, ids)
    L, H, T = seen["weights"].shape[0], seen["weights"].shape[1], len(ids)
    assert titles == ["P(next | prompt), temperature 1",
                      *[f"Attention, layer {layer + 1} · head {h + 1}" for layer in range(L) for h in range(H)],
                      "Layer 1: each character (left) and what it reads (right)",
                      "All heads · P(next character)", "Head off · P(next character)",
                      "Knockout cost (nats, zero mode)", "Sinusoidal positional encoding"]
    bars = read_csv(export.item_csv(items[0]))
    probs = np.exp(seen["logits"] - seen["logits"].max())
    probs /= probs.sum()
    assert list(bars.columns) == ["probability"] and len(bars) == model_views.TOP_BARS
    assert_same_numbers(bars["probability"].to_numpy(), np.sort(probs)[::-1][:model_views.TOP_BARS], "bars")
    for k in range(L * H):
        assert_same_numbers(items[1 + k]["matrix"], seen["weights"][k // H, k % H], titles[1 + k])
    head_view = read_csv(export.item_csv(items[1 + L * H]))
    assert head_view.shape == (H * T, T) and head_view.index[0].startswith("head 1 · ")
    assert_same_numbers(head_view.to_numpy(), seen["weights"][0].reshape(H * T, T), "head view")
    table = read_csv(export.item_csv(items[-2]))
    assert list(table.index) == [f"layer {layer + 1}" for layer in range(L)]
    assert_same_numbers(table.to_numpy(), knockout_views.cost_table(model.source, ids, "zero"), "knockout")
    # the panel offers them all; a picture of the bars and of the table is made
    assert len(picker(at).options) == len(items)
    for index in (0, len(items) - 2):
        picker(at).set_value(picker(at).options[index])
        at = press(ok(at.run()), "png")
        assert saved[f"{export.slug(titles[index])}.png"][0][:8] == b"\x89PNG\r\n\x1a\n"


# ---- the Training page ----------------------------------------------------------------------------------

TRAINING = "lessons/training/page.py"
FAST = {"tr_layers": "1", "tr_steps": "50"}  # one layer, two heads, the copy task: 16 characters


def grid_maps(at: AppTest) -> dict[str, np.ndarray]:
    """The attention maps of the page's layer x head grid, by panel name, as the chart carries them."""
    df = ChartData.from_spec(chart_spec(chart_by_title(at, "Attention on a fixed example"))).frame()
    return {name: part.pivot(index="row_i", columns="col_i", values="value").to_numpy()
            for name, part in df.groupby("panel", sort=False)}


def assert_training_exports_what_is_drawn(at: AppTest) -> None:
    items, maps = drawn(at), grid_maps(at)
    titles = [item["title"] for item in items]
    assert titles == [f"Attention, {name}" for name in maps] + ["Weight on the key that holds the answer"], titles
    for item, (name, shown) in zip(items, maps.items()):
        assert item["matrix"].shape == shown.shape == (16, 16), name
        assert_same_numbers(shown, item["matrix"], name)
        df = read_csv(export.matrix_csv(item["matrix"], item["rows"], item["cols"]))
        assert list(df.columns) == [str(i) for i in df.index] == unique_labels(item["rows"]), name
    mass = items[-1]
    assert mass["matrix"].shape == (1, 2) and mass["rows"] == ["layer 1"] and mass["cols"] == ["head 1", "head 2"]
    assert_same_numbers(matrix(chart_by_title(at, "Weight on the key")).to_numpy(), mass["matrix"], "mass")


def test_training_page_exports_its_attention_maps(saved):
    """Before a run, the page draws the untrained model's maps: each layer x head map and the answer-key
    weights are listed in the export panel, their files are what the grid shows."""
    at = ok(run_app(TRAINING, FAST, opened=[export.OPEN_KEY]))
    assert_training_exports_what_is_drawn(at)
    items = drawn(at)
    assert count_caption(at) == "3 matrices on this page."
    assert picker(at).options == [f"{i + 1}. {item['title']}" for i, item in enumerate(items)]
    name = export.slug(items[0]["title"])
    assert name == "attention-layer-1-head-1"
    assert_same_numbers(read_csv(text(saved, f"{name}.csv")).to_numpy(), items[0]["matrix"], name)
    at = press(press(at, "svg"), "png")  # the maps are drawn from a function (a grid's panel): made all the same
    svg = text(saved, f"{name}.svg")
    assert "Attention, layer 1 · head 1" in svg and svg.count('aria-roledescription="rect mark"') >= 16 * 16
    assert saved[f"{name}.png"][0][:8] == b"\x89PNG\r\n\x1a\n"
    assert {"export_svg", "export_png"} <= set(buttons_in_panel(at))


def live_panel_ticks():
    """A script: a full run that records a matrix, then draws the Training page's live panel as a live part,
    which (st.fragment replaced by the test) reruns twice more alone, as ticks of its timer do."""
    import numpy as np
    import streamlit as st

    from lessons.training import view as training_view
    from lessons.training.setup import Settings
    from ui.drawing import export
    from ui.frame import page
    from ui.state import controls

    controls.start_run()
    export.start_run()
    export.record("drawn before", np.eye(2), ["a", "b"], ["a", "b"], {})
    page.live(training_view.live_panel, Settings(n_layers=1), name="training_panel")
    export.record("drawn after", np.eye(2), ["a", "b"], ["a", "b"], {})
    st.markdown(" | ".join(item["title"] for item in export.drawn()))


def test_a_tick_of_the_live_panel_records_its_maps_once(monkeypatch):
    monkeypatch.setattr(page.st, "fragment", lambda run, run_every=None: lambda *args: [run(*args) for _ in range(3)])
    at = ok(AppTest.from_function(live_panel_ticks, default_timeout=60).run())
    titles = at.markdown[-1].value.split(" | ")
    assert titles == ["drawn before", "Attention, layer 1 · head 1", "Attention, layer 1 · head 2",
                      "Weight on the key that holds the answer", "drawn after"]


def test_training_exports_the_maps_once_stopped(monkeypatch, saved):
    """While a run trains, the live panel draws new maps every second: the export panel offers no file (one
    would not hold what is on screen a moment later) and says to press Stop. Stopped, it lists each map once
    (not once per update), with the numbers now on screen."""
    monkeypatch.setattr(training_share, "TICK_BUDGET_S", 0.01)
    at = ok(run_app(TRAINING, {**FAST, "tr_steps": "2000"}, opened=[export.OPEN_KEY]))
    before = drawn(at)[0]["matrix"]
    ok(at.button(key="tr_train").click().run())
    for _ in range(3):
        ok(at.run())
        assert_training_exports_what_is_drawn(at)
        (said,) = [i.value for i in panel(at).info]
        assert "Training is running" in said and "**Stop**" in said and "**Resume**" in said
        assert not export_content(at)
    saved.clear()
    ok(at.button(key="tr_stop").click().run())
    assert at.session_state[ts.SESSION_KEY].run.steps > 0
    assert_training_exports_what_is_drawn(at)
    assert count_caption(at) == "3 matrices on this page." and not panel(at).info
    now = drawn(at)[0]["matrix"]
    assert not np.allclose(now, before)  # trained: the maps moved
    name = export.slug(drawn(at)[0]["title"])
    assert_same_numbers(read_csv(text(saved, f"{name}.csv")).to_numpy(), now, name)
    ok(at.button(key="tr_resume").click().run())  # training again: no file until the next Stop
    assert "Training is running" in panel(at).info[0].value and not export_content(at)


def export_content(at: AppTest) -> list:
    """What the export panel draws inside: its picker, its buttons, its count."""
    return [*[s for s in at.selectbox if s.key.startswith(export.PICK_KEY)], *buttons_in_panel(at).values(),
            *[c for c in at.caption if str(c.value).endswith("on this page.")]]


def test_closed_export_panel_draws_nothing(saved):
    """Closed (as every page opens), the panel is its label alone: no picker, no buttons, no files;
    the heatmaps are still recorded, so that opening it (a click) draws it all, for the current numbers.
    (In the app: the entry script starts each run's list afresh.)"""
    at = ok(run_app(LESSONS["qkv"].path))
    assert panel(at).proto.expanded is False
    assert drawn(at) and not export_content(at) and not saved
    at.sidebar.slider(key="d_k").set_value(3)  # a slider move with the panel closed costs it nothing
    ok(at.run())
    assert not export_content(at) and not saved
    at.session_state[export.OPEN_KEY] = True  # a click on the label
    ok(at.run())
    items = drawn(at)
    assert picker(at).options == [f"{i + 1}. {item['title']}" for i, item in enumerate(items)]
    assert set(buttons_in_panel(at)) == set(BUTTONS)
    assert count_caption(at) == f"{len(items)} matrices on this page."
    assert read_csv(text(saved, f"{export.slug(items[0]['title'])}.csv")).shape == items[0]["matrix"].shape
    assert next(item for item in items if item["title"] == "X")["matrix"].shape == (7, 16)
    w_q = next(item for item in items if item["title"].startswith("W_Q"))
    assert w_q["matrix"].shape == (16, 3)  # the matrices of this run, at d_k = 3
    at.session_state[export.OPEN_KEY] = False  # closed again
    ok(at.run())
    assert not export_content(at)


def test_png_and_svg_are_real_images(saved):
    """The PNG and SVG buttons of one heatmap (vl_convert is slow to start: one heatmap only)."""
    at = press(press(run_open(LESSONS["qkv"].path), "svg"), "png")
    item = drawn(at)[0]
    name = export.slug(item["title"])
    svg, svg_mime = saved[f"{name}.svg"]
    png, png_mime = saved[f"{name}.png"]
    svg = svg.decode("utf-8")
    assert svg_mime == "image/svg+xml"
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert item["title"] in svg  # the title is drawn
    # every cell is a rect mark: T x D of them (the heatmap's data travelled with it)
    T, D = item["matrix"].shape
    assert svg.count('aria-roledescription="rect mark"') >= T * D or svg.count("<path") >= T * D
    assert png_mime == "image/png"
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width > 2 * D * 10 and height > 2 * T * 10  # drawn at twice the size, cells of 10 px or more


def test_a_made_file_is_saved_while_what_it_shows_is_on_screen(saved):
    """Press SVG: a Save SVG button holds that chart's file, through reruns that change nothing. A move that
    changes the chart, or a pick of another matrix, takes the Save button away: it never holds a file of
    something no longer shown."""
    at = run_open(LESSONS["qkv"].path)
    x = next(i for i, item in enumerate(drawn(at)) if item["title"] == "X")  # a matrix the seed changes
    picker(at).set_value(picker(at).options[x])
    at = press(ok(at.run()), "svg")
    name = export.slug(drawn(at)[x]["title"])
    assert buttons_in_panel(at)["export_svg"].label == "Save SVG"
    first = text(saved, f"{name}.svg")
    ok(at.run())
    assert buttons_in_panel(at)["export_svg"].label == "Save SVG"  # the same chart: the same file
    at.sidebar.slider(key="seed").set_value(3)
    ok(at.run())
    assert "make_svg" in buttons_in_panel(at) and "export_svg" not in buttons_in_panel(at)
    at = press(at, "svg")
    assert text(saved, f"{name}.svg") != first  # made again, from the new numbers
    picker(at).set_value(picker(at).options[x + 1])
    ok(at.run())
    assert "make_svg" in buttons_in_panel(at) and "export_svg" not in buttons_in_panel(at)


def clickable(items: list[dict]) -> int:
    """The index of the heatmap a student clicks a row of: its spec declares the click selection."""
    return next(i for i, item in enumerate(items)
                if any(p.get("name") == "pick" for p in export.spec_of(item).get("params", [])))


def test_clickable_weights_export_as_png_and_svg(saved):
    """The weights a student clicks a row of carry a selection; their PNG and SVG are made all the same."""
    at = run_open(LESSONS["qkv"].path)
    items = drawn(at)
    target = clickable(items)
    picker(at).set_value(picker(at).options[target])
    ok(at.run())
    at = press(press(at, "svg"), "png")
    item = drawn(at)[target]
    name = export.slug(item["title"])
    svg = text(saved, f"{name}.svg")
    assert svg.lstrip().startswith("<svg") and item["title"] in svg
    assert svg.count('aria-roledescription="text mark"') == item["matrix"].size  # its numbers, printed
    assert saved[f"{name}.png"][0][:8] == b"\x89PNG\r\n\x1a\n"
    assert not at.error


def test_a_file_that_cannot_be_made_is_said_on_the_page(saved, monkeypatch):
    """A PNG the converter fails on: the press's rerun says so in the export panel, which file and why, and
    offers no Save button; the PNG button stays, to try again. The next run says it no more."""
    import vl_convert

    def fails(spec, **kwargs):
        raise ValueError('Vega-Lite to PNG conversion failed:\nError: Unrecognized signal name: "pick"\n'
                         "    at l (vega-util.js:7:324)")

    monkeypatch.setattr(vl_convert, "vegalite_to_png", fails)
    monkeypatch.setattr(chart_files, "_MADE", {})  # no file made by an earlier test
    at = run_open(LESSONS["qkv"].path)
    target = clickable(drawn(at))
    picker(at).set_value(picker(at).options[target])
    ok(at.run())
    assert not at.error
    title = drawn(at)[target]["title"]
    at = press(at, "png")
    assert "make_png" in buttons_in_panel(at) and "export_png" not in buttons_in_panel(at)
    assert f"{export.slug(title)}.png" not in saved
    (said,) = [e.value.replace("\\", "") for e in panel(at).error]
    assert f"The PNG of “{title}” could not be made" in said
    assert 'Unrecognized signal name: "pick"' in said and "CSV" in said and "vega-util" not in said
    ok(at.run())
    assert not at.error


def text_layers(spec: dict) -> list[dict]:
    inner = (spec.get("layer") or spec.get("vconcat"))[0]
    return [view for view in inner.get("layer", []) if view["mark"]["type"] == "text"]


@pytest.mark.parametrize("lesson", WITH_HEATMAPS)
def test_every_annotated_heatmap_has_room_for_its_numbers_in_a_file(lesson):
    """A file is drawn at the design's cell size (the page may stretch a map to its column): its cells must
    pass the chart's own test for printing the numbers, bandwidth >= widest * CHAR_EM * size + 4."""
    at = ok(run_page(LESSONS[lesson].path))
    for item in drawn(at):
        spec = chart_files.file_spec(export.spec_of(item))
        texts = ChartData.from_spec(spec).columns.get("text") or [""]
        widest = max(map(len, texts))
        for layer in text_layers(spec) if widest else []:
            size = layer["mark"]["fontSize"]
            assert spec["width"]["step"] >= widest * CHAR_EM * size + 4, (item["title"], spec["width"])
            assert spec["height"]["step"] >= size + 2, (item["title"], spec["height"])
            assert layer["mark"]["font"] == chart_files.FILE_FONTS


def test_masked_scores_file_prints_its_numbers():
    """The user's case: the masked scores (purple-orange, '-1.23' and '-inf') kept no number in their file."""
    at = ok(run_page(LESSONS["masking"].path, opened=ASIDE_KEYS))  # the mistakes open: the naive softmax's NaN
    item = next(i for i in drawn(at) if i["title"].startswith("masked scores"))
    svg = chart_files.chart_file("svg", export.spec_of(item))
    printed = re.findall(r'aria-roledescription="text mark"[^>]*?(?:/>|>([^<]*)</text>)', svg)
    assert len(printed) == item["matrix"].size and all(printed), printed
    assert sorted(printed) == sorted(ChartData.from_spec(export.spec_of(item)).columns["text"])


def test_recorded_spec_carries_the_numbers():
    at = ok(run_page(LESSONS["qkv"].path))
    item = drawn(at)[0]
    df = ChartData.from_spec(export.spec_of(item)).frame()
    assert len(df) == item["matrix"].size
    got = df.pivot(index="row_i", columns="col_i", values="value").to_numpy()
    np.testing.assert_allclose(got, item["matrix"], rtol=5e-4, atol=5e-5)  # sent to 4 decimals

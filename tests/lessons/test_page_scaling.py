"""The scaling page through AppTest: the numbers it draws, its widgets at their extremes, links, hostile input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.demos import measures
from core.tokenize import word_tokens
from lessons.scaling import maths, mistake
from tests.apptest_helpers import (
    SENT_ATOL,
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_controls,
    chart_data,
    chart_title,
    charts,
    exported,
    matrix,
    move_chart_control,
    numbered_title,
    ok,
    panel_names,
    run_page,
    seq_len,
    shown_table,
    texts,
)
from ui.drawing.charts import unique_labels
from ui.sections import explain
from ui.state.controls import DEFAULT_TEXT

PAGE = "lessons/scaling/page.py"
OPENED = (mistake.OPEN_KEY,)  # the √d_v mistake, an aside shut by default: open, as a reader who opened it
# heatmap title prefix -> key of lessons.scaling.maths.scaling_view's result (or of its "mistake" dict)
# (the weights map holds the scores before the softmax: the browser works out the weights, at its own τ)
HEATMAPS = {"scores before the softmax": "logits", "weights: click": "logits", "unscaled scores": "scores",
            "unscaled weights": "weights_unscaled", "scaled scores": "scaled_scores",
            "scaled weights": "weights_scaled", "wrong:": ("mistake", "wrong"), "right:": ("mistake", "right")}
LINES = ("max weight vs d_k", "row entropy vs d_k", "variance of q·k vs d_k")
DEFAULTS = {"text": DEFAULT_TEXT, "seq_len": 7, "d_model": 16, "d_k": 64, "seed": 0, "attn_temp": 1.0,
            "scaling_on": True, "scaling_d_v": 64, "scaling_T": 16, "scaling_trials": 50}



def settings(at) -> dict:
    sb = at  # every widget, in the sidebar or beside its section
    return {"text": sb.text_area(key="text").value, "seq_len": seq_len(sb),
            "d_model": int(sb.select_slider(key="d_model").value), "d_k": sb.slider(key="d_k").value,
            "seed": sb.slider(key="seed").value, "attn_temp": chart_controls(at)["attn_temp"][2],
            "scaling_on": sb.toggle(key="scaling_on").value, "scaling_d_v": sb.slider(key="scaling_d_v").value,
            "scaling_T": sb.slider(key="scaling_T").value,
            "scaling_trials": int(sb.select_slider(key="scaling_trials").value)}


def expected(at) -> tuple[list[str], dict]:
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    return tokens, maths.scaling_view(tokens, s["d_model"], s["d_k"], s["seed"], s["scaling_on"], s["attn_temp"],
                                      s["scaling_d_v"])


def lines(at, title: str) -> dict[str, np.ndarray]:
    """A line chart's data as {series: y values in x order}, plus 'x'."""
    df = chart_data(chart_by_title(at, title)).sort_values(["series", "x"])
    out = {name: g["y"].to_numpy() for name, g in df.groupby("series")}
    out["x"] = np.sort(df["x"].unique())
    return out


def assert_charts_match_core(at):
    """Every heatmap holds what core computes for the settings on screen, to the 4 significant digits a chart is
    sent with (the weights map's scores in full); token labels on both axes. The export panel holds the weights
    the weights map shows at its τ now."""
    tokens, view = expected(at)
    np.testing.assert_allclose(exported(at, "weights"), view["weights"], rtol=1e-12, atol=1e-15)
    labels = unique_labels(tokens)
    for title, key in HEATMAPS.items():
        chart = chart_by_title(at, title)
        want = view[key[0]][key[1]] if isinstance(key, tuple) else view[key]
        np.testing.assert_allclose(matrix(chart).to_numpy(), want, rtol=SENT_RTOL, atol=1e-12, err_msg=title)
        df = chart_data(chart)
        assert df.drop_duplicates("row_i").sort_values("row_i")["row"].tolist() == labels, title
        assert df.drop_duplicates("col_i").sort_values("col_i")["col"].tolist() == labels, title
    return tokens, view


def assert_experiment_matches_core(at):
    s = settings(at)
    # The experiment draws its own vectors with a fixed seed (0), whatever the page's seed: the same curves for
    # every sentence and every link.
    T, trials = s["scaling_T"], s["scaling_trials"]
    r = maths.saturation_experiment(maths.D_K_SWEEP, T, trials, np.random.default_rng([0, T, trials]))
    top, spread = lines(at, "max weight vs d_k"), lines(at, "row entropy vs d_k")
    assert top["x"].tolist() == list(maths.D_K_SWEEP)
    np.testing.assert_allclose(top["unscaled"], r["max_unscaled"], rtol=SENT_RTOL)  # as sent: 4 decimals
    np.testing.assert_allclose(top["scaled by √d_k"], r["max_scaled"], rtol=SENT_RTOL)
    np.testing.assert_allclose(spread["unscaled"], r["entropy_unscaled"], rtol=SENT_RTOL)
    np.testing.assert_allclose(spread["scaled by √d_k"], r["entropy_scaled"], rtol=SENT_RTOL)
    return top, spread


def assert_weighted_sum(at):
    tokens, view = expected(at)
    table = shown_table(at, "value row")
    dims = [c for c in table.columns if c.startswith("dim ")]
    assert len(dims) == min(view["V"].shape[1], explain.MAX_DIMS_IN_TABLE)  # the first few of d_v, said so
    z = view["weights"][-1] @ view["V"][:, :len(dims)]
    # printed "%.3f" (ui/sections/explain.py): within half its last digit
    np.testing.assert_allclose(table[dims].iloc[-1].to_numpy(dtype=float), z, rtol=0, atol=5e-4)
    assert table["value row"].tolist() == [*unique_labels(tokens), "= z (sum)"]



# ---- defaults ---------------------------------------------------------------------------------------


def test_defaults(default_page):
    at = default_page
    assert settings(at) == DEFAULTS
    assert [t.value for t in at.title] == [numbered_title("scaling")]
    assert "**Tokens:** " + " · ".join(f"`{t}`" for t in word_tokens(DEFAULT_TEXT)) in texts(at)
    assert not at.warning and not at.info
    titles = [chart_title(c) for c in charts(at)] + [name for c in charts(at) for name in panel_names(c)]
    for prefix in (*HEATMAPS, *LINES):
        assert any(t.startswith(prefix) for t in titles), prefix


def test_defaults_chart_data_is_core(default_page):
    _, view = assert_charts_match_core(default_page)
    np.testing.assert_allclose(view["weights"].sum(axis=1), 1.0, atol=1e-12)
    assert_weighted_sum(default_page)


def test_compare_side_by_side(default_page):
    at = default_page
    unscaled = matrix(chart_by_title(at, "unscaled weights")).to_numpy()
    scaled = matrix(chart_by_title(at, "scaled weights")).to_numpy()
    raw = matrix(chart_by_title(at, "unscaled scores")).to_numpy()
    # both charts sent to 4 decimals
    np.testing.assert_allclose(matrix(chart_by_title(at, "scaled scores")).to_numpy(), raw / 8, rtol=2 * SENT_RTOL)
    # at d_k = 64 the raw scores saturate the softmax: a bigger favourite per row, a lower entropy
    assert unscaled.max(axis=1).mean() > scaled.max(axis=1).mean() + 0.3
    assert measures.entropy(unscaled).mean() < measures.entropy(scaled).mean() - 1.0
    assert "Spread (standard deviation) of the scores: unscaled 7.43 (expected of the order of √d_k = 8.00), scaled " \
           "0.93." in texts(at)


def test_saturation_experiment_chart(default_page):
    top, spread = assert_experiment_matches_core(default_page)
    assert top["unscaled"][0] == top["scaled by √d_k"][0]  # d_k = 1: sqrt(1) = 1
    assert top["unscaled"][-1] > 0.85 and top["scaled by √d_k"][-1] < 0.4  # d_k = 512
    assert spread["unscaled"][-1] < 0.5 < 3.0 < spread["scaled by √d_k"][-1]
    assert np.allclose(top["uniform (1/T = 0.062)"], 1 / 16)
    assert np.allclose(spread["uniform (log2 T = 4.00)"], 4.0)


def test_variance_chart_and_table(default_page):
    v = lines(default_page, "variance of q·k vs d_k")
    np.testing.assert_array_equal(v["formula: d_k"], v["x"])
    np.testing.assert_allclose(v["measured: q·k"], v["x"], rtol=0.15)
    np.testing.assert_allclose(v["measured: q·k / √d_k"], 1.0, rtol=0.15)
    table = shown_table(default_page, "Var(q·k)")
    assert table["d_k"].tolist() == list(maths.D_K_SWEEP)
    # printed "%.3f" (views.number_table's default), the chart's 4 decimals: within half of each last digit
    np.testing.assert_allclose(table["Var(q·k)"], v["measured: q·k"], rtol=0, atol=5e-4 + 5e-5)
    assert any("Var" in str(el.value) for el in default_page.get("latex"))


def test_shapes_notice_and_code(default_page):
    shown = captions(default_page)
    for caption in ("scaled scores · shape (7, 7) = (T, T)", "each map · shape (7, 7) = (T, T)",
                    "weights · shape (7, 7) = (T, T), rows sum to 1",
                    "each map · shape (7, 7) = (T, T), rows sum to 1"):
        assert caption in shown
    text = texts(default_page)
    assert "What to notice" in text
    assert "saturation_experiment" in text and "scaling_view" in text  # the 'show the code' expander


# ---- widgets ----------------------------------------------------------------------------------------


LONG_TEXT = " ".join(f"w{i}" for i in range(40))
MOVES = [("slider", "d_k", 1), ("slider", "d_k", 512), ("slider", "seq_len", 1), ("slider", "seq_len", 32),
         ("select_slider", "d_model", 4), ("select_slider", "d_model", 128), ("slider", "seed", 999),
         ("chart", "attn_temp", 3.0), ("chart", "attn_temp", 0.0), ("chart", "attn_temp", 0.5),
         ("toggle", "scaling_on", False),
         ("slider", "scaling_d_v", 1), ("slider", "scaling_d_v", 512), ("slider", "scaling_T", 2),
         ("slider", "scaling_T", 32), ("select_slider", "scaling_trials", 1),
         ("select_slider", "scaling_trials", 100), ("toggle", "scaling_on", True), ("slider", "seed", 0)]


def test_every_widget_at_its_extremes():
    """One page, every widget moved in turn (to both ends): the drawn numbers always follow core."""
    at = ok(run_page(PAGE, {"text": LONG_TEXT}, opened=OPENED))
    for kind, key, value in MOVES:
        if kind == "chart":  # τ: the weights map's own slider
            move_chart_control(at, key, value).run()
        else:
            getattr(at, kind)(key=key).set_value(value).run()
        ok(at)
        s = settings(at)
        assert s[key] == value, key
        tokens, view = assert_charts_match_core(at)
        assert len(tokens) == min(s["seq_len"], 40)
        np.testing.assert_allclose(view["weights"].sum(axis=1), 1.0, atol=1e-12, err_msg=f"{key}={value}")
        if key in ("scaling_T", "scaling_trials", "scaling_on", "seed"):
            assert_experiment_matches_core(at)
        if s["attn_temp"] == 0:
            assert "Temperature 0" in texts(at)
            w = exported(at, "weights")
            assert set(np.unique(w)) <= {0.0, 1.0} and (w.sum(axis=1) == 1).all()


def test_slider_ranges(default_page):
    sb = default_page  # every widget, in the sidebar or beside its section
    assert (sb.slider(key="d_k").min, sb.slider(key="d_k").max) == (1, 512)
    assert (sb.slider(key="scaling_d_v").min, sb.slider(key="scaling_d_v").max) == (1, 512)
    assert (sb.slider(key="scaling_T").min, sb.slider(key="scaling_T").max) == (2, 32)
    assert [int(o) for o in sb.select_slider(key="scaling_trials").options] == [1, 10, 50, 100]


def test_d_k_512_unscaled_saturates():
    at = ok(run_page(PAGE, {"d_k": "512"}, opened=OPENED))
    unscaled = matrix(chart_by_title(at, "unscaled weights")).to_numpy()
    scaled = matrix(chart_by_title(at, "scaled weights")).to_numpy()
    assert unscaled.max(axis=1).mean() > 0.9 > 0.6 > scaled.max(axis=1).mean()
    at.toggle(key="scaling_on").set_value(False).run()
    ok(at)
    assert chart_title(chart_by_title(at, "scores before")) == "scores before the softmax: Q Kᵀ (not scaled)"
    np.testing.assert_allclose(matrix(chart_by_title(at, "scores before")).to_numpy(),
                               matrix(chart_by_title(at, "unscaled scores")).to_numpy())
    np.testing.assert_allclose(matrix(chart_by_title(at, "weights: click")).to_numpy(),
                               matrix(chart_by_title(at, "unscaled scores")).to_numpy(), rtol=SENT_RTOL)  # its input
    np.testing.assert_allclose(exported(at, "weights"), unscaled, atol=SENT_ATOL)
    assert "scaling switched off" in texts(at)


def test_d_v_mistake_messages():
    """The mistake divides by √d_v: at d_v = d_k (the defaults) the two maps are identical; apart, they differ."""
    at = ok(run_page(PAGE, opened=OPENED))  # d_k = d_v = 64
    np.testing.assert_array_equal(matrix(chart_by_title(at, "wrong:")).to_numpy(),
                                  matrix(chart_by_title(at, "right:")).to_numpy())
    assert chart_title(chart_by_title(at, "wrong:")) == "wrong: softmax(Q Kᵀ / √d_v)"
    assert "the right number, because d_v = d_k" in texts(at)
    at.slider(key="scaling_d_v").set_value(4).run()
    assert "4.00× too little" in texts(ok(at))  # √64 / √4
    wrong, right = (matrix(chart_by_title(at, side)).to_numpy() for side in ("wrong:", "right:"))
    assert wrong.max(axis=1).mean() > right.max(axis=1).mean()  # sharper
    at.slider(key="scaling_d_v").set_value(256).run()
    assert "2.00× too much" in texts(ok(at))  # √256 / √64
    at.slider(key="scaling_d_v").set_value(8).run()  # d_v = √d_k is no longer "right"
    assert "too little" in texts(ok(at))


# ---- links ------------------------------------------------------------------------------------------


def test_deep_link_equals_setting_widgets_by_hand():
    query = {"text": "a link carries every setting", "d_k": "300", "seed": "7", "attn_temp": "0.5",
             "scaling_on": "false", "scaling_d_v": "16", "scaling_T": "8", "scaling_trials": "10"}
    linked = ok(run_page(PAGE, query, opened=OPENED))
    by_hand = ok(run_page(PAGE, opened=OPENED))
    # by_hand.sidebar afresh each time: a changed text changes the Query row box's options
    by_hand.sidebar.text_area(key="text").set_value(query["text"]).run()
    for key in ("d_k", "seed", "scaling_d_v", "scaling_T"):
        by_hand.slider(key=key).set_value(int(query[key])).run()  # in the sidebar or beside its section
    move_chart_control(by_hand, "attn_temp", 0.5).run()
    by_hand.toggle(key="scaling_on").set_value(False).run()
    by_hand.sidebar.select_slider(key="scaling_trials").set_value(10).run()
    ok(by_hand)
    assert settings(linked) == settings(by_hand) == {**DEFAULTS, "text": query["text"],
                                                    "seq_len": len(word_tokens(query["text"])), "d_k": 300, "seed": 7,
                                                    "attn_temp": 0.5, "scaling_on": False, "scaling_d_v": 16,
                                                    "scaling_T": 8, "scaling_trials": 10}
    for title in (*HEATMAPS, *LINES):
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, title)),
                                      chart_data(chart_by_title(by_hand, title)))
    assert not linked.info  # a valid link gives no notes


def test_hostile_url_values():
    at = ok(run_page(PAGE, {"d_k": "9999", "scaling_on": "maybe", "scaling_trials": "7", "attn_temp": "-3",
                            "scaling_T": "abc", "scaling_d_v": "1e9"}, opened=OPENED))
    s = settings(at)
    assert (s["d_k"], s["scaling_on"], s["scaling_trials"], s["attn_temp"], s["scaling_T"], s["scaling_d_v"]) == (
        512, True, 10, 0.0, 16, 512)
    notes = "\n".join(str(i.value) for i in at.info)
    assert "d_k" in notes and "1 to 512" in notes
    assert "scaling_on" in notes and "true or false" in notes
    assert "scaling_trials" in notes and "using 10" in notes
    assert "scaling_T" in notes and "not a number" in notes
    assert "scaling_d_v" in notes
    assert "attn_temp" in notes and "0 to 3" in notes  # the weights map's own slider reads the link too
    assert_charts_match_core(at)
    assert_experiment_matches_core(at)


# ---- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text_warns(text):
    at = ok(run_page(PAGE, opened=OPENED))
    at.sidebar.text_area(key="text").set_value(text).run()
    ok(at)
    assert len(at.warning) == 1 and "no tokens" in at.warning[0].value
    assert not charts(at)


def test_one_token():
    at = ok(run_page(PAGE, {"text": "hello"}, opened=OPENED))
    _, view = assert_charts_match_core(at)
    assert exported(at, "weights").tolist() == [[1.0]]
    assert view["summary"]["entropy"] == 0.0
    assert_weighted_sum(at)
    said = texts(at)  # one score has no spread: nothing is said of what spread to expect
    assert "there is no spread to measure" in said and "expected of the order of" not in said


def test_500_words():
    text = " ".join(["to", "be", "or", "not"][i % 4] for i in range(500))
    at = ok(run_page(PAGE, {"text": text, "seq_len": "32"}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert len(tokens) == 32
    assert "Showing the first 32 of 500 tokens (seq_len)." in texts(at)


def test_other_scripts_and_emoji():
    at = ok(run_page(PAGE, {"text": "猫が 🐱 مرحبا Ünïcödé"}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == ["猫が", "🐱", "مرحبا", "Ünïcödé"]
    assert "`猫が` · `🐱` · `مرحبا` · `Ünïcödé`" in texts(at)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "[link](javascript:alert(1)) **bold** :red[x]"])
def test_markup_is_shown_only_as_text(text):
    at = ok(run_page(PAGE, {"text": text}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == word_tokens(text, 16)
    for md in at.markdown:
        plain = re.sub(r"(`+)(.+?)\1", "", str(md.value))  # code spans show their content verbatim
        for fragment in ("<script", "](javascript", ":red[", "**bold**"):
            assert fragment not in plain, md.value
        if "alert" in plain:
            assert not re.search(r"(?<!\\)[<>\[\]]", plain), md.value


def test_the_weights_maps_file_draws_the_weights_at_tau_now():
    """The export panel's picture of the weights map is drawn at the τ the map shows now, not at the τ its design
    started from: Vega, drawing the file's spec on the server, prints the weights core computes at that τ."""
    import vl_convert

    from tests.ui.test_charts import walk
    from ui.drawing import chart_files, export

    at = ok(run_page(PAGE, opened=OPENED))
    ok(move_chart_control(at, "attn_temp", 0.25).run())
    item = [i for i in at.session_state[export._DRAWN] if isinstance(i, dict) and i.get("title") == "weights"][-1]
    sg = vl_convert.vegalite_to_scenegraph(chart_files.file_spec(export.spec_of(item)))
    [texts] = [m["items"] for m in walk(sg) if m.get("marktype") == "text" and m.get("role") == "mark"]
    printed = [t["text"] for t in sorted(texts, key=lambda t: (round(t["y"]), t["x"]))]
    _, view = expected(at)
    assert settings(at)["attn_temp"] == 0.25
    assert printed == [f"{w:.2f}" for w in view["weights"].ravel()]
    assert printed != [f"{w:.2f}" for w in maths.scaled_weights(view["scores"], 64)[1].ravel()]  # not τ = 1's

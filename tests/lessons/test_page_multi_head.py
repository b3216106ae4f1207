"""The multi-head page through AppTest: one map per head, concat and W_O, the three forms, the comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.demos.measures import entropy
from core.model import divisors
from core.tokenize import word_tokens
from lessons.multi_head.maths import multi_head
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    matrix,
    numbered_title,
    ok,
    run_app,
    run_page,
    seq_len,
    shown_table,
    texts,
)
from ui.text import CODE_KEY

GRID_PANELS = 32  # lessons/multi_head/page.py: the grid at the top draws at most this many heads
PAGE = "lessons/multi_head/page.py"
GRID = "Attention weights, one map per head"
LONG_TEXT = " ".join(f"word{i}" for i in range(500))



def settings(at) -> dict:
    return {"text": at.sidebar.text_area(key="text").value,
            "seq_len": seq_len(at),
            "D": int(at.sidebar.select_slider(key="d_model").value),
            "H": int(at.sidebar.select_slider(key="heads").value),
            "seed": at.sidebar.slider(key="seed").value,
            "causal": at.sidebar.toggle(key="mh_causal").value}


def expected(at) -> tuple[list[str], dict]:
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    return tokens, multi_head(tokens, s["D"], s["H"], s["seed"], s["causal"])


def panels(at, title: str = GRID) -> np.ndarray:
    """The small-multiples chart back as an array (panels, T, T)."""
    df = chart_data(chart_by_title(at, title))
    maps = [g.pivot(index="row_i", columns="col_i", values="value").to_numpy()
            for _, g in df.sort_values("panel_i").groupby("panel_i", sort=True)]
    return np.stack(maps)


def implementations(at) -> pd.DataFrame:
    return shown_table(at, "implementation")


def assert_page_matches_core(at):
    """Every head's map, the concat, W_O and the output hold what core computes for the settings on screen (to
    the 6 significant digits a chart is sent with)."""
    tokens, a = expected(at)
    H, T, D = a["weights"].shape[0], len(tokens), a["X"].shape[1]
    shown = panels(at)
    drawn = min(H, GRID_PANELS)  # the grid draws the first 32 heads; any head is drawn alone on request
    assert shown.shape == (drawn, T, T)  # one heatmap per head
    np.testing.assert_allclose(shown, a["weights"][:drawn], rtol=SENT_RTOL, atol=1e-12)
    np.testing.assert_allclose(shown.sum(axis=-1), 1.0, atol=SENT_RTOL)  # every row of every head sums to 1
    np.testing.assert_allclose(matrix(chart_by_title(at, "Concat of the head outputs")), a["concat"], rtol=SENT_RTOL,
                               atol=1e-12)
    np.testing.assert_allclose(matrix(chart_by_title(at, "W_O")), a["w_o"], rtol=SENT_RTOL, atol=1e-12)
    np.testing.assert_allclose(matrix(chart_by_title(at, "Output = concat · W_O")), a["out"], rtol=SENT_RTOL,
                               atol=1e-12)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["d_k = D / H"] == str(D // H) and metrics["heads (H)"] == str(H)
    shown = captions(at)
    assert f"weights · shape ({H}, {T}, {T}) = (H, T, T)" in shown
    assert f"concat · shape ({T}, {D})" in shown and f"W_O · shape ({D}, {D}) = (D, D)" in shown
    table = implementations(at)
    assert len(table) == 3 and set(table["core function"]) == {
        "multi_head_attention", "multi_head_attention_loop", "multi_head_attention_einsum"}
    diffs = table[["max |Δ output| vs reshape", "max |Δ weights| vs reshape"]].to_numpy()
    assert (diffs < 1e-10).all()
    assert "Largest difference between the three implementations" in at.success[0].value
    return tokens, a


def test_defaults():
    at = ok(run_page(PAGE, opened=[CODE_KEY]))  # with "Show the code" open
    assert at.title[0].value == numbered_title("multi_head")
    assert settings(at)["H"] == 2
    assert_page_matches_core(at)
    text = texts(at)
    assert "What to notice" in text and "Compare: 1 head vs 2 heads" in text
    assert text.count("What to notice") == 1 and "{D}" not in text  # shown once, with no unfilled placeholder
    assert "The embeddings and weights here are random" in text
    assert "1 head, d_k = 16" in [chart_title(c) for c in charts(at)]
    assert any("def multi_head_attention_einsum" in c.value for c in at.code)  # show the code


@pytest.mark.parametrize("H", divisors(16))
def test_every_head_count_offered(H):
    at = run_page(PAGE)
    ok(at.sidebar.select_slider(key="heads").set_value(H).run())
    _, a = assert_page_matches_core(at)
    assert a["weights"].shape[0] == H
    if H == 1:
        assert any("more than one head" in i.value for i in at.info)
    else:
        assert panels(at, f"{H} heads, d_k = {16 // H}").shape[0] == H
    # head 1 reads the first d_k columns of the projections, which its maps number from d0 (one column: said so)
    d_k = 16 // H
    said = ("Head 1 reads column 0 of X W_Q, X W_K and X W_V (each (T, D)), d0 in the maps above" if d_k == 1 else
            f"Head 1 reads columns 0 to {d_k - 1} of X W_Q, X W_K and X W_V (each (T, D)), which the maps above "
            f"number d0 to d{d_k - 1}")
    assert said in captions(at)


def test_only_divisors_are_offered():
    at = run_page(PAGE)
    for D in (12, 48, 128):
        ok(at.sidebar.select_slider(key="d_model").set_value(D).run())
        assert list(map(int, at.sidebar.select_slider(key="heads").options)) == divisors(D)


def test_extremes_many_heads_long_text():
    at = run_page(PAGE, {"text": LONG_TEXT, "seq_len": "32", "d_model": "128", "heads": "128"})
    ok(at)
    tokens, a = assert_page_matches_core(at)
    assert len(tokens) == 32 and a["weights"].shape == (128, 32, 32)
    assert panels(at, "128 heads, d_k = 1").shape[0] == 16  # the comparison draws the first 16
    assert "The first 32 of the 128 heads" in texts(at)
    # a head beyond the grid is still there to look at closely: head 100's map, on its own
    ok(at.select_slider(key="mh_head").set_value(100).run())
    np.testing.assert_allclose(matrix(chart_by_title(at, "Head 100 weights")), a["weights"][99], rtol=SENT_RTOL,
                               atol=1e-12)
    at.sidebar.select_slider(key="d_model").set_value(4).run()
    ok(at.sidebar.slider(key="seq_len").set_value(1).run())
    tokens, a = assert_page_matches_core(at)
    assert len(tokens) == 1 and np.allclose(a["weights"], 1.0)


def test_causal_toggle_and_focus_head():
    at = run_page(PAGE)
    at.sidebar.select_slider(key="heads").set_value(4).run()
    ok(at.sidebar.toggle(key="mh_causal").set_value(True).run())
    _, a = assert_page_matches_core(at)
    assert np.all(np.triu(panels(at), k=1) == 0)  # nothing above the diagonal in any head
    ok(at.select_slider(key="mh_head").set_value(3).run())
    np.testing.assert_allclose(matrix(chart_by_title(at, "Q of head 3")), a["Q"][2], rtol=SENT_RTOL, atol=1e-12)
    np.testing.assert_allclose(matrix(chart_by_title(at, "Head 3 weights")), a["weights"][2], rtol=SENT_RTOL,
                               atol=1e-12)
    # the weighted sum below the map adds up to head 3's output for the last token
    table = shown_table(at, "value row")
    z = table.iloc[-1, 2:].to_numpy(dtype=float)
    np.testing.assert_allclose(z, a["heads"][2][-1], rtol=0, atol=5e-4)  # printed "%.3f" (ui/sections/explain.py)


def test_moving_every_widget():
    at = run_page(PAGE)
    at.sidebar.text_area(key="text").input("Attention is all you need, said the paper").run()
    at.sidebar.slider(key="seq_len").set_value(5).run()
    at.sidebar.select_slider(key="d_model").set_value(24).run()
    at.sidebar.select_slider(key="heads").set_value(6).run()
    ok(at.sidebar.slider(key="seed").set_value(999).run())
    tokens, a = assert_page_matches_core(at)
    assert tokens == ["Attention", "is", "all", "you", "need"] and a["weights"].shape == (6, 5, 5)


def test_link_reproduces_the_hand_set_view():
    query = {"text": "the quick brown fox", "seq_len": "4", "d_model": "32", "heads": "8", "seed": "7",
             "mh_causal": "true", "mh_head": "5"}
    linked = ok(run_page(PAGE, query))
    by_hand = run_page(PAGE)
    by_hand.sidebar.text_area(key="text").input(query["text"]).run()
    by_hand.sidebar.slider(key="seq_len").set_value(4).run()
    by_hand.sidebar.select_slider(key="d_model").set_value(32).run()
    by_hand.sidebar.select_slider(key="heads").set_value(8).run()
    by_hand.sidebar.slider(key="seed").set_value(7).run()
    by_hand.sidebar.toggle(key="mh_causal").set_value(True).run()
    ok(by_hand.select_slider(key="mh_head").set_value(5).run())
    assert settings(linked) == settings(by_hand)
    assert [chart_title(c) for c in charts(linked)] == [chart_title(c) for c in charts(by_hand)]
    for a, b in zip(charts(linked), charts(by_hand)):
        pd.testing.assert_frame_equal(chart_data(a), chart_data(b))


@pytest.mark.parametrize("query, message", [
    ({"d_model": "16", "heads": "3"}, "not one of"),
    ({"d_model": "1000000000", "heads": "-4"}, "not one of"),
    ({"seed": "-1", "seq_len": "1e9"}, "allowed range"),
    ({"heads": "lots", "mh_causal": "maybe", "mh_head": "nan"}, "not a number"),
])
def test_hand_edited_links_are_corrected_and_said(query, message):
    at = ok(run_page(PAGE, query))
    assert message in "\n".join(i.value for i in at.info)
    assert_page_matches_core(at)


@pytest.mark.parametrize("text", ["", "   ", "!!!", "word", "<script>alert(1)</script> <b>bold</b> [x](http://e.com)",
                                  "猫が座った 🐱 on the mat", "a a a a a a"])
def test_odd_text_never_breaks_the_page(text):
    at = ok(run_page(PAGE, {"text": text}))
    tokens = word_tokens(text, 16)
    if not tokens:
        assert "no tokens" in at.warning[0].value
        return
    assert_page_matches_core(at)
    assert "<script>" not in "\n".join(m.value for m in at.markdown)  # shown as code, never as HTML


def test_deep_link_through_the_app():
    at = ok(run_app(PAGE, {"d_model": "32", "heads": "4", "mh_causal": "true"}))
    assert at.title[0].value == numbered_title("multi_head")
    assert panels(at).shape[0] == 4 and np.all(np.triu(panels(at), k=1) == 0)


def test_compare_entropies_are_core_measures():
    at = ok(run_page(PAGE, {"heads": "4", "mh_causal": "true"}))
    tokens, a = expected(at)
    one = multi_head(tokens, 16, 1, 0, True)["weights"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Mean row entropy, 1 head"] == f"{entropy(one).mean():.2f} bits"
    assert metrics["Mean row entropy, 4 heads"] == f"{entropy(a['weights']).mean():.2f} bits"
    per_head = ", ".join(f"{e:.2f}" for e in entropy(a["weights"]).mean(axis=-1))
    assert any(f"Entropy per head: {per_head} bits" in c.value for c in at.caption)

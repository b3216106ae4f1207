"""The 'Compare' sections: two views side by side whose numbers differ exactly as the lesson says."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.tokenize import word_tokens
from lessons import COURSE
from lessons.multi_head.maths import multi_head
from tests.apptest_helpers import (
    SENT_RTOL,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    matrix,
    ok,
    panel_names,
    run_page,
    sent_spec,
)
from ui.compute import model_store
from ui.state.controls import DEFAULT_TEXT

LESSONS = {lesson.url_path: lesson for lesson in COURSE}
T = len(word_tokens(DEFAULT_TEXT))



def side_by_side(at: AppTest, left: str, right: str) -> None:
    """Two charts next to each other in one row, `left` (title prefix) first, then `right`: in neighbouring
    columns, or neighbours in a horizontal container."""

    def rows(block):
        for child in getattr(block, "children", {}).values():
            if getattr(child, "type", None) == "flex_container":
                places = list(child.children.values())
                if all(getattr(c, "type", None) == "column" for c in places):
                    yield [[chart_title(c) for c in col.get("vega_lite_chart")] for col in places]
                else:  # a horizontal container: each element is its own place in the row
                    yield [[chart_title(c)] if getattr(c, "type", None) == "vega_lite_chart" else []
                           for c in places]
            yield from rows(child)

    for columns in rows(at.main):
        for a, b in itertools.pairwise(columns):
            if any(t.startswith(left) for t in a) and any(t.startswith(right) for t in b):
                return
    for chart in charts(at):  # or neighbouring panels of one chart, two or more to a row
        spec = sent_spec(chart)
        facet = spec["vconcat"][0] if "vconcat" in spec else spec  # a titled chart is its title above the chart
        for a, b in itertools.pairwise(panel_names(chart)):
            if a.startswith(left) and b.startswith(right) and facet.get("columns", 1) >= 2:
                return
    raise AssertionError(f"{left!r} and {right!r} are not side by side")


def colour_domains(spec: dict) -> list:
    """The fixed domains of a heatmap design's colour scales (none: the scale follows the data)."""
    return [la["encoding"]["color"]["scale"].get("domain") for la in spec["layer"]
            if "scale" in la.get("encoding", {}).get("color", {})]


def row_entropy(w: np.ndarray) -> np.ndarray:
    p = np.where(w > 0, w, 1.0)
    return -(w * np.log2(p)).sum(-1)


# ---- scaling ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [{}, {"d_k": "512", "scaling_on": "false"}, {"d_k": "8", "seed": "3"}],
                         ids=["defaults", "d_k 512 unscaled", "d_k 8"])
def test_scaling_unscaled_vs_scaled(query):
    at = ok(run_page(LESSONS["scaling"].path, query))
    d_k = at.sidebar.slider(key="d_k").value
    side_by_side(at, "unscaled scores", "scaled scores")
    side_by_side(at, "unscaled weights", "scaled weights")
    raw = matrix(chart_by_title(at, "unscaled scores")).to_numpy()
    scaled = matrix(chart_by_title(at, "scaled scores")).to_numpy()
    # the same scores, ÷ √d_k (each side sent to 6 significant digits)
    np.testing.assert_allclose(scaled * np.sqrt(d_k), raw, rtol=2 * SENT_RTOL, atol=1e-9)
    w_raw = matrix(chart_by_title(at, "unscaled weights")).to_numpy()
    w_scaled = matrix(chart_by_title(at, "scaled weights")).to_numpy()
    assert w_raw.shape == w_scaled.shape == (T, T)
    np.testing.assert_allclose(w_raw.sum(1), 1.0, atol=SENT_RTOL)  # weights sent to 6 significant digits
    np.testing.assert_allclose(w_scaled.sum(1), 1.0, atol=SENT_RTOL)
    # a softmax of the same scores at a higher "inverse temperature" is never flatter, row by row (up to
    # what the 6 digits sent can tell)
    assert (w_raw.max(1) >= w_scaled.max(1) - SENT_RTOL).all()
    assert (row_entropy(w_raw) <= row_entropy(w_scaled) + 10 * SENT_RTOL).all()
    if d_k >= 64:
        assert w_raw.max(1).mean() > w_scaled.max(1).mean() + 0.1  # visibly sharper
        assert w_raw.max(1).mean() > 0.8  # most rows nearly one-hot
    # both sides are drawn on one colour scale, 0 to 1, so brightness compares across them
    weights = chart_by_title(at, "unscaled weights").chart
    assert panel_names(weights) == ["unscaled weights softmax(Q Kᵀ)", "scaled weights softmax(Q Kᵀ / √d_k)"]
    facet = sent_spec(weights)["vconcat"][0]
    assert facet["resolve"]["scale"]["color"] == "shared" and colour_domains(facet["spec"]) == [[0.0, 1.0]]
    # the scores too, on one scale: the scaled ones look as much smaller as they are
    assert sent_spec(chart_by_title(at, "unscaled scores").chart)["vconcat"][0]["resolve"]["scale"]["color"] == "shared"


def test_scaling_changes_nothing_at_d_k_1():
    at = ok(run_page(LESSONS["scaling"].path, {"d_k": "1"}))
    said = " ".join(str(c.value) for c in at.caption)
    assert "at d_k = 1 they are the same map" in said and "nearer the middle" not in said
    np.testing.assert_allclose(matrix(chart_by_title(at, "unscaled weights")).to_numpy(),
                               matrix(chart_by_title(at, "scaled weights")).to_numpy(), rtol=1e-12)


# ---- masking ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [{}, {"text": "one two three four five six seven eight nine ten", "seed": "5"}],
                         ids=["defaults", "ten words"])
def test_masking_without_vs_with(query):
    at = ok(run_page(LESSONS["masking"].path, query))
    side_by_side(at, "weights without a mask", "weights with the causal mask")
    free = matrix(chart_by_title(at, "weights without a mask")).to_numpy()
    masked = matrix(chart_by_title(at, "weights with the causal mask")).to_numpy()
    n = free.shape[0]
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    assert (masked[upper] == 0).all()  # exactly zero, not small
    assert (free[upper] > 0).all()
    np.testing.assert_allclose(masked.sum(1), 1.0, atol=SENT_RTOL)  # weights sent to 6 significant digits
    np.testing.assert_allclose(free.sum(1), 1.0, atol=SENT_RTOL)
    assert masked[0, 0] == 1.0
    np.testing.assert_allclose(masked[-1], free[-1], rtol=1e-12)  # the last token sees everything anyway
    assert not np.allclose(masked[:-1], free[:-1])
    side_by_side(at, "outputs without a mask", "outputs with the causal mask")


# ---- multi-head ------------------------------------------------------------------------------------------


def grid(at: AppTest, prefix: str) -> dict[str, np.ndarray]:
    df = chart_data(chart_by_title(at, prefix))
    return {name: g.pivot(index="row_i", columns="col_i", values="value").sort_index().to_numpy()
            for name, g in df.sort_values("panel_i").groupby("panel", sort=False)}


@pytest.mark.parametrize(("D", "H"), [(16, 2), (16, 4), (24, 3), (64, 16)])
def test_multi_head_one_vs_many(D, H):
    at = ok(run_page(LESSONS["multi-head"].path, {"d_model": str(D), "heads": str(H)}))
    one = matrix(chart_by_title(at, f"1 head, d_k = {D}")).to_numpy()
    heads = grid(at, f"{H} heads, d_k = {D // H}")
    side_by_side(at, f"1 head, d_k = {D}", f"{H} heads, d_k = {D // H}")
    assert list(heads) == [f"head {h + 1}" for h in range(H)]
    want = multi_head(word_tokens(DEFAULT_TEXT), D, H, 0, False)["weights"]
    want_one = multi_head(word_tokens(DEFAULT_TEXT), D, 1, 0, False)["weights"][0]
    np.testing.assert_allclose(one, want_one, rtol=SENT_RTOL, atol=1e-12)  # sent to 6 significant digits
    for h, w in enumerate(heads.values()):
        np.testing.assert_allclose(w, want[h], rtol=SENT_RTOL, atol=1e-12)
        np.testing.assert_allclose(w.sum(1), 1.0, atol=SENT_RTOL)
        assert not np.allclose(w, one, atol=1e-3), f"head {h + 1} is the single head's map"
    maps = list(heads.values())
    assert all(not np.allclose(a, b, atol=1e-3) for i, a in enumerate(maps) for b in maps[i + 1:])
    # the split costs no parameters: the same 4D² + 4D whatever H
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Parameters in W_qkv and W_O"] == f"{4 * D * D + 4 * D:,}"


def test_multi_head_single_head_has_nothing_to_compare():
    at = ok(run_page(LESSONS["multi-head"].path, {"heads": "1"}))
    assert any("Pick more than one head" in i.value for i in at.info)
    assert not [c for c in charts(at) if chart_title(c).startswith("1 head, d_k")]


def test_multi_head_compare_shows_sixteen_panels_at_most():
    at = ok(run_page(LESSONS["multi-head"].path, {"d_model": "64", "heads": "32"}))
    assert len(grid(at, "32 heads, d_k = 2")) == 16
    assert len(grid(at, "Attention weights, one map per head")) == 32
    assert any("The first 16 of the 32 heads" in c.value for c in at.caption)


# ---- full model ------------------------------------------------------------------------------------------


def bars(at: AppTest, prefix: str) -> np.ndarray:
    df = chart_data(chart_by_title(at, prefix)).sort_values("order")
    return df["value"].to_numpy()


def test_full_model_trained_vs_random():
    at = ok(run_page(LESSONS["model"].path))
    assert not [c for c in charts(at) if chart_title(c).startswith(("Trained ·", "Random ·"))]
    at.sidebar.toggle(key="fm_compare").set_value(True)
    ok(at.run())
    side_by_side(at, "Trained · P(next", "Random · P(next")
    trained, random_ = bars(at, "Trained · P(next"), bars(at, "Random · P(next")
    V = model_store.load_model(model_store.default_model()).cfg.vocab_size
    assert (np.diff(trained) <= 0).all() and (np.diff(random_) <= 0).all()  # most likely first
    assert random_.max() < 3 / V  # untrained: every character near 1/V
    assert trained.max() > 5 * random_.max()  # trained: it has a favourite
    assert trained.sum() > random_.sum()  # the top bars hold more of the mass
    # generation makes one text per side, each as long as asked
    at.button(key="fm_generate").click()
    ok(at.run())
    assert [m.value for m in at.markdown if m.value in ("**Trained weights:**", "**Random weights:**")] == [
        "**Trained weights:**", "**Random weights:**"]
    texts = [c.value for c in at.main.code if c.language == "text"]
    assert len(texts) == 2 and texts[0] != texts[1]
    n = at.slider(key="fm_n_chars").value
    assert all(len(t) == n for t in texts)
    # and the toggle off gives one set of bars again
    at.sidebar.toggle(key="fm_compare").set_value(False)
    ok(at.run())
    assert not [c for c in charts(at) if chart_title(c).startswith("Random ·")]


def test_full_model_compare_at_temperature_zero():
    """Temperature 0 on both sides: one bar at 1, trained and random (argmax of random logits) alike."""
    at = ok(run_page(LESSONS["model"].path, {"fm_compare": "true", "sample_temp": "0"}))
    for side in ("Trained ·", "Random ·"):
        b = bars(at, side)
        assert b[0] == 1.0 and (b[1:] == 0).all(), side

"""The tiles page through AppTest: the tiled output equals the full softmax at every block size, the tile
holds at most T x b scores, the running m and l behave, and the memory panel; links and bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.attention import causal_mask
from core.demos.heads import single_head
from core.tokenize import word_tokens
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    matrix,
    numbered_title,
    ok,
    panel_names,
    panels_on_one_scale,
    run_page,
    texts,
)
from ui.state.controls import DEFAULT_TEXT

PAGE = "lessons/tiles/page.py"
T_DEFAULT = len(word_tokens(DEFAULT_TEXT))  # 7
SENTENCE = "a b c d e f g h i j k l"  # 12 tokens



def settings(at) -> dict:
    return {"tl_block": at.sidebar.slider(key="tl_block").value, "tl_step": at.slider(key="tl_step").value,
            "tl_causal": at.sidebar.toggle(key="tl_causal").value, "d_k": at.sidebar.slider(key="d_k").value,
            "tl_length": int(at.number_input(key="tl_length").value)}


def grid(at, title: str) -> np.ndarray:
    return matrix(chart_by_title(at, title)).to_numpy()


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def full_attention(at) -> np.ndarray:
    """softmax(Q Kᵀ / √d_k) V written out from the page's own Q, K, V is not drawn; the full output chart is."""
    return grid(at, "full:")


def assert_final_equals_full(at):
    """At the last step the tiled output chart equals the full output chart to float64 rounding."""
    tiled, full = grid(at, "tiled:"), full_attention(at)
    assert tiled.shape == full.shape
    np.testing.assert_allclose(tiled, full, rtol=0, atol=1e-12)
    success = [str(s.value) for s in at.success]
    assert any("largest |tiled − full|" in s for s in success), success


def assert_tile_holds_at_most_t_by_b(at, T: int, b: int):
    tile = grid(at, "the tile")
    assert tile.shape[0] == T and tile.shape[1] <= b
    held = grid(at, "scores held at this step")
    assert held.shape == (T, T)
    # only the tile's columns are held: every other cell is empty (grey)
    assert np.isfinite(held).sum() <= T * b
    assert f"≤ T × b = {T} × {b} = {T * b}" in texts(at)


# ---- defaults ---------------------------------------------------------------------------------------



def test_defaults(default_page):
    at = default_page
    assert settings(at) == {"tl_block": 2, "tl_step": 2, "tl_causal": True, "d_k": 8, "tl_length": 4096}
    assert [t.value for t in at.title] == [numbered_title("tiles")]
    assert "Step 2 of 4: keys 2 to 3" in texts(at)  # 7 keys in blocks of 2: 0-1, 2-3, 4-5, 6
    assert_tile_holds_at_most_t_by_b(at, T_DEFAULT, 2)
    assert "Held at this step: 14 scores" in texts(at)
    assert "What to notice" in texts(at) and "online_softmax_step" in texts(at)


def test_full_output_is_the_plain_formula(default_page):
    """The full output drawn is softmax(Q Kᵀ / √d_k) V with the causal mask, written out here in NumPy."""
    head = single_head(word_tokens(DEFAULT_TEXT), 16, 8, 0)
    scores = np.where(np.tril(np.ones((7, 7), dtype=bool)), head["Q"] @ head["K"].T / np.sqrt(8), -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    expected = (weights / weights.sum(axis=1, keepdims=True)) @ head["V"]
    np.testing.assert_allclose(full_attention(default_page), expected, rtol=SENT_RTOL, atol=1e-12)  # 4 decimals sent


def test_defaults_shapes(default_page):
    shown = captions(default_page)
    assert "tile · shape (7, 2) = (T, b), −∞ where masked" in shown
    assert "held · shape (7, 7) = (T, T)" in shown
    for name in ("m", "rescale", "l"):
        assert f"{name} · shape (7, 2) = (T, blocks so far)" in shown
    assert "each map · shape (7, 8) = (T, d_k)" in shown  # the tiled and the full output, panels of one chart


@pytest.mark.parametrize("query", [{}, {"tl_causal": "false"}, {"level": "simple"}])
def test_the_outputs_share_one_colour_scale(query):
    """The tiled and the full output are one quantity, compared cell by cell: the panels of one chart on one colour
    scale, so rows already equal are equal in colour too. One name for each at both levels, with and without the
    mask."""
    at = ok(run_page(PAGE, query))
    chart, _ = panels_on_one_scale(at, "Outputs, ")
    assert panel_names(chart) == ["tiled: acc / l so far", "full: every key at once"]


def test_tile_is_the_full_scores_sliced_and_masked(default_page):
    tile, held = grid(default_page, "the tile"), grid(default_page, "scores held at this step")
    np.testing.assert_array_equal(held[:, 2:4], tile)  # NaN (masked) in the same places too
    # causal: query i never sees key j > i, so (0, 2), (1, 2), (0, 3), (1, 3), (2, 3) are masked
    assert np.isnan(tile[[0, 1, 0, 1, 2], [0, 0, 1, 1, 1]]).all()
    assert np.isfinite(tile[3:]).all()


def test_running_max_and_sum_behave(default_page):
    m, rescale, l_sum = grid(default_page, "running max m"), grid(default_page, "rescale"), grid(default_page,
                                                                                                   "running sum l")
    assert (np.diff(m, axis=1) >= 0).all()  # m only goes up
    np.testing.assert_array_equal(rescale[:, 0], 0.0)  # nothing to rescale before the first block
    # exp(m_old - m_new), from the drawn m: each number sent to 4 decimals moves the exponent by up to
    # SENT_RTOL / 2 of each m, and the rescale itself by SENT_RTOL / 2
    sent = SENT_RTOL * (1 + np.abs(m[:, :2]).sum(axis=1).max())
    np.testing.assert_allclose(rescale[:, 1], np.exp(m[:, 0] - m[:, 1]), rtol=sent)
    assert (l_sum >= 1.0 - 1e-12).all()  # the largest term of each sum is exp(0) = 1


def test_memory_at_the_default_length(default_page):
    shown = metrics(default_page)
    assert shown["Full scores (4,096 x 4,096)"] == "67.1 MB"  # 4096² x 4 bytes
    assert shown["One tile (4,096 x 128)"] == "2.1 MB"  # 4096 x 128 x 4 bytes
    tiled = 4096 * 128 * 4 + 2 * 4096 * 4 + 4096 * 8 * 4  # tile + m, l + accumulator (T, d_k)
    assert shown["Full / tiled"] == f"{4096 * 4096 * 4 / tiled:,.1f} x"
    assert shown["FlashAttention block (128 x 128)"] == "65.5 KB"  # 128 x 128 x 4 bytes, whatever T is
    assert "That tile holds every query's scores at once, 2.1 MB at T = 4,096" in texts(default_page)


# ---- every block size, every step ----------------------------------------------------------------------


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("block", [1, 2, 3, 5, 7])
def test_every_block_size_ends_at_the_full_softmax(block, causal):
    at = ok(run_page(PAGE, {"tl_block": str(block), "tl_step": "32", "tl_causal": str(causal).lower()}))
    n = math.ceil(T_DEFAULT / block)
    assert f"Step {n} of {n}:" in texts(at)
    assert_final_equals_full(at)
    assert_tile_holds_at_most_t_by_b(at, T_DEFAULT, block)
    if block < T_DEFAULT and n < 32:
        assert f"gives {n} blocks; step 32 shows the last" in texts(at)


def test_stepping_through_the_blocks():
    at = ok(run_page(PAGE, {"text": SENTENCE, "tl_block": "4"}))
    T, diffs = 12, []
    for step in (1, 2, 3):
        at.slider(key="tl_step").set_value(step).run()
        ok(at)
        assert f"Step {step} of 3: keys {4 * (step - 1)} to {4 * step - 1}" in texts(at)
        if step < 3:
            left = "1 more block" if step == 2 else "2 more blocks"
            assert f"{left} of keys to fold in" in "\n".join(str(i.value) for i in at.info)
        assert grid(at, "running max m").shape == (T, step)
        assert_tile_holds_at_most_t_by_b(at, T, 4)
        diffs.append(np.abs(grid(at, "tiled:") - full_attention(at)).max())
    assert diffs[0] > 1e-3 and diffs[-1] < 1e-12
    # causal: the first 4 queries see only keys 0..3, so their rows are final after block 1
    at.slider(key="tl_step").set_value(1).run()
    np.testing.assert_allclose(grid(at, "tiled:")[:4], full_attention(at)[:4], atol=1e-12)


def test_mask_off_changes_the_output():
    at = ok(run_page(PAGE, {"tl_step": "32"}))
    causal_out = full_attention(at)
    at.sidebar.toggle(key="tl_causal").set_value(False).run()
    ok(at)
    free_out = full_attention(at)
    assert not np.allclose(causal_out, free_out)
    np.testing.assert_allclose(causal_out[-1], free_out[-1], atol=1e-12)  # the last query sees every key anyway
    assert np.isfinite(grid(at, "the tile")).all()  # nothing masked
    assert_final_equals_full(at)


def test_one_token_and_the_longest_sentence():
    at = ok(run_page(PAGE, {"text": "hello", "tl_block": "32", "tl_step": "32"}))
    assert "one block of all 1 is used" in texts(at)
    assert grid(at, "the tile").shape == (1, 1)
    assert_final_equals_full(at)
    long = " ".join(f"w{i}" for i in range(40))
    at = ok(run_page(PAGE, {"text": long, "seq_len": "32", "tl_block": "1", "tl_step": "32"}))
    assert "Step 32 of 32: keys 31 to 31" in texts(at)
    assert_final_equals_full(at)
    assert_tile_holds_at_most_t_by_b(at, 32, 1)


# ---- memory panel ---------------------------------------------------------------------------------------


def test_memory_at_a_million_and_at_one():
    at = ok(run_page(PAGE))
    at.number_input(key="tl_length").set_value(1_000_000).run()
    ok(at)
    assert metrics(at)["Full scores (1,000,000 x 1,000,000)"] == "4.0 TB"
    assert metrics(at)["One tile (1,000,000 x 128)"] == "512.0 MB"
    at.select_slider(key="tl_bytes").set_value(2).run()
    assert metrics(at)["Full scores (1,000,000 x 1,000,000)"] == "2.0 TB"
    at.number_input(key="tl_length").set_value(1).run()
    ok(at)
    assert "A block of 128 is longer than T = 1: one block of 1 is used." in texts(at)
    assert metrics(at)["Full scores (1 x 1)"] == "2 B"


# ---- links and bad input --------------------------------------------------------------------------------


def test_deep_link_equals_setting_widgets_by_hand():
    query = {"text": SENTENCE, "tl_block": "5", "tl_step": "2", "tl_causal": "false", "d_k": "4",
             "tl_length": "100000", "tl_mem_block": "64"}
    linked = ok(run_page(PAGE, query))
    by_hand = ok(run_page(PAGE))
    by_hand.sidebar.text_area(key="text").set_value(SENTENCE).run()
    by_hand.sidebar.slider(key="tl_block").set_value(5).run()
    by_hand.sidebar.toggle(key="tl_causal").set_value(False).run()
    by_hand.sidebar.slider(key="d_k").set_value(4).run()
    by_hand.number_input(key="tl_length").set_value(100_000).run()
    by_hand.select_slider(key="tl_mem_block").set_value(64).run()
    ok(by_hand)
    assert settings(linked) == settings(by_hand) == {"tl_block": 5, "tl_step": 2, "tl_causal": False, "d_k": 4,
                                                    "tl_length": 100_000}
    titles = ("scores held at this step", "the tile", "running max m", "rescale", "running sum l", "tiled:", "full:")
    for title in titles:
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, title)),
                                      chart_data(chart_by_title(by_hand, title)))
    assert metrics(linked) == metrics(by_hand)
    assert not [i for i in linked.info if "link" in str(i.value)]  # a valid link gives no notes


def test_hostile_link_values():
    at = ok(run_page(PAGE, {"tl_block": "abc", "tl_step": "-5", "tl_causal": "maybe", "tl_length": "inf",
                            "tl_mem_block": "1e9", "tl_bytes": "nan"}))
    assert settings(at) == {"tl_block": 2, "tl_step": 1, "tl_causal": True, "d_k": 8, "tl_length": 1_000_000}
    notes = "\n".join(str(i.value) for i in at.info)
    for key in ("tl_block", "tl_step", "tl_causal", "tl_length", "tl_mem_block", "tl_bytes"):
        assert key in notes, key
    assert_tile_holds_at_most_t_by_b(at, T_DEFAULT, 2)


@pytest.mark.parametrize("text", ["", "   ", "<script>alert(1)</script> **x** $y$"])
def test_bad_text(text):
    at = ok(run_page(PAGE))
    at.sidebar.text_area(key="text").set_value(text).run()
    ok(at)
    if not word_tokens(text):
        assert "no tokens" in at.warning[0].value
        return
    tokens = word_tokens(text, 16)  # seq_len
    assert "**Tokens:** " + " · ".join(f"`{t}`" for t in tokens) in texts(at)
    assert "<script" not in "".join(str(m.value) for m in at.markdown if m.allow_html)
    assert grid(at, "the tile").shape[0] == len(tokens)


def test_causal_mask_is_core_s(default_page):
    held = grid(default_page, "scores held at this step")
    assert np.isnan(held[:, :2]).all() and np.isnan(held[:, 4:]).all()  # outside the tile: nothing held
    np.testing.assert_array_equal(np.isfinite(held[:, 2:4]), causal_mask(T_DEFAULT)[:, 2:4])


def test_try_this_long_length_tile_against_flash_block():
    """Try this, step 3: at T = 100,000 the full matrix is tens of GB, the page's tile tens of MB, FlashAttention's
    block tens of KB; doubling T leaves the block as it is."""
    at = ok(run_page(PAGE, {"tl_length": "100000"}))
    shown = metrics(at)
    assert shown["Full scores (100,000 x 100,000)"] == "40.0 GB"
    assert shown["One tile (100,000 x 128)"] == "51.2 MB"
    assert shown["FlashAttention block (128 x 128)"] == "65.5 KB"
    at.number_input(key="tl_length").set_value(200_000).run()
    assert metrics(ok(at))["FlashAttention block (128 x 128)"] == "65.5 KB"

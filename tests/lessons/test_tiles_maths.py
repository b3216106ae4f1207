"""Tiled attention with the online softmax equals the full computation, for every block size."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.attention import causal_mask, scaled_dot_product_attention
from lessons.tiles.maths import attention_memory_both_ways, tiled_attention

RTOL, ATOL = 1e-12, 1e-14


def _qkv(Tq, Tk, d_k=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((Tq, d_k)), rng.standard_normal((Tk, d_k)), rng.standard_normal((Tk, d_v))


def _masks(Tq, Tk):
    # Square: the project's causal mask. Rectangular: query i may look at keys j <= i (row 0 sees key 0).
    causal = causal_mask(Tq) if Tq == Tk else np.tril(np.ones((Tq, Tk), dtype=bool))
    return [None, causal]


@pytest.mark.parametrize(("Tq", "Tk"), [(7, 7), (5, 9), (9, 4), (1, 6)])
def test_every_block_size_matches_the_full_way(Tq, Tk):
    q, k, v = _qkv(Tq, Tk)
    for mask in _masks(Tq, Tk):
        expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
        for b in range(1, Tk + 1):
            got = tiled_attention(q, k, v, b, mask=mask)
            np.testing.assert_allclose(got["out"], expected, rtol=RTOL, atol=ATOL, err_msg=f"block {b}")
            np.testing.assert_allclose(got["steps"][-1]["out"], expected, rtol=RTOL, atol=ATOL)
            assert len(got["steps"]) == math.ceil(Tk / b)


def test_snapshots_hold_at_most_one_tile():
    q, k, v = _qkv(6, 11)
    for b in range(1, 12):
        got = tiled_attention(q, k, v, b)
        assert all(s["held"] <= 6 * b for s in got["steps"])
        assert got["peak_scores"] == 6 * b
        assert got["full_scores"] == 6 * 11
        assert [s["keys"][0] for s in got["steps"]] == list(range(0, 11, b))
        assert got["steps"][-1]["keys"][1] == 11


def test_block_scores_are_the_full_scores_sliced():
    q, k, v = _qkv(5, 5)
    got = tiled_attention(q, k, v, 2, mask=causal_mask(5))
    full = np.where(causal_mask(5), q @ k.T / 2.0, -np.inf)  # d_k = 4, so the scale is 1/2
    for s in got["steps"]:
        start, stop = s["keys"]
        np.testing.assert_allclose(s["scores"], full[:, start:stop], rtol=RTOL)


def test_fully_masked_blocks_and_rows_give_no_nan():
    q, k, v = _qkv(6, 6)
    mask = np.tril(np.ones((6, 6), dtype=bool), k=-1)  # row 0 sees no key at all
    with np.errstate(all="raise"):
        got = tiled_attention(q, k, v, 2, mask=mask)
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    assert all(np.all(np.isfinite(s["out"])) for s in got["steps"])
    np.testing.assert_allclose(got["out"], expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(got["out"][0], 0.0)


def test_custom_scale_matches():
    q, k, v = _qkv(4, 7)
    expected, _ = scaled_dot_product_attention(q, k, v, scale=0.3)
    np.testing.assert_allclose(tiled_attention(q, k, v, 3, scale=0.3)["out"], expected, rtol=RTOL, atol=ATOL)


def test_large_scores_do_not_overflow():
    q, k, v = _qkv(3, 8)
    with np.errstate(over="raise"):
        got = tiled_attention(q * 200, k * 200, v, 3)
    expected, _ = scaled_dot_product_attention(q * 200, k * 200, v)
    np.testing.assert_allclose(got["out"], expected, rtol=1e-10, atol=1e-12)


def _online_softmax_row(scores, values, block):
    """The online softmax for one query row, written with plain Python numbers."""
    m, l, acc = -math.inf, 0.0, [0.0] * len(values[0])
    for start in range(0, len(scores), block):
        chunk = list(range(start, min(start + block, len(scores))))
        m_new = max([m] + [scores[j] for j in chunk])
        factor = math.exp(m - m_new)
        l *= factor
        acc = [a * factor for a in acc]
        for j in chunk:
            p = math.exp(scores[j] - m_new)
            l += p
            acc = [a + p * x for a, x in zip(acc, values[j])]
        m = m_new
    return [a / l for a in acc]


def test_plain_loop_for_one_row_agrees():
    q, k, v = _qkv(3, 7)
    for b in (1, 2, 3, 7):
        got = tiled_attention(q, k, v, b)
        for i in range(3):
            row = [float(x) for x in q[i] @ k.T / 2.0]
            plain = _online_softmax_row(row, v.tolist(), b)
            np.testing.assert_allclose(got["out"][i], plain, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("bad", [0, -1, 2.5, 8, True])
def test_bad_block_sizes_raise(bad):
    q, k, v = _qkv(3, 7)
    with pytest.raises(ValueError, match="block size"):
        tiled_attention(q, k, v, bad)


def test_bad_inputs_raise():
    q, k, v = _qkv(3, 5)
    with pytest.raises(ValueError, match="d_k"):
        tiled_attention(q[:, :2], k, v, 2)
    with pytest.raises(ValueError, match="one value"):
        tiled_attention(q, k, v[:4], 2)
    with pytest.raises(ValueError, match="boolean"):
        tiled_attention(q, k, v, 2, mask=np.ones((3, 5)))
    with pytest.raises(ValueError, match="does not fit"):
        tiled_attention(q, k, v, 2, mask=np.ones((4, 5), dtype=bool))


def test_memory_both_ways():
    mem = attention_memory_both_ways(1024, 64, 64, dtype="float32")
    assert mem["full_scores"] == 1024 * 1024 * 4
    assert mem["tile_scores"] == 1024 * 64 * 4
    assert mem["tiled_total"] == mem["tile_scores"] + mem["running_stats"] + mem["accumulator"]
    assert mem["ratio"] > 1
    # Doubling T quadruples the full way but only doubles the tiled way.
    big = attention_memory_both_ways(2048, 64, 64)
    assert big["full_scores"] == 4 * mem["full_scores"]
    assert big["tiled_total"] == 2 * mem["tiled_total"]
    # FlashAttention's block, b queries against b keys, does not grow with T at all
    assert mem["block_scores"] == big["block_scores"] == 64 * 64 * 4
    assert mem["block_total"] == big["block_total"] == (64 * 64 + 4 * 64 * 64 + 2 * 64) * 4


def test_the_pages_tile_is_far_too_big_for_a_chip_at_long_lengths():
    """At T = 100,000 in float32 the lesson's (T, 128) tile is 51.2 MB; a 128 x 128 block is 65.5 KB."""
    mem = attention_memory_both_ways(100_000, 128, 64)
    assert mem["tile_scores"] == 51_200_000 and mem["block_scores"] == 65_536


@pytest.mark.parametrize(("args", "word"), [((0, 4, 8), "sequence length"), ((8, 9, 8), "block size"),
                                            ((8, 4, 0), "d_k")])
def test_memory_bad_arguments(args, word):
    with pytest.raises(ValueError, match=word):
        attention_memory_both_ways(*args)


def test_memory_bad_dtype():
    with pytest.raises(ValueError, match="dtype"):
        attention_memory_both_ways(8, 4, 4, dtype="float8")


def test_tiles_view_steps_end_at_the_full_output():
    from lessons.tiles.maths import tiles_view

    tokens = "the cat sat on the warm mat".split()
    for causal in (True, False):
        for b in range(1, 9):  # 8 is longer than the sentence: one tile of all 7 keys
            v = tiles_view(tokens, 16, 8, 0, b, causal)
            n = math.ceil(7 / min(b, 7))
            assert v["m"].shape == v["l"].shape == v["rescale"].shape == (7, n)
            assert v["held_maps"].shape == (n, 7, 7) and v["diffs"].shape == (n,)
            assert v["diffs"][-1] < 1e-12
            np.testing.assert_allclose(v["tiled"]["out"], v["full_out"], rtol=RTOL, atol=ATOL)
            assert np.all(np.diff(v["m"], axis=1) >= 0)  # the running max never goes down
            for i, s in enumerate(v["tiled"]["steps"]):  # each step holds only its tile's columns
                start, stop = s["keys"]
                held = v["held_maps"][i]
                assert np.isnan(held[:, :start]).all() and np.isnan(held[:, stop:]).all()
                np.testing.assert_allclose(held[:, start:stop], v["full_scores"][:, start:stop], rtol=RTOL)

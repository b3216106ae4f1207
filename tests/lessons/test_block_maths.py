"""The block lesson's set-ups (lessons/block/maths.py) against the model's own block, on the shipped character model."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.layers import gelu, layer_norm, relu
from core.model import ModelConfig, block, forward, init_params
from core.model_file import load
from core.tokenize import CharTokenizer
from lessons.block import maths

WEIGHTS = Path(__file__).resolve().parents[2] / "core" / "weights" / "pydoc_char"
PROMPT = "Return the number of items in the list."


@pytest.fixture(scope="module")
def model():
    params, cfg, meta = load(WEIGHTS)
    ids = np.array(CharTokenizer.from_dict(meta["tokenizer"]).encode(PROMPT), dtype=np.int64)
    return params, cfg, ids


@pytest.fixture(scope="module")
def reading(model):
    params, cfg, ids = model
    return maths.block_reading(params, cfg, ids, 0, 7)


def test_the_shipped_model_is_a_trained_pre_norm_gelu_model(model):
    _, cfg, _ = model
    assert (cfg.norm, cfg.activation, cfg.ff_width) == ("pre", "gelu", 4 * cfg.d_model)


def test_layer_norm_row_statistics(reading):
    ln = reading["ln"]
    assert ln["before"]["var"] > 0.05 and abs(ln["before"]["mean"]) > 0.01  # a row that needs normalising
    assert ln["normalised"]["mean"] == pytest.approx(0.0, abs=1e-12)
    var = ln["before"]["var"]
    assert ln["normalised"]["var"] == pytest.approx(var / (var + ln["eps"]), rel=1e-12)  # 1 less a hair
    assert ln["normalised"]["var"] == pytest.approx(1.0, abs=1e-3) and ln["normalised"]["var"] < 1
    np.testing.assert_allclose(ln["out"], ln["g"] * ln["x_hat"] + ln["b"], atol=1e-12)
    assert reading["ln_block_difference"] < 1e-5  # the model's ln_1 output (float32) for that row


def test_layer_norm_steps_by_hand():
    steps = maths.layer_norm_steps([2.0, 4.0, 6.0, 8.0], np.full(4, 2.0), np.full(4, 1.0), eps=0.0)
    np.testing.assert_allclose(steps["x_hat"], (np.array([2, 4, 6, 8]) - 5) / np.sqrt(5))
    np.testing.assert_allclose(steps["out"], 2 * steps["x_hat"] + 1)
    assert steps["after"]["mean"] == pytest.approx(1.0) and steps["after"]["var"] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="same shape"):
        maths.layer_norm_steps([1.0, 2.0], np.ones(3), np.zeros(3))


def test_ffn_shapes_d_to_4d_to_d(model, reading):
    _, cfg, ids = model
    T, D = len(ids), cfg.d_model
    assert reading["ffn_in"].shape == (T, D) and reading["w_fc"].shape == (D, 4 * D)
    assert reading["ffn_pre"].shape == reading["ffn_act"].shape == (T, 4 * D)
    assert reading["w_proj"].shape == (4 * D, D) and reading["ffn_out"].shape == (T, D)
    np.testing.assert_allclose(reading["ffn_act"], gelu(reading["ffn_pre"]), rtol=1e-6)
    np.testing.assert_allclose(reading["firing"], (reading["ffn_pre"] > 0).mean(axis=-1))
    assert reading["firing_row"] == int((reading["ffn_pre"][7] > 0).sum())
    assert 0 < reading["firing_mean"] < 0.5  # a trained model: each token uses a minority of the units
    assert np.all(np.diff(reading["row_pre_sorted"]) >= 0)
    assert 0.6 < reading["ffn_param_share"] < 0.7  # 8 D² of a block's 12 D², plus biases and gains


def test_residual_sums(model, reading):
    params, cfg, ids = model
    _, trace = forward(params, cfg, ids)
    tr = trace.layers[0]
    np.testing.assert_array_equal(reading["x"] + reading["attn_out"], reading["res_1"])
    np.testing.assert_array_equal(reading["res_1"] + reading["ffn_out"], reading["res_2"])
    np.testing.assert_array_equal(reading["res_2"], tr.out)  # pre-norm: the block's output is the sum
    np.testing.assert_array_equal(reading["x"], trace.x)  # block 1 reads the embeddings
    assert reading["sum_errors"] == {"attn": 0.0, "ffn": 0.0}
    n = reading["norms"]
    np.testing.assert_allclose(n["res_1"], np.linalg.norm(reading["x"] + reading["attn_out"], axis=-1), rtol=1e-6)
    assert reading["row_norms"]["x"] == pytest.approx(float(np.linalg.norm(reading["x"][7])), rel=1e-6)
    later = maths.block_reading(params, cfg, ids, 1, 7)
    np.testing.assert_array_equal(later["x"], reading["res_2"])  # block 2 reads block 1's output


def test_pre_and_post_on_the_same_input(model, reading):
    params, cfg, _ = model
    w = maths.wirings(params["blocks"][0], cfg, reading["x"])
    own_pre = block(params["blocks"][0], reading["x"][None], cfg)[0][0]
    own_post = block(params["blocks"][0], reading["x"][None], replace(cfg, norm="post"))[0][0]
    np.testing.assert_array_equal(w["pre"], own_pre)
    np.testing.assert_array_equal(w["post"], own_post)
    np.testing.assert_array_equal(w["pre"], reading["res_2"])
    assert w["max_difference"] > 0.1
    # post-norm ends with ln_2: each row has ln_2's statistics, mean(β) + γ-weighted; with γ, β removed, 0 and 1
    ln_2 = params["blocks"][0]["ln_2"]
    x_hat = (w["post"] - ln_2["b"]) / ln_2["g"]
    np.testing.assert_allclose(x_hat.mean(axis=-1), 0.0, atol=1e-4)
    np.testing.assert_allclose(x_hat.var(axis=-1), 1.0, atol=1e-3)


def test_errors_a_user_can_cause(model):
    params, cfg, ids = model
    with pytest.raises(ValueError, match="no block"):
        maths.block_reading(params, cfg, ids, cfg.n_layers, 0)
    with pytest.raises(ValueError, match="not in a prompt"):
        maths.block_reading(params, cfg, ids, 0, len(ids))
    with pytest.raises(ValueError, match="empty"):
        maths.block_reading(params, cfg, ids[:0], 0, 0)
    with pytest.raises(ValueError, match="at most"):
        maths.block_reading(params, cfg, np.zeros(cfg.max_len + 1, dtype=np.int64), 0, 0)
    with pytest.raises(ValueError, match="no feed-forward"):
        maths.block_reading(params, replace(cfg, d_ff=0), ids, 0, 0)
    with pytest.raises(ValueError, match=r"\(T, D\)"):
        maths.wirings(params["blocks"][0], cfg, np.zeros((3, cfg.d_model + 1)))


def test_activation_curves():
    c = maths.activation_curves()
    np.testing.assert_array_equal(c["relu"], relu(c["x"]))
    np.testing.assert_array_equal(c["gelu"], gelu(c["x"]))
    assert c["gelu_min_x"] == pytest.approx(-0.7518, abs=1e-3) and c["gelu_min"] == pytest.approx(-0.17, abs=1e-3)
    with pytest.raises(ValueError):
        maths.activation_curves(1.0, -1.0)


def test_post_norm_swings_harder_with_depth():
    """The measured claim: one nudge moves a deep post-norm stack's output more than a pre-norm one's, on
    average over the depths, for every seed tried; and the gap widens with depth."""
    ratios = [maths.amplification(12, seed)["ratio"] for seed in range(6)]
    assert min(ratios) > 1.05, ratios
    shallow = np.mean([maths.amplification(4, seed)["ratio"] for seed in range(6)])
    assert np.mean(ratios) > shallow
    a = maths.amplification(12, 0)
    assert a["pre"][0] == pytest.approx(a["post"][0], rel=0.3)  # one block: about the same
    assert a["depth"].tolist() == list(range(1, 13)) and a["pre"].shape == a["post"].shape == (12,)


def test_amplification_is_seeded_float64_and_quick():
    a, b = maths.amplification(6, 3), maths.amplification(6, 3)
    np.testing.assert_array_equal(a["post"], b["post"])
    blocks = maths.unit_scale_blocks(ModelConfig(2, 16, 2, 1, 8), np.random.default_rng(0))
    w = blocks[0]["attn"]["w_qkv"]
    assert w.dtype == np.float64 and w.std() == pytest.approx(1 / 4, rel=0.1)  # 1/sqrt(fan_in = 16)
    maths.amplification(12, 1)
    start = time.perf_counter()
    maths.amplification(12, 2)
    assert time.perf_counter() - start < 1.0  # ~0.05 s on an idle core; generous for a shared machine
    with pytest.raises(ValueError):
        maths.amplification(0, 0)
    with pytest.raises(ValueError):
        maths.amplification(4, 0, size=2.0)


def test_gpt2_init_starts_near_silent():
    """Why the experiment draws its own weights: at GPT-2's init the sublayers barely write into the stream."""
    cfg = ModelConfig(2, 16, 2, 4, 8)
    params = init_params(cfg, np.random.default_rng(0), np.float64)
    x = np.random.default_rng(1).standard_normal((1, 8, 16))
    out = block(params["blocks"][0], x, cfg)[0]
    assert np.linalg.norm(out - x) < 0.1 * np.linalg.norm(x)
    assert layer_norm(x, np.ones(16), np.zeros(16)).shape == x.shape


def test_what_the_firing_and_the_silent_units_write_adds_up_to_the_feed_forward():
    """The two groups' vectors through W_proj add up to the feed-forward's output less its bias."""
    cfg = ModelConfig(vocab_size=9, d_model=16, n_heads=2, n_layers=1, max_len=8)
    params = init_params(cfg, np.random.default_rng(0), np.float64)
    ids = np.array([1, 2, 3, 4, 5])
    r = maths.block_reading(params, cfg, ids, 0, 2)
    _, trace = forward(params, cfg, ids)
    tr, mlp = trace.layers[0], params["blocks"][0]["mlp"]
    fires = tr.ffn_pre > 0
    on, off = np.where(fires, tr.ffn_act, 0) @ mlp["w_proj"], np.where(fires, 0, tr.ffn_act) @ mlp["w_proj"]
    np.testing.assert_allclose(on + off + mlp["b_proj"], tr.ffn_out, atol=1e-12)
    np.testing.assert_allclose(r["written"]["firing"], np.linalg.norm(on, axis=-1))
    np.testing.assert_allclose(r["written"]["silent"], np.linalg.norm(off, axis=-1))
    assert r["written_row"]["silent"] == pytest.approx(np.linalg.norm(off[2]))
    assert 0 < r["silent_most"] <= 0.1701  # GELU's deepest dip

"""The model's wirings beyond the standard block: no layer norm (norm "none"), no residual connections
(residual=False), and the bigram table learnt by gradient descent (core.bigram.BigramConfig): the rungs of the
Ladder lesson. Forward against the formula written out, backward against central finite differences in float64
(the helpers and tolerance of test_train_gradcheck.py), the vectorised table gradient against a plain loop."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from core import backward as bw
from core.attention import causal_mask
from core.bigram import (
    BigramConfig,
    bigram_counts,
    bigram_probs,
    generate_bigram,
    init_table,
    table_backward,
    table_logits,
    table_loss,
    table_loss_and_grads,
)
from core.costs import count_params, param_count
from core.data import text_corpus
from core.layers import ffn, layer_norm
from core.model import KVCache, ModelConfig, attention_layer, block, forward, init_params
from core.model_file import flatten, load, save
from core.train import TrainConfig, Trainer
from tests.core.test_train_gradcheck import check_grad, random_params

# every wiring the config allows: where the layer norms sit (or none), residuals or not, a feed-forward or not
WIRINGS = list(itertools.product(["pre", "post", "none"], [True, False], [12, 0]))


def cfg_of(norm, residual, d_ff, pos="learned", n_layers=2) -> ModelConfig:
    return ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=n_layers, max_len=6, d_ff=d_ff, norm=norm,
                       residual=residual, pos_encoding=pos)


# ---- the transformer's new wirings ------------------------------------------------------------------------


@pytest.mark.parametrize(("norm", "residual", "d_ff"), WIRINGS)
def test_loss_and_grads_every_parameter(norm, residual, d_ff):
    cfg = cfg_of(norm, residual, d_ff)
    rng = np.random.default_rng(11)
    params = random_params(cfg, rng)
    ids, targets = rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5))
    _, grads = bw.loss_and_grads(params, cfg, ids, targets)
    flat_p, flat_g = flatten(params), flatten(grads)
    assert flat_p.keys() == flat_g.keys()
    for name, arr in flat_p.items():
        check_grad(lambda: bw.loss_only(params, cfg, ids, targets), arr, flat_g[name], rng, n=4)


@pytest.mark.parametrize(("norm", "residual", "d_ff"), WIRINGS)
def test_block_backward(norm, residual, d_ff):
    cfg = cfg_of(norm, residual, d_ff)
    rng = np.random.default_rng(12)
    p = random_params(cfg, rng)["blocks"][0]
    x = rng.standard_normal((2, 5, cfg.d_model))
    out, tr = block(p, x, cfg)
    R = rng.standard_normal(out.shape)
    dx, grads = bw.block_backward(R, tr, p, cfg)

    def objective():
        return float((block(p, x, cfg)[0] * R).sum())

    check_grad(objective, x, dx, rng, n=10)
    assert flatten(grads).keys() == flatten(p).keys()
    for name, arr in flatten(p).items():
        check_grad(objective, arr, flatten(grads)[name], rng, n=4)


@pytest.mark.parametrize(("norm", "residual", "d_ff"), WIRINGS)
def test_block_is_the_formula_written_out(norm, residual, d_ff):
    """The block against its wiring written out by hand, sublayer by sublayer."""
    cfg = cfg_of(norm, residual, d_ff)
    rng = np.random.default_rng(13)
    p = random_params(cfg, rng)["blocks"][0]
    x = rng.standard_normal((5, cfg.d_model))

    def ln(name, a):
        return layer_norm(a, **p[name], eps=cfg.ln_eps)

    def attn(a):
        return attention_layer(p["attn"], a[None], cfg.n_heads)[0][0]

    def add(stream, a):
        return stream + a if residual else a

    if norm == "pre":
        mid = add(x, attn(ln("ln_1", x)))
        expected = mid if d_ff == 0 else add(mid, ffn(ln("ln_2", mid), **p["mlp"]))
    elif norm == "post":
        mid = ln("ln_1", add(x, attn(x)))
        expected = mid if d_ff == 0 else ln("ln_2", add(mid, ffn(mid, **p["mlp"])))
    else:
        mid = add(x, attn(x))
        expected = mid if d_ff == 0 else add(mid, ffn(mid, **p["mlp"]))
    np.testing.assert_allclose(block(p, x[None], cfg)[0][0], expected, rtol=1e-12, atol=1e-12)


def test_no_layer_norm_means_no_gains_anywhere_and_logits_read_the_last_block():
    cfg = cfg_of("none", False, 12)
    params = init_params(cfg, np.random.default_rng(0))
    assert not any(".ln_" in name or name.startswith("ln_") for name in flatten(params))
    ids = np.array([1, 2, 3, 4])
    logits, trace = forward(params, cfg, ids)
    np.testing.assert_array_equal(trace.h, trace.layers[-1].out)
    np.testing.assert_allclose(logits, trace.h @ params["wte"].T, rtol=1e-6)
    np.testing.assert_array_equal(trace.layers[0].res_1, trace.layers[0].attn_out)  # no residual: the output alone
    np.testing.assert_array_equal(trace.layers[0].res_2, trace.layers[0].ffn_out)


@pytest.mark.parametrize(("norm", "residual", "d_ff"), WIRINGS)
@pytest.mark.parametrize("pos", ["learned", "sinusoidal"])
def test_parameter_count_from_the_config_equals_the_arrays(norm, residual, d_ff, pos):
    cfg = cfg_of(norm, residual, d_ff, pos)
    parts = param_count(cfg)
    assert parts["total"] == count_params(init_params(cfg, np.random.default_rng(0)))
    assert (parts["layer norms"] == 0) == (norm == "none")
    assert (parts["final layer norm"] == 0) == (norm == "none")


def test_residuals_do_not_change_the_parameters():
    with_res, without = cfg_of("pre", True, 12), cfg_of("pre", False, 12)
    assert param_count(with_res) == param_count(without)


def test_kv_cache_generation_matches_the_full_forward_without_norm_or_residual():
    cfg = cfg_of("none", False, 12)
    params = init_params(cfg, np.random.default_rng(3), dtype=np.float64)
    ids = np.array([1, 2, 3, 4, 5])
    cache = KVCache()
    forward(params, cfg, ids[:3], cache)
    step, _ = forward(params, cfg, ids[3:], cache)
    full, _ = forward(params, cfg, ids)
    np.testing.assert_allclose(step, full[3:], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"norm": "layer"}, "norm must be one of"),
    ({"residual": 1}, "residual must be True or False"),
    ({"residual": "no"}, "residual must be True or False"),
])
def test_bad_wirings_raise(kwargs, word):
    with pytest.raises(ValueError, match=word):
        ModelConfig(vocab_size=5, d_model=4, n_heads=2, n_layers=1, max_len=4, **kwargs)


def test_a_model_file_keeps_the_wiring(tmp_path):
    cfg = cfg_of("none", False, 0)
    params = init_params(cfg, np.random.default_rng(0))
    save(tmp_path / "m", params, cfg, {})
    _, loaded, _ = load(tmp_path / "m")
    assert loaded == cfg


# ---- the bigram table learnt by gradient descent ---------------------------------------------------------


TEXT = "the cat sat on the mat. the rat ate the hat, and that was that. " * 30


def test_table_gradient_against_finite_differences():
    cfg = BigramConfig(vocab_size=6, max_len=5)
    rng = np.random.default_rng(4)
    params = {"wte": rng.standard_normal((6, 6)) * 0.5}
    ids, targets = rng.integers(0, 6, (3, 5)), rng.integers(0, 6, (3, 5))
    mask = (rng.random((3, 5)) < 0.7).astype(float)
    mask[0, 0] = 1
    for m in (None, mask):
        loss, grads = table_loss_and_grads(params, cfg, ids, targets, m)
        assert loss == pytest.approx(table_loss(params, cfg, ids, targets, m), rel=1e-12)
        check_grad(lambda m=m: table_loss(params, cfg, ids, targets, m), params["wte"], grads["wte"], rng, n=20)


def test_table_backward_equals_a_plain_loop():
    rng = np.random.default_rng(5)
    V, ids = 5, rng.integers(0, 5, (3, 4))
    dlogits = rng.standard_normal((3, 4, V))
    plain = np.zeros((V, V))
    for b in range(3):
        for t in range(4):
            plain[ids[b, t]] += dlogits[b, t]
    np.testing.assert_allclose(table_backward(dlogits, ids, V)["wte"], plain, rtol=1e-12, atol=1e-12)


def test_table_forward_reads_one_row_per_position():
    params = init_table(BigramConfig(7, 4), np.random.default_rng(0))
    ids = np.array([[3, 1, 3]])
    logits = table_logits(params, ids)
    assert logits.shape == (1, 3, 7)
    np.testing.assert_array_equal(logits[0, 0], logits[0, 2])  # the same token, the same prediction
    assert params["wte"].shape == (7, 7) and params["wte"].dtype == np.float32


def test_the_trainer_trains_the_table_towards_the_counted_bigram():
    corpus = text_corpus(TEXT, 8)
    cfg = BigramConfig(corpus.vocab_size, corpus.seq_len)
    trainer = Trainer(cfg, corpus, TrainConfig(lr=0.1, batch_size=16, weight_decay=0.0, warmup_steps=0), seed=0)
    start = trainer.evaluate(None)
    assert start == pytest.approx(math.log(cfg.vocab_size), abs=0.05)
    trainer.step(300)
    learnt = trainer.evaluate(None)
    counted = corpus.bigram_baseline()
    assert learnt < start - 1.0
    assert abs(learnt - counted) < 0.15, (learnt, counted)


def test_a_bigram_model_file_round_trips(tmp_path):
    cfg = BigramConfig(vocab_size=5, max_len=8)
    params = init_table(cfg, np.random.default_rng(1))
    save(tmp_path / "b", params, cfg, {"x": 1})
    loaded, loaded_cfg, meta = load(tmp_path / "b")
    assert loaded_cfg == cfg and meta == {"x": 1}
    np.testing.assert_array_equal(loaded["wte"], params["wte"])


def test_generate_bigram_greedy_follows_each_rows_largest_and_sampling_is_seeded():
    probs = bigram_probs(bigram_counts(np.array([1, 2, 3, 1, 2, 3, 1, 2]), 4))
    logits = np.log(probs)
    greedy = generate_bigram(logits, [1], 5, temperature=0)
    np.testing.assert_array_equal(greedy, [1, 2, 3, 1, 2, 3])
    a = generate_bigram(logits, [1], 20, 1.0, np.random.default_rng(7))
    b = generate_bigram(logits, [1], 20, 1.0, np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="rng"):
        generate_bigram(logits, [1], 3, 1.0)
    with pytest.raises(ValueError, match="from 0 to 3"):
        generate_bigram(logits, [9], 3, 0)


def test_bigram_config_checks_itself():
    with pytest.raises(ValueError, match="vocab_size"):
        BigramConfig(0, 4)
    assert BigramConfig(5, 4).to_dict() == {"kind": "bigram", "vocab_size": 5, "max_len": 4}
    assert causal_mask(1).all()  # a bigram needs no mask: its one position is itself

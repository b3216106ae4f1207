"""Tests for core/model.py: the config, parameters, forward, causality, the KV cache, save/load (core/model_file.py).

Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H, V vocabulary.
"""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from core.attention import causal_mask, multi_head_attention
from core.costs import count_params, param_count
from core.layers import ffn, gelu, layer_norm, positional_encoding, relu, sinusoidal_encoding
from core.model import PRESETS, BlockTrace, ForwardTrace, KVCache, ModelConfig, divisors, forward, init_params
from core.model_file import load, save

OPTIONS = list(itertools.product(["pre", "post"], ["gelu", "relu"], ["sinusoidal", "learned"]))
OPTION_IDS = ["-".join(o) for o in OPTIONS]
# Attention-only models (d_ff = 0): no feed-forward sublayer, so the activation plays no part.
ATTENTION_ONLY = [(norm, "gelu", pos) for norm in ("pre", "post") for pos in ("sinusoidal", "learned")]
ATTENTION_ONLY_IDS = ["attention-only-" + "-".join((o[0], o[2])) for o in ATTENTION_ONLY]


def make(norm="pre", activation="gelu", pos_encoding="sinusoidal", dtype=np.float64, seed=0, **sizes):
    """A small model. Weights are scaled up from GPT-2's 0.02 so every layer actually mixes positions."""
    kw = dict(vocab_size=11, d_model=16, n_heads=4, n_layers=2, max_len=12) | sizes
    cfg = ModelConfig(**kw, norm=norm, activation=activation, pos_encoding=pos_encoding)
    params = init_params(cfg, np.random.default_rng(seed), dtype=dtype)
    rng = np.random.default_rng(seed + 1000)

    def spread(name, a):
        if name.startswith("w"):  # std 0.02 -> 0.4: attention is far from uniform
            return (a * 20).astype(dtype)
        # gains near 1, biases non-zero: a dropped or misplaced one changes the answer
        return (a + 0.1 * rng.standard_normal(a.shape)).astype(dtype)

    return cfg, _map(params, spread)


def _map(tree, fn, name=""):
    if isinstance(tree, dict):
        return {k: _map(v, fn, k) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_map(v, fn, name) for v in tree]
    return fn(name, tree)


def block_arrays(tr) -> dict:
    """{field: array} of a BlockTrace, leaving out the fields an attention-only block does not have."""
    return {f.name: getattr(tr, f.name) for f in dataclasses.fields(tr) if getattr(tr, f.name) is not None}


def trace_arrays(trace):
    """(name, array) for every array of a ForwardTrace; each has positions on axis -2."""
    yield "x", trace.x
    yield "h", trace.h
    for layer, tr in enumerate(trace.layers):
        for key, arr in block_arrays(tr).items():
            yield f"layers[{layer}].{key}", arr


# ---- the config ---------------------------------------------------------------------------------


def test_config_defaults_and_derived_sizes():
    cfg = ModelConfig(vocab_size=50, d_model=64, n_heads=4, n_layers=2, max_len=32)
    assert (cfg.d_k, cfg.ff_width) == (16, 256)
    assert (cfg.pos_encoding, cfg.norm, cfg.activation, cfg.ln_eps) == ("sinusoidal", "pre", "gelu", 1e-5)
    assert ModelConfig(50, 64, 4, 2, 32, d_ff=100).ff_width == 100
    assert ModelConfig(**cfg.to_dict()) == cfg
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.d_model = 32  # type: ignore[misc]
    for preset in PRESETS.values():
        ModelConfig(vocab_size=10, **preset)


def test_config_heads_must_divide_d_model():
    with pytest.raises(ValueError, match=r"d_model = 10 cannot be split into 3.*\[1, 2, 5, 10\]"):
        ModelConfig(vocab_size=5, d_model=10, n_heads=3, n_layers=1, max_len=8)
    assert divisors(12) == [1, 2, 3, 4, 6, 12]


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(norm="middle"), "norm"),
        (dict(activation="swish"), "activation"),
        (dict(pos_encoding="rotary"), "pos_encoding"),
        (dict(vocab_size=0), "vocab_size"),
        (dict(d_model=-4), "d_model"),
        (dict(n_heads=0), "n_heads"),
        (dict(n_layers=0), "n_layers"),
        (dict(max_len=0), "max_len"),
        (dict(max_len=8.5), "max_len"),
        (dict(d_model=True), "d_model"),
        (dict(d_ff=-1), "d_ff"),
        (dict(d_ff=2.5), "d_ff"),
        (dict(d_ff=True), "d_ff"),
        (dict(ln_eps=0.0), "ln_eps"),
    ],
)
def test_config_rejects_bad_values(change, match):
    kw = dict(vocab_size=5, d_model=8, n_heads=2, n_layers=1, max_len=8) | change
    with pytest.raises(ValueError, match=match):
        ModelConfig(**kw)


# ---- parameters ---------------------------------------------------------------------------------


def test_init_params_layout():
    cfg = ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=3, max_len=10, d_ff=12, pos_encoding="learned")
    p = init_params(cfg, np.random.default_rng(0))
    assert p["wte"].shape == (7, 8) and p["wpe"].shape == (10, 8)
    assert len(p["blocks"]) == 3
    blk = p["blocks"][0]
    assert blk["attn"]["w_qkv"].shape == (8, 24) and blk["attn"]["w_o"].shape == (8, 8)
    assert blk["mlp"]["w_fc"].shape == (8, 12) and blk["mlp"]["w_proj"].shape == (12, 8)
    np.testing.assert_array_equal(blk["ln_1"]["g"], 1.0)
    np.testing.assert_array_equal(blk["attn"]["b_qkv"], 0.0)
    assert 0.015 < p["wte"].std() < 0.025  # N(0, 0.02)
    assert "wpe" not in init_params(dataclasses.replace(cfg, pos_encoding="sinusoidal"), np.random.default_rng(0))


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_attention_only_has_no_feed_forward_parameters(norm):
    cfg = ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=10, d_ff=0, norm=norm)
    assert cfg.attention_only and cfg.ff_width == 0
    assert not ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=10).attention_only
    p = init_params(cfg, np.random.default_rng(0))
    for blk in p["blocks"]:
        assert set(blk) == {"ln_1", "attn"}
    assert count_params(p) == param_count(cfg)["total"] == 7 * 8 + 2 * (4 * 8 * 8 + 4 * 8 + 2 * 8) + 2 * 8
    assert param_count(cfg)["feed-forward"] == 0


def _leaves(tree):
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from _leaves(tree[k])
    elif isinstance(tree, list):
        for v in tree:
            yield from _leaves(v)
    else:
        yield tree


def test_init_params_needs_a_generator_and_is_reproducible():
    cfg = ModelConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=10)
    for bad in (0, None, np.random.RandomState(0)):
        with pytest.raises(ValueError, match="Generator"):
            init_params(cfg, bad)
    a = list(_leaves(init_params(cfg, np.random.default_rng(42))))
    b = list(_leaves(init_params(cfg, np.random.default_rng(42))))
    c = list(_leaves(init_params(cfg, np.random.default_rng(43))))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not any(np.array_equal(x, y) for x, y in zip(a, c, strict=True) if x.std() > 0)
    assert not np.array_equal(init_params(cfg, np.random.default_rng(42))["wte"],
                              init_params(cfg, np.random.default_rng(43))["wte"])


# ---- forward ------------------------------------------------------------------------------------


def test_forward_shapes_unbatched_and_batched():
    cfg, p = make()
    logits, trace = forward(p, cfg, np.array([1, 2, 3, 4, 5]))
    assert logits.shape == (5, 11)
    assert isinstance(trace, ForwardTrace) and all(isinstance(tr, BlockTrace) for tr in trace.layers)
    assert trace.x.shape == (5, 16) and trace.h.shape == (5, 16)
    assert len(trace.layers) == 2
    tr = trace.layers[0]
    assert tr.weights.shape == (4, 5, 5)
    assert tr.q.shape == tr.k.shape == tr.v.shape == tr.heads.shape == (4, 5, 4)
    assert tr.ffn_pre.shape == tr.ffn_act.shape == (5, 64)  # (T, F), F = 4 D
    np.testing.assert_allclose(tr.weights.sum(-1), 1.0, atol=1e-12)
    logits_b, trace_b = forward(p, cfg, np.zeros((3, 7), dtype=int))
    assert logits_b.shape == (3, 7, 11)
    assert trace_b.layers[1].weights.shape == (3, 4, 7, 7)


def test_forward_input_is_embedding_plus_sinusoids_and_head_is_tied():
    cfg, p = make()
    ids = np.array([3, 1, 4, 1, 5])
    logits, trace = forward(p, cfg, ids)
    np.testing.assert_allclose(trace.x, p["wte"][ids] + sinusoidal_encoding(5, 16), rtol=1e-14)
    h = layer_norm(trace.layers[-1].out, p["ln_f"]["g"], p["ln_f"]["b"])
    np.testing.assert_allclose(trace.h, h, rtol=1e-12)
    np.testing.assert_allclose(logits, h @ p["wte"].T, rtol=1e-12)


def test_learned_positions_use_wpe():
    cfg, p = make(pos_encoding="learned")
    ids = np.array([3, 1, 4])
    _, trace = forward(p, cfg, ids)
    np.testing.assert_allclose(trace.x, p["wte"][ids] + p["wpe"][:3], rtol=1e-14)


def forward_by_hand(p, cfg, ids):
    """The model as DESIGN.md describes it, built from the layer functions: (T,) -> logits (T, V)."""
    T = len(ids)

    def ln(h, q):
        return layer_norm(h, q["g"], q["b"], cfg.ln_eps)

    def attn(h, q):
        return multi_head_attention(h, **q, n_heads=cfg.n_heads, mask=causal_mask(T))[0]

    x = p["wte"][ids] + positional_encoding(T, cfg.d_model, cfg.pos_encoding, p.get("wpe"))
    for blk in p["blocks"]:
        if cfg.norm == "pre":  # x + attn(ln_1(x)), then x + mlp(ln_2(x))
            x = x + attn(ln(x, blk["ln_1"]), blk["attn"])
            if not cfg.attention_only:
                x = x + ffn(ln(x, blk["ln_2"]), **blk["mlp"], activation=cfg.activation)
        else:  # ln_1(x + attn(x)), then ln_2(x + mlp(x))
            x = ln(x + attn(x, blk["attn"]), blk["ln_1"])
            if not cfg.attention_only:
                x = ln(x + ffn(x, **blk["mlp"], activation=cfg.activation), blk["ln_2"])
    return ln(x, p["ln_f"]) @ p["wte"].T


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_forward_matches_the_design_written_out(opts):
    cfg, p = make(*opts)
    ids = np.random.default_rng(5).integers(0, 11, size=10)
    np.testing.assert_allclose(forward(p, cfg, ids)[0], forward_by_hand(p, cfg, ids), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("opts", ATTENTION_ONLY, ids=ATTENTION_ONLY_IDS)
def test_attention_only_forward_matches_the_design_written_out(opts):
    cfg, p = make(*opts, d_ff=0)
    ids = np.random.default_rng(5).integers(0, 11, size=10)
    np.testing.assert_allclose(forward(p, cfg, ids)[0], forward_by_hand(p, cfg, ids), rtol=1e-10, atol=1e-10)


def trace_by_loop(p, cfg, ids):
    """The trace of one sequence (T,), one position and one head at a time, with no attention code from core."""
    T, H, d_k = len(ids), cfg.n_heads, cfg.d_k
    act = {"gelu": gelu, "relu": relu}[cfg.activation]

    def ln(row, q):
        return (row - row.mean()) / np.sqrt(row.var() + cfg.ln_eps) * q["g"] + q["b"]

    def mlp(row, q):
        pre = row @ q["w_fc"] + q["b_fc"]
        return pre, act(pre), act(pre) @ q["w_proj"] + q["b_proj"]

    embedded = np.array([p["wte"][i] + positional_encoding(T, cfg.d_model, cfg.pos_encoding, p.get("wpe"))[t]
                         for t, i in enumerate(ids)])
    x, layers = embedded, []
    for blk in p["blocks"]:
        tr = {"x": x}
        norm_first = cfg.norm == "pre"
        tr["attn_in"] = np.array([ln(row, blk["ln_1"]) for row in x]) if norm_first else x
        qkv = np.array([row @ blk["attn"]["w_qkv"] + blk["attn"]["b_qkv"] for row in tr["attn_in"]])  # (T, 3D)
        q, k, v = (np.stack([qkv[:, j * cfg.d_model + h * d_k:][:, :d_k] for h in range(H)]) for j in range(3))
        weights, heads = np.zeros((H, T, T)), np.zeros((H, T, d_k))
        for h in range(H):
            for i in range(T):
                scores = np.array([q[h, i] @ k[h, j] / np.sqrt(d_k) for j in range(i + 1)])  # keys 0..i
                e = np.exp(scores - scores.max())
                weights[h, i, : i + 1] = e / e.sum()
                heads[h, i] = sum(weights[h, i, j] * v[h, j] for j in range(i + 1))
        tr |= {"q": q, "k": k, "v": v, "weights": weights, "heads": heads}
        tr["attn_out"] = np.array([np.concatenate(heads[:, i]) @ blk["attn"]["w_o"] + blk["attn"]["b_o"]
                                   for i in range(T)])
        tr["res_1"] = x + tr["attn_out"]
        if cfg.attention_only:  # pre-norm: out = res_1; post-norm: out = ln_1(res_1)
            tr["out"] = tr["res_1"] if norm_first else np.array([ln(row, blk["ln_1"]) for row in tr["res_1"]])
            layers.append(tr)
            x = tr["out"]
            continue
        tr["ffn_in"] = np.array([ln(row, blk["ln_2" if norm_first else "ln_1"]) for row in tr["res_1"]])
        tr["ffn_pre"], tr["ffn_act"], tr["ffn_out"] = (np.array(a) for a in zip(
            *(mlp(row, blk["mlp"]) for row in tr["ffn_in"]), strict=True))
        tr["res_2"] = (tr["res_1"] if norm_first else tr["ffn_in"]) + tr["ffn_out"]
        tr["out"] = tr["res_2"] if norm_first else np.array([ln(row, blk["ln_2"]) for row in tr["res_2"]])
        layers.append(tr)
        x = tr["out"]
    h = np.array([ln(row, p["ln_f"]) for row in x])
    return h @ p["wte"].T, ForwardTrace(x=embedded, layers=[BlockTrace(**tr) for tr in layers], h=h)


@pytest.mark.parametrize("d_ff", [None, 0], ids=["with-ffn", "attention-only"])
@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_trace_matches_a_per_position_loop(opts, d_ff):
    """Every array of the trace of a batch, against the same quantities computed position by position."""
    cfg, p = make(*opts, d_ff=d_ff)
    ids = np.random.default_rng(6).integers(0, 11, size=(2, 7))
    logits, trace = forward(p, cfg, ids)
    for b in range(2):
        ref_logits, ref = trace_by_loop(p, cfg, ids[b])
        np.testing.assert_allclose(logits[b], ref_logits, rtol=1e-9, atol=1e-9)
        assert [set(block_arrays(tr)) for tr in trace.layers] == [set(block_arrays(tr)) for tr in ref.layers]
        expected = dict(trace_arrays(ref))
        for name, arr in trace_arrays(trace):
            np.testing.assert_allclose(arr[b], expected[name], rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_batched_equals_unbatched(opts):
    cfg, p = make(*opts)
    ids = np.random.default_rng(1).integers(0, 11, size=(3, 9))
    logits, trace = forward(p, cfg, ids)
    for b in range(3):
        logits_b, trace_b = forward(p, cfg, ids[b])
        np.testing.assert_allclose(logits[b], logits_b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(trace.layers[1].weights[b], trace_b.layers[1].weights,
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_causality_future_tokens_change_nothing_earlier(opts):
    """Change token t: logits and every trace array at positions < t stay the same; position t moves."""
    cfg, p = make(*opts)
    T = 9
    ids = np.random.default_rng(2).integers(0, 11, size=T)
    base_logits, base_trace = forward(p, cfg, ids)
    for t in range(T):
        changed = ids.copy()
        changed[t] = (ids[t] + 1 + t) % cfg.vocab_size
        logits, trace = forward(p, cfg, changed)
        np.testing.assert_allclose(logits[:t], base_logits[:t], rtol=0, atol=1e-12, err_msg=f"logits, t={t}")
        for (name, arr), (_, base) in zip(trace_arrays(trace), trace_arrays(base_trace), strict=True):
            np.testing.assert_allclose(arr[..., :t, :], base[..., :t, :], rtol=0, atol=1e-12,
                                       err_msg=f"{name} at positions < {t}")
        assert np.abs(logits[t] - base_logits[t]).max() > 1e-6  # the changed token itself does matter
        if t + 1 < T:
            assert np.abs(logits[t + 1] - base_logits[t + 1]).max() > 1e-6  # and later ones see it


@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_kv_cache_one_token_at_a_time_equals_full_forward(opts):
    cfg, p = make(*opts)
    ids = np.random.default_rng(3).integers(0, 11, size=cfg.max_len)
    full, full_trace = forward(p, cfg, ids)
    cache = KVCache()
    steps = []
    for t in range(len(ids)):
        logits, trace = forward(p, cfg, ids[t : t + 1], cache)
        assert cache.length == t + 1
        assert logits.shape == (1, 11) and trace.layers[0].weights.shape == (4, 1, t + 1)
        expected = full_trace.layers[1].weights[:, t, : t + 1]  # row t of the full map, keys 0..t
        np.testing.assert_allclose(trace.layers[1].weights[:, 0], expected, rtol=1e-10, atol=1e-12)
        steps.append(logits[0])
    np.testing.assert_allclose(np.array(steps), full, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("d_ff", [None, 0], ids=["with-ffn", "attention-only"])
@pytest.mark.parametrize("opts", OPTIONS, ids=OPTION_IDS)
def test_kv_cache_prompt_then_chunks(opts, d_ff):
    cfg, p = make(*opts, d_ff=d_ff)
    ids = np.random.default_rng(4).integers(0, 11, size=(2, 12))
    full, _ = forward(p, cfg, ids)
    cache = KVCache()
    pieces = []
    for lo, hi in [(0, 5), (5, 6), (6, 9), (9, 12)]:
        logits, _ = forward(p, cfg, ids[:, lo:hi], cache)
        pieces.append(logits)
    assert cache.length == 12 and cache.keys[0].shape == (2, 4, 12, 4)
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), full, rtol=1e-10, atol=1e-10)


def test_kv_cache_steps_leave_earlier_traces_as_they_were():
    """The cache writes each new position into room after the filled part of its buffers, and a trace's k and v are
    views of that filled part: later steps, and the buffers' growth, must not change what an earlier trace shows."""
    cfg, p = make(max_len=40)
    ids = np.random.default_rng(5).integers(0, 11, size=40)
    cache, kept = KVCache(), []
    for lo, hi in [(0, 3), (3, 4), (4, 9), (9, 10), (10, 25), (25, 40)]:  # past the buffers' room several times
        _, trace = forward(p, cfg, ids[lo:hi], cache)
        kept.append([(tr.k, tr.k.copy(), tr.v, tr.v.copy()) for tr in trace.layers])
    for step in kept:
        for k, k_then, v, v_then in step:
            np.testing.assert_array_equal(k, k_then)
            np.testing.assert_array_equal(v, v_then)
    _, full = forward(p, cfg, ids)
    for layer, tr in enumerate(full.layers):
        np.testing.assert_allclose(cache.keys[layer][0], tr.k, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cache.values[layer][0], tr.v, rtol=1e-12, atol=1e-12)


def test_kv_cache_cannot_pass_max_len():
    cfg, p = make()
    cache = KVCache()
    forward(p, cfg, np.arange(10), cache)
    with pytest.raises(ValueError, match="at most 12 tokens"):
        forward(p, cfg, np.arange(3), cache)


@pytest.mark.parametrize(
    "ids, match",
    [
        (np.zeros(13, dtype=int), "at most 12"),
        (np.array([0, 11]), r"0\.\.10"),
        (np.array([3, -1]), r"0\.\.10"),
        (np.array([1.0, 2.0]), "whole numbers"),
        (np.array([], dtype=int), "empty"),
        ([], "empty"),
        (np.zeros((2, 0), dtype=int), "empty"),
        (np.zeros((1, 2, 3), dtype=int), "shape"),
    ],
)
def test_forward_rejects_bad_ids(ids, match):
    cfg, p = make()
    with pytest.raises(ValueError, match=match):
        forward(p, cfg, ids)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_param_dtype_carries_to_logits_and_trace(dtype):
    cfg = ModelConfig(vocab_size=11, d_model=16, n_heads=4, n_layers=2, max_len=12)
    for opts in OPTIONS:
        cfg = dataclasses.replace(cfg, norm=opts[0], activation=opts[1], pos_encoding=opts[2])
        p = init_params(cfg, np.random.default_rng(0), dtype=dtype)
        logits, trace = forward(p, cfg, np.arange(6))
        assert logits.dtype == dtype, opts
        for name, arr in trace_arrays(trace):
            assert arr.dtype == dtype, (opts, name)


def test_float32_close_to_float64():
    cfg, p64 = make()
    p32 = _map(p64, lambda _, a: a.astype(np.float32))
    ids = np.arange(10) % 11
    np.testing.assert_allclose(forward(p32, cfg, ids)[0], forward(p64, cfg, ids)[0], rtol=1e-3, atol=1e-3)


# ---- save and load ------------------------------------------------------------------------------


@pytest.mark.parametrize("d_ff", [None, 0], ids=["with-ffn", "attention-only"])
@pytest.mark.parametrize("pos_encoding", ["sinusoidal", "learned"])
def test_save_load_round_trip(tmp_path, pos_encoding, d_ff):
    cfg, p = make(pos_encoding=pos_encoding, dtype=np.float32, n_layers=3, d_ff=d_ff)
    meta = {"tokenizer": {"kind": "char", "chars": "abc"}, "losses": [3.2, 2.1], "command": "python -m tools.train"}
    save(tmp_path / "model", p, cfg, meta)
    assert (tmp_path / "model.npz").exists() and (tmp_path / "model.json").exists()
    assert json.loads((tmp_path / "model.json").read_text())["config"]["pos_encoding"] == pos_encoding

    p2, cfg2, meta2 = load(tmp_path / "model.npz")
    assert cfg2 == cfg and meta2 == meta
    assert len(p2["blocks"]) == 3 and isinstance(p2["blocks"], list)
    a, b = list(_leaves(p)), list(_leaves(p2))
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
        assert not y.flags.writeable
    with pytest.raises(ValueError):
        p2["wte"][0, 0] = 1.0
    ids = np.array([1, 2, 3, 4])
    np.testing.assert_array_equal(forward(p2, cfg2, ids)[0], forward(p, cfg, ids)[0])


def test_save_without_meta(tmp_path):
    cfg, p = make()
    save(tmp_path / "sub" / "m", p, cfg)
    assert load(tmp_path / "sub" / "m")[2] == {}

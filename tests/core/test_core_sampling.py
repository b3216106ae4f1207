"""Tests for core/sampling.py: temperature, top-k, sampling and generation with and without the KV cache.

Shapes: T sequence length, V vocabulary.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

from core.model import ModelConfig, forward, init_params
from core.sampling import generate, next_token_probs, probs_from_logits, sample

V = 13


@contextlib.contextmanager
def strict_fp():
    """Every warning is an error; overflow, invalid and divide-by-zero raise (underflow to 0 is fine)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            yield


@pytest.fixture(scope="module")
def model():
    """float64 so that the cached and uncached paths cannot disagree on a near-tie."""
    cfg = ModelConfig(vocab_size=V, d_model=16, n_heads=4, n_layers=2, max_len=12)
    params = init_params(cfg, np.random.default_rng(0), dtype=np.float64)
    params["wte"] = params["wte"] * 10  # sharper next-token distributions than GPT-2's tiny init
    return cfg, params


def greedy_by_hand(params, cfg, prompt, n):
    """Repeated argmax of a full forward over the last max_len tokens."""
    ids = list(prompt)
    for _ in range(n):
        logits, _ = forward(params, cfg, np.array(ids[-cfg.max_len :]))
        ids.append(int(np.argmax(logits[-1])))
    return ids


# ---- probabilities ------------------------------------------------------------------------------

TEMPERATURES = [0, 1e-6, 0.01, 0.5, 1, 2, 10, 100]


@pytest.mark.parametrize("temperature", TEMPERATURES)
@pytest.mark.parametrize("magnitude", [1.0, 30.0, 1e4])
def test_probs_rows_sum_to_one(temperature, magnitude):
    logits = np.random.default_rng(0).standard_normal((5, V)) * magnitude
    with strict_fp():
        p = probs_from_logits(logits, temperature)
    assert p.shape == logits.shape
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.argmax(p, -1) == np.argmax(logits, -1))


def test_probs_temperature_meaning():
    logits = np.array([2.0, 1.0, 0.0])
    np.testing.assert_array_equal(probs_from_logits(logits, 0), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(probs_from_logits(logits, 1), np.exp(logits) / np.exp(logits).sum(), rtol=1e-14)
    np.testing.assert_allclose(probs_from_logits(logits, 2), np.exp(logits / 2) / np.exp(logits / 2).sum())
    np.testing.assert_allclose(probs_from_logits(logits, 1e6), 1 / 3, atol=1e-5)  # hot: near uniform
    np.testing.assert_allclose(probs_from_logits(logits, 1e-6), [1, 0, 0], atol=1e-12)  # cold: near greedy
    assert probs_from_logits(np.array([1.0, 3.0, 3.0]), 0).tolist() == [0, 1, 0]  # a tie: the first one


def test_probs_accepts_float32_logits_and_casts():
    p = probs_from_logits(np.array([1e4, 0.0], dtype=np.float32), 1e-6)
    assert p.dtype == np.float64 and p.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("temperature", [0, 0.7, 1, 5])
def test_top_k_keeps_exactly_k(temperature):
    logits = np.random.default_rng(1).permutation(V).astype(float) * 0.3  # distinct: no ties
    order = np.argsort(logits)[::-1]
    for k in range(1, V + 1):
        p = probs_from_logits(logits, temperature, top_k=k)
        np.testing.assert_allclose(p.sum(), 1.0, atol=1e-12)
        kept = np.flatnonzero(p)
        expected = 1 if temperature == 0 else k
        assert len(kept) == expected, (k, temperature)
        assert set(kept) <= set(order[:k])
    # The kept tokens keep their relative odds.
    p = probs_from_logits(logits, 1, top_k=3)
    top3 = logits[order[:3]]
    np.testing.assert_allclose(p[order[:3]], np.exp(top3) / np.exp(top3).sum(), rtol=1e-12)
    np.testing.assert_allclose(probs_from_logits(logits, 1, top_k=V + 5), probs_from_logits(logits, 1))


@pytest.mark.parametrize("temperature", [-0.1, -1, float("nan"), float("inf")])
def test_bad_temperature_raises(temperature, model):
    with pytest.raises(ValueError, match="Temperature"):
        probs_from_logits(np.zeros(V), temperature)
    cfg, params = model
    with pytest.raises(ValueError, match="Temperature"):
        generate(params, cfg, [1, 2], 0, temperature=temperature)


@pytest.mark.parametrize("top_k", [0, -2, 2.5])
def test_bad_top_k_raises(top_k, model):
    with pytest.raises(ValueError, match="top_k"):
        probs_from_logits(np.zeros(V), 1.0, top_k=top_k)
    cfg, params = model
    with pytest.raises(ValueError, match="top_k"):
        generate(params, cfg, [1, 2], 3, temperature=0, top_k=top_k)


# ---- sampling -----------------------------------------------------------------------------------


def test_sample_greedy_and_seeded():
    logits = np.random.default_rng(2).standard_normal(V)
    assert sample(logits, 0) == int(np.argmax(logits))
    draws_a = [sample(logits, 1.0, rng=np.random.default_rng(5)) for _ in range(3)]
    assert len(set(draws_a)) == 1  # same seed, same draw
    rng = np.random.default_rng(6)
    assert len({sample(logits, 1.0, rng=rng) for _ in range(100)}) > 3
    with pytest.raises(ValueError, match="Generator"):
        sample(logits, 1.0)


def test_sample_frequencies_follow_probabilities():
    p = np.array([0.6, 0.3, 0.1])
    rng = np.random.default_rng(7)
    draws = np.array([sample(np.log(p), 1.0, rng=rng) for _ in range(6000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / len(draws), p, atol=0.025)
    assert set(np.unique([sample(np.log(p), 1.0, top_k=2, rng=rng) for _ in range(300)])) == {0, 1}


# ---- generation ---------------------------------------------------------------------------------


def test_greedy_generation_is_repeated_argmax(model):
    cfg, params = model
    prompt = [1, 5, 2]
    out = generate(params, cfg, prompt, 8, temperature=0)
    assert out.dtype == np.int64 and out.shape == (11,)
    assert out.tolist() == greedy_by_hand(params, cfg, prompt, 8)
    assert out.tolist() == generate(params, cfg, prompt, 8, temperature=0).tolist()


def test_greedy_generation_past_max_len_slides_the_window(model):
    cfg, params = model
    prompt = [3, 1, 4, 1, 5]
    out = generate(params, cfg, prompt, 20, temperature=0)
    assert out.shape == (25,)
    assert out.tolist() == greedy_by_hand(params, cfg, prompt, 20)


def test_same_seed_same_sample_different_seeds_differ(model):
    cfg, params = model
    def run(seed):
        return generate(params, cfg, [0, 1], 9, temperature=1.5, rng=np.random.default_rng(seed)).tolist()

    assert run(3) == run(3)
    outs = {tuple(run(s)) for s in range(6)}
    assert len(outs) >= 5
    for o in outs:
        assert o[:2] == (0, 1) and all(0 <= t < V for t in o)


@pytest.mark.parametrize("temperature, top_k", [(0, None), (1.0, None), (0.8, 4), (3.0, 2)])
@pytest.mark.parametrize("n", [1, 7, 25])
def test_cache_and_no_cache_generate_the_same(model, temperature, top_k, n):
    cfg, params = model
    kw = dict(temperature=temperature, top_k=top_k)
    with_cache = generate(params, cfg, [2, 7, 1, 8], n, rng=np.random.default_rng(11), use_cache=True, **kw)
    without = generate(params, cfg, [2, 7, 1, 8], n, rng=np.random.default_rng(11), use_cache=False, **kw)
    assert with_cache.shape == (4 + n,)
    np.testing.assert_array_equal(with_cache, without)


def test_generate_zero_new_tokens_returns_the_prompt(model):
    cfg, params = model
    for use_cache in (True, False):
        out = generate(params, cfg, [4, 0, 12], 0, temperature=1.0, use_cache=use_cache)
        assert out.tolist() == [4, 0, 12] and out.dtype == np.int64


def test_generate_errors(model):
    cfg, params = model
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(params, cfg, [1], -1)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(params, cfg, [1], 2.5)
    with pytest.raises(ValueError, match="one prompt"):
        generate(params, cfg, [[1, 2]], 3, temperature=0)
    with pytest.raises(ValueError, match="empty"):
        generate(params, cfg, [], 3, temperature=0)
    with pytest.raises(ValueError, match=r"0\.\.12"):
        generate(params, cfg, [13], 3, temperature=0)
    with pytest.raises(ValueError, match="at most 12"):
        generate(params, cfg, list(range(13)), 1, temperature=0)
    with pytest.raises(ValueError, match="Generator"):
        generate(params, cfg, [1], 2, temperature=1.0)


def test_next_token_probs(model):
    cfg, params = model
    ids = [3, 1, 4, 1, 5, 9]
    logits, _ = forward(params, cfg, np.array(ids))
    np.testing.assert_allclose(next_token_probs(params, cfg, ids, 0.7), probs_from_logits(logits[-1], 0.7))
    long = list(range(13)) * 2  # longer than max_len: reads the last 12
    expected = probs_from_logits(forward(params, cfg, np.array(long[-12:]))[0][-1], 1.0, 3)
    np.testing.assert_allclose(next_token_probs(params, cfg, long, 1.0, top_k=3), expected)
    assert np.count_nonzero(expected) == 3


@pytest.mark.parametrize("temperature", [1e-300, 5e-324, 1e-12])
def test_tiny_temperatures_give_a_clean_one_hot_without_warnings(temperature):
    logits = np.array([2.0, 7.5, -1.0, 7.4999])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = probs_from_logits(logits, temperature)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0)
    assert p.argmax() == 1 and p[1] == pytest.approx(1.0)


# ---- top-p (nucleus) ------------------------------------------------------------------------------------


def nucleus_by_hand(probs, top_p):
    """The nucleus of one row, as a plain loop: walk the tokens from the most likely (ties by id), keep each
    one while the mass kept so far is short of top_p, then share the mass among the kept ones."""
    ranked = sorted(range(len(probs)), key=lambda i: (-probs[i], i))
    kept, mass = [], 0.0
    for i in ranked:
        if mass >= top_p:
            break
        kept.append(i)
        mass += probs[i]
    out = np.zeros(len(probs))
    for i in kept:
        out[i] = probs[i] / sum(probs[j] for j in kept)
    return out


@pytest.mark.parametrize("top_p", [0.05, 0.3, 0.5, 0.75, 0.9, 0.99])
@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_top_p_matches_a_plain_loop(top_p, temperature):
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((6, 12)) * 3
    got = probs_from_logits(logits, temperature, top_p=top_p)
    full = probs_from_logits(logits, temperature)
    for row, want_from in zip(got, full):
        np.testing.assert_allclose(row, nucleus_by_hand(want_from, top_p), rtol=1e-12, atol=1e-15)
        assert row.sum() == pytest.approx(1.0, abs=1e-12)
        kept = row > 0
        assert want_from[kept].sum() >= top_p - 1e-12  # the kept tokens reach p ...
        drop_least = want_from[kept].sum() - want_from[kept].min()
        assert drop_least < top_p + 1e-12  # ... and without the least likely of them, they would not


def test_top_p_of_one_changes_nothing_and_keeps_the_top_token_always():
    logits = np.array([2.0, 1.0, 0.5, -1.0])
    np.testing.assert_allclose(probs_from_logits(logits, top_p=1.0), probs_from_logits(logits), rtol=0, atol=0)
    only_top = probs_from_logits(logits, top_p=1e-9)
    assert only_top.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_top_p_ties_are_ranked_by_token_id():
    probs = probs_from_logits(np.zeros(4), top_p=0.5)  # four tokens at 0.25 each: the first two reach 0.5
    np.testing.assert_allclose(probs, [0.5, 0.5, 0.0, 0.0])


def test_top_p_after_top_k():
    logits = np.array([3.0, 2.0, 1.0, 0.0, -1.0])
    both = probs_from_logits(logits, top_k=3, top_p=0.8)
    np.testing.assert_allclose(both, nucleus_by_hand(probs_from_logits(logits, top_k=3), 0.8), rtol=1e-12)


@pytest.mark.parametrize("top_p", [0, -0.1, 1.5, float("nan"), "half"])
def test_bad_top_p_raises(top_p):
    with pytest.raises(ValueError, match="top_p"):
        probs_from_logits(np.zeros(3), top_p=top_p)


def test_generation_with_top_p_only_picks_from_the_nucleus(model):
    cfg, params = model
    rng = np.random.default_rng(0)
    out = generate(params, cfg, np.array([1, 2, 3]), 12, temperature=1.0, top_p=0.5, rng=rng)
    ids = [1, 2, 3]
    for token in out[3:]:
        allowed = next_token_probs(params, cfg, np.array(ids), 1.0, top_p=0.5) > 0
        assert allowed[token], "a token outside the nucleus was sampled"
        ids.append(int(token))

"""Turning logits into tokens: temperature, top-k, top-p (nucleus), and generation with the KV cache.

Shapes: T sequence length, V vocabulary.
"""

from __future__ import annotations

import numpy as np

from core.attention import softmax
from core.kv_cache import KVCache
from core.model import ModelConfig, check_ids, forward


def check_temperature(temperature) -> float:
    t = float(temperature)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"Temperature must be a number >= 0 (0 means always pick the top token), got {temperature!r}.")
    return t


def check_top_k(top_k, V: int) -> int | None:
    if top_k is None:
        return None
    if int(top_k) != top_k or top_k < 1:
        raise ValueError(f"top_k must be a whole number >= 1 (or None for no limit), got {top_k!r}.")
    return min(int(top_k), V)


def check_top_p(top_p) -> float | None:
    if top_p is None:
        return None
    try:
        p = float(top_p)
    except (TypeError, ValueError):
        p = float("nan")
    if not 0 < p <= 1:
        raise ValueError(f"top_p must be a share above 0 and at most 1 (or None for no limit), got {top_p!r}.")
    return None if p == 1 else p


def nucleus(probs: np.ndarray, top_p: float) -> np.ndarray:
    """Top-p: keep the smallest set of tokens, most likely first, whose probability reaches top_p, and share
    the whole mass among them again: (..., V) -> (..., V).

    A token is kept while the mass of the tokens ranked above it is still short of top_p, so the most likely
    one always stays. Ties are ranked by token id (a stable sort), as a plain loop over the sorted list would.
    """
    order = np.argsort(-probs, axis=-1, kind="stable")  # most likely first
    ranked = np.take_along_axis(probs, order, axis=-1)
    mass_above = np.cumsum(ranked, axis=-1) - ranked  # what the tokens ranked above each one hold
    keep = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(keep, order, mass_above < top_p, axis=-1)
    kept = np.where(keep, probs, 0.0)
    return kept / kept.sum(axis=-1, keepdims=True)


def probs_from_logits(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None) -> np.ndarray:
    """softmax(logits / temperature) over the top_k largest logits, then cut to the top_p nucleus:
    (..., V) -> (..., V).

    Temperature 0 is the limit of a very cold softmax: all mass on the argmax (the first one on a tie),
    computed without dividing by zero. A temperature just above 0 gives the same one-hot row without an overflow:
    the logits are shifted by their max before the division (below).
    """
    t = check_temperature(temperature)
    logits = np.asarray(logits, dtype=np.float64)
    top_k = check_top_k(top_k, logits.shape[-1])
    top_p = check_top_p(top_p)
    if top_k is not None and top_k < logits.shape[-1]:
        kth = np.sort(logits, axis=-1)[..., -top_k][..., None]  # the k-th largest logit
        logits = np.where(logits >= kth, logits, -np.inf)
    if t == 0:
        onehot = np.zeros_like(logits)
        np.put_along_axis(onehot, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)
        return onehot
    # Subtract the max before dividing: at a tiny temperature (a link may ask for 1e-300) logits / t would
    # overflow to +inf and the softmax would see inf - inf. Shifted logits are <= 0, so the division can
    # only reach -inf (weight exactly 0), the right limit; the overflow there is expected, not an error.
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        probs = softmax(shifted / t, axis=-1)
    return probs if top_p is None else nucleus(probs, top_p)


def sample(logits, temperature=1.0, top_k=None, rng: np.random.Generator | None = None, top_p=None) -> int:
    """One token id from (V,) logits. Temperature 0 is greedy and needs no rng."""
    p = probs_from_logits(logits, temperature, top_k, top_p)
    if check_temperature(temperature) == 0:
        return int(np.argmax(p))
    if rng is None:
        raise ValueError("Sampling at a temperature above 0 needs an np.random.Generator (rng).")
    return int(rng.choice(p.shape[-1], p=p))


def next_token_probs(params, cfg: ModelConfig, ids, temperature: float = 1.0, top_k=None, top_p=None) -> np.ndarray:
    """Distribution of the token that follows `ids` (T,): (V,). Reads only the last max_len tokens."""
    ids = np.asarray(ids)[-cfg.max_len :]
    logits, _ = forward(params, cfg, ids)
    return probs_from_logits(logits[-1], temperature, top_k, top_p)


def generate(params, cfg: ModelConfig, prompt_ids, max_new_tokens: int, temperature=1.0, top_k=None,
             rng: np.random.Generator | None = None, use_cache: bool = True, top_p=None) -> np.ndarray:
    """Extend prompt_ids (T,) by max_new_tokens sampled tokens -> (T + max_new_tokens,).

    With the cache, the prompt is read once and each new token costs one position of work. Past max_len
    the model reads a sliding window of the last max_len tokens; positions then shift every step, so
    cached keys no longer apply and the window is recomputed (as without a cache).
    use_cache=False recomputes the whole window for every token: same result, for comparison.
    """
    ids = check_ids(cfg, prompt_ids)
    if ids.ndim != 1:
        raise ValueError("generate takes one prompt: ids of shape (T,).")
    if int(max_new_tokens) != max_new_tokens or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be a whole number >= 0, got {max_new_tokens!r}.")
    check_temperature(temperature)
    check_top_k(top_k, cfg.vocab_size)
    check_top_p(top_p)
    out = [int(i) for i in ids]
    cache = KVCache() if use_cache else None
    pending = out  # tokens the model has not read yet
    for _ in range(int(max_new_tokens)):
        if cache is None:
            logits, _ = forward(params, cfg, np.array(out[-cfg.max_len :]))
        else:
            if cache.length + len(pending) > cfg.max_len:
                cache = KVCache()
                pending = out[-cfg.max_len :]
            logits, _ = forward(params, cfg, np.array(pending), cache)
        token = sample(logits[-1], temperature, top_k, rng, top_p)
        out.append(token)
        pending = [token]
    return np.array(out, dtype=np.int64)

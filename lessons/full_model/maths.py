"""Why nucleus (top-p) sampling exists (Holtzman et al., 2019), on a character model: three ways to pick the
next token, and what goes wrong with the first two.

    greedy   always the most likely token: the text soon repeats one stretch for ever (a loop)
    pure     a draw from the model's whole distribution: now and then a token from the long tail of unlikely
             ones, where the model is least reliable, and a word goes wrong from there
    top-p    a draw from the nucleus only, the most likely tokens that together hold p of the probability:
             the tail is cut off, and what is left is still random

A draw "from the tail" is a token outside the top-p nucleus of the model's own distribution at that step
(temperature 1). Shapes: T sequence length, V vocabulary, N generated tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from core.model import KVCache, ModelConfig, check_ids, forward
from core.sampling import check_top_p, nucleus, probs_from_logits, sample

WAYS = ("greedy", "pure", "top-p")
WORD = re.compile(r"[A-Za-z]{3,}")  # a word, for the share of real words: three letters or more


def tail_draws(probs: np.ndarray, drawn: Sequence[int], top_p: float) -> np.ndarray:
    """(N,) bool: True where the drawn token lies outside the top-p nucleus of its step's distribution."""
    check_top_p(top_p)
    kept = nucleus(np.asarray(probs), top_p) > 0  # (N, V)
    return ~kept[np.arange(len(drawn)), np.asarray(drawn)]


def loop(ids: Sequence[int], min_repeats: int = 2) -> dict | None:
    """The cycle a text ends in: the shortest period p such that the last stretch of the text repeats every
    p tokens, at least min_repeats full times; {"period", "start" (the first position of the repetition),
    "cycle" (the p tokens)}, or None when the text does not end in such a loop."""
    ids = list(ids)
    for p in range(1, len(ids) // (min_repeats + 1) + 1):
        start = len(ids)
        while start - 1 - p >= 0 and ids[start - 1] == ids[start - 1 - p]:
            start -= 1
        start -= p  # ids[start:] repeats with period p
        if len(ids) - start >= (min_repeats + 1) * p:
            return {"period": p, "start": start, "cycle": ids[start : start + p]}
    return None


def known_word_share(text: str, words: Iterable[str]) -> float:
    """The share of the text's words (three letters or more) that are words of `words`; nan with none."""
    found = WORD.findall(text)
    known = set(words)
    return float(np.mean([w in known for w in found])) if found else float("nan")


def decode(params, cfg: ModelConfig, prompt_ids, n: int, way: str, top_p: float, seed: int) -> tuple:
    """n tokens after the prompt, picked one of WAYS: greedy (temperature 0), pure (temperature 1, nothing cut)
    or top-p (temperature 1, the nucleus of p only). Returns the ids (T + n,) and, for each new token, the
    model's whole distribution at temperature 1 before it was picked (n, V). The tokens are those of
    core.sampling.generate with the same settings and seed: the same steps, with each distribution kept."""
    if way not in WAYS:
        raise ValueError(f"Unknown way to pick {way!r}; choose one of {', '.join(WAYS)}.")
    temperature, cut = (0.0, None) if way == "greedy" else (1.0, top_p if way == "top-p" else None)
    rng = np.random.default_rng(seed)
    out = [int(i) for i in check_ids(cfg, prompt_ids)]
    cache, pending, seen = KVCache(), out, []
    for _ in range(int(n)):
        if cache.length + len(pending) > cfg.max_len:  # past max_len: a window of the last max_len, read afresh
            cache, pending = KVCache(), out[-cfg.max_len :]
        logits, _ = forward(params, cfg, np.array(pending), cache)  # (len(pending), V)
        seen.append(probs_from_logits(logits[-1], 1.0))
        out.append(sample(logits[-1], temperature, None, rng, cut))
        pending = [out[-1]]
    return np.array(out, dtype=np.int64), np.array(seen).reshape(len(seen), cfg.vocab_size)


def compare(params, cfg: ModelConfig, decode_text, prompt_ids, n: int, seeds: Sequence[int], top_p: float,
            words: Iterable[str]) -> dict:
    """Each way of picking, on the same prompt: {way: {"texts": one per seed (greedy: one), "tail": draws from
    the tail per text, "tail_probs": the probabilities those draws had, "known": the share of real words
    (of `words`) per text, "loop": loop() of the first text}}. decode_text turns ids into text."""
    words = set(words)
    found = {}
    for way in WAYS:
        texts, tails, tail_probs, known, first = [], [], [], [], None
        for seed in (seeds[:1] if way == "greedy" else seeds):
            ids, probs = decode(params, cfg, prompt_ids, n, way, top_p, seed)  # (T + n,), (n, V)
            new = ids[len(prompt_ids):]
            tail = tail_draws(probs, new, top_p)
            texts.append(decode_text(new))
            tails.append(int(tail.sum()))
            tail_probs += [float(p) for p in probs[np.arange(len(new)), new][tail]]
            known.append(known_word_share(texts[-1], words))
            first = first if first is not None else new
        found[way] = {"texts": texts, "tail": tails, "tail_probs": tail_probs, "known": known, "loop": loop(first)}
    return found

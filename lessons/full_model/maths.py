"""The full-model lesson's set-ups: the guessing game (a student against the bigram model and the transformer)
and why nucleus (top-p) sampling exists. The model, its sampling and its tokenizer are core's.

Shapes: V vocabulary, L the model's window (max_len), T a prompt's length; N the ids of the held-out text in
the game, the generated tokens in decoding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from core.backward import loss_only
from core.demos.measures import check_whole
from core.model import KVCache, ModelConfig, check_ids, forward
from core.sampling import check_top_p, next_token_probs, nucleus, probs_from_logits, sample
from core.tokenize import CharTokenizer

# ---- the guessing game -------------------------------------------------------------------------------
# Guess the next character: a student against the bigram model and the transformer, on held-out text.
#
# A puzzle is a position t of a held-out text: the reader sees the `context` characters before it and guesses
# ids[t]. The two models give a probability to every character; the student gives one character. Scoring:
#
# - hits: the student's guess, and each model's most likely character (its argmax), compared with the truth;
# - bits: each model's surprise at the truth, -log2 P(truth), the quantity training lowers (in nats there).
#   A single guess is not a distribution: read as one that puts probability 1 on the guess it would cost 0 bits
#   when right and infinitely many when wrong, so the student is scored by hits alone.

PLAYERS = ("you", "bigram", "transformer")  # who is scored by hits
MODELS = ("bigram", "transformer")  # who is scored by bits as well


def pick_position(ids, number: int, context: int, skip: tuple[int, ...] = ()) -> int:
    """Puzzle `number`'s position t in ids (N,): a position with `context` ids before it whose id is not in
    skip (a line break cannot be typed into a box). The same number always gives the same position."""
    return int(pick_positions(ids, (number,), context, skip)[0])


def pick_positions(ids, numbers: Sequence[int], context: int, skip: tuple[int, ...] = ()) -> np.ndarray:
    """pick_position of each puzzle number, the allowed positions found once: (len(numbers),)."""
    ids = np.asarray(ids)
    numbers = [check_whole("The puzzle number", number, lo=0) for number in numbers]
    context = check_whole("The context", context)
    candidates = np.flatnonzero(~np.isin(ids[context:], skip)) + context  # (n,) every allowed position
    if candidates.size == 0:
        raise ValueError(f"The text has no position with {context} characters before it to guess.")
    return np.array([candidates[np.random.default_rng(number).integers(candidates.size)] for number in numbers],
                    dtype=np.int64)


def check_guess(text: str, tokenizer: CharTokenizer) -> int:
    """The id of a typed guess: exactly one character of the tokenizer's vocabulary. A ValueError says what
    is wrong with anything else (nothing, several characters, a character the text never uses)."""
    if not isinstance(text, str) or text == "":
        raise ValueError("Type one character first (a space counts: type a single space).")
    if not text.isascii():
        raise ValueError("The text is plain ASCII (English letters, digits, punctuation): a character such as "
                         "an accented letter or an emoji never occurs in it. Type one ASCII character.")
    if len(text) > 1:
        raise ValueError(f"Type exactly one character; this guess has {len(text)}.")
    if tokenizer.unknown(text):
        raise ValueError("That character never occurs in this text, so it cannot be next: try another.")
    return int(tokenizer.encode(text)[0])


def model_probs(params, cfg: ModelConfig, bigram_probs: np.ndarray, context_ids) -> dict[str, np.ndarray]:
    """Each model's distribution of the next id after context_ids (T,): {"bigram": (V,), "transformer": (V,)}.

    The bigram row is that of the last id alone; the transformer reads the last L ids, at temperature 1
    (its own probabilities, no sampling settings)."""
    context_ids = np.asarray(context_ids, dtype=np.int64)
    return {"bigram": np.asarray(bigram_probs, dtype=np.float64)[context_ids[-1]],
            "transformer": next_token_probs(params, cfg, context_ids)}


def bits(p: float) -> float:
    """Surprise in bits, -log2 p: 0 for a sure thing, 1 for a coin flip, inf for what was ruled out."""
    with np.errstate(divide="ignore"):
        return float(-np.log2(p))


def score(guess: int, truth: int, probs: dict[str, np.ndarray]) -> dict:
    """One round: guess and truth ids, probs from model_probs. Returns
    hits {player: bool}; top {model: its argmax id}; p_guess and p_truth {model: probability}; bits {model: -log2
    P(truth)}."""
    top = {m: int(np.argmax(probs[m])) for m in MODELS}
    return {"guess": int(guess), "truth": int(truth), "top": top,
            "hits": {"you": guess == truth, **{m: top[m] == truth for m in MODELS}},
            "p_guess": {m: float(probs[m][guess]) for m in MODELS},
            "p_truth": {m: float(probs[m][truth]) for m in MODELS},
            "bits": {m: bits(probs[m][truth]) for m in MODELS}}


def tally(rounds) -> dict:
    """The running score of a list of score() results: rounds n; hits {player: count}; mean_bits {model: mean of
    its bits on the truth} (None before the first round)."""
    rounds = list(rounds)
    n = len(rounds)
    return {"rounds": n, "hits": {p: sum(bool(r["hits"][p]) for r in rounds) for p in PLAYERS},
            "mean_bits": {m: (float(np.mean([r["bits"][m] for r in rounds])) if n else None) for m in MODELS}}


# The bits of the game are the loss of training counted in base 2: -log2 p = -ln p / ln 2, so a loss in nats
# divided by ln 2 is the same loss in bits. The held-out loss is the mean surprise over every character of the
# held-out text; the puzzles are a sample of those characters (never a line break, always with L before them).


def in_bits(nats: float) -> float:
    """A surprise or loss in nats (natural logarithm) as bits (base 2): nats / ln 2."""
    return float(nats / np.log(2))


def held_out_loss(params, cfg: ModelConfig, ids, batch_size: int = 64) -> float:
    """The transformer's loss on ids (N,) in nats per character, as training's validation measures it: the text
    cut into back-to-back windows of L = max_len, window w reading ids[wL : wL + L] and predicting the next id at
    each of its L positions (the first with little before them), every predicted id counted once; the ids after
    the last whole window are left out, as core.data's validation windows leave them out."""
    ids = np.asarray(ids, dtype=np.int64)
    L = cfg.max_len
    windows = (ids.size - 1) // L
    if windows < 1:
        raise ValueError(f"The held-out loss needs a text of more than {L} ids, got {ids.size}.")
    total = 0.0
    for first in range(0, windows, batch_size):
        starts = np.arange(first, min(first + batch_size, windows)) * L  # (B,)
        chunk = ids[starts[:, None] + np.arange(L + 1)]  # (B, L + 1)
        total += loss_only(params, cfg, chunk[:, :-1], chunk[:, 1:]) * chunk[:, 1:].size  # mean over B * L
    return total / (windows * L)


def puzzle_bits(params, cfg: ModelConfig, bigram_probs: np.ndarray, held, numbers: Sequence[int],
                skip: tuple[int, ...] = (), batch_size: int = 128) -> dict[str, float]:
    """Each model's mean bits on the truth over the puzzles `numbers` of the held-out ids (N,): {model: mean},
    every puzzle as score() scores it (the transformer reads the L ids before the position, the bigram model the
    last of them), the transformer run on batch_size puzzles' contexts at once (B, L)."""
    held = np.asarray(held, dtype=np.int64)
    L = cfg.max_len
    at = pick_positions(held, numbers, L, skip)  # (N,)
    contexts = held[at[:, None] + np.arange(-L, 0)]  # (N, L)
    truth = held[at]  # (N,)
    last = np.concatenate([forward(params, cfg, contexts[i:i + batch_size])[0][:, -1]  # (B, L, V) -> (B, V)
                           for i in range(0, len(at), batch_size)])  # (N, V)
    p_truth = {"bigram": np.asarray(bigram_probs, dtype=np.float64)[contexts[:, -1], truth],
               "transformer": probs_from_logits(last, 1.0)[np.arange(len(at)), truth]}
    return {m: float(np.mean([bits(p) for p in p_truth[m]])) for m in MODELS}


# ---- why top-p ---------------------------------------------------------------------------------------
# Why nucleus (top-p) sampling exists (Holtzman et al., 2019), on a character model: three ways to pick the
# next token, and what goes wrong with the first two.
#
#     greedy   always the most likely token: the text soon repeats one stretch for ever (a loop)
#     pure     a draw from the model's whole distribution: now and then a token from the long tail of unlikely
#              ones, where the model is least reliable, and a word goes wrong from there
#     top-p    a draw from the nucleus only, the most likely tokens that together hold p of the probability:
#              the tail is cut off, and what is left is still random
#
# A draw "from the tail" is a token outside the top-p nucleus of the model's own distribution at that step
# (temperature 1).

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

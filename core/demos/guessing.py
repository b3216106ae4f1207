"""Guess the next character: a student against the bigram model and the transformer, on held-out text.

A puzzle is a position t of a held-out text: the reader sees the `context` characters before it and guesses
ids[t]. The two models give a probability to every character; the student gives one character. Scoring:

- hits: the student's guess, and each model's most likely character (its argmax), compared with the truth;
- bits: each model's surprise at the truth, -log2 P(truth), the quantity training lowers (in nats there).
  A single guess is not a distribution: read as one that puts probability 1 on the guess it would cost 0 bits
  when right and infinitely many when wrong, so the student is scored by hits alone.

Shapes: N ids of the held-out text, V vocabulary, L the model's window (max_len).
"""

from __future__ import annotations

import numpy as np

from core.demos.measures import check_whole
from core.model import ModelConfig
from core.sampling import next_token_probs
from core.tokenize import CharTokenizer

PLAYERS = ("you", "bigram", "transformer")  # who is scored by hits
MODELS = ("bigram", "transformer")  # who is scored by bits as well


def pick_position(ids, number: int, context: int, skip: tuple[int, ...] = ()) -> int:
    """Puzzle `number`'s position t in ids (N,): a position with `context` ids before it whose id is not in
    skip (a line break cannot be typed into a box). The same number always gives the same position."""
    ids = np.asarray(ids)
    number = check_whole("The puzzle number", number, lo=0)
    context = check_whole("The context", context)
    candidates = np.flatnonzero(~np.isin(ids[context:], skip)) + context  # (n,) every allowed position
    if candidates.size == 0:
        raise ValueError(f"The text has no position with {context} characters before it to guess.")
    return int(candidates[np.random.default_rng(number).integers(candidates.size)])


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

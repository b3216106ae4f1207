"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from core.attention import causal_mask
from core.costs import attention_memory, kv_cache_bytes
from core.model import ModelConfig, init_params
from core.sampling import nucleus
from lessons.full_model import maths
from ui.frame.exercises import Exercise

CHARS, PROBS, TOP_P = "eaoiu", np.array([0.5, 0.3, 0.15, 0.03, 0.02]), 0.9  # the top-p question's distribution
SURE = 0.25  # the probability in the bits question
T_CACHE, D_CACHE, L_CACHE = 1000, 64, 2  # the KV-cache question's model and length


def questions() -> list[Exercise]:
    gb = attention_memory(100_000, dtype="float16")["per_head"] / 1e9
    kept = nucleus(PROBS, TOP_P) > 0
    options = ("only e", "e and a", "e, a and o", "all five")
    cache = kv_cache_bytes(T_CACHE, D_CACHE, L_CACHE)
    return [  # in the order of the sections they ask about
        Exercise("temp0", "At temperature 0, what probability does the most likely next character get?",
                 answer=1.0, part="bars", explanation="Temperature 0 is the limit of an ever colder softmax: all "
                 "the probability lands on the largest logit (greedy decoding)."),
        Exercise("top_p", "The next character's probabilities are "
                 + ", ".join(f"{c} {p:g}" for c, p in zip(CHARS, PROBS)) + f". With top-p = {TOP_P:g}, which "
                 "characters can be drawn?", options=options, part="nucleus",
                 correct={1: 0, 2: 1, 3: 2, len(CHARS): 3}[int(kept.sum())],
                 explanation=f"Ranked from the top, keep characters while the ones above hold less than {TOP_P:g}: "
                 f"{', '.join(CHARS[:int(kept.sum())])} (together {PROBS[kept].sum():g}). The rest, the tail, are "
                 "never drawn; the kept ones share the whole probability again."),
        greedy_twice(),
        Exercise("head_view", "In the head view, with one head switched on, how many lines can leave the prompt's "
                 "first character?", answer=float(causal_mask(5)[0].sum()), tolerance=0, part="head_view",
                 explanation="The first character may read only itself (the causal mask), so all its weight goes "
                 "to one key: one line, to itself."),
        Exercise("bits", f"The model gave the character that really came next a probability of {SURE:g}. How many "
                 "bits is its surprise?", answer=float(-np.log2(SURE)), part="guess_score",
                 explanation=f"Each halving of the probability adds one bit: 1 is 0 bits, 1/2 one bit, {SURE:g} "
                 f"{-np.log2(SURE):g} bits, as surprising as calling {-np.log2(SURE):g} coin flips right."),
        Exercise("kv_cache", f"While writing, a model with d_model = {D_CACHE} and {L_CACHE} layers keeps, in "
                 f"every layer, the key and the value ({D_CACHE} numbers each) of every earlier position: the KV "
                 f"cache. In float32 (4 bytes a number), how many bytes does that take at {T_CACHE:,} tokens?",
                 answer=float(cache), tolerance=0, part="long_context",
                 explanation=f"Keys and values, {D_CACHE} numbers each, per token and per layer: 2 × {T_CACHE:,} × "
                 f"{D_CACHE} × {L_CACHE} × 4 = {cache:,} bytes. It grows in step with the length; the attention "
                 "weights grow with its square."),
        Exercise("memory", "How many gigabytes (10⁹ bytes) does ONE head's attention weight matrix take at "
                 "T = 100,000 tokens in float16 (2 bytes a number)?", answer=gb, part="long_context",
                 explanation=f"T × T × 2 bytes = 10¹⁰ × 2 = {gb:.0f} GB, for one head of one layer: "
                 "why long-context attention is computed without storing the full matrix."),
    ]


def greedy_twice() -> Exercise:
    """Greedy decoding with two different seeds, on a small random model: the same text (no randomness)."""
    cfg = ModelConfig(vocab_size=8, d_model=16, n_heads=2, n_layers=1, max_len=16)
    params = init_params(cfg, np.random.default_rng(0))
    runs = [maths.decode(params, cfg, [1, 2, 3], 10, "greedy", 0.9, seed)[0] for seed in (0, 1)]
    same = bool(np.array_equal(*runs))
    return Exercise("greedy_twice", "Greedy decoding writes from the same prompt twice, with two different random "
                    "seeds. What do you get?", options=("The same text both times", "Two different texts"),
                    correct=0 if same else 1, part="why_top_p",
                    explanation="Greedy takes the most likely character every time: nothing random, so the seed "
                    "plays no part and the text is the same. That is also why it cannot climb out of a loop; "
                    "sampling, pure or top-p, can draw a different text for each seed.")

"""The exercises of each lesson. Every answer is computed here by the core, so it cannot drift from
what the pages show; the explanations say why, in a sentence or two."""

from __future__ import annotations

import functools
from functools import cache

import numpy as np
import streamlit as st

from core.attention import causal_mask, scaled_dot_product_attention, softmax
from core.costs import attention_memory, param_count
from core.demos.bigram import bigram_counts, bigram_probs
from core.demos.circuit import copy_halves, generated
from core.demos.communication import encoder_decoder, order_view, recurrence
from core.demos.context import cross_attention
from core.demos.knockout import knockout_table
from core.demos.tiles import attention_memory_both_ways, online_softmax_step
from core.model import ModelConfig
from core.tokenize import word_tokens
from ui import model_store, render
from ui.controls import DEFAULT_TEXT
from ui.exercises import Exercise


def _qkv() -> list[Exercise]:
    T = len(word_tokens(DEFAULT_TEXT))
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    _, w = scaled_dot_product_attention(q, k, k)
    return [
        Exercise("score_count", f"The default sentence has {T} tokens and d_k = 8. How many numbers are in "
                 "the score matrix Q Kᵀ?", answer=T * T, tolerance=0,
                 explanation=f"Q is (T, d_k) and Kᵀ is (d_k, T), so Q Kᵀ is (T, T) = {T} × {T} = {T * T}: "
                 "one score for every (query, key) pair, whatever d_k is."),
        Exercise("first_weight", "A query q = [1, 0] meets three keys k₁ = [1, 0], k₂ = [0, 1], "
                 "k₃ = [0.5, 0.5]. After dividing by √2 and a softmax, what weight goes to k₁? (3 decimals)",
                 answer=float(w[0, 0]), tolerance=0.002,
                 explanation="The dot products are 1, 0 and 0.5; divided by √2 they are 0.707, 0 and 0.354; "
                 f"their softmax is {w[0, 0]:.3f}, {w[0, 1]:.3f}, {w[0, 2]:.3f}."),
        Exercise("why_same_rows", "The sentence “the cat saw the dog” has “the” twice. Why are both "
                 "“the” rows of Q identical?", options=(
                     "Because attention averages them", "Because they have the same embedding and Q = X W_Q "
                     "works on each row alone", "Because the softmax makes them equal"), correct=1,
                 explanation="Before attention mixes anything, each row of Q depends only on that token's own "
                 "embedding. Position is what tells them apart, once positional encodings are added."),
    ]


def _scaling() -> list[Exercise]:
    return [
        Exercise("factor_64", "By what number are the raw scores divided when d_k = 64?", answer=float(np.sqrt(64)),
                 explanation="Scores are divided by √d_k = √64 = 8 (equivalently multiplied by 1/8 = 0.125)."),
        Exercise("variance", "q and k each have d_k = 256 independent entries with mean 0 and variance 1. "
                 "What is the variance of their dot product q·k?", answer=256.0,
                 explanation="q·k is a sum of 256 products, each with variance 1·1 = 1; independent variances "
                 "add, so the sum has variance d_k = 256 (standard deviation 16). Dividing by √d_k brings it back "
                 "to 1."),
        Exercise("bug_dv", "This function should compute scaled dot-product attention. Which line has the bug?",
                 code="def attention(Q, K, V):\n    d_k = Q.shape[-1]\n    d_v = V.shape[-1]\n"
                      "    scores = Q @ K.T / np.sqrt(d_v)\n    weights = softmax(scores)\n    return weights @ V",
                 options=("line 2", "line 3", "line 4", "line 6"), correct=2,
                 explanation="The scale belongs to the dot product of queries and keys, whose length is d_k. "
                 "Dividing by √d_v only works by accident when d_v = d_k."),
    ]


def _causal_pictures() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 4))
    _, causal = scaled_dot_product_attention(x, x, x, mask=causal_mask(4))
    labels = ["t0", "t1", "t2", "t3"]
    left, right = st.columns(2)
    with left:
        render.show_heatmap(causal.T, labels, labels, title="Picture A", key="ex_pic_a", domain=(0.0, 1.0))
    with right:
        render.show_heatmap(causal, labels, labels, title="Picture B", key="ex_pic_b", domain=(0.0, 1.0))


def _masking() -> list[Exercise]:
    _, w = scaled_dot_product_attention(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), mask=causal_mask(4))
    late = softmax(np.zeros((4, 4))) * causal_mask(4)  # masking after the softmax: the wrong order
    return [
        Exercise("row0", "Under a causal mask, what weight does the first token (row 0) give to itself?",
                 answer=float(w[0, 0]),
                 explanation="Row 0 may only look at key 0; a softmax over a single score is exactly 1."),
        Exercise("late_mask", "Four tokens, all scores equal. Someone applies the softmax first and zeroes the "
                 "future weights afterwards. What does row 1 sum to?", answer=float(late[1].sum()),
                 explanation="The softmax gave 0.25 to each of the four keys; zeroing keys 2 and 3 leaves "
                 "0.25 + 0.25 = 0.5. Mask the scores (with -inf) before the softmax and row 1 sums to 1."),
        Exercise("which_causal", "Rows are queries, columns are keys. Which picture shows causal attention?",
                 options=("Picture A", "Picture B"), correct=1, figure=_causal_pictures,
                 explanation="Causal attention lets query i see keys 0..i only: all its weight sits on or "
                 "below the diagonal (lower triangle), as in B. A is its transpose: every token looks ahead."),
    ]


def _multi_head() -> list[Exercise]:
    cfg = ModelConfig(vocab_size=2, d_model=64, n_heads=8, n_layers=1, max_len=8)
    attn = param_count(cfg)["attention (W_qkv, W_o)"]
    return [
        Exercise("dk_per_head", "d_model = 64 split over 8 heads: how many dimensions does each head's query "
                 "have?", answer=float(cfg.d_k),
                 explanation="Heads split d_model evenly: d_k = d_model / H = 64 / 8 = 8."),
        Exercise("attn_params", "How many parameters does one attention layer with d_model = 64 have, "
                 "counting W_qkv (64 × 192), W_o (64 × 64) and their biases?", answer=float(attn), tolerance=0,
                 explanation=f"64·192 + 192 + 64·64 + 64 = {attn}. The number of heads does not change it: "
                 "heads are slices of the same matrices."),
    ]


def _full_model() -> list[Exercise]:
    gb = attention_memory(100_000, dtype="float16")["per_head"] / 1e9
    return [
        Exercise("temp0", "At temperature 0, what probability does the most likely next character get?",
                 answer=1.0, explanation="Temperature 0 is the limit of an ever colder softmax: all the "
                 "probability lands on the largest logit (greedy decoding)."),
        Exercise("memory", "How many gigabytes (10⁹ bytes) does ONE head's attention weight matrix take at "
                 "T = 100,000 tokens in float16 (2 bytes a number)?", answer=gb,
                 explanation=f"T × T × 2 bytes = 10¹⁰ × 2 = {gb:.0f} GB, for one head of one layer: "
                 "why long-context models never store the full matrix."),
    ]


def _training() -> list[Exercise]:
    V = 65
    return [
        Exercise("uniform_loss", f"Before training, a model that spreads its guess evenly over {V} characters "
                 "has what cross-entropy loss, in nats? (2 decimals)", answer=float(np.log(V)), tolerance=0.005,
                 explanation=f"The loss is −ln p(correct) = −ln(1/{V}) = ln {V} ≈ {np.log(V):.2f}. A loss "
                 "far below that means the model has learnt something."),
        Exercise("bigram", "A bigram model predicts the next character from the current one only. Which can go "
                 "below the bigram baseline?", options=(
                     "Neither: a bigram model is the best possible", "A transformer with attention: it can use "
                     "every earlier character, not just the last one", "A model with a larger vocabulary"),
                 correct=1, explanation="Attention lets a position read all earlier positions, so the model can "
                 "use context a bigram model cannot see."),
    ]


def _tiles() -> list[Exercise]:
    one = np.ones(1)
    rescale = float(online_softmax_step(2.0 * one, one, np.zeros((1, 1)), np.array([[5.0]]), np.zeros((1, 1)))[3][0])
    mem = attention_memory_both_ways(65_536, 128, 64)
    return [
        Exercise("rescale", "A query's running maximum was m = 2. The next block holds a score of 5. By what "
                 "factor are its running sum l and its accumulator multiplied before the block is added? "
                 "(3 decimals)", answer=rescale, tolerance=0.001,
                 explanation=f"The factor is exp(m_old − m_new) = exp(2 − 5) = e⁻³ ≈ {rescale:.4f}: the old terms "
                 "were exp(score − 2) and must become exp(score − 5)."),
        Exercise("tile_ratio", "T = 65,536 tokens, tiles of b = 128 keys. How many times more scores does the "
                 "full (T, T) matrix hold than one (T, b) tile?", answer=mem["full_scores"] / mem["tile_scores"],
                 tolerance=0, explanation="T × T over T × b is T / b = 65,536 / 128 = 512, whatever the bytes per "
                 f"number: {mem['full_scores'] / 1e9:.1f} GB against {mem['tile_scores'] / 1e6:.1f} MB in float32."),
    ]


def _bigram() -> list[Exercise]:
    ids = np.array(["abn".index(c) for c in "banana"])  # a = 0, b = 1, n = 2
    counts = bigram_counts(ids, 3)
    return [
        Exercise("banana", "In “banana”, count which letter follows which (vocabulary a, b, n). With add-one "
                 "smoothing (α = 1), what is P(next = n | a)?", answer=float(bigram_probs(counts, 1.0)[0, 2]),
                 explanation=f"a is followed by n {counts[0, 2]} times and by nothing else (the last a ends the "
                 "text), so the row of a is [0, 0, 2]. Adding 1 to each gives [1, 1, 3], and 3 / 5 = 0.6."),
        Exercise("pairs", "A text has 1,000 characters. How many (previous, next) pairs does the bigram count "
                 "table add up to?", answer=float(bigram_counts(np.zeros(1000, dtype=int), 1).sum()), tolerance=0,
                 explanation="Every character but the first has a previous one: 999 pairs. The whole (V, V) "
                 "table of counts sums to that."),
    ]


def _communication() -> list[Exercise]:
    order = order_view(["dog", "bites", "man"], 16, 8, 0, [2, 1, 0], positions=False)
    changed = int((np.abs(order["difference"]).max(axis=1) > 1e-9).sum())
    signal = np.zeros((11, 1))
    signal[0] = 1.0  # token 0 says 1, every later token 0: what is left of it at position t is h_t
    kept = float(recurrence(signal, 0.9)[10, 0])
    cross = cross_attention([f"q{i}" for i in range(5)], [f"k{j}" for j in range(8)], 16, 8, 0)
    talk = encoder_decoder([f"t{i}" for i in range(6)], 16, 8, 0)
    both = talk["weights_decoder"][2, 5] > 0
    return [
        Exercise("order_rows", "Without positional encodings, “dog bites man” is shuffled into “man bites dog”. "
                 "How many of the three output vectors change (apart from moving to another row)?",
                 answer=float(changed), tolerance=0,
                 explanation="None: each word meets the same keys and values in any order, so its output is the "
                 "same and only its row moves. Positional encodings are what make order matter."),
        Exercise("reach", "A recurrence keeps 90% of its state each step: h_t = 0.9·h_(t−1) + 0.1·x_t, starting "
                 "from h_0 = x_0. What share of token 0 is left at position 10? (3 decimals)", answer=kept,
                 tolerance=0.002, explanation=f"Ten steps of ×0.9: 0.9¹⁰ ≈ {kept:.3f}. Attention reaches token 0 "
                 "from position 10 in one step, with whatever weight it gives it."),
        Exercise("cross_count", "Queries come from a 5-token sentence, keys and values from an 8-token one. How "
                 "many numbers are in the cross-attention weight matrix?", answer=float(cross["weights"].size),
                 tolerance=0, explanation=f"One weight per (query, key) pair: shape {cross['weights'].shape}, "
                 f"{cross['weights'].size} numbers, each row summing to 1."),
        Exercise("who_hears", "In which block can token 2 hear token 5 of the same sentence?", options=(
            "The encoder (no mask)", "The decoder (causal mask)", "Both"), correct=2 if both else 0,
                 explanation="A decoder's token i hears only tokens 0 to i; an encoder has no mask, so every "
                 "token hears every other, later ones included."),
    ]


@cache
def _circuit_costs() -> np.ndarray:
    """(L, H) rise of the repeat's loss when each head of the circuit model is off, on the page's default
    sequence (generated, stretch 8, seed 0)."""
    model = model_store.load_model("circuit")
    ids = generated(8, 0, model.cfg.max_len, len(model.meta["tokenizer"]["chars"]))
    return knockout_table(model.params, model.cfg, ids[:-1], ids[1:], copy_halves(ids)[1])


def _circuit() -> list[Exercise]:
    table = _circuit_costs()
    names = tuple(f"layer {layer + 1} · head {head + 1}" for layer in range(table.shape[0])
                  for head in range(table.shape[1]))
    most = int(np.argmax(table))
    rises = ", ".join(f"{n} {r:+.1f}" for n, r in zip(names, table.ravel()))
    return [
        Exercise("most_needed", "At the page's defaults (generated, stretch 8, seed 0), switching off which one "
                 "head raises the loss on the repeat the most?", options=names, correct=most,
                 explanation=f"The rises in nats: {rises}. Without the previous-token head no key knows the "
                 "letter before it, so the induction head has nothing to match: copying is gone."),
        Exercise("uniform", "A model that spreads its guess evenly over the 24 letters: what is its loss on "
                 "any letter, in nats? (2 decimals)", answer=float(np.log(24)), tolerance=0.005,
                 explanation=f"−ln(1/24) = ln 24 ≈ {np.log(24):.2f}. The first copy's loss on the page lies far "
                 "above it (the model is confidently wrong on letters it cannot know); the repeat's far below."),
    ]


BANK = {"qkv": _qkv, "scaling": _scaling, "masking": _masking, "multi-head": _multi_head,
        "model": _full_model, "training": _training,
        "tiles": _tiles, "bigram": _bigram, "communication": _communication, "circuit": _circuit}


@functools.cache
def for_lesson(url_path: str) -> tuple[Exercise, ...]:
    """The lesson's exercises, built once per process: their answers come from the page's defaults, never
    from a session's settings, and some run a model to find them."""
    build = BANK.get(url_path)
    return tuple(build()) if build else ()

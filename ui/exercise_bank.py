"""The exercises of each lesson. Every answer is computed here by the core, so it cannot drift from
what the pages show; the explanations say why, in a sentence or two."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.attention import causal_mask, scaled_dot_product_attention, softmax
from core.costs import attention_memory, param_count
from core.model import ModelConfig
from core.tokenize import word_tokens
from ui import render
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


BANK = {"qkv": _qkv, "scaling": _scaling, "masking": _masking, "multi-head": _multi_head,
        "model": _full_model, "training": _training}


def for_lesson(url_path: str) -> list[Exercise]:
    build = BANK.get(url_path)
    return build() if build else []

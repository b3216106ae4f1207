"""The Context and order lesson's set-ups: one word in two sentences, queries from one sentence and keys and
values from another (cross-attention), word order with and without positions and a shuffle (seeded or typed),
an encoder (no mask) against a decoder (causal mask) on one sentence, how far token 0 reaches through a
recurrence against one attention step, and, with the trained word model, "bank" in two sentences.

The random-weight set-ups use the same seeded head as core.demos.heads.single_head (same embeddings, same W_Q,
W_K, W_V for a given seed, d_model and d_k), so their numbers agree with the other lessons'.

Shapes: T sequence length (Tq queries, Tk / Tkv keys and values), D d_model, d_k query/key/value size,
L layers.
"""

from __future__ import annotations

import re

import numpy as np

from core.attention import causal_mask, scaled_dot_product_attention
from core.demos.heads import projections, single_head
from core.demos.measures import check_tokens, check_whole
from core.demos.word_heads import WordModel, read_words, word_model
from core.layers import sinusoidal_encoding
from core.model import forward
from core.tokenize import word_embeddings

_ORDER_SEPARATORS = re.compile(r"[\s,;]+")


def _head_on(X_q: np.ndarray, X_kv: np.ndarray, d_k: int, seed: int) -> dict:
    """single_head's projections applied to given embeddings: X_q (Tq, D), X_kv (Tkv, D) ->
    Q (Tq, d_k), K and V (Tkv, d_k), scores = Q Kᵀ (Tq, Tkv) unscaled, weights (Tq, Tkv), out (Tq, d_k).
    """
    D = X_q.shape[1]
    W = projections(D, d_k, np.random.default_rng([seed, D, d_k]))  # the seed single_head uses
    Q, K, V = X_q @ W["W_Q"], X_kv @ W["W_K"], X_kv @ W["W_V"]
    out, weights = scaled_dot_product_attention(Q, K, V)
    return {**W, "Q": Q, "K": K, "V": V, "scores": Q @ K.T, "weights": weights, "out": out}


def _first_index(tokens: list[str], word: str, name: str) -> int:
    """Position of the first occurrence of word, case-insensitive (as the embeddings are)."""
    lowered = [t.lower() for t in tokens]
    if word.lower() not in lowered:
        raise ValueError(f"The word {word!r} does not appear in {name}: pick a word both sentences share.")
    return lowered.index(word.lower())


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors (n,), (n,) -> float in [-1, 1]; 0 if either is the zero vector."""
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 0.0 if norms == 0 else float(np.clip(a @ b / norms, -1.0, 1.0))


def same_word_two_contexts(tokens_a, tokens_b, word: str, D: int, d_k: int, seed: int) -> dict:
    """The attention output of one word in two sentences (its first occurrence in each).

    tokens_a (Ta,), tokens_b (Tb,). The word's embedding, query, key and value are the same in both;
    only what it attends to differs. Returns index_a, index_b; out_a, out_b (d_k,); cosine of the two
    (1 for identical sentences, < 1 when the contexts differ); weights_a (Ta,) and weights_b (Tb,), the
    attention rows that made the difference; same_words: True when the two sentences hold the same words, in any
    order and case (without positions or a mask the word then reads the same company: the same output).
    """
    tokens_a, tokens_b = check_tokens(tokens_a, "first sentence"), check_tokens(tokens_b, "second sentence")
    i_a, i_b = _first_index(tokens_a, word, "the first sentence"), _first_index(tokens_b, word, "the second sentence")
    a, b = single_head(tokens_a, D, d_k, seed), single_head(tokens_b, D, d_k, seed)
    return {"tokens_a": tokens_a, "tokens_b": tokens_b, "index_a": i_a, "index_b": i_b,
            "out_a": a["out"][i_a], "out_b": b["out"][i_b], "cosine": cosine(a["out"][i_a], b["out"][i_b]),
            "weights_a": a["weights"][i_a], "weights_b": b["weights"][i_b],
            "same_words": sorted(t.lower() for t in tokens_a) == sorted(t.lower() for t in tokens_b)}


def cross_attention(tokens_q, tokens_kv, D: int, d_k: int, seed: int) -> dict:
    """Queries from one sentence, keys and values from another (as a decoder reads an encoder).

    tokens_q (Tq,), tokens_kv (Tkv,) -> X_q (Tq, D), X_kv (Tkv, D), Q (Tq, d_k), K and V (Tkv, d_k),
    scores (Tq, Tkv) unscaled, weights (Tq, Tkv) with rows summing to 1, out (Tq, d_k).
    Self-attention is the case tokens_q == tokens_kv.
    """
    tokens_q = check_tokens(tokens_q, "query sentence")
    tokens_kv = check_tokens(tokens_kv, "key/value sentence")
    X_q, X_kv = word_embeddings(tokens_q, D, seed), word_embeddings(tokens_kv, D, seed)
    return {"tokens_q": tokens_q, "tokens_kv": tokens_kv, "X_q": X_q, "X_kv": X_kv, **_head_on(X_q, X_kv, d_k, seed)}


def _check_permutation(permutation, T: int) -> np.ndarray:
    perm = np.asarray(permutation)
    if perm.shape != (T,) or sorted(perm.tolist()) != list(range(T)):
        raise ValueError(f"The new order must list each position 0..{T - 1} exactly once, got {list(perm)}.")
    return perm.astype(np.int64)


def word_order(tokens, D: int, d_k: int, seed: int, permutation, positions: bool = True) -> dict:
    """One head on a sentence and on its words shuffled, without and with sinusoidal positions.

    tokens (T,), permutation (T,): the shuffled sentence is tokens[permutation]. Without positions
    attention is permutation-equivariant: out(shuffled) = out[permutation], so max_diff_without is
    rounding. Adding PE (T, D) to the embeddings breaks that: max_diff_with > 0. For drawing, the setting
    `positions` picks X (T, D), weights / weights_permuted (T, T), out / out_permuted (T, d_k), max_diff.
    """
    tokens = check_tokens(tokens)
    perm = _check_permutation(permutation, len(tokens))
    shuffled = [tokens[p] for p in perm]
    E, E_perm = word_embeddings(tokens, D, seed), word_embeddings(shuffled, D, seed)  # (T, D) each
    pe = sinusoidal_encoding(len(tokens), D)  # (T, D): position p gets PE[p] whichever word sits there
    runs = {}
    for with_pe in (False, True):
        X, X_perm = (E + pe, E_perm + pe) if with_pe else (E, E_perm)
        a, b = _head_on(X, X, d_k, seed), _head_on(X_perm, X_perm, d_k, seed)
        runs[with_pe] = {"X": X, "weights": a["weights"], "weights_permuted": b["weights"], "out": a["out"],
                         "out_permuted": b["out"], "max_diff": float(np.max(np.abs(b["out"] - a["out"][perm])))}
    return {"tokens": tokens, "tokens_permuted": shuffled, "permutation": perm, **runs[bool(positions)],
            "max_diff_without": runs[False]["max_diff"], "max_diff_with": runs[True]["max_diff"]}


def shuffled_order(T: int, seed: int) -> np.ndarray:
    """A seeded permutation of 0..T-1 (T,) that moves at least one word when T > 1.

    A random shuffle can come out as the original order (one time in T!); then it is reversed, so a
    student always sees words move.
    """
    T = check_whole("The sequence length", T)
    perm = np.random.default_rng([seed, T]).permutation(T)
    return perm[::-1].copy() if T > 1 and np.array_equal(perm, np.arange(T)) else perm


def parse_order(text: str, T: int) -> np.ndarray:
    """A typed order such as '2 0 1' or '2, 0, 1' -> permutation (T,): position k of the new sentence holds
    the word that was at position perm[k]. ValueError, with what to type, for anything else."""
    T = check_whole("The sequence length", T)
    parts = [p for p in _ORDER_SEPARATORS.split(str(text).strip()) if p]
    if not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(f"Type the positions 0 to {T - 1} as whole numbers separated by spaces, e.g. "
                         f"“{' '.join(map(str, range(T - 1, -1, -1)))}”.")
    perm = [int(p) for p in parts]
    if sorted(perm) != list(range(T)):
        raise ValueError(f"The order must name each of the positions 0 to {T - 1} exactly once ({T} numbers); "
                         f"got {len(perm)} number{'s' if len(perm) != 1 else ''}.")
    return np.array(perm, dtype=np.int64)


def order_view(tokens, D: int, d_k: int, seed: int, permutation, positions: bool) -> dict:
    """word_order's result, plus what the page draws to compare the two outputs row by row:
    out_moved = out[permutation] (T, d_k), the original outputs put in the new order, and
    difference = out_permuted - out_moved (T, d_k): rounding without positions, not with them.

    max_diff_causal: the same comparison without positions but under the causal mask. Each token then
    sees only the words before it, and the shuffle changes those, so the outputs change too: order-blindness
    holds for attention without a mask only."""
    res = word_order(tokens, D, d_k, seed, permutation, positions)
    moved = res["out"][res["permutation"]]
    mask = causal_mask(len(res["tokens"]))
    before = single_head(res["tokens"], D, d_k, seed, mask=mask)["out"]  # (T, d_k), no positions
    after = single_head(res["tokens_permuted"], D, d_k, seed, mask=mask)["out"]
    return {**res, "out_moved": moved, "difference": res["out_permuted"] - moved,
            "max_diff_causal": float(np.max(np.abs(after - before[res["permutation"]])))}


def encoder_decoder(tokens, D: int, d_k: int, seed: int) -> dict:
    """The same head on one sentence as an encoder (every token talks to every other) and as a decoder
    (causal mask: token i hears tokens 0..i only).

    tokens (T,) -> weights_encoder, weights_decoder (T, T); out_encoder, out_decoder (T, d_k);
    V (T, d_k); mask (T, T) bool; listens_encoder, listens_decoder (T,), how many tokens each query
    reads; messages_encoder = T², messages_decoder = T(T+1)/2, the (query, key) pairs that exchange
    information.
    """
    enc = single_head(list(tokens), D, d_k, seed)
    mask = causal_mask(len(tokens))
    dec = single_head(list(tokens), D, d_k, seed, mask=mask)
    listens_dec = mask.sum(axis=1)  # (T,): i + 1
    listens_enc = np.full(len(tokens), len(tokens))
    return {"weights_encoder": enc["weights"], "weights_decoder": dec["weights"], "out_encoder": enc["out"],
            "out_decoder": dec["out"], "V": enc["V"], "mask": mask, "listens_encoder": listens_enc,
            "listens_decoder": listens_dec, "messages_encoder": int(listens_enc.sum()),
            "messages_decoder": int(listens_dec.sum())}


def recurrence(X: np.ndarray, keep: float) -> np.ndarray:
    """A recurrence cut to its bare bones, one step per token: h_0 = x_0, h_t = keep·h_{t-1} + (1 - keep)·x_t.

    A running average that forgets at a fixed rate: no weights, no nonlinearity, no gate (a real recurrent
    network multiplies by learned matrices and squashes; an LSTM or GRU also lets the input set how much to
    keep). X (T, d) -> H (T, d). Position t can only hear token 0 through the t steps in between, each of
    which keeps a fraction `keep` of what it was handed: a plain loop, because step t needs step t - 1.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(f"The recurrence needs a (T, d) matrix with T >= 1, got shape {X.shape}.")
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"The fraction kept each step must be between 0 and 1, got {keep}.")
    H = np.empty_like(X)
    H[0] = X[0]
    for t in range(1, len(X)):
        H[t] = keep * H[t - 1] + (1.0 - keep) * X[t]
    return H


def reach_of_first_token(V: np.ndarray, weights: np.ndarray, keep: float) -> dict:
    """How much of token 0 reaches each position, measured by nudging token 0's value vector and seeing
    how far each output moves, through the recurrence and through one attention step.

    V (T, d), weights (T, T) (a decoder's, so that both are causal) -> recurrence, attention (T,):
    |change of output t| / |change of v_0|; steps_recurrence (T,), the sequential steps from token 0 to
    position t (t of them); steps_attention (T,), 1 for every position (one matrix product); H (T, d);
    newest, how much of the last token reaches its own state h_(T-1) (1 - keep for T > 1): the price of a
    keep large enough to hold token 0. Through the recurrence the reach is keep^t, fading with distance;
    through attention it is the weight a_t0, whatever the distance.
    """
    V = np.asarray(V, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    T = len(V)
    if weights.shape != (T, T):
        raise ValueError(f"The weights must be ({T}, {T}) for {T} value rows, got {weights.shape}.")
    nudge = np.zeros_like(V)
    nudge[0] = 1.0 / np.sqrt(V.shape[1])  # a unit-length change of v_0
    H = recurrence(V, keep)
    moved_rnn = np.linalg.norm(recurrence(V + nudge, keep) - H, axis=1)  # (T,)
    moved_attn = np.linalg.norm(weights @ (V + nudge) - weights @ V, axis=1)  # (T,)
    last = np.roll(nudge, T - 1, axis=0)  # the same unit change, of the last token's value instead
    newest = float(np.linalg.norm(recurrence(V + last, keep)[-1] - H[-1]))
    return {"recurrence": moved_rnn, "attention": moved_attn, "steps_recurrence": np.arange(T),
            "steps_attention": np.ones(T, dtype=np.int64), "H": H, "newest": newest}


# ---- the trained word model: "bank" in two sentences ---------------------------------------------


def _cosine_float64(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine of the angle between two of the model's vectors (D,), worked in float64 (the model's are float32):
    1 same direction, 0 unrelated."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def bank_similarity(first: str = "she saw the river by the bank", second: str = "she saw the money by the bank",
                    word: str = "bank", model: WordModel | None = None) -> dict:
    """How alike the model's vectors for `word` are in two sentences, stage by stage: stages ("input",
    "layer 1", ...), cosine (L + 1,) of the residual stream at word's last occurrence in each (input:
    wte + position; layer n: after block n). Equal at the input when the word sits at the same position;
    the layers mix in the words before it, so the two senses drift apart."""
    model = model or word_model()
    streams = []
    for sentence in (first, second):
        seen = read_words(sentence, model)
        if word not in seen["tokens"]:
            raise ValueError(f"The word {word!r} is not among the words read from {sentence!r}.")
        at = len(seen["tokens"]) - 1 - seen["tokens"][::-1].index(word)
        _, trace = forward(model.params, model.cfg, seen["ids"])
        streams.append([trace.x[at], *(layer.out[at] for layer in trace.layers)])  # (L + 1) x (D,)
    stages = ["input", *(f"layer {n + 1}" for n in range(model.cfg.n_layers))]
    return {"stages": stages, "cosine": np.array([_cosine_float64(a, b) for a, b in zip(*streams)])}

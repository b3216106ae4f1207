"""Set-ups for what context does to a word: word order, one word in two sentences, cross-attention,
the two boolean mask conventions, and one query row worked through by hand.

Every set-up uses the same seeded head as core.demos.heads.single_head (same embeddings, same W_Q, W_K,
W_V for a given seed, d_model and d_k), so its numbers agree with the other lessons'.

Shapes: T sequence length (Tq queries, Tk / Tkv keys and values), D d_model, d_k query/key/value size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.attention import causal_mask, scaled_dot_product_attention, softmax
from core.demos.heads import projections, single_head
from core.demos.measures import check_matrix, check_whole
from core.layers import sinusoidal_encoding
from core.tokenize import word_embeddings


def _head_on(X_q: np.ndarray, X_kv: np.ndarray, d_k: int, seed: int) -> dict:
    """single_head's projections applied to given embeddings: X_q (Tq, D), X_kv (Tkv, D) ->
    Q (Tq, d_k), K and V (Tkv, d_k), scores = Q Kᵀ (Tq, Tkv) unscaled, weights (Tq, Tkv), out (Tq, d_k).
    """
    D = X_q.shape[1]
    W = projections(D, d_k, np.random.default_rng([seed, D, d_k]))  # the seed single_head uses
    Q, K, V = X_q @ W["W_Q"], X_kv @ W["W_K"], X_kv @ W["W_V"]
    out, weights = scaled_dot_product_attention(Q, K, V)
    return {**W, "Q": Q, "K": K, "V": V, "scores": Q @ K.T, "weights": weights, "out": out}


def _check_tokens(tokens: Sequence[str], what: str = "sentence") -> list[str]:
    if not tokens:
        raise ValueError(f"The {what} has no tokens: type some text first.")
    return list(tokens)


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
    tokens = _check_tokens(tokens)
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
    attention rows that made the difference.
    """
    tokens_a, tokens_b = _check_tokens(tokens_a, "first sentence"), _check_tokens(tokens_b, "second sentence")
    i_a, i_b = _first_index(tokens_a, word, "the first sentence"), _first_index(tokens_b, word, "the second sentence")
    a, b = single_head(tokens_a, D, d_k, seed), single_head(tokens_b, D, d_k, seed)
    return {"tokens_a": tokens_a, "tokens_b": tokens_b, "index_a": i_a, "index_b": i_b,
            "out_a": a["out"][i_a], "out_b": b["out"][i_b], "cosine": cosine(a["out"][i_a], b["out"][i_b]),
            "weights_a": a["weights"][i_a], "weights_b": b["weights"][i_b]}


def cross_attention(tokens_q, tokens_kv, D: int, d_k: int, seed: int) -> dict:
    """Queries from one sentence, keys and values from another (as a decoder reads an encoder).

    tokens_q (Tq,), tokens_kv (Tkv,) -> X_q (Tq, D), X_kv (Tkv, D), Q (Tq, d_k), K and V (Tkv, d_k),
    scores (Tq, Tkv) unscaled, weights (Tq, Tkv) with rows summing to 1, out (Tq, d_k).
    Self-attention is the case tokens_q == tokens_kv.
    """
    tokens_q = _check_tokens(tokens_q, "query sentence")
    tokens_kv = _check_tokens(tokens_kv, "key/value sentence")
    X_q, X_kv = word_embeddings(tokens_q, D, seed), word_embeddings(tokens_kv, D, seed)
    return {"tokens_q": tokens_q, "tokens_kv": tokens_kv, "X_q": X_q, "X_kv": X_kv, **_head_on(X_q, X_kv, d_k, seed)}


def boolean_masks(T: int) -> dict:
    """The three ways people write the causal mask, each (T, T).

    allowed: this project's convention (and PyTorch's boolean attn_mask), True where query i may look at
    key j. blocked: the opposite convention some tutorials use, np.triu(ones, k=1), True where the key is
    hidden; blocked == ~allowed. additive: 0 where allowed and -inf where blocked, added to the scores.
    """
    T = check_whole("The sequence length", T)
    allowed = causal_mask(T)
    return {"allowed": allowed, "blocked": np.triu(np.ones((T, T), dtype=bool), k=1),
            "additive": np.where(allowed, 0.0, -np.inf)}


def mask_conventions(scores) -> dict:
    """The same scaled scores (T, T) masked in each of boolean_masks' three conventions, then softmaxed.

    Returns the masks (allowed, blocked, additive) and weights: {convention: (T, T)} for
    np.where(allowed, s, -inf), np.where(~blocked, s, -inf) (a blocked mask must be flipped first) and
    s + additive; diff: {convention: float}, each one's largest difference from the first, and max_diff,
    the largest of those (exactly 0: the three are one mask written three ways).
    """
    scores = check_matrix(scores)
    if scores.shape[0] != scores.shape[1]:
        raise ValueError(f"A causal mask needs square scores (T, T), got shape {scores.shape}.")
    m = boolean_masks(scores.shape[0])
    weights = {"allowed": softmax(np.where(m["allowed"], scores, -np.inf)),
               "blocked": softmax(np.where(~m["blocked"], scores, -np.inf)),
               "additive": softmax(scores + m["additive"])}
    diff = {name: float(np.max(np.abs(w - weights["allowed"]))) for name, w in weights.items()}
    return {**m, "weights": weights, "diff": diff, "max_diff": max(diff.values())}


def walk_through(tokens, D: int, d_k: int, seed: int, query: int) -> dict:
    """Query row i of single_head worked through one key at a time.

    tokens (T,), query i -> q (d_k,), K (T, d_k), products q * k_j (T, d_k), dots (T,) their row sums
    = (Q Kᵀ)[i], scale 1/√d_k, scaled (T,), row_max, exps = exp(scaled - row_max) (T,), exp_sum, and
    weights = exps / exp_sum (T,), single_head's weights[i].
    """
    head = single_head(_check_tokens(tokens), D, d_k, seed)
    i = check_whole("The query position", query, lo=0)
    if i >= len(tokens):
        raise ValueError(f"The query position must be below the number of tokens ({len(tokens)}), got {i}.")
    q, K = head["Q"][i], head["K"]
    products = q[None, :] * K  # (T, d_k): term by term, before summing into a dot product
    scale = 1.0 / np.sqrt(d_k)
    scaled = products.sum(axis=1) * scale  # (T,)
    exps = np.exp(scaled - scaled.max())  # subtract the max: exp overflows above ~709
    return {"token": tokens[i], "q": q, "K": K, "products": products, "dots": products.sum(axis=1),
            "scale": scale, "scaled": scaled, "row_max": float(scaled.max()), "exps": exps,
            "exp_sum": float(exps.sum()), "weights": exps / exps.sum()}

"""The communication lesson's set-ups beyond core.demos.context: a shuffled word order (seeded or typed),
an encoder (no mask) against a decoder (causal mask) on one sentence, and how far token 0 reaches
through a recurrence against one attention step.

Shapes: T sequence length, D d_model, d_k query/key/value size.
"""

from __future__ import annotations

import re

import numpy as np

from core.attention import causal_mask
from core.demos.context import word_order
from core.demos.heads import single_head
from core.demos.measures import check_whole

_ORDER_SEPARATORS = re.compile(r"[\s,;]+")


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

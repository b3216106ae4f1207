"""The QKV lesson's set-ups. The geometry of a score: the dot product of two vectors is their lengths times the
cosine of the angle between them, a · b = |a| |b| cos θ. Two arrows in the plane that a student turns, and the
same three numbers (lengths, cosine, dot product) for every query and key of a sentence. And the trained word
model (core.demos.word_heads) on a sentence: the words it expects next, the running average against a trained
head (the lesson's opening: why attention), and what one layer's heads compute.

Shapes: T sequence length (Tq queries, Tk keys), D d_model, H heads per layer, d_k query/key size, V vocabulary.
"""

from __future__ import annotations

import numpy as np

from core.demos.measures import check_matrix
from core.demos.word_heads import WordModel, read_words, rule_positions, trained_attention, word_model
from core.model import forward

TINY = 1e-12  # cos 90° is 6e-17 in floating point: below this (relative) a number is taken as exactly 0


def _snap(x, scale: float = 1.0):
    """x with the values within rounding of 0 set to 0 (and -0.0 made 0.0), so a right angle prints as 0."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(np.abs(x) <= TINY * max(scale, 1.0), 0.0, x) + 0.0


def arrow(angle_deg: float, length: float = 1.0) -> np.ndarray:
    """The 2-D vector of this length pointing angle_deg degrees anticlockwise from the x axis: (2,)."""
    if not np.isfinite(angle_deg) or not np.isfinite(length) or length < 0:
        raise ValueError(f"An arrow needs a finite angle and a length of 0 or more, got {angle_deg!r} and {length!r}.")
    turn = np.radians(angle_deg)
    return _snap(length * np.array([np.cos(turn), np.sin(turn)]), length)


def angle_between(angle_a: float, angle_b: float) -> float:
    """The angle θ between two directions given in degrees, folded into 0..180 (the one cos θ reads)."""
    turn = abs(float(angle_a) - float(angle_b)) % 360.0
    return min(turn, 360.0 - turn)


def sign_word(dot: float) -> str:
    """'positive', 'zero' or 'negative': the sign of a dot product."""
    return "zero" if dot == 0 else "positive" if dot > 0 else "negative"


def two_arrows(angle_a: float, angle_b: float, length_a: float = 1.0, length_b: float = 1.0) -> dict:
    """Two arrows a and b (2,) and their dot product worked out both ways.

    dot: a · b = a[0] b[0] + a[1] b[1], component by component; polar: |a| |b| cos θ with θ the angle between
    them (degrees, 0..180). The two agree to rounding. sign: 'positive' below 90° (the arrows lean the same
    way), 'zero' at exactly 90° (perpendicular), 'negative' beyond (they lean apart); at 0° the dot product is
    as large as these lengths allow, |a| |b|, and at 180° as negative.
    """
    a, b = arrow(angle_a, length_a), arrow(angle_b, length_b)
    theta = angle_between(angle_a, angle_b)
    cos = float(_snap(np.cos(np.radians(theta))))
    scale = float(length_a * length_b)
    dot = float(_snap(a @ b, scale))  # 30° against 120° leaves 1e-17 of rounding: a right angle is 0
    return {"a": a, "b": b, "theta": theta, "cos": cos, "length_a": float(length_a), "length_b": float(length_b),
            "dot": dot, "polar": scale * cos, "largest": scale, "sign": sign_word(dot)}


def score_geometry(Q, K) -> dict:
    """Every score of a sentence taken apart: Q (Tq, d_k), K (Tk, d_k) ->

    scores (Tq, Tk) = Q Kᵀ; q_len (Tq,) and k_len (Tk,) the vectors' lengths; cos (Tq, Tk) the cosine of the
    angle between query i and key j (0 where either vector is all zeros); theta (Tq, Tk) that angle in degrees.
    scores == q_len[:, None] * k_len[None, :] * cos, to rounding: a score is large when the query and the key
    point the same way and are long.
    """
    Q, K = check_matrix(Q, "The queries"), check_matrix(K, "The keys")
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Queries and keys must have the same width d_k, got {Q.shape[1]} and {K.shape[1]}.")
    scores = Q @ K.T  # (Tq, d_k) @ (d_k, Tk) -> (Tq, Tk)
    q_len, k_len = np.linalg.norm(Q, axis=1), np.linalg.norm(K, axis=1)  # (Tq,), (Tk,)
    both = np.outer(q_len, k_len)  # (Tq, Tk)
    cos = np.clip(np.divide(scores, both, out=np.zeros_like(scores), where=both > 0), -1.0, 1.0)
    return {"scores": scores, "q_len": q_len, "k_len": k_len, "cos": cos, "theta": np.degrees(np.arccos(cos))}


def extreme_pair(Q, K, highest: bool = True) -> dict:
    """The (query, key) pair with the highest score (or the lowest), and its parts: query i, key j, score, the
    two lengths, cos and the angle in degrees (ties: the first in reading order)."""
    g = score_geometry(Q, K)
    pick = np.argmax if highest else np.argmin
    i, j = np.unravel_index(int(pick(g["scores"])), g["scores"].shape)
    return {"query": int(i), "key": int(j), "score": float(g["scores"][i, j]), "q_len": float(g["q_len"][i]),
            "k_len": float(g["k_len"][j]), "cos": float(g["cos"][i, j]), "theta": float(g["theta"][i, j])}


# ---- the trained word model on a sentence ----------------------------------------------------------


def next_words(sentence: str | list[str], k: int = 5, model: WordModel | None = None) -> list[tuple[str, float]]:
    """The k most likely words after the sentence, with their probabilities, most likely first."""
    model = model or word_model()
    probs = trained_attention(sentence, model)["next"][-1]  # (V,)
    top = np.argsort(-probs)[:k]
    return [(model.tokenizer.itos[i], float(probs[i])) for i in top]


def average_or_attend(first: str = "she saw the river by the bank", second: str = "she saw the money by the bank",
                      word: str = "bank", model: WordModel | None = None) -> dict:
    """Why attention, on two sentences that differ in one earlier word (the cue, river or money): the row of
    `word` under the plainest use of the past, the running average (1/(i + 1) on each of tokens 0..i, the
    same in any sentence), and under the head the measurements single out for the rule (its learned
    weights). Per sentence: tokens (T,), at (word's last position), average (T,), attended (T,), cue (its
    position) and cue_average, cue_attended (the weight each row puts on it). Also head (layer, head) and
    that head's measured figures (meta["phenomena"]["bank"]: share, off_accuracy)."""
    model = model or word_model()
    figures = model.meta["phenomena"]["bank"]
    layer, head = figures["head"]
    rows = []
    for sentence in (first, second):
        seen = trained_attention(sentence, model)
        tokens = seen["tokens"]
        rule = rule_positions(tokens)
        if word not in tokens or rule is None or rule["kind"] != "bank":
            raise ValueError(f"{sentence!r} is not a bank sentence with a cue before {word!r}.")
        at = len(tokens) - 1 - tokens[::-1].index(word)
        average = np.where(np.arange(len(tokens)) <= at, 1.0 / (at + 1), 0.0)  # row `at` of the running mean
        attended = np.asarray(seen["weights"][layer, head, at], dtype=np.float64)
        rows.append({"tokens": tokens, "at": at, "average": average, "attended": attended, "cue": rule["cue"],
                     "cue_average": float(average[rule["cue"]]), "cue_attended": float(attended[rule["cue"]])})
    return {"sentences": rows, "head": (int(layer), int(head)), "share": float(figures["share"]),
            "off_accuracy": float(figures["off_accuracy"])}


def layer_heads(sentence: str | list[str], layer: int, model: WordModel | None = None) -> dict:
    """What one layer's heads compute on the sentence: read_words' fields, block_in (T, D) the layer's input
    (wte + position for the first layer, the previous block's output after), attn_in (T, D) its layer norm
    (what the projections read), q, k, v (H, T, d_k), scores (H, T, T) q kᵀ / √d_k before the causal mask,
    and weights (H, T, T) after it and the softmax."""
    model = model or word_model()
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(f"The model has layers 0 to {model.cfg.n_layers - 1}; got layer {layer}.")
    seen = read_words(sentence, model)
    _, trace = forward(model.params, model.cfg, seen["ids"])
    block = trace.layers[layer]
    scores = block.q @ np.swapaxes(block.k, -1, -2) / np.sqrt(model.cfg.d_k)  # (H, T, d_k) @ (H, d_k, T)
    return {**seen, "block_in": block.x, "attn_in": block.attn_in, "q": block.q, "k": block.k, "v": block.v,
            "scores": scores, "weights": block.weights}

"""The Multi-head lesson's set-ups: one seeded multi-head layer on a sentence (its weights, every array of it,
and the three implementations compared), how spread out each head's attention is, and, on the trained word
model, the heads that look at a rule's cue beside the ones the model needs (attention is not explanation).

Shapes: T sequence length (Tq queries, Tk keys), D d_model, H heads, d_k = D / H per head, L layers.
"""

from __future__ import annotations

import numpy as np

from core.attention import (
    causal_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_einsum,
    multi_head_attention_loop,
    qkv_heads,
    scaled_dot_product_attention,
)
from core.demos.measures import entropy
from core.demos.word_heads import (
    RULE_SENTENCES,
    TEST_SEED,
    WordModel,
    read_rule,
    rule_figures,
    rule_sentences,
    word_model,
)
from core.model import Knockout
from core.tokenize import word_embeddings


def mha_weights(D: int, seed: int) -> dict:
    """Seeded W_qkv (D, 3D) laid out [Q | K | V], W_O (D, D), entries ~ N(0, 1/D), and zero biases.

    They depend on d_model and the seed only, not on the number of heads: splitting into heads is a
    reshape of the same matrices, so 1 head and H heads can be compared on identical weights.
    """
    if D < 1:
        raise ValueError(f"Need d_model >= 1, got {D}.")
    rng = np.random.default_rng([seed, D, 4])
    std = 1.0 / np.sqrt(D)
    return {"w_qkv": rng.standard_normal((D, 3 * D)) * std, "b_qkv": np.zeros(3 * D),
            "w_o": rng.standard_normal((D, D)) * std, "b_o": np.zeros(D)}


def multi_head(tokens: list[str], D: int, n_heads: int, seed: int, causal: bool = False) -> dict:
    """Every array of one multi-head attention layer on a sentence, and the three forms compared.

    tokens (T,) -> X (T, D); Q, K, V per head (H, T, d_k); weights (H, T, T); heads (H, T, d_k);
    concat (T, D); w_o (D, D); out = concat W_O + b_O (T, D). "forms" maps each implementation's name
    to (out, weights); "max_diff" to max |difference| from the vectorised form (outputs and weights).
    """
    if not tokens:
        raise ValueError("There are no tokens: type some text first.")
    if n_heads < 1 or D % n_heads:
        raise ValueError(f"d_model = {D} cannot be split into {n_heads} equal heads; choose a divisor of {D}.")
    X = word_embeddings(tokens, D, seed)  # (T, D)
    W = mha_weights(D, seed)
    mask = causal_mask(len(tokens)) if causal else None
    Q, K, V = qkv_heads(X, W["w_qkv"], W["b_qkv"], n_heads)  # each (H, T, d_k)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask)  # (H, T, d_k), (H, T, T)
    concat = merge_heads(heads)  # (H, T, d_k) -> (T, D)
    args = (X, W["w_qkv"], W["b_qkv"], W["w_o"], W["b_o"], n_heads, mask)
    forms = {"vectorised (reshape)": multi_head_attention(*args),
             "per-head loop": multi_head_attention_loop(*args),
             "einsum": multi_head_attention_einsum(*args)}
    ref_out, ref_w = forms["vectorised (reshape)"]
    max_diff = {name: (float(np.max(np.abs(o - ref_out))), float(np.max(np.abs(w - ref_w))))
                for name, (o, w) in forms.items()}
    return {"X": X, **W, "Q": Q, "K": K, "V": V, "weights": weights, "heads": heads, "concat": concat,
            "out": concat @ W["w_o"] + W["b_o"], "forms": forms, "max_diff": max_diff}


def head_entropies(weights: np.ndarray) -> dict:
    """How spread out each head's attention is: (H, Tq, Tk) weights -> "per_head" (H,), the mean row
    entropy of each head in bits; "mean", their mean; "uniform", log2(Tk), the entropy of an even row."""
    per_head = entropy(weights).mean(axis=-1)  # (H, Tq) -> (H,)
    return {"per_head": per_head, "mean": float(per_head.mean()), "uniform": float(np.log2(weights.shape[-1]))}


def looked_at_or_used(kind: str = "bank", model: WordModel | None = None, n: int = RULE_SENTENCES,
                      seed: int = TEST_SEED, looking: float = 0.3) -> dict:
    """Attention is not explanation, measured: for one rule, every head's share on the cue (L, H) beside what
    switching that head off alone does to the rule (accuracy and mean log-odds, (L, H) each), with every head
    on (accuracy, log_odds). needed: the head whose knockout costs the most log-odds; also_looking: the other
    heads whose share reaches `looking`, in order of share (they look at the cue; whether the model needs
    them is what their knockouts say); also_off_accuracy, also_off_log_odds: with all of those heads off at
    once (one head alone can stand in for another that looks at the same word), or None when there are none."""
    model = model or word_model()
    f = rule_figures(model, kind, n, seed)
    shares = f["shares"]
    needed = tuple(int(i) for i in np.unravel_index(f["off_log_odds"].argmin(), shares.shape))
    order = [tuple(int(i) for i in np.unravel_index(flat, shares.shape)) for flat in np.argsort(-shares, None)]
    also = [h for h in order if h != needed and shares[h] >= looking]
    together = read_rule(model, rule_sentences(kind, n, seed), Knockout(tuple(also))) if also else None
    return {"shares": shares, "off_accuracy": f["off_accuracy"], "off_log_odds": f["off_log_odds"],
            "accuracy": f["accuracy"], "log_odds": f["log_odds"], "needed": needed, "also_looking": also, "n": n,
            "also_off_accuracy": together["accuracy"] if together else None,
            "also_off_log_odds": together["log_odds"] if together else None}

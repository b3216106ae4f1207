"""The scaling lesson's set-ups: how peaked the softmax gets as d_k grows (with and without 1/√d_k),
why √d_k (a dot product of d_k unit-variance terms has variance d_k), and the mistake of dividing by √d_v.

Shapes: N trials, T sequence length (Tq queries, Tk keys), D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.attention import softmax
from core.demos.heads import single_head
from core.demos.measures import check_matrix, check_whole, entropy, spread, weight_summary
from core.sampling import probs_from_logits

D_K_SWEEP = tuple(2**i for i in range(10))  # 1, 2, 4, ..., 512
VARIANCE_PAIRS = 2000  # random (q, k) pairs per d_k in the variance measurement


def saturation_experiment(d_ks: Sequence[int] = D_K_SWEEP, T: int = 16, trials: int = 100,
                          rng: np.random.Generator | None = None) -> dict:
    """How peaked does softmax(q·k) get as d_k grows, with and without dividing by √d_k?

    For each d_k, `trials` random sets of T queries and T keys with entries ~ N(0, 1) give weights
    (N, T, T). Reported per d_k, each an array (len(d_ks),): the mean over trials and query rows of a
    row's largest weight and of its entropy in bits, unscaled and scaled, and the variance of the raw
    scores. The vectors for a smaller d_k are the first d_k columns of the largest one's: one draw
    serves every d_k, so the curves are smooth and cheap.
    """
    d_ks = [check_whole("Every d_k", d) for d in d_ks]
    T, trials = check_whole("T (tokens)", T), check_whole("The number of trials", trials)
    if not d_ks:
        raise ValueError("Give at least one d_k to try.")
    if rng is None:
        raise ValueError("The experiment needs an np.random.Generator (rng), so its result is reproducible.")
    d_max = max(d_ks)
    q = rng.standard_normal((trials, T, d_max))  # (N, T, d_max)
    k = rng.standard_normal((trials, T, d_max))
    result = {name: np.empty(len(d_ks)) for name in
              ("max_unscaled", "max_scaled", "entropy_unscaled", "entropy_scaled", "score_var")}
    for i, d in enumerate(d_ks):
        scores = q[..., :d] @ np.swapaxes(k[..., :d], -1, -2)  # (N, T, d) @ (N, d, T) -> (N, T, T)
        result["score_var"][i] = scores.var()
        for label, logits in (("unscaled", scores), ("scaled", scores / np.sqrt(d))):
            w = softmax(logits, axis=-1)  # (N, T, T)
            result[f"max_{label}"][i] = w.max(axis=-1).mean()
            result[f"entropy_{label}"][i] = entropy(w).mean()
    return {"d_k": np.array(d_ks), **result, "uniform_entropy": float(np.log2(T)), "uniform_max": 1.0 / T}


def dot_product_variance(d_ks: Sequence[int] = D_K_SWEEP, n: int = 2000,
                         rng: np.random.Generator | None = None) -> dict:
    """Measured variance of q·k and of q·k/√d_k for n random pairs q, k with entries ~ N(0, 1).

    Var(q·k) = Σ_i Var(q_i k_i) = d_k for independent zero-mean unit-variance entries, so dividing by
    √d_k brings it back to 1. One cumulative sum over the products gives the dot product of every
    prefix length d at once: dots[:, d - 1] is the dot product of the first d entries.
    Returns d_k, formula (= d_k), raw and scaled, each (len(d_ks),).
    """
    d_ks = [check_whole("Every d_k", d) for d in d_ks]
    n = check_whole("The number of pairs", n, lo=2)
    if rng is None:
        raise ValueError("The experiment needs an np.random.Generator (rng), so its result is reproducible.")
    d_max = max(d_ks)
    q = rng.standard_normal((n, d_max))  # (n, d_max)
    k = rng.standard_normal((n, d_max))
    dots = np.cumsum(q * k, axis=1)  # (n, d_max): column d-1 = dot product over the first d entries
    raw = np.array([dots[:, d - 1].var() for d in d_ks])
    d = np.array(d_ks, dtype=np.float64)
    return {"d_k": np.array(d_ks), "formula": d, "raw": raw, "scaled": raw / d}


def scaled_weights(scores, d_k: int, scaled: bool = True, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """softmax(scores / (√d_k · temperature)); without the √d_k when `scaled` is False.

    scores (Tq, Tk) raw Q Kᵀ -> (logits, weights), both (Tq, Tk). Temperature 0 puts all the weight on
    each row's largest score (the limit of a very cold softmax), with no division by zero.
    """
    logits = scaled_scores(scores, d_k, scaled)
    return logits, probs_from_logits(logits, temperature)


def scaled_scores(scores, d_k: int, scaled: bool = True) -> np.ndarray:
    """scores / √d_k, or the scores as they are when `scaled` is False: (Tq, Tk) -> (Tq, Tk)."""
    scores = check_matrix(scores)
    d_k = check_whole("d_k", d_k)
    return scores / np.sqrt(d_k) if scaled else scores


def scale_mistake(scores, d_k: int, d_v: int) -> dict:
    """The right divisor √d_k against the mistaken √d_v. scores (Tq, Tk) -> both weight matrices (Tq, Tk).

    The spread of the scores depends on d_k only; d_v is the width of the values, unrelated to it. The
    mistake is invisible exactly when d_v = d_k (as in most models), and shows as soon as they differ.
    Also returns each version's mean row entropy (bits) and mean largest weight.
    """
    scores = check_matrix(scores)
    d_k, d_v = check_whole("d_k", d_k), check_whole("d_v", d_v)
    right = softmax(scores / np.sqrt(d_k))
    wrong = softmax(scores / np.sqrt(d_v))
    return {"right": right, "wrong": wrong, "right_divisor": float(np.sqrt(d_k)), "wrong_divisor": float(np.sqrt(d_v)),
            "right_entropy": float(entropy(right).mean()), "wrong_entropy": float(entropy(wrong).mean()),
            "right_max": float(right.max(axis=-1).mean()), "wrong_max": float(wrong.max(axis=-1).mean()),
            "largest_difference": float(np.abs(wrong - right).max())}


def scaling_view(tokens: Sequence[str], D: int, d_k: int, seed: int, scaled: bool = True,
                 temperature: float = 1.0, d_v: int | None = None) -> dict:
    """Everything the scaling page draws for one sentence. tokens (T,) -> matrices (T, T), V (T, d_k).

    unscaled / scaled: single_head without and with 1/√d_k (temperature 1). logits / weights: what the
    toggle and the temperature select. mistake: dividing by √d_v instead of √d_k (when d_v is given).
    """
    scaled_head = single_head(list(tokens), D, d_k, seed)
    unscaled_head = single_head(list(tokens), D, d_k, seed, scale=1.0)
    scores = scaled_head["scores"]  # (T, T) raw Q Kᵀ
    logits, weights = scaled_weights(scores, d_k, scaled, temperature)
    view = {
        "scores": scores, "scaled_scores": scores / np.sqrt(d_k), "V": scaled_head["V"],
        "weights_scaled": scaled_head["weights"], "weights_unscaled": unscaled_head["weights"],
        "logits": logits, "weights": weights,
        "summary_scaled": weight_summary(scaled_head["weights"]),
        "summary_unscaled": weight_summary(unscaled_head["weights"]),
        "summary": weight_summary(weights),
        "spread_raw": spread(scores), "spread_scaled": spread(scores / np.sqrt(d_k)),
    }
    if d_v is not None:
        view["mistake"] = scale_mistake(scores, d_k, d_v)
    return view


def seeded_saturation(T: int, trials: int, seed: int) -> dict:
    """saturation_experiment over D_K_SWEEP, drawn from a generator seeded by (seed, T, trials).

    The same settings always give the same curves, so a shared link shows the same picture.
    """
    return saturation_experiment(D_K_SWEEP, T, trials, np.random.default_rng([seed, T, trials]))


def seeded_variance(seed: int, n: int = VARIANCE_PAIRS) -> dict:
    """dot_product_variance over D_K_SWEEP with n pairs, drawn from a generator seeded by (seed, n)."""
    return dot_product_variance(D_K_SWEEP, n, np.random.default_rng([seed, n]))


def divisor_error(d_k: int, d_v: int) -> tuple[str, float]:
    """How far the mistaken divisor √d_v is from the right one, √d_k.

    Returns ("too_much", √(d_v / d_k)) when d_v > d_k (it divides too much: flatter weights),
    ("too_little", √(d_k / d_v)) when d_v < d_k (sharper weights), or ("equal", 1.0) when d_v = d_k,
    where the mistake cannot be seen.
    """
    d_k, d_v = check_whole("d_k", d_k), check_whole("d_v", d_v)
    if d_v > d_k:
        return "too_much", float(np.sqrt(d_v / d_k))
    if d_v < d_k:
        return "too_little", float(np.sqrt(d_k / d_v))
    return "equal", 1.0


OVERFLOW_SCORES = (1000.0, 999.0, 998.0)  # a row of large scores: exp of each overflows float64


def overflow(scores: Sequence[float] = OVERFLOW_SCORES) -> dict:
    """The softmax of one row (n,) written naively, exp(s) / sum exp(s), and with the row's max subtracted
    first, as core.attention.softmax does. exp overflows to inf above ln(largest float): 709.78 in float64,
    88.72 in float32, 11.09 in float16 ("limits"); inf / inf is NaN, so the naive weights are NaN. Subtracting
    the max changes no weight (the same factor e^-max cancels above and below the line) and leaves every
    exponent at 0 or below, so no exp can overflow. Returns scores, naive_exp, naive, shifted, shifted_exp,
    weights (n,) each, and limits {dtype name: largest exponent}."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or not len(s) or not np.isfinite(s).all():
        raise ValueError("Give one row of finite scores.")
    with np.errstate(over="ignore", invalid="ignore"):  # the overflow is what this shows
        naive_exp = np.exp(s)
        naive = naive_exp / naive_exp.sum()
    shifted = s - s.max()
    return {"scores": s, "naive_exp": naive_exp, "naive": naive, "shifted": shifted, "shifted_exp": np.exp(shifted),
            "weights": softmax(s), "limits": {t: float(np.log(np.finfo(t).max)) for t in ("float64", "float32",
                                                                                           "float16")}}

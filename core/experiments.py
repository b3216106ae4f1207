"""The experiments behind the scaling and masking lessons, as plain functions of arrays.

Scaling: how peaked the softmax gets as d_k grows (with and without 1/√d_k), the entropy that measures
it, why √d_k (a dot product of d_k unit-variance terms has variance d_k), and the mistake of dividing by d_v.
Masking: the running-mean weights, three masking mistakes, and the no-peeking check.

Shapes: N trials, T sequence length (Tq queries, Tk keys), D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.attention import causal_mask, softmax
from core.lessons import single_head
from core.sampling import probs_from_logits

D_K_SWEEP = tuple(2**i for i in range(10))  # 1, 2, 4, ..., 512
FILL_VALUES = (-1e4, -65504.0, -1e5, -1e9, -1e10)  # "large negative" fills people use instead of -inf


def _check_whole(name: str, value, lo: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < lo:
        raise ValueError(f"{name} must be a whole number of at least {lo}, got {value!r}.")
    return int(value)


def _check_square(matrix: np.ndarray, name: str = "The score matrix") -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"{name} must be 2-D (queries x keys), got shape {m.shape}.")
    return m


# ---- scaling ------------------------------------------------------------------------------------------


def entropy(weights, axis: int = -1) -> np.ndarray:
    """Shannon entropy in bits of each distribution along `axis`: (..., T) -> (...).

    log2(T) when the weight is spread evenly over T keys, 0 when one key takes it all.
    0·log 0 counts as 0, so masked keys (weight exactly 0) add nothing.
    """
    p = np.asarray(weights, dtype=np.float64)
    if np.any(p < 0):
        raise ValueError("Entropy needs weights that are all >= 0 (a probability distribution).")
    log_p = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -np.sum(p * log_p, axis=axis) + 0.0  # + 0.0 turns -0.0 into 0.0


def saturation_experiment(d_ks: Sequence[int] = D_K_SWEEP, T: int = 16, trials: int = 100,
                          rng: np.random.Generator | None = None) -> dict:
    """How peaked does softmax(q·k) get as d_k grows, with and without dividing by √d_k?

    For each d_k, `trials` random sets of T queries and T keys with entries ~ N(0, 1) give weights
    (N, T, T). Reported per d_k, each an array (len(d_ks),): the mean over trials and query rows of a
    row's largest weight and of its entropy in bits, unscaled and scaled, and the variance of the raw
    scores. The vectors for a smaller d_k are the first d_k columns of the largest one's: one draw
    serves every d_k, so the curves are smooth and cheap.
    """
    d_ks = [_check_whole("Every d_k", d) for d in d_ks]
    T, trials = _check_whole("T (tokens)", T), _check_whole("The number of trials", trials)
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
    d_ks = [_check_whole("Every d_k", d) for d in d_ks]
    n = _check_whole("The number of pairs", n, lo=2)
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
    scores = _check_square(scores)
    d_k = _check_whole("d_k", d_k)
    logits = scores / np.sqrt(d_k) if scaled else scores
    return logits, probs_from_logits(logits, temperature)


def scale_mistake(scores, d_k: int, d_v: int) -> dict:
    """The right divisor √d_k against the mistaken d_v. scores (Tq, Tk) -> both weight matrices (Tq, Tk).

    The spread of the scores depends on d_k only; d_v is the width of the values, unrelated to it.
    Also returns each version's mean row entropy (bits) and mean largest weight.
    """
    scores = _check_square(scores)
    d_k, d_v = _check_whole("d_k", d_k), _check_whole("d_v", d_v)
    right = softmax(scores / np.sqrt(d_k))
    wrong = softmax(scores / d_v)
    return {"right": right, "wrong": wrong, "right_divisor": float(np.sqrt(d_k)), "wrong_divisor": float(d_v),
            "right_entropy": float(entropy(right).mean()), "wrong_entropy": float(entropy(wrong).mean()),
            "right_max": float(right.max(axis=-1).mean()), "wrong_max": float(wrong.max(axis=-1).mean())}


def weight_summary(weights) -> dict:
    """Mean row entropy (bits) and mean largest weight of a (Tq, Tk) weight matrix."""
    w = _check_square(weights, "The weight matrix")
    return {"entropy": float(entropy(w).mean()), "max": float(w.max(axis=-1).mean()),
            "uniform_entropy": float(np.log2(w.shape[-1]))}


def spread(matrix) -> float:
    """Standard deviation of a matrix's finite entries: how wide the scores are spread."""
    m = np.asarray(matrix, dtype=np.float64)
    finite = m[np.isfinite(m)]
    return float(finite.std()) if finite.size else 0.0


# ---- masking ------------------------------------------------------------------------------------------


def strict_causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True where j < i: the causal mask with the diagonal masked too.

    A common slip (np.triu(..., k=0) instead of k=1). Row 0 is left with no key at all.
    """
    return causal_mask(T) & ~np.eye(_check_whole("T", T), dtype=bool)


def fill_masked(scores, mask, fill: float = -np.inf) -> np.ndarray:
    """Replace the scores where mask is False by `fill`: (Tq, Tk), bool (Tq, Tk) -> (Tq, Tk)."""
    scores = np.asarray(scores, dtype=np.float64)
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != scores.shape:
        raise ValueError(f"The mask must be boolean with the scores' shape {scores.shape}, got {mask.dtype} "
                         f"{mask.shape}.")
    return np.where(mask, scores, fill)


def naive_softmax(x, axis: int = -1) -> np.ndarray:
    """The textbook formula with no guard for a fully masked row.

    For a row that is all -inf, the max is -inf and x - max = (-inf) - (-inf) = NaN: the whole row
    becomes NaN, and NaN spreads through every later matrix product. NumPy's warning is silenced here
    because the NaN is the point of the demonstration.
    """
    x = np.asarray(x)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)


def mask_after_softmax(scores, mask) -> dict:
    """The wrong order: softmax first, then zero the future. scores (T, T) scaled, mask (T, T) bool.

    The weights a row gave to future keys are thrown away instead of handed to the allowed ones, so the
    rows no longer sum to 1. Returns wrong (T, T), its row sums (T,), and the right weights (T, T).
    """
    scores = _check_square(scores)
    wrong = softmax(scores) * mask
    right = softmax(fill_masked(scores, mask))
    return {"wrong": wrong, "row_sums": wrong.sum(axis=-1), "right": right, "right_row_sums": right.sum(axis=-1)}


def fully_masked_row(scores, mask) -> dict:
    """Four ways to treat a mask that leaves some row with no key at all. scores (T, T), mask (T, T) bool.

    naive: -inf fill + textbook softmax -> that row is NaN.
    ours: -inf fill + the guarded softmax -> that row is exactly 0.
    big_negative: -1e9 fill -> that row is uniform over every key, future ones included (a leak).
    big_negative_f16: the -1e9 fill in float16, where it overflows to -inf -> NaN again.
    """
    scores = _check_square(scores)
    with np.errstate(over="ignore"):  # float16 cannot hold -1e9: the overflow to -inf is what we show
        f16 = fill_masked(scores, mask, -1e9).astype(np.float16)
    return {
        "naive": naive_softmax(fill_masked(scores, mask)),
        "ours": softmax(fill_masked(scores, mask)),
        "big_negative": softmax(fill_masked(scores, mask, -1e9)),
        "big_negative_f16": naive_softmax(f16).astype(np.float64),
        "empty_rows": np.flatnonzero(~np.asarray(mask).any(axis=-1)),
    }


def fill_in_float16(values: Sequence[float] = FILL_VALUES) -> dict:
    """What each fill value becomes in float16 and float32. float16 tops out at 65504: beyond it, -inf."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        return {"value": v, "float16": v.astype(np.float16).astype(np.float64),
                "float32": v.astype(np.float32).astype(np.float64)}


def running_mean_weights(T: int) -> np.ndarray:
    """(T, T): softmax of all-zero scores under the causal mask. Row i is 1/(i+1) on keys 0..i, 0 after.

    Equal scores give equal weights, so out = W @ V makes out[i] the mean of V[0..i]: the running mean.
    """
    return softmax(fill_masked(np.zeros((_check_whole("T", T),) * 2), causal_mask(T)))


def running_mean(V) -> np.ndarray:
    """(T, d_v) -> (T, d_v): row i is the mean of V[0..i], by cumulative sums (no attention involved)."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] == 0:
        raise ValueError(f"V must be a non-empty 2-D matrix (tokens x features), got shape {V.shape}.")
    return np.cumsum(V, axis=0) / np.arange(1, V.shape[0] + 1)[:, None]


def no_peeking(tokens: Sequence[str], position: int, replacement: str, D: int, d_k: int, seed: int) -> dict:
    """Change the token at `position` and compare every output, with and without the causal mask.

    tokens (T,) -> outputs before/after (T, d_k) for both, and per position the largest absolute change
    (T,), also side by side as diffs (T, 2) = [masked, unmasked]. With the mask, positions before
    `position` cannot see the change: their change is exactly 0.
    """
    tokens = list(tokens)
    if not tokens:
        raise ValueError("There are no tokens: type some text first.")
    if isinstance(position, bool) or int(position) != position or not 0 <= position < len(tokens):
        raise ValueError(f"The position to change must be between 0 and {len(tokens) - 1}, got {position!r}.")
    if not replacement:
        raise ValueError("The replacement word is empty: type a word to put in.")
    position = int(position)
    changed = [*tokens[:position], replacement, *tokens[position + 1:]]
    mask = causal_mask(len(tokens))
    result = {"changed_tokens": changed}
    for name, m in (("masked", mask), ("unmasked", None)):
        before = single_head(tokens, D, d_k, seed, mask=m)["out"]  # (T, d_k)
        after = single_head(changed, D, d_k, seed, mask=m)["out"]
        result[f"before_{name}"], result[f"after_{name}"] = before, after
        result[f"diff_{name}"] = np.abs(after - before).max(axis=-1)  # (T, d_k) -> (T,)
    result["diffs"] = np.stack([result["diff_masked"], result["diff_unmasked"]], axis=-1)  # (T, 2)
    return result


# ---- what the pages draw, in one call each ------------------------------------------------------------


def scaling_view(tokens: Sequence[str], D: int, d_k: int, seed: int, scaled: bool = True,
                 temperature: float = 1.0, d_v: int | None = None) -> dict:
    """Everything the scaling page draws for one sentence. tokens (T,) -> matrices (T, T), V (T, d_k).

    unscaled / scaled: single_head without and with 1/√d_k (temperature 1). logits / weights: what the
    toggle and the temperature select. mistake: dividing by d_v instead of √d_k (when d_v is given).
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


def masking_view(tokens: Sequence[str], D: int, d_k: int, seed: int) -> dict:
    """Everything the masking page draws for one sentence, except the no-peeking check.

    tokens (T,) -> mask (T, T) bool, scaled scores before/after masking (T, T), weights and outputs
    without and with the mask ((T, T), (T, d_k)), the running mean, and the masking mistakes.
    """
    tokens = list(tokens)
    T = len(tokens)
    mask = causal_mask(T)
    free = single_head(tokens, D, d_k, seed)
    masked = single_head(tokens, D, d_k, seed, mask=mask)
    scaled_scores = free["scores"] / np.sqrt(d_k)  # (T, T)
    uniform = running_mean_weights(T)
    return {
        "mask": mask, "scaled_scores": scaled_scores, "masked_scores": fill_masked(scaled_scores, mask),
        "V": free["V"], "weights_free": free["weights"], "out_free": free["out"],
        "weights_masked": masked["weights"], "out_masked": masked["out"],
        "uniform": uniform, "uniform_out": uniform @ free["V"], "running_mean": running_mean(free["V"]),
        "running_mean_error": float(np.max(np.abs(uniform @ free["V"] - running_mean(free["V"])))),
        "after_softmax": mask_after_softmax(scaled_scores, mask),
        "strict_mask": strict_causal_mask(T),
        "fully_masked": fully_masked_row(scaled_scores, strict_causal_mask(T)),
        "fills": fill_in_float16(),
    }

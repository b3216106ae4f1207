"""The masking lesson's set-ups: the running-mean weights, masking mistakes and the −1e9-or-−∞ trade-off,
the no-peeking check.

Shapes: T sequence length (Tq queries, Tk keys), D d_model, d_k query/key size, d_v value size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.attention import causal_mask, softmax
from core.demos.heads import single_head
from core.demos.measures import check_matrix, check_whole

FILL_VALUES = (-1e4, -65504.0, -1e5, -1e9, -1e10)  # "large negative" fills people use instead of -inf


def strict_causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True where j < i: the causal mask with the diagonal masked too.

    A common slip (np.triu(..., k=0) instead of k=1). Row 0 is left with no key at all.
    """
    return causal_mask(T) & ~np.eye(check_whole("T", T), dtype=bool)


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
    scores = check_matrix(scores)
    wrong = softmax(scores) * mask
    right = softmax(fill_masked(scores, mask))
    return {"wrong": wrong, "row_sums": wrong.sum(axis=-1), "right": right, "right_row_sums": right.sum(axis=-1)}


def mask_by_multiplying(scores, mask) -> dict:
    """The wrong operation: scores * mask (1 where allowed, 0 for the future) instead of -inf there.
    scores (T, T) scaled, mask (T, T) bool.

    A zero is a score like any other: exp(0) = 1, so each future key still gets weight 1 / sum_j exp(s_j),
    and the future leaks in. Returns the multiplied scores and their weights (T, T), leaked (T,): the
    weight each row puts on keys it must not see, and the right weights (T, T) with their leak (all 0).
    """
    scores = check_matrix(scores)
    mask = np.asarray(mask, dtype=bool)
    multiplied = scores * mask  # (T, T): the future's scores become 0, not -inf
    wrong = softmax(multiplied)
    right = softmax(fill_masked(scores, mask))
    return {"scores": multiplied, "wrong": wrong, "leaked": np.where(mask, 0.0, wrong).sum(axis=-1),
            "right": right, "right_leaked": np.where(mask, 0.0, right).sum(axis=-1)}


def additive_mask_by_triu(T: int) -> dict:
    """An additive mask built as np.triu(np.ones((T, T)), k=1) * -np.inf, and the right way to build it.

    The ones above the diagonal become -inf as meant, but the zeros on and below it become 0 * -inf = NaN
    (IEEE 754 has no answer for it), so the mask is NaN exactly where the keys were allowed. The right
    form puts -inf above the diagonal without multiplying anything: np.triu(np.full((T, T), -np.inf), k=1),
    which is 0 on and below it. Returns broken and right (T, T).
    """
    T = check_whole("T", T)
    with np.errstate(invalid="ignore"):  # the NaN is the mistake being shown, not a surprise
        broken = np.triu(np.ones((T, T)), k=1) * -np.inf
    return {"broken": broken, "right": np.triu(np.full((T, T), -np.inf), k=1)}


def triu_times_inf(scores) -> dict:
    """What the mask of additive_mask_by_triu does to attention: scores (T, T) scaled ->

    broken, right (T, T) the two masks; naive (T, T) the softmax of scores + broken as a textbook (or a
    library) computes it: the row max is NaN, so every weight of every row is NaN; guarded (T, T) this app's
    softmax, which saves a row of -inf but not NaN (NaN + s is NaN): NaN on and below the diagonal;
    right (T, T) the weights with the right mask; nan_rows how many rows of naive are entirely NaN.
    """
    scores = check_matrix(scores)
    masks = additive_mask_by_triu(scores.shape[0])
    with np.errstate(invalid="ignore"):
        naive = naive_softmax(scores + masks["broken"])
        guarded = softmax(scores + masks["broken"])
    return {**masks, "naive": naive, "guarded": guarded, "right_weights": softmax(scores + masks["right"]),
            "nan_rows": int(np.isnan(naive).all(axis=-1).sum()), "guarded_nan": int(np.isnan(guarded).sum())}


def fully_masked_row(scores, mask) -> dict:
    """Four ways to treat a mask that leaves some row with no key at all. scores (T, T), mask (T, T) bool.

    naive: -inf fill + textbook softmax -> that row is NaN.
    ours: -inf fill + the guarded softmax -> that row is exactly 0.
    big_negative: -1e9 fill -> that row is uniform over every key, future ones included (a leak).
    big_negative_f16: the -1e9 fill in float16, where it overflows to -inf -> NaN again.
    """
    scores = check_matrix(scores)
    with np.errstate(over="ignore"):  # float16 cannot hold -1e9: the overflow to -inf is what we show
        f16 = fill_masked(scores, mask, -1e9).astype(np.float16)
    return {
        "naive": naive_softmax(fill_masked(scores, mask)),
        "ours": softmax(fill_masked(scores, mask)),
        "big_negative": softmax(fill_masked(scores, mask, -1e9)),
        "big_negative_f16": naive_softmax(f16).astype(np.float64),
        "empty_rows": np.flatnonzero(~np.asarray(mask).any(axis=-1)),
    }


def causal_fill_difference(scores, fill: float = -1e9) -> float:
    """Largest |difference| between the causal weights with a finite fill and with -inf, in float32 and
    float64: scores (T, T). Every causal row keeps its own key, so exp(fill - max) underflows to exactly 0
    and the two agree bit for bit; they part only on a row with no key left (fully_masked_row)."""
    scores = check_matrix(scores)
    mask = causal_mask(scores.shape[0])
    return max(float(np.max(np.abs(softmax(fill_masked(scores, mask, fill).astype(dtype))
                                   - softmax(fill_masked(scores, mask).astype(dtype)))))
               for dtype in (np.float32, np.float64))


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
    return softmax(fill_masked(np.zeros((check_whole("T", T),) * 2), causal_mask(T)))


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
        "multiplied": mask_by_multiplying(scaled_scores, mask),
        "triu_inf": triu_times_inf(scaled_scores),
        "strict_mask": strict_causal_mask(T),
        "fully_masked": fully_masked_row(scaled_scores, strict_causal_mask(T)),
        "causal_fill_difference": causal_fill_difference(scaled_scores),
        "fills": fill_in_float16(),
    }


def averaging_rows(view: dict, tokens: Sequence[str], i: int) -> tuple[list[str], np.ndarray]:
    """Row i of the averaging trick, from masking_view's result, as named rows (i + 3, d_v), top to bottom:
    out[i] of the uniform causal weights (row i of W V), the mean of V[0..i], then V[0], ..., V[i]."""
    names = [f"out[{i}] of the uniform weights", f"mean of V[0..{i}]",
             *(f"V[{j}] ({t})" for j, t in enumerate(tokens[: i + 1]))]
    return names, np.vstack([view["uniform_out"][i], view["running_mean"][i], view["V"][: i + 1]])


def peek_outcome(peek: dict, position: int) -> dict:
    """What no_peeking's change at `position` shows about the outputs before it.

    kind: "same" (the new token has the same embedding, so nothing moved anywhere), "first" (position 0
    has no earlier output), "held" (with the mask every earlier output is the same, bit for bit) or
    "leaked". The earlier outputs are positions 0 to last = position - 1. largest: their largest change
    with the mask; moved: how many of them changed without a mask.
    """
    before = peek["diff_masked"][:position]  # (position,)
    outcome = {"position": position, "last": position - 1, "largest": float(before.max(initial=0.0)),
               "moved": int((peek["diff_unmasked"][:position] > 0).sum())}
    if peek["diff_unmasked"].max() == 0:
        return {"kind": "same", **outcome}
    if position == 0:
        return {"kind": "first", **outcome}
    return {"kind": "held" if (before == 0).all() else "leaked", **outcome}

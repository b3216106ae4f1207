"""The bigram model as a model: count which character follows which, turn the counts into
probabilities (core.bigram, which the Full model lesson's guessing game reads too), sample text from them and
measure how surprised they are by a text.

It is the baseline every transformer here must beat (core.data.TextCorpus.bigram_baseline): it sees only the
previous character, so anything better has learnt to use context.

Shapes: N number of ids in a text, V vocabulary, n characters drawn, L the model's window (max_len).
"""

from __future__ import annotations

import numpy as np

from core.backward import loss_only
from core.bigram import bigram_counts, bigram_probs, check_text_ids
from core.data import VAL_FRACTION
from core.data import bigram_loss as _pairs_loss
from core.demos.measures import check_whole
from core.model import ModelConfig


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"The bigram table must be square (V, V), got shape {p.shape}.")
    if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("Each row of the bigram table must be probabilities: >= 0 and summing to 1.")
    return p


def context_target_pairs(ids, n: int) -> dict:
    """The next-token task written out: ids (N,) -> the first n' = min(n, N - 1) (context -> target) pairs.

    x (n',) = ids[:n'] and y (n',) = ids[1:n' + 1], y is x shifted by one: at position t the context is
    x[:t + 1], everything read so far, and the target is y[t], the id that comes next. A transformer reads
    the whole context (up to its window); a bigram model reads only its last id, x[t] (a pair it counts).
    clash: two positions a bigram model cannot tell apart (same_last_other_target), or None.
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size < 2:
        raise ValueError(f"Pairs need a text of at least 2 tokens, got shape {ids.shape}: type a longer text.")
    n = min(check_whole("The number of pairs", n), ids.size - 1)
    x, y = ids[:n], ids[1 : n + 1]  # (n,), (n,): the same text, y one step ahead
    return {"x": x, "y": y, "contexts": [x[: t + 1] for t in range(n)], "clash": same_last_other_target(x, y)}


def same_last_other_target(x, y) -> tuple[int, int] | None:
    """The first two positions i < j whose last ids agree (x[i] == x[j]) but whose targets differ: (i, j), or
    None. A bigram model gives both the same answer; only the rest of the context can tell them apart."""
    first: dict[int, int] = {}  # last id -> the first position with it
    for t, (last, target) in enumerate(zip(np.asarray(x).tolist(), np.asarray(y).tolist())):
        if last in first and y[first[last]] != target:
            return first[last], t
        first.setdefault(last, t)
    return None


def bigram_sample(probs, start_id: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Walk the chain: probs (V, V), start id -> ids (n + 1,), start_id then n sampled ids.

    Each next id is drawn from the row of the previous one, so a pair with probability 0 never appears.
    """
    p = _check_probs(probs)
    V = p.shape[0]
    start_id = check_whole("The start id", start_id, lo=0)
    if start_id >= V:
        raise ValueError(f"The start id must be below the vocabulary size {V}, got {start_id}.")
    n = check_whole("The number of ids to sample", n, lo=0)
    ids = [start_id]
    for _ in range(n):
        ids.append(int(rng.choice(V, p=p[ids[-1]])))
    return np.array(ids, dtype=np.int64)


def bigram_loss(probs, ids) -> float:
    """Mean negative log-likelihood in nats of each next id given the previous: probs (V, V), ids (N,).

    Averages -log probs[ids[t], ids[t+1]] over the N - 1 pairs; inf if a pair has probability 0.
    log(V) is the loss of a uniform guess.
    """
    p = _check_probs(probs)
    ids = check_text_ids(ids, p.shape[0], min_len=2)
    with np.errstate(divide="ignore"):  # log(0) = -inf is the honest answer for an impossible pair
        log_p = np.log(p)
    return _pairs_loss(log_p, ids[:-1], ids[1:])


def held_out_split(ids, fraction: float = VAL_FRACTION) -> tuple[np.ndarray, np.ndarray]:
    """ids (N,) -> (fit (N - n,), held out (n,)): the last n = max(2, int(N * fraction)) ids are held out,
    as core.data splits a corpus. Each part needs one pair at least, so N >= 4."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size < 4:
        raise ValueError(f"Holding text out needs at least 4 characters, got {ids.size}: type a longer text.")
    n = max(2, int(ids.size * fraction))
    return ids[:-n], ids[-n:]


def most_frequent(ids, V: int, n: int) -> np.ndarray:
    """The ids of the n most frequent characters of ids (N,), most frequent first (ties: smaller id first),
    leaving out any that never occur: (n',) with n' <= n."""
    counts = np.bincount(check_text_ids(ids, check_whole("The vocabulary size", V)), minlength=V)  # (V,)
    order = np.argsort(-counts, kind="stable")[: check_whole("The number of characters", n)]
    return order[counts[order] > 0]


def bigram_view(fit_ids, held_ids, V: int, alpha: float, n: int) -> dict:
    """Everything the bigram lesson draws, for a text fit on fit_ids (N,) and scored on held_ids (M,).

    counts and probs (V, V); top (n,) the most frequent ids; counts_top (n, n) = counts[top][:, top];
    probs_top (n, n + 1): probs[top][:, top] and, last, the rest of each row (the V - n other
    characters), so every drawn row sums to 1; row_sums (V,) of probs; covered, the share of all pairs
    whose both characters are in top; loss on the held-out pairs and uniform = log V.
    """
    counts = bigram_counts(fit_ids, V)
    probs = bigram_probs(counts, alpha)
    top = most_frequent(fit_ids, V, n)
    shown = probs[np.ix_(top, top)]  # (n, n)
    rest = 1.0 - shown.sum(axis=1, keepdims=True)  # (n, 1): what the other V - n characters get
    return {"counts": counts, "probs": probs, "top": top, "counts_top": counts[np.ix_(top, top)],
            "probs_top": np.hstack([shown, np.maximum(rest, 0.0)]), "row_sums": probs.sum(axis=1),
            "covered": counts[np.ix_(top, top)].sum() / max(counts.sum(), 1),
            "loss": bigram_loss(probs, held_ids), "uniform": float(np.log(V)), "pairs": len(held_ids) - 1}


def model_loss(params, cfg: ModelConfig, ids, batch_size: int = 64) -> float:
    """Mean cross-entropy in nats of a trained model predicting every next id of ids (N,): the same N - 1
    pairs bigram_loss scores.

    The model reads at most L = cfg.max_len ids at once, so the text is cut into back-to-back windows:
    window w reads ids[wL : wL + L] and predicts ids[wL + 1 : wL + L + 1]. Each pair is predicted once;
    the first predictions of a window have little context, as in the model's own validation.
    """
    ids = check_text_ids(ids, cfg.vocab_size, min_len=2)
    L, pairs = cfg.max_len, ids.size - 1
    full = pairs // L  # windows of exactly L predictions, evaluated batch_size at a time
    total = 0.0
    for first in range(0, full, batch_size):
        starts = np.arange(first, min(first + batch_size, full)) * L
        chunk = ids[starts[:, None] + np.arange(L + 1)]  # (B, L + 1)
        total += loss_only(params, cfg, chunk[:, :-1], chunk[:, 1:]) * chunk[:, 1:].size
    if pairs > full * L:  # the shorter last window
        tail = ids[full * L :]
        total += loss_only(params, cfg, tail[None, :-1], tail[None, 1:]) * (tail.size - 1)
    return total / pairs


def space_pairs(ids, space: int, line_break: int, stops: tuple[int, ...] = ()) -> dict:
    """Where the pairs (space, space) of ids (N,) come from, by the run of spaces each is in (a run of n spaces
    holds n - 1 of them): "indent", a run at the start of a line (after a line break, or at the text's start);
    "sentence", a run of exactly two spaces after an id of stops (the end of a sentence); "inside", every other
    run (columns lined up inside a line). "pairs" is their sum, the table's count[space, space]."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1:
        raise ValueError(f"The text must be a flat list of token ids, got shape {ids.shape}.")
    runs = np.diff(np.concatenate([[0], (ids == space).astype(np.int8), [0]]))  # +1 where a run starts, -1 after
    starts, ends = np.flatnonzero(runs == 1), np.flatnonzero(runs == -1)  # run r is ids[starts[r]:ends[r]]
    pairs = ends - starts - 1  # (R,)
    before = np.where(starts > 0, ids[np.maximum(starts - 1, 0)], line_break)  # (R,) the id before each run
    indent = before == line_break
    sentence = ~indent & (ends - starts == 2) & np.isin(before, stops)
    return {"pairs": int(pairs.sum()), "indent": int(pairs[indent].sum()), "sentence": int(pairs[sentence].sum()),
            "inside": int(pairs[~indent & ~sentence].sum())}

"""The bigram model as a model: count which character follows which, turn the counts into
probabilities, sample text from them and measure how surprised they are by a text.

It is the baseline every transformer here must beat (core.data.bigram_baseline): it sees only the
previous character, so anything better has learnt to use context.

Shapes: N number of ids in a text, V vocabulary.
"""

from __future__ import annotations

import numpy as np

from core.data import bigram_loss as _pairs_loss
from core.demos.measures import check_whole


def _check_ids(ids, V: int, min_len: int = 1) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size < min_len:
        raise ValueError(f"The text must be a flat list of at least {min_len} token ids, got shape {ids.shape}.")
    if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"Token ids must be whole numbers from 0 to {V - 1} (the vocabulary size is {V}).")
    return ids.astype(np.int64)


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"The bigram table must be square (V, V), got shape {p.shape}.")
    if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("Each row of the bigram table must be probabilities: >= 0 and summing to 1.")
    return p


def bigram_counts(ids, V: int) -> np.ndarray:
    """How often id b follows id a: ids (N,) -> counts (V, V) int64, counts[a, b]; N - 1 pairs in all."""
    V = check_whole("The vocabulary size", V)
    ids = _check_ids(ids, V)
    counts = np.zeros((V, V), dtype=np.int64)
    np.add.at(counts, (ids[:-1], ids[1:]), 1)  # add.at, not +=: a repeated pair must count every time
    return counts


def bigram_probs(counts, alpha: float = 1.0) -> np.ndarray:
    """P(next | previous) with add-alpha smoothing: counts (V, V) -> probs (V, V), rows summing to 1.

    probs[a, b] = (counts[a, b] + alpha) / sum_c (counts[a, c] + alpha). alpha = 1 is Laplace's rule:
    a pair never seen keeps a small chance. With alpha = 0 a row that was never seen (the text's last
    character, say) has nothing to divide by; it becomes uniform, as nothing says otherwise.
    The same formula as core.data.bigram_log_probs, which starts from pairs instead of counts.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or np.any(counts < 0):
        raise ValueError(f"Counts must be a square (V, V) table of numbers >= 0, got shape {counts.shape}.")
    if not alpha >= 0:
        raise ValueError(f"The smoothing alpha must be 0 or more, got {alpha!r}.")
    smoothed = counts + alpha
    totals = smoothed.sum(axis=1, keepdims=True)  # (V, 1)
    uniform = np.full_like(smoothed, 1.0 / counts.shape[0])
    return np.divide(smoothed, totals, out=uniform, where=totals > 0)


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
    ids = _check_ids(ids, p.shape[0], min_len=2)
    with np.errstate(divide="ignore"):  # log(0) = -inf is the honest answer for an impossible pair
        log_p = np.log(p)
    return _pairs_loss(log_p, ids[:-1], ids[1:])

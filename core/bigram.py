"""The bigram table: how often one id follows another, and those counts turned into probabilities.

Two lessons read it: the Bigram lesson draws, samples and scores it (lessons/bigram/maths.py), and the Full model
lesson's guessing game plays against it. core.data.bigram_log_probs is the same add-alpha formula written from
pairs, for the training baseline (core.data.TextCorpus.bigram_baseline).

Shapes: N number of ids in a text, V vocabulary.
"""

from __future__ import annotations

import numpy as np

from core.demos.measures import check_whole


def check_text_ids(ids, V: int, min_len: int = 1) -> np.ndarray:
    """ids as a flat int64 array of at least min_len ids, each in [0, V); a ValueError says what is wrong."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size < min_len:
        raise ValueError(f"The text must be a flat list of at least {min_len} token ids, got shape {ids.shape}.")
    if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"Token ids must be whole numbers from 0 to {V - 1} (the vocabulary size is {V}).")
    return ids.astype(np.int64)


def bigram_counts(ids, V: int) -> np.ndarray:
    """How often id b follows id a: ids (N,) -> counts (V, V) int64, counts[a, b]; N - 1 pairs in all."""
    V = check_whole("The vocabulary size", V)
    ids = check_text_ids(ids, V)
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

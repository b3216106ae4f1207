"""The bigram table: how often one id follows another, and those counts turned into probabilities; and the same
model learnt by gradient descent, a (V, V) table of logits that core.train's Trainer trains like a transformer.

Two lessons read the counts: the Bigram lesson draws, samples and scores them (lessons/bigram/maths.py), and the
Full model lesson's guessing game plays against them. core.data.bigram_log_probs is the same add-alpha formula
written from pairs, for the training baseline (core.data.TextCorpus.bigram_baseline). The Ladder lesson trains the
table (BigramConfig) with the transformers' optimiser, data and budget, to show that the two bigrams meet.

Shapes: N number of ids in a text, V vocabulary, B batch, T sequence length.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from core.backward import check_batch, cross_entropy, cross_entropy_backward
from core.sampling import check_temperature, sample


def check_whole(name: str, value, lo: int = 1) -> int:
    """value as an int, or a ValueError naming it: a whole number of at least lo (as core.demos.measures checks;
    this module sits below the demos, which read model files, and model files read BigramConfig)."""
    if isinstance(value, bool) or int(value) != value or value < lo:
        raise ValueError(f"{name} must be a whole number of at least {lo}, got {value!r}.")
    return int(value)


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


# ---- the same model learnt by gradient descent ----------------------------------------------------------------


@dataclass(frozen=True)
class BigramConfig:
    """The bigram model as a table learnt by gradient descent (trained by core.train's Trainer): row a of
    wte (V, V) holds the logits of the token after token a, the token embedding table read directly as logits
    and nothing else. max_len only says how long a window the Trainer may hand it, as it does a transformer;
    the model reads one token at a time, whatever the length."""

    vocab_size: int  # V
    max_len: int  # the longest window a batch may hold

    def __post_init__(self):
        for name in ("vocab_size", "max_len"):
            check_whole(name, getattr(self, name))

    def to_dict(self) -> dict:
        """What a model file keeps of it; "kind" tells core.model_file.load it is not a transformer's config."""
        return {"kind": "bigram", **asdict(self)}


def init_table(cfg: BigramConfig, rng: np.random.Generator, dtype=np.float32) -> dict:
    """{"wte": (V, V)} drawn as the transformer's embeddings are, N(0, 0.02): every row starts near uniform."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("init_table needs an np.random.Generator, e.g. np.random.default_rng(0).")
    return {"wte": (rng.standard_normal((cfg.vocab_size, cfg.vocab_size)) * 0.02).astype(dtype)}


def table_logits(params: dict, ids) -> np.ndarray:
    """logits = wte[ids]: ids (..., T) -> (..., T, V). Each position sees its own token and nothing before it."""
    return params["wte"][np.asarray(ids)]


def table_backward(dlogits: np.ndarray, ids: np.ndarray, V: int) -> dict:
    """Forward: logits = wte[ids]. Row a of the table collects the gradient of every position holding token a.
    dlogits (B, T, V), ids (B, T) -> {"wte": (V, V)}. A one-hot product: faster than np.add.at here."""
    onehot = np.zeros((ids.size, V), dtype=dlogits.dtype)  # (B*T, V)
    onehot[np.arange(ids.size), ids.ravel()] = 1
    return {"wte": onehot.T @ dlogits.reshape(-1, V)}


def table_loss_and_grads(params: dict, cfg: BigramConfig, ids, targets, loss_mask=None):
    """Mean cross-entropy of the next token from the table, and its gradient: (loss, {"wte": (V, V)}).
    ids, targets (B, T) ints; loss_mask (B, T) or None, as core.backward.loss_and_grads."""
    ids, targets, loss_mask = check_batch(cfg, ids, targets, loss_mask)
    loss, cache = cross_entropy(table_logits(params, ids), targets, loss_mask)
    return loss, table_backward(cross_entropy_backward(cache), ids, cfg.vocab_size)


def table_loss(params: dict, cfg: BigramConfig, ids, targets, loss_mask=None) -> float:
    """The loss alone, for validation."""
    ids, targets, loss_mask = check_batch(cfg, ids, targets, loss_mask)
    return cross_entropy(table_logits(params, ids), targets, loss_mask)[0]


def generate_bigram(logits: np.ndarray, prompt_ids, max_new_tokens: int, temperature: float = 1.0,
                    rng: np.random.Generator | None = None) -> np.ndarray:
    """Extend prompt_ids (T,) by max_new_tokens tokens, each drawn from the row of the token before it:
    logits (V, V) (a learnt table, or the log of counted probabilities) -> ids (T + max_new_tokens,)."""
    V = logits.shape[0]
    out = [int(i) for i in check_text_ids(prompt_ids, V)]
    check_whole("max_new_tokens", max_new_tokens, lo=0)
    check_temperature(temperature)
    for _ in range(int(max_new_tokens)):
        out.append(sample(logits[out[-1]], temperature, None, rng))
    return np.array(out, dtype=np.int64)

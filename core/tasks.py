"""Synthetic tasks: sequences whose solution is an attention pattern, drawn fresh at every batch.

    copy, reverse, induction (SyntheticTask): random letters, then a second half the first one determines
    repeat (RepeatTask): a stretch of distinct letters occurring twice in a row, at a random place and length
    toy_english (core.toy_english.ToyEnglish): sentences of a small grammar, one per sequence

Each hands out `Batch(ids, targets, mask)` as the text corpora of core.data do, with the mask counting only
the positions that can be predicted, a fixed validation set and a bigram baseline. make_data picks a
data source, text or task, by name.

Shapes: B batch, T sequence length, V vocabulary, L symbols in a synthetic task's first half.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from core.data import Batch, TextCorpus, bigram_log_probs, bigram_loss, pydoc_corpus
from core.tokenize import CharTokenizer
from core.toy_english import ToyEnglish

TASKS = ("copy", "reverse", "induction")


def fixed_batches(train_batch, batch_size: int, max_windows: int | None, split: str) -> list[Batch]:
    """The same max_windows sequences every time (one seed per split), drawn by a task's train_batch."""
    if split not in ("val", "train"):
        raise ValueError(f"split must be 'val' or 'train', got {split!r}.")
    rng = np.random.default_rng(20_240_601 if split == "val" else 11)
    n = 256 if max_windows is None else max_windows
    return [train_batch(rng, min(batch_size, n - i)) for i in range(0, n, batch_size)]


def task_bigram_baseline(task) -> float:
    """A synthetic task's masked validation loss under an add-one bigram model fit on 20,000 of its
    training sequences: what a model that reads one letter back can do."""
    train = task.train_batch(np.random.default_rng(7), 20_000)
    log_probs = bigram_log_probs(train.ids, train.targets, task.vocab_size, train.mask)
    val = task.val_batches(max_windows=1024)
    prev, nxt, w = (np.concatenate([getattr(b, f) for b in val]) for f in ("ids", "targets", "mask"))
    return bigram_loss(log_probs, prev, nxt, w)


@dataclass(frozen=True)
class SyntheticTask:
    """Random letters, then a second half the model can only get right by looking back.

    copy:      A C B D | A C B D    the second half repeats the first after a separator
    reverse:   A C B D | D B C A    the second half is the first read backwards
    induction: A C B D A C B D      the letters repeat (no separator): after seeing "A", look up what
                                    followed "A" last time. The letters of one sequence are all distinct.
    Only the predictions of the second half count in the loss (the mask); the first half is random.
    """

    kind: str = "copy"
    length: int = 8  # L letters in the first half
    n_symbols: int = 16  # letters A, B, C, ... to draw from

    def __post_init__(self):
        if self.kind not in TASKS:
            raise ValueError(f"Unknown task {self.kind!r}; choose one of {', '.join(TASKS)}.")
        if not 2 <= self.n_symbols <= 26:
            raise ValueError(f"n_symbols must be between 2 and 26 (letters A to Z), got {self.n_symbols}.")
        if not 2 <= self.length <= (self.n_symbols if self.kind == "induction" else 64):
            raise ValueError(f"length must be 2..{self.n_symbols if self.kind == 'induction' else 64} "
                             f"(induction needs distinct letters), got {self.length}.")

    @property
    def name(self) -> str:
        return self.kind

    @property
    def tokenizer(self) -> CharTokenizer:
        return CharTokenizer(string.ascii_uppercase[: self.n_symbols] + "|")  # letter k -> id k + 1

    @property
    def vocab_size(self) -> int:
        return self.n_symbols + 2  # unknown, the letters, the separator

    @property
    def seq_len(self) -> int:
        """T, the length the model reads: 2L, or 2L - 1 for induction (no separator)."""
        return 2 * self.length - (self.kind == "induction")

    def sequences(self, rng: np.random.Generator, batch_size: int) -> np.ndarray:
        """(B, T + 1) whole sequences, first half then second half."""
        L, B = self.length, batch_size
        if self.kind == "induction":
            first = rng.random((B, self.n_symbols)).argsort(axis=1)[:, :L] + 1  # distinct letters
            return np.concatenate([first, first], axis=1)
        first = rng.integers(1, self.n_symbols + 1, size=(B, L))
        second = first if self.kind == "copy" else first[:, ::-1]
        sep = np.full((B, 1), self.n_symbols + 1)
        return np.concatenate([first, sep, second], axis=1)

    def loss_mask(self) -> np.ndarray:
        """(T,) 1 for the positions whose next token is determined by the first half."""
        mask = np.zeros(self.seq_len, dtype=np.float32)
        mask[self.length :] = 1.0
        return mask

    def expected_keys(self) -> np.ndarray:
        """(T,) for each query position, the key position holding the token to predict (-1: none).

        copy: i - L (a shifted diagonal); reverse: 2L - 1 - i (an anti-diagonal);
        induction: i - L + 1 (the token after the previous occurrence of the current one).
        """
        i, L = np.arange(self.seq_len), self.length
        key = {"copy": i - L, "reverse": 2 * L - 1 - i, "induction": i - L + 1}[self.kind]
        return np.where(i >= L, key, -1)

    def train_batch(self, rng: np.random.Generator, batch_size: int) -> Batch:
        seq = self.sequences(rng, batch_size)
        mask = np.broadcast_to(self.loss_mask(), (batch_size, self.seq_len))
        return Batch(seq[:, :-1], seq[:, 1:], mask)

    def val_batches(self, batch_size: int = 64, max_windows: int | None = 256, split: str = "val") -> list[Batch]:
        """A fixed set of max_windows sequences (its own seed per split), in batches."""
        return fixed_batches(self.train_batch, batch_size, max_windows, split)

    def bigram_baseline(self) -> float:
        """Masked validation loss of an add-one bigram model fit on 20,000 training sequences."""
        return task_bigram_baseline(self)


# ---- repeats at a random place and length: what a real induction circuit is needed for ------------


def induction_keys(ids) -> np.ndarray:
    """(..., T) ints -> (..., T): for each position i, the key just after the most recent earlier
    occurrence of ids[i] (where an induction head looks), -1 where ids[i] has not occurred before."""
    ids = np.asarray(ids)
    T = ids.shape[-1]
    earlier = (ids[..., :, None] == ids[..., None, :]) & np.tri(T, k=-1, dtype=bool)  # (..., T, T): j < i
    last = np.where(earlier, np.arange(T), -1).max(axis=-1)  # (..., T) latest j, -1 for none
    return np.where(last >= 0, last + 1, -1)


@dataclass(frozen=True)
class RepeatTask:
    """Random letters in which a stretch of distinct letters occurs twice in a row, at a random place and
    of a random length:  Q F [K C A H][K C A H] B Q ...   (T = context letters are read).

    The model cannot know where the stretch starts or how long it is, so position alone cannot solve it:
    from the second copy on, it must find the earlier occurrence of the current letter and read the letter
    after it (a previous-token head, then an induction head). Only those positions count in the loss.
    """

    context: int = 40  # T letters read
    min_length: int = 4  # shortest stretch
    max_length: int = 12  # longest stretch; 2 * max_length <= T + 1
    n_symbols: int = 24  # letters A, B, C, ... to draw from

    def __post_init__(self):
        if not 2 <= self.n_symbols <= 26:
            raise ValueError(f"n_symbols must be between 2 and 26 (letters A to Z), got {self.n_symbols}.")
        if not 2 <= self.min_length <= self.max_length <= min(self.n_symbols, (self.context + 1) // 2):
            raise ValueError(
                f"Stretch lengths must satisfy 2 <= min_length <= max_length <= {self.n_symbols} (distinct "
                f"letters) and two copies must fit in {self.context + 1} letters; got {self.min_length}.."
                f"{self.max_length}.")

    name = "repeat"

    @property
    def tokenizer(self) -> CharTokenizer:
        return CharTokenizer(string.ascii_uppercase[: self.n_symbols])  # letter k -> id k + 1

    @property
    def vocab_size(self) -> int:
        return self.n_symbols + 1  # unknown and the letters

    @property
    def seq_len(self) -> int:
        return self.context

    def sequences(self, rng: np.random.Generator, batch_size: int):
        """(B, T + 1) letters, and per sequence the start p (B,) and length L (B,) of the first copy."""
        B, T = batch_size, self.context
        seq = rng.integers(1, self.n_symbols + 1, size=(B, T + 1))
        length = rng.integers(self.min_length, self.max_length + 1, size=B)
        start = rng.integers(0, T + 2 - 2 * length)  # p in 0..T + 1 - 2L
        stretch = rng.random((B, self.n_symbols)).argsort(axis=1) + 1  # distinct letters, first L used
        pos = np.arange(T + 1)
        offset = pos - start[:, None]  # (B, T + 1) position within the two copies
        inside = (offset >= 0) & (offset < 2 * length[:, None])
        letter = np.take_along_axis(stretch, np.where(inside, offset % length[:, None], 0), axis=1)
        return np.where(inside, letter, seq), start, length

    @staticmethod
    def halves(start: np.ndarray, length: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
        """(first, repeat), each (B, T) float32: the query positions whose next letter lies in the first copy
        (p..p+L-2, unpredictable) and those whose next letter the first copy gives away (p+L..p+2L-2)."""
        i, p, L = np.arange(T), start[:, None], length[:, None]
        first = (i >= p) & (i <= p + L - 2)
        repeat = (i >= p + L) & (i <= p + 2 * L - 2)
        return first.astype(np.float32), repeat.astype(np.float32)

    def train_batch(self, rng: np.random.Generator, batch_size: int) -> Batch:
        seq, start, length = self.sequences(rng, batch_size)
        return Batch(seq[:, :-1], seq[:, 1:], self.halves(start, length, self.context)[1])

    def val_batches(self, batch_size: int = 64, max_windows: int | None = 256, split: str = "val") -> list[Batch]:
        """A fixed set of max_windows sequences (its own seed per split), in batches."""
        return fixed_batches(self.train_batch, batch_size, max_windows, split)

    def expected_keys(self, batch: Batch) -> np.ndarray:
        """(B, T): at each counted query, the key holding the answer (just after the letter's first copy); -1
        elsewhere. Within the stretch the letters are distinct, so that is the most recent occurrence."""
        return np.where(batch.mask > 0, induction_keys(batch.ids), -1)

    def bigram_baseline(self) -> float:
        """Masked validation loss of an add-one bigram model fit on 20,000 training sequences."""
        return task_bigram_baseline(self)


def make_data(name: str, context: int = 64, length: int = 8, n_symbols: int = 16, min_length: int | None = None
              ) -> TextCorpus | SyntheticTask | RepeatTask | ToyEnglish:
    """A data source by name: "pydoc" (read in windows of context), a synthetic task ("copy", "reverse",
    "induction") of `length` letters drawn from n_symbols, "repeat" (context letters, stretches of
    min_length..length letters; min_length None means min(4, length)), or "toy_english" (one sentence of
    the toy grammar per sequence of context words)."""
    if name == "pydoc":
        return pydoc_corpus(context)
    if name == ToyEnglish.name:
        return ToyEnglish(context)
    if name in TASKS:
        return SyntheticTask(name, length, n_symbols)
    if name == RepeatTask.name:
        return RepeatTask(context, min(4, length) if min_length is None else min_length, length, n_symbols)
    raise ValueError(f"Unknown data {name!r}; choose 'pydoc', 'repeat', 'toy_english' or one of {', '.join(TASKS)}.")

"""Training data without any download: Python's own documentation, synthetic tasks, the user's text.

Every data source hands out `Batch(ids, targets, mask)`: ids and targets (B, T) ints, targets[:, t] the
token that follows ids[:, t], and mask (B, T) saying which positions count in the loss (None: all of them).
Each also gives a fixed validation set and a bigram baseline, the validation loss of a model that only
looks at the previous token: a transformer that does not beat it has learnt nothing about context.

Shapes: B batch, T sequence length (the context), V vocabulary, L symbols in a synthetic task's first half.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.tokenize import CharTokenizer

VAL_FRACTION = 0.1  # the last 10% of a text is its validation split
MAX_USER_CHARS = 200_000  # longer texts are cut: training on them in a browser session would not finish
MIN_SPLIT_WINDOWS = 2  # each split must hold at least this many windows of context + 1 characters
TASKS = ("copy", "reverse", "induction")


class CorpusUnavailable(RuntimeError):
    """A built-in corpus cannot be built on this Python (for example, pydoc_data was left out)."""


class Batch(NamedTuple):
    ids: np.ndarray  # (B, T) int64, what the model reads
    targets: np.ndarray  # (B, T) int64, the next token at each position
    mask: np.ndarray | None = None  # (B, T) float32, 1 where the position counts in the loss; None: all


# ---- the bigram baseline: the next character from the previous one alone --------------------------


def bigram_log_probs(prev, nxt, V: int, weights=None, alpha: float = 1.0) -> np.ndarray:
    """Add-alpha smoothed counts of (previous, next) pairs -> log P(next | previous), (V, V)."""
    counts = np.full((V, V), float(alpha))
    np.add.at(counts, (np.ravel(prev), np.ravel(nxt)), 1.0 if weights is None else np.ravel(weights))
    return np.log(counts / counts.sum(axis=1, keepdims=True))


def bigram_loss(log_probs: np.ndarray, prev, nxt, weights=None) -> float:
    """Mean (or weighted mean) cross-entropy in nats of the bigram model on the given pairs."""
    nll = -log_probs[np.ravel(prev), np.ravel(nxt)]
    w = np.ones_like(nll) if weights is None else np.ravel(weights).astype(float)
    return float((nll * w).sum() / w.sum())


# ---- text: windows of a long string of characters -------------------------------------------------


@dataclass
class TextCorpus:
    """A text split into train (first 90%) and validation (last 10%), read in windows of `context`."""

    name: str
    tokenizer: CharTokenizer
    train_ids: np.ndarray  # (N_train,) int64
    val_ids: np.ndarray  # (N_val,) int64
    context: int  # T: characters the model reads at once
    truncated: bool = False  # True when a user's text was cut to MAX_USER_CHARS

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def seq_len(self) -> int:
        return self.context

    def train_batch(self, rng: np.random.Generator, batch_size: int) -> Batch:
        """batch_size random windows of the training split."""
        starts = rng.integers(0, len(self.train_ids) - self.context, size=batch_size)
        return _windows(self.train_ids, starts, self.context)

    def val_batches(self, batch_size: int = 64, max_windows: int | None = None, split: str = "val") -> list[Batch]:
        """Back-to-back windows covering a split (every pair counted once), or max_windows of them evenly
        spread. Always the same windows, so losses are comparable. split: "val" or "train"."""
        if split not in ("val", "train"):
            raise ValueError(f"split must be 'val' or 'train', got {split!r}.")
        ids = self.val_ids if split == "val" else self.train_ids
        n = (len(ids) - 1) // self.context
        starts = np.arange(n) * self.context
        if max_windows is not None and max_windows < n:
            starts = starts[np.linspace(0, n - 1, max_windows).round().astype(int)]
        return [_windows(ids, starts[i : i + batch_size], self.context) for i in range(0, len(starts), batch_size)]

    def bigram_baseline(self) -> float:
        """Validation cross-entropy (nats per character) of an add-one bigram model fit on the train split."""
        log_probs = bigram_log_probs(self.train_ids[:-1], self.train_ids[1:], self.vocab_size)
        return bigram_loss(log_probs, self.val_ids[:-1], self.val_ids[1:])


def _windows(ids: np.ndarray, starts: np.ndarray, T: int) -> Batch:
    idx = np.asarray(starts)[:, None] + np.arange(T + 1)  # (B, T + 1)
    chunk = ids[idx]
    return Batch(chunk[:, :-1], chunk[:, 1:])


def text_corpus(text: str, context: int, name: str = "text", tokenizer: CharTokenizer | None = None,
                truncated: bool = False) -> TextCorpus:
    """Split text 90/10 into train/validation and encode it with tokenizer (fit on the text if None)."""
    if int(context) != context or context < 1:
        raise ValueError(f"The context must be a whole number of characters >= 1, got {context!r}.")
    need = MIN_SPLIT_WINDOWS * (context + 1)
    if len(text) * VAL_FRACTION < need:
        raise ValueError(
            f"The text is too short: with a context of {context} characters it needs at least "
            f"{int(np.ceil(need / VAL_FRACTION))} characters (it has {len(text)}), because the last 10% "
            "is kept aside for validation. Paste more text or choose a shorter context."
        )
    tokenizer = tokenizer or CharTokenizer.fit(text)
    ids = tokenizer.encode(text)
    cut = len(ids) - int(len(ids) * VAL_FRACTION)
    return TextCorpus(name, tokenizer, ids[:cut], ids[cut:], int(context), truncated)


def user_text_corpus(data: bytes | str, context: int, max_chars: int = MAX_USER_CHARS) -> TextCorpus:
    """The user's own text (an uploaded file's bytes or a pasted string) as a corpus.

    Raises ValueError when it is not UTF-8 text, is empty or is too short; cuts it to max_chars.
    """
    if isinstance(data, bytes):
        if b"\x00" in data[:8192]:
            raise ValueError("This file looks binary (it contains zero bytes); upload a plain-text file.")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise ValueError(
                f"This file is not UTF-8 text (byte {err.start} cannot be decoded); save it as UTF-8 plain text."
            ) from None
    if not isinstance(data, str):
        raise ValueError("Give the text as a string or as the bytes of a UTF-8 file.")
    text = data.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ValueError("The text is empty: paste or upload some text to train on.")
    truncated = len(text) > max_chars
    return text_corpus(text[:max_chars], context, name="your text", truncated=truncated)


# ---- the text Python ships: the documentation behind help("if") -----------------------------------

_EXCLUDED_TOPICS = ("operator-summary",)  # a table of symbols, not prose
_ASCII = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...", "\u2014": "--",
          "\u2013": "-", "\t": "    "}
_KEEP = set(string.printable) - set("\t\r\x0b\x0c")
_UNDERLINE = re.compile(r"^[*=~^-]{3,}$")


def pydoc_text(max_chars: int = 400_000) -> str:
    """Python's language reference topics (pydoc_data.topics), sorted by name, as clean ASCII text.

    Paragraphs that appear under several topics are kept once (so validation text never repeats
    training text), heading underlines are dropped, typographic quotes become ASCII. ~370 KB.
    """
    try:
        from pydoc_data.topics import topics
    except ImportError:
        raise CorpusUnavailable(
            "This Python was built without pydoc_data, so the built-in documentation corpus is missing. "
            "Pick a synthetic task or upload your own text instead."
        ) from None
    seen, parts = set(), []
    for name in sorted(topics):
        if name in _EXCLUDED_TOPICS:
            continue
        for para in _clean(topics[name]).split("\n\n"):
            if para.strip() and para not in seen:
                seen.add(para)
                parts.append(para)
    return "\n\n".join(parts)[:max_chars]


def _clean(text: str) -> str:
    text = "".join(_ASCII.get(c, c) for c in text)
    text = "".join(c for c in text if c in _KEEP)
    lines = [line.rstrip() for line in text.split("\n")]
    lines = [line for line in lines if not _UNDERLINE.match(line) and not line.startswith("Related help topics")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def pydoc_corpus(context: int = 64, tokenizer: CharTokenizer | None = None) -> TextCorpus:
    """The documentation corpus, split 90/10. Raises CorpusUnavailable without pydoc_data."""
    return text_corpus(pydoc_text(), context, name="pydoc", tokenizer=tokenizer)


# ---- synthetic tasks: sequences whose solution is an attention pattern -----------------------------


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
              ) -> TextCorpus | SyntheticTask | RepeatTask:
    """A data source by name: "pydoc" (read in windows of context), a synthetic task ("copy", "reverse",
    "induction") of `length` letters drawn from n_symbols, or "repeat" (context letters, stretches of
    min_length..length letters; min_length None means min(4, length))."""
    if name == "pydoc":
        return pydoc_corpus(context)
    if name in TASKS:
        return SyntheticTask(name, length, n_symbols)
    if name == RepeatTask.name:
        return RepeatTask(context, min(4, length) if min_length is None else min_length, length, n_symbols)
    raise ValueError(f"Unknown data {name!r}; choose 'pydoc', 'repeat' or one of {', '.join(TASKS)}.")

"""Training text without any download: Python's own documentation (shipped), or any string, read in windows.

Every data source (these text corpora, and the synthetic tasks of core/tasks.py) hands out
`Batch(ids, targets, mask)`: ids and targets (B, T) ints, targets[:, t] the token that follows ids[:, t],
and mask (B, T) saying which positions count in the loss (None: all of them). Each also gives a fixed
validation set and a bigram baseline, the validation loss of a model that only looks at the previous token:
a transformer that does not beat it has learnt nothing about context.

Shapes: B batch, T sequence length (the context), V vocabulary, N tokens of a split.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import re
import string
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from core.tokenize import CharTokenizer

VAL_FRACTION = 0.1  # the last 10% of a text is its validation split
MIN_SPLIT_WINDOWS = 2  # each split must hold at least this many windows of context + 1 characters


class CorpusUnavailable(RuntimeError):
    """The shipped documentation corpus cannot be read (its file is missing or damaged)."""


class TextTooShort(ValueError):
    """The text cannot fill MIN_SPLIT_WINDOWS windows in its validation split at this context."""

    def __init__(self, length: int, needed: int, context: int):
        self.length, self.needed, self.context = length, needed, context
        super().__init__(
            f"With a context of {context} characters a text needs at least {needed} characters, so that its "
            f"last {VAL_FRACTION:.0%} (the validation split) holds {MIN_SPLIT_WINDOWS} windows of context + 1; "
            f"this one has {length}."
        )


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
    truncated: bool = False  # True when the caller cut the text to a size cap before splitting it

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
    """Split text 90/10 into train/validation and encode it with tokenizer (fit on the text if None).

    Raises TextTooShort when the validation split cannot hold MIN_SPLIT_WINDOWS windows of context + 1.
    """
    if int(context) != context or context < 1:
        raise ValueError(f"The context must be a whole number of characters >= 1, got {context!r}.")
    need = MIN_SPLIT_WINDOWS * (context + 1)  # characters of the validation split
    if len(text) * VAL_FRACTION < need:
        raise TextTooShort(len(text), int(np.ceil(need / VAL_FRACTION)), int(context))
    tokenizer = tokenizer or CharTokenizer.fit(text)
    ids = tokenizer.encode(text)
    cut = len(ids) - int(len(ids) * VAL_FRACTION)
    return TextCorpus(name, tokenizer, ids[:cut], ids[cut:], int(context), truncated)


# ---- the documentation corpus: the text the shipped character model was trained on ------------------------

# Python's language reference topics (pydoc_data.topics, the text behind help("if")), cleaned once by
# build_pydoc_text on the Python the models were trained on and shipped beside them. The running Python's own
# pydoc_data would do as well on that release only: the topics change between releases, patch releases
# included, and with them every loss, count and sample the lessons show.
PYDOC_FILE = Path(__file__).resolve().parent / "weights" / "pydoc_corpus.txt.gz"


class CorpusMismatch(ValueError):
    """A model names a corpus (by its digest) that is not the one shipped here: its recorded losses would lie."""


def text_digest(text: str) -> str:
    """'sha256:' and the SHA-256 of the text's UTF-8 bytes: names a text exactly, whatever file holds it."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def pydoc_text() -> str:
    """The documentation corpus, 360,725 characters of clean ASCII prose: the same text on every Python.

    Raises CorpusUnavailable when PYDOC_FILE is missing or damaged."""
    try:
        stat = PYDOC_FILE.stat()
        return _read_gzip_text(str(PYDOC_FILE), stat.st_mtime_ns, stat.st_size)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:
        raise CorpusUnavailable(
            f"The documentation corpus (core/weights/{PYDOC_FILE.name}) is missing or damaged in this copy of "
            f"the app ({type(err).__name__}); a fresh copy of the repository has it."
        ) from None


@functools.lru_cache(maxsize=2)
def _read_gzip_text(path: str, mtime_ns: int, size: int) -> str:
    """The text of a gzip file; the file's time and size are in the key, so a rewritten file is read again."""
    with gzip.open(path, "rb") as f:  # gzip checks its CRC-32 at the end: a damaged file raises
        return f.read().decode("utf-8")


def pydoc_record() -> dict:
    """What a model trained on the documentation corpus records of it in its meta, for check_corpus."""
    text = pydoc_text()
    return {"corpus_file": PYDOC_FILE.name, "corpus_digest": text_digest(text), "corpus_characters": len(text)}


def check_corpus(meta: dict) -> None:
    """Raise CorpusMismatch unless the shipped corpus is the text a model's meta names by its corpus_digest
    (a model that names none, trained on a task or on a student's text, passes)."""
    if "corpus_digest" not in meta:
        return
    if meta.get("corpus_file") != PYDOC_FILE.name:
        raise CorpusMismatch(f"The model was trained on {meta.get('corpus_file')!r}, which this app does not ship.")
    try:
        found = text_digest(pydoc_text())
    except CorpusUnavailable as err:
        raise CorpusMismatch(str(err)) from None
    if found != meta["corpus_digest"]:
        raise CorpusMismatch(
            f"{PYDOC_FILE.name} is not the text this model was trained on (its digest is {found[:19]}..., the "
            f"model records {str(meta['corpus_digest'])[:19]}...): its recorded losses would not be this text's. "
            "Put back the file that came with the model, or train the model again on this one."
        )


def build_pydoc_text(topics: Mapping[str, str], max_chars: int = 400_000) -> str:
    """Python's language reference topics (pydoc_data.topics: name -> text), sorted by name, as clean ASCII.

    Paragraphs that appear under several topics are kept once (so validation text never repeats
    training text), heading underlines are dropped, typographic quotes become ASCII. What
    `python -m tools.corpus` writes to PYDOC_FILE.
    """
    seen, parts = set(), []
    for name in sorted(topics):
        if name in _EXCLUDED_TOPICS:
            continue
        for para in _clean(topics[name]).split("\n\n"):
            if para.strip() and para not in seen:
                seen.add(para)
                parts.append(para)
    return "\n\n".join(parts)[:max_chars]


_EXCLUDED_TOPICS = ("operator-summary",)  # a table of symbols, not prose
_ASCII = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...", "\u2014": "--",
          "\u2013": "-", "\t": "    "}
_KEEP = set(string.printable) - set("\t\r\x0b\x0c")
_UNDERLINE = re.compile(r"^[*=~^-]{3,}$")


def _clean(text: str) -> str:
    text = "".join(_ASCII.get(c, c) for c in text)
    text = "".join(c for c in text if c in _KEEP)
    lines = [line.rstrip() for line in text.split("\n")]
    lines = [line for line in lines if not _UNDERLINE.match(line) and not line.startswith("Related help topics")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def pydoc_corpus(context: int = 64, tokenizer: CharTokenizer | None = None) -> TextCorpus:
    """The documentation corpus, split 90/10. Raises CorpusUnavailable when its file is missing."""
    return text_corpus(pydoc_text(), context, name="pydoc", tokenizer=tokenizer)

"""What a Training-page run starts from: its Settings (checked against the server's limits) and its data.

The data is a synthetic task (copy, reverse, induction), Python's bundled documentation or the user's own
text. The bundled corpus and the baselines are built once per process and shared by every session (cached.py,
whose build_data hands a run its data); the user's text is encoded once per text and context (TextMemo) and
never leaves the session's memory.
Shapes: T sequence length, L task length (letters before the separator).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass

import numpy as np

from core.data import TextCorpus
from core.tasks import TASKS, SyntheticTask
from lessons.training.upload import user_text_corpus
from ui.text import escape_md

CORPORA = (*TASKS, "pydoc", "text")

# Limits, so that one student cannot hog a server shared by a class.
LIMITS = {"steps": 2000, "d_model": 64, "n_heads": 8, "n_layers": 2, "context": 64, "batch_size": 32,
          "task_length": 16}
MAX_LR = 1e3  # reachable on purpose: it shows what divergence looks like
UPLOAD_CAP_BYTES = 200_000  # own text: a file (or pasted text) up to 200 KB
N_SYMBOLS = 16  # letters the synthetic tasks draw from
MAX_DRAWN = 24  # attention maps of text runs show this many characters


@dataclass(frozen=True)
class Settings:
    """What a run is started with. Checked against LIMITS: URL tampering cannot get past them."""

    corpus: str = "copy"  # a synthetic task ("copy", "reverse", "induction"), "pydoc" or "text"
    d_model: int = 32  # D
    n_heads: int = 2  # H, a divisor of D
    n_layers: int = 2
    context: int = 32  # T for text corpora: characters per window
    task_length: int = 8  # L letters before the separator (synthetic tasks: T = 2L)
    pos_encoding: str = "learned"
    steps: int = 300
    batch_size: int = 16
    lr: float = 1e-2
    seed: int = 0

    def __post_init__(self):
        if self.corpus not in CORPORA:
            raise ValueError(f"Unknown corpus {self.corpus!r}; choose one of {', '.join(CORPORA)}.")
        for name, cap in LIMITS.items():
            value = getattr(self, name)
            if int(value) != value or not 1 <= value <= cap:
                raise ValueError(f"{name} must be a whole number from 1 to {cap} on this shared server, got {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(f"{self.n_heads} heads do not divide d_model = {self.d_model}.")
        if not (math.isfinite(self.lr) and 0 < self.lr <= MAX_LR):
            raise ValueError(f"The learning rate must be above 0 and at most {MAX_LR:g}, got {self.lr!r}.")

    @property
    def synthetic(self) -> bool:
        return self.corpus in TASKS

    @property
    def label(self) -> str:
        """How a run on this data is named: "copy task", "Python docs", "your text"."""
        return {"pydoc": "Python docs", "text": "your text"}.get(self.corpus, f"{self.corpus} task")


def read_text(raw: bytes | str | None, name: str = "") -> bytes | str:
    """The user's text as given (a file's bytes or a pasted string); ValueError over the size cap."""
    if raw is None:
        raise ValueError("The text is empty: paste or upload some text to train on.")
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    if size > UPLOAD_CAP_BYTES:
        what = f"“{escape_md(name)}”" if name else "The text"  # a file's name is the user's: never Markdown
        raise ValueError(f"{what} is {size / 1000:,.0f} KB; the limit here is {UPLOAD_CAP_BYTES // 1000} KB. "
                         "Use a shorter file, or paste a part of it.")
    return raw


class TextMemo:
    """The user's text as a corpus, encoded once per (text, context): reruns with the same text reuse it."""

    def __init__(self):
        self._memo: tuple | None = None  # (key, corpus)

    def corpus(self, raw: bytes | str | None, context: int, name: str = "") -> TextCorpus:
        """ValueError with a sentence for the user when the text cannot be a corpus."""
        raw = read_text(raw, name)
        digest = hashlib.sha1(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")).hexdigest()
        key = (digest, int(context))
        if self._memo is None or self._memo[0] != key:
            self._memo = (key, user_text_corpus(raw, context, max_chars=UPLOAD_CAP_BYTES))
        return self._memo[1]


def example_ids(data) -> np.ndarray:
    """(T,) the fixed input the attention maps show: a validation sequence, the same at every step.
    For text, from the first line of the validation split that starts with a capitalised word (else its start)."""
    if isinstance(data, SyntheticTask):
        return data.val_batches(1, 1)[0].ids[0]
    n = min(data.context, MAX_DRAWN)
    head = data.tokenizer.decode(data.val_ids[:5000])
    found = re.search(r"(?:^|\n)[ \t]*([A-Z][a-z]* )", head[: max(0, len(data.val_ids) - n)])
    start = found.start(1) if found else 0
    return data.val_ids[start : start + n]

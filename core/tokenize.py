"""Tokenizers: words for the teaching pages, characters for the trained model, a word vocabulary for the
toy-English model.

Shapes: T sequence length, D embedding width, V vocabulary.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zlib

import numpy as np

# A word is a run of letters/digits (any script); every other visible character is a token of its own.
# Marks and joiners then glue these pieces back into what a reader sees as one (word_tokens).
_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# Zero-width non-joiner and joiner: they sit inside one word or one emoji ("👩‍💻" is 👩, U+200D, 💻).
JOINERS = "\u200c\u200d"


def draws_nothing(c: str) -> bool:
    """True for a character that shows nothing on its own: whitespace, a control or format character
    (U+200D), a combining or enclosing mark (the variation selector U+FE0F that makes ❤ into ❤️)."""
    return c.isspace() or not c.isprintable() or unicodedata.category(c) in ("Mn", "Me")


def attaches(c: str) -> bool:
    """True for a character drawn as part of the one before it: a mark (accents, vowel signs, variation
    selectors, the keycap of 1️⃣), a skin tone (👍🏽) or a tag character (the flag 🏴 of England)."""
    return (unicodedata.category(c) in ("Mn", "Mc", "Me") or "\U0001F3FB" <= c <= "\U0001F3FF"
            or "\U000E0020" <= c <= "\U000E007F")


def word_tokens(text: str, max_tokens: int | None = None) -> list[str]:
    """'The cat sat.' -> ['The', 'cat', 'sat', '.']; keeps at most max_tokens.

    A token is what a reader sees as one: a word keeps its accents and vowel signs ('नमस्ते'), an emoji its
    variation selector, skin tone and joined parts ('❤️', '👍🏽', '👩‍💻'). A character that draws nothing
    on its own (a zero-width space, a stray joiner or mark) separates tokens like a space and is none.
    """
    if not isinstance(text, str):
        raise ValueError("The input must be text.")
    if text.isascii():  # no marks or joiners, only control characters to drop: a third of the time
        tokens = [piece for piece in _PIECE.findall(text) if piece.isprintable()]
        return tokens if max_tokens is None else tokens[:max_tokens]
    tokens = []
    end = -1  # where the last piece ended: only touching pieces join
    for match in _PIECE.finditer(text):
        piece, first = match.group(), match.group()[0]
        if tokens and match.start() == end and _continues(tokens[-1], first):
            tokens[-1] += piece
        elif not all(map(draws_nothing, piece)):
            tokens.append(piece)
        end = match.end()
    return tokens if max_tokens is None else tokens[:max_tokens]


def _continues(token: str, c: str) -> bool:
    """Whether c, right after token, belongs to it: a mark or joiner, whatever follows a joiner, and a
    word's letters after a mark inside it (Python's \\w stops at the virama of 'नमस्ते')."""
    last = token[-1]
    return (attaches(c) or c in JOINERS or last in JOINERS
            or (attaches(last) and (c.isalnum() or c == "_") and (token[0].isalnum() or token[0] == "_")))


def word_embeddings(tokens: list[str], D: int, seed: int = 0) -> np.ndarray:
    """A fixed random vector per word: (T,) -> (T, D), entries ~ N(0, 1).

    The vector depends on the word (case-insensitive) and the seed only, so 'cat' has the same
    embedding in every sentence, and a repeated word gets the same row: a stand-in for a trained table.
    """
    if D < 1:
        raise ValueError(f"The embedding width must be at least 1, got {D}.")
    return np.array([_word_vector(tok.lower(), D, seed) for tok in tokens]).reshape(len(tokens), D)


@functools.lru_cache(maxsize=4096)
def _word_vector(word: str, D: int, seed: int) -> np.ndarray:
    """One word's row, kept for the process: a set-up reads a sentence's rows more than once (the masking and
    scaling lessons run one head twice on it, with and without the mask or the scale), a move of d_k reads them
    again, and seeding a generator costs more than drawing D numbers from it. Read-only, since every caller shares
    it (word_embeddings copies the rows into a new array)."""
    row = np.random.default_rng([seed, zlib.crc32(word.encode("utf-8"))]).standard_normal(D)
    row.flags.writeable = False
    return row


class CharTokenizer:
    """One token per character. Id 0 is reserved for characters the model never saw."""

    UNKNOWN = "\ufffd"  # the replacement character, shown for anything out of vocabulary

    def __init__(self, chars: str):
        chars = "".join(sorted(set(chars) - {self.UNKNOWN}))
        if not chars:
            raise ValueError("A character tokenizer needs at least one character to learn from.")
        self.itos = [self.UNKNOWN, *chars]
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    @classmethod
    def fit(cls, corpus: str) -> CharTokenizer:
        return cls(corpus)

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> np.ndarray:
        """str -> (T,) int64; unseen characters map to id 0."""
        return np.array([self.stoi.get(c, 0) for c in text], dtype=np.int64)

    def decode(self, ids) -> str:
        return "".join(self.itos[int(i)] if 0 <= int(i) < len(self.itos) else self.UNKNOWN for i in ids)

    def unknown(self, text: str) -> list[str]:
        """The characters of text this tokenizer cannot represent (in order, once each)."""
        return list(dict.fromkeys(c for c in text if c not in self.stoi))

    def to_dict(self) -> dict:
        return {"kind": "char", "chars": "".join(self.itos[1:])}

    @classmethod
    def from_dict(cls, d: dict) -> CharTokenizer:
        return cls(d["chars"])


class WordTokenizer:
    """One token per word of a fixed vocabulary, for the word-level model. Id 0 is "<unk>", the stand-in
    for every word the model never saw.

    Text is lowercased and cut into runs of letters, digits and apostrophes; every punctuation mark is a
    token of its own ("the dog runs." -> the, dog, runs, .). Spaces only separate.
    """

    UNKNOWN = "<unk>"
    _WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[^\w\s]", re.UNICODE)

    def __init__(self, words):
        words = list(dict.fromkeys(w.lower() for w in words if w.lower() != self.UNKNOWN))  # first spelling kept
        if not words:
            raise ValueError("A word tokenizer needs at least one word in its vocabulary.")
        bad = [w for w in words if self.split(w) != [w]]
        if bad:
            raise ValueError(f"A vocabulary entry must be one word or one punctuation mark; these are not: {bad}.")
        self.itos = [self.UNKNOWN, *words]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def split(cls, text: str) -> list[str]:
        """'The dog, near the trees.' -> ['the', 'dog', ',', 'near', 'the', 'trees', '.']"""
        if not isinstance(text, str):
            raise ValueError("The input must be text.")
        return cls._WORD.findall(text.lower())

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> np.ndarray:
        """str -> (T,) int64; a word outside the vocabulary maps to id 0."""
        return np.array([self.stoi.get(w, 0) for w in self.split(text)], dtype=np.int64)

    def decode(self, ids) -> str:
        """(T,) ids -> text: words joined by spaces, punctuation attached to the word before it."""
        words = [self.itos[int(i)] if 0 <= int(i) < len(self.itos) else self.UNKNOWN for i in ids]
        text = ""
        for w in words:
            glued = not (w[0].isalnum() or w == self.UNKNOWN)
            text += w if (glued or not text) else " " + w
        return text

    def unknown(self, text: str) -> list[str]:
        """The words of text outside the vocabulary (lowercased, in order, once each)."""
        return list(dict.fromkeys(w for w in self.split(text) if w not in self.stoi))

    def to_dict(self) -> dict:
        return {"kind": "word", "words": self.itos[1:]}

    @classmethod
    def from_dict(cls, d: dict) -> WordTokenizer:
        return cls(d["words"])

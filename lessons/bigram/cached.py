"""The bigram lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo). Here and not in page.py: the page is a script run again on every rerun, and a wrapper made
there would be made anew each time (ui/compute/cached.py says more).

They take small arguments (the text's source, the user's text, the vocabulary as a string), never the large id
arrays; the shipped model comes back from its source tuple (see ui.compute.model_store).
"""

from __future__ import annotations

import numpy as np

from core.data import pydoc_corpus
from core.tokenize import CharTokenizer
from lessons.bigram import maths
from ui.compute import model_store
from ui.compute.memo import shared

SOURCES = ("Python documentation", "Your own text")


@shared(32)
def split_text(source: str, own: str, chars: str) -> tuple[np.ndarray, np.ndarray]:
    """(fit ids, held-out ids) of the chosen text under the tokenizer of `chars` (the last 10% is held out).

    Shared, not copied: the documentation's ids are a few MB. They are read-only, so no caller can change
    what the others see."""
    tok = CharTokenizer(chars)
    if source == SOURCES[0]:
        corpus = pydoc_corpus(tokenizer=tok)  # the split the shipped model was validated on
        fit, held = np.array(corpus.train_ids), np.array(corpus.val_ids)
    else:
        fit, held = maths.held_out_split(tok.encode(own))
    for ids in (fit, held):
        ids.setflags(write=False)
    return fit, held


@shared(128)
def view(source: str, own: str, chars: str, alpha: float, n: int) -> dict:
    fit, held = split_text(source, own, chars)
    return maths.bigram_view(fit, held, len(chars) + 1, alpha, n)


@shared(128)
def sample(source: str, own: str, chars: str, alpha: float, length: int, seed: int) -> str:
    start = int(split_text(source, own, chars)[0][0])
    ids = maths.bigram_sample(view(source, own, chars, alpha, 2)["probs"], start, length, np.random.default_rng(seed))
    return CharTokenizer(chars).decode(ids)


@shared(32, spinner="Reading the held-out text with the transformer…")
def transformer_loss(model_source: tuple, source: str, own: str) -> float:
    m = model_store.from_source(model_source)
    return maths.model_loss(m.params, m.cfg, split_text(source, own, "".join(m.tokenizer.itos[1:]))[1])

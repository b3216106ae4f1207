"""The Full model lesson's computations, kept once per process and shared read-only by every session
(ui.compute.memo): the guessing game's text, bigram table, scores and puzzles, and why top-p's three ways of
writing. Here and not in page.py: the page is a script run again on every rerun, and a wrapper made there would
be made anew each time (ui/compute/cached.py says more)."""

from __future__ import annotations

import numpy as np

from core.bigram import bigram_counts, bigram_probs
from core.data import CorpusUnavailable, bigram_loss, pydoc_corpus, pydoc_text
from core.tokenize import CharTokenizer
from lessons.full_model import maths
from ui.compute import model_store
from ui.compute.memo import shared

# the guessing game
AFTER = 24  # characters of the text shown after the gap once it is revealed
SKIPPED = "\n"  # a box cannot take a line break, so no puzzle asks for one
MEASURED = 1000  # puzzles 0 to 999: the sample whose mean bits the score sets beside the held-out loss
# why top-p
PROMPT = "The attention "
LENGTH, SEEDS, P = 200, (0, 1), 0.9  # characters per text, the seeds of the random ways, the nucleus's share


@shared(4, spinner="Reading Python's documentation…")
def splits(chars: str) -> tuple[np.ndarray, np.ndarray]:
    """(train ids, held-out ids) of the documentation under the tokenizer of `chars`: the split the model
    was trained and validated on."""
    corpus = pydoc_corpus(tokenizer=CharTokenizer(chars))
    return np.array(corpus.train_ids), np.array(corpus.val_ids)


@shared(4)
def bigram_table(chars: str) -> np.ndarray:
    """(V, V) add-one bigram model fit on the training split: the baseline the model's file reports."""
    return bigram_probs(bigram_counts(splits(chars)[0], len(chars) + 1), alpha=1.0)


@shared(4, spinner="Scoring the held-out text…")
def measured(source: tuple) -> dict:
    """Each model's loss on the whole held-out text in nats, {model: loss} (the transformer's as training's
    validation measures it, the bigram's over every pair), and their mean bits over puzzles 0 to MEASURED - 1."""
    m = model_store.from_source(source)
    chars = "".join(m.tokenizer.itos[1:])
    held, table = splits(chars)[1], bigram_table(chars)
    skip = tuple(int(i) for i in m.tokenizer.encode(SKIPPED))
    return {"loss": {"bigram": bigram_loss(np.log(table), held[:-1], held[1:]),
                     "transformer": maths.held_out_loss(m.params, m.cfg, held)},
            "puzzles": maths.puzzle_bits(m.params, m.cfg, table, held, range(MEASURED), skip)}


@shared(256)
def puzzle(source: tuple, number: int) -> dict:
    """Puzzle `number` for the model of `source`: its position in the held-out text, the context the
    transformer reads (L,), the true next id, each model's probabilities (V,), and the text after it."""
    m = model_store.from_source(source)
    chars = "".join(m.tokenizer.itos[1:])
    held = splits(chars)[1]
    L = m.cfg.max_len
    t = maths.pick_position(held, number, L, skip=tuple(int(i) for i in m.tokenizer.encode(SKIPPED)))
    context = held[t - L:t]
    return {"position": t, "of": len(held), "context": context, "truth": int(held[t]),
            "after": held[t + 1:t + 1 + AFTER], "probs": maths.model_probs(m.params, m.cfg, bigram_table(chars),
                                                                           context)}


@shared(2, spinner="Writing with three ways of picking the next character…")
def top_p_figures(source: tuple) -> dict:
    """lessons.full_model.maths.compare on the prompt, with the words of the documentation the model learned from
    (none when this Python has no documentation: the share of real words is then left out)."""
    model = model_store.from_source(source)
    try:
        words = set(maths.WORD.findall(pydoc_text()))
    except CorpusUnavailable:
        words = set()
    ids = model.tokenizer.encode(PROMPT)
    found = maths.compare(model.params, model.cfg, model.tokenizer.decode, ids, LENGTH, SEEDS, P, words)
    return {"ways": found, "words": bool(words)}

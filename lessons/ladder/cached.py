"""What the Ladder page reads once per process and shares with every session: the shipped results, each rung's
weights, the documentation text the rungs were trained on, and each rung's reading of a prompt.

Shapes: L layers, H heads, T characters read.
"""

from __future__ import annotations

import numpy as np

from core.data import TextCorpus, pydoc_corpus
from core.tokenize import CharTokenizer
from lessons.ladder import maths
from ui.compute.memo import shared


class NotShipped(RuntimeError):
    """The shipped results or a rung's weights cannot be read (a copy of the app without them)."""


@shared(1)
def results() -> dict:
    """ladder.json, as python -m tools.train_ladder wrote it."""
    try:
        return maths.read_results()
    except (OSError, ValueError) as err:
        raise NotShipped(f"The ladder's results ({maths.RESULTS.name}) cannot be read in this copy of the app "
                         f"({type(err).__name__}); `{maths.COMMAND}` writes them again.") from None


@shared(len(maths.KEYS))
def rung_model(key: str) -> tuple[dict, object, CharTokenizer]:
    """A shipped rung's (params, cfg, tokenizer), read-only."""
    try:
        params, cfg, meta = maths.load_rung(key)
    except (OSError, ValueError, KeyError) as err:
        raise NotShipped(f"The weights of the rung {key!r} cannot be read ({err}).") from None
    return params, cfg, CharTokenizer.from_dict(meta["tokenizer"])


@shared(1)
def corpus() -> TextCorpus:
    """The documentation text in the rungs' windows; read-only."""
    data = pydoc_corpus(maths.SETTINGS.context)
    data.train_ids.setflags(write=False)
    data.val_ids.setflags(write=False)
    return data


@shared(64)
def reading(key: str, prompt: str) -> dict:
    """A transformer rung's attention on a prompt: the characters it read (the last max_len it knows) and the
    weights (L, H, T, T); no characters when it knows none of the prompt's."""
    params, cfg, tokenizer = rung_model(key)
    ids = maths.readable(tokenizer, prompt, cfg.max_len)
    if not len(ids):
        return {"chars": [], "weights": np.zeros((cfg.n_layers, cfg.n_heads, 0, 0))}
    return {"chars": list(tokenizer.decode(ids)), "weights": maths.attention_on(params, cfg, ids)}


@shared(len(maths.KEYS))
def looks(key: str) -> dict:
    """Where a transformer rung's heads look on the validation text (maths.where_heads_look): {"own", "previous"},
    each (L, H)."""
    params, cfg, _ = rung_model(key)
    return maths.where_heads_look(params, cfg, corpus())

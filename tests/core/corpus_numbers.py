"""The numbers the documentation corpus decides, computed the way the app computes them, on the running Python.

    python -m tests.core.corpus_numbers        # from the repository root: one line of JSON

tests/core/test_same_numbers_everywhere.py compares them with what the shipped model records and with what
other interpreters compute (run as a script under each, so nothing but the interpreter differs). The Bigram
lesson's figures are taken at the page's defaults: the documentation, alpha 1, 12 characters drawn, 200
characters sampled with seed 0.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np

from core.backward import loss_only
from core.data import pydoc_corpus, pydoc_text, text_digest
from core.model_file import load
from core.tokenize import CharTokenizer
from lessons.bigram.maths import bigram_sample, bigram_view, model_loss

MODEL = Path(__file__).resolve().parents[2] / "core" / "weights" / "pydoc_char"
ALPHA, TOP, SAMPLE, SEED = 1.0, 12, 200, 0  # lessons/bigram/page.py's defaults


def numbers() -> dict:
    params, cfg, meta = load(MODEL)
    tok = CharTokenizer.from_dict(meta["tokenizer"])
    text = pydoc_text()
    corpus = pydoc_corpus(cfg.max_len, tokenizer=tok)
    total = weight = 0.0
    for ids, targets, mask in corpus.val_batches(64):  # every validation window, as tools.train measured it
        total += ids.size * loss_only(params, cfg, ids, targets, mask)
        weight += ids.size
    fit, held = corpus.train_ids, corpus.val_ids  # the Bigram lesson's split of the documentation
    view = bigram_view(fit, held, tok.vocab_size, ALPHA, TOP)
    sample = bigram_sample(view["probs"], int(fit[0]), SAMPLE, np.random.default_rng(SEED))
    return {
        "python": platform.python_version(), "numpy": np.__version__,
        "digest": text_digest(text), "characters": len(text), "fit": len(fit), "held": len(held),
        "val_loss": total / weight, "bigram_val_loss": corpus.bigram_baseline(),
        "lesson_counts": int(view["counts"].sum()), "lesson_top": tok.decode(view["top"]),
        "lesson_covered": float(view["covered"]), "lesson_bigram_loss": view["loss"],
        "lesson_transformer_loss": model_loss(params, cfg, held), "lesson_sample": tok.decode(sample),
    }


if __name__ == "__main__":
    print(json.dumps(numbers()))

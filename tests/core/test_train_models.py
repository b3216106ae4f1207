"""The shipped models in core/weights: they load fast, beat the bigram baseline, and attend as expected."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from core.backward import loss_only
from core.data import TextCorpus, pydoc_corpus
from core.model import forward
from core.model_file import load
from core.sampling import generate
from core.tasks import SyntheticTask
from core.tokenize import CharTokenizer
from core.train import pattern_mass

WEIGHTS = Path(__file__).resolve().parents[2] / "core" / "weights"
TASK_MODELS = ("copy", "reverse", "induction")


def test_char_model_loads_fast_and_is_small():
    path = WEIGHTS / "pydoc_char"
    assert path.with_suffix(".npz").stat().st_size < 3_000_000
    start = time.perf_counter()
    _, cfg, meta = load(path)
    assert time.perf_counter() - start < 0.5
    assert meta["data"] == "pydoc" and meta["command"].startswith("python -m tools.train")
    assert CharTokenizer.from_dict(meta["tokenizer"]).vocab_size == cfg.vocab_size
    # The stored figures: far below the bigram baseline on the same split.
    assert meta["val_loss"] < meta["bigram_val_loss"] - 0.6
    assert abs(meta["train_loss"] - meta["val_loss"]) < 0.3  # no strong overfitting


def test_char_model_beats_the_bigram_baseline_here():
    """Recomputed on the shipped corpus (the recorded figures exactly: tests/core/test_same_numbers_everywhere.py)."""
    params, cfg, meta = load(WEIGHTS / "pydoc_char")
    corpus: TextCorpus = pydoc_corpus(cfg.max_len, tokenizer=CharTokenizer.from_dict(meta["tokenizer"]))
    batch = corpus.val_batches(batch_size=64, max_windows=64)[0]
    val = loss_only(params, cfg, batch.ids, batch.targets)
    assert val < corpus.bigram_baseline() - 0.5


def test_char_model_writes_something_like_the_docs():
    params, cfg, meta = load(WEIGHTS / "pydoc_char")
    tok = CharTokenizer.from_dict(meta["tokenizer"])
    out = tok.decode(generate(params, cfg, tok.encode("The "), 80, temperature=0))
    words = out.split()
    assert len(words) > 8 and sum(w.strip('.,:;"()').isalpha() for w in words) > len(words) / 2


@pytest.mark.parametrize("kind", TASK_MODELS)
def test_task_model_attends_where_the_answer_is(kind):
    """At the second-half queries, one head puts most of its weight on the key holding the answer:
    copy i - L (a shifted diagonal), reverse 2L - 1 - i (an anti-diagonal), induction i - L + 1."""
    params, cfg, meta = load(WEIGHTS / kind)
    task = SyntheticTask(**meta["task"])
    assert task.kind == kind and task.vocab_size == cfg.vocab_size
    batch = task.val_batches(128, 128)[0]
    logits, trace = forward(params, cfg, batch.ids)
    keys = task.expected_keys()
    q = np.flatnonzero(keys >= 0)
    accuracy = (logits.argmax(-1) == batch.targets)[:, q].mean()
    assert accuracy > 0.95
    mass = np.array([layer.weights[:, :, q, keys[q]].mean(axis=(0, 2)) for layer in trace.layers])  # (L, H)
    np.testing.assert_allclose(pattern_mass(params, cfg, task, 128), mass, rtol=1e-5)
    assert mass.max() > 0.5, f"attention mass on the expected key per layer x head: {mass.round(2)}"
    layer, head = np.unravel_index(mass.argmax(), mass.shape)
    assert (meta["pattern"]["layer"], meta["pattern"]["head"]) == (layer, head)  # stored for the UI
    assert meta["pattern"]["mass"] == pytest.approx(mass.max(), abs=0.05)
    assert meta["val_loss"] < 0.1 < meta["bigram_val_loss"]

"""The Ladder lesson's shipped results (lessons/ladder/weights/, written by python -m tools.train_ladder) against
the code: each rung is the model it says, its validation loss recomputed by the core equals the shipped figure, the
files carry the corpus's digest and the settings of lessons/ladder/maths.py, and retraining reproduces them (the
first steps of two rungs on the shipped text; a tiny ladder on a slice of it, through the tool itself)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from core.bigram import BigramConfig, bigram_counts, bigram_probs
from core.costs import count_params, param_count
from core.data import pydoc_corpus, pydoc_record, pydoc_text, text_corpus, text_digest
from core.model import ModelConfig
from core.model_file import flatten, load
from core.tokenize import CharTokenizer
from core.train import Trainer
from lessons.ladder import maths
from tools import train_ladder

RESULTS = maths.read_results()
RECORDS = {rec["key"]: rec for rec in RESULTS["rungs"]}
CORPUS = pydoc_corpus(maths.SETTINGS.context)
TOL = 1e-5  # float32 sums over 36,000 characters, which BLAS may round a little differently elsewhere


@pytest.fixture(scope="module", params=maths.KEYS)
def shipped(request):
    key = request.param
    params, cfg, meta = maths.load_rung(key)
    return maths.rung(key), params, cfg, meta


def test_every_rung_is_shipped_once_in_order():
    assert tuple(RECORDS) == maths.KEYS
    for key in maths.KEYS:
        assert (maths.WEIGHTS / f"{key}.npz").is_file() and (maths.WEIGHTS / f"{key}.json").is_file()


def test_each_rung_is_the_model_it_says(shipped):
    r, params, cfg, _ = shipped
    assert cfg == maths.config(r, CORPUS.vocab_size)
    names = flatten(params)
    record = RECORDS[r.key]
    assert record["parameters"] == count_params(params)
    if not r.attention:
        assert isinstance(cfg, BigramConfig) and list(names) == ["wte"]
        assert record["parameters"] == CORPUS.vocab_size ** 2
        return
    assert isinstance(cfg, ModelConfig) and record["parameters"] == param_count(cfg)["total"]
    blocks = params["blocks"]
    assert len(blocks) == (maths.SETTINGS.more_blocks if r.more_blocks else 1)
    assert cfg.n_heads == (maths.SETTINGS.n_heads if r.several_heads else 1)
    assert all(("mlp" in b) == r.feed_forward for b in blocks)
    assert all(("ln_1" in b) == r.layer_norm for b in blocks) and ("ln_f" in params) == r.layer_norm
    assert cfg.residual == r.residual and "wpe" in params
    assert record["pieces"] == maths.pieces(cfg)


def test_each_rung_adds_one_piece_to_the_one_below():
    """Beyond the two bigrams, a rung's model differs from the rung below it in the piece it names alone."""
    flags = ("several_heads", "feed_forward", "residual", "layer_norm", "more_blocks")
    trained = [r for r in maths.RUNGS if r.attention]
    assert not trained[0].several_heads and not any(getattr(trained[0], f) for f in flags[1:])
    for below, above in itertools.pairwise(trained):
        changed = [f for f in flags if getattr(below, f) != getattr(above, f)]
        assert len(changed) == 1 and getattr(above, changed[0]), (below.key, above.key, changed)


def test_the_validation_loss_recomputed_by_the_core_equals_the_shipped_figure(shipped):
    r, params, cfg, _ = shipped
    record = RECORDS[r.key]
    val = Trainer(cfg, CORPUS, params=params).evaluate(None)
    assert val == pytest.approx(record["val_loss"], abs=TOL)
    assert record["val_bits"] == pytest.approx(record["val_loss"] / math.log(2), rel=1e-12)
    if not r.attention:  # the training split is nine times as long: the tables' losses are cheap to recompute
        assert Trainer(cfg, CORPUS, params=params).evaluate(None, split="train") == pytest.approx(
            record["train_loss"], abs=TOL)


def test_the_sample_is_what_the_shipped_weights_write(shipped):
    r, params, cfg, meta = shipped
    tokenizer = CharTokenizer.from_dict(meta["tokenizer"])
    assert maths.sample(params, cfg, tokenizer) == RECORDS[r.key]["sample"]
    assert len(RECORDS[r.key]["sample"]) == maths.SETTINGS.sample_chars


def test_the_files_carry_the_corpus_digest_and_the_settings_of_the_code(shipped):
    r, _, _, meta = shipped
    record = pydoc_record()
    for doc in (RESULTS, meta):
        assert doc["corpus_digest"] == record["corpus_digest"] == text_digest(pydoc_text())
        assert doc["corpus_file"] == record["corpus_file"]
        assert doc["settings"] == maths.settings_dict()
        assert doc["command"].startswith(maths.COMMAND)
    assert maths.settings_of(RESULTS) == maths.SETTINGS
    assert meta["rung"] == RECORDS[r.key]
    assert RESULTS["vocab_size"] == CORPUS.vocab_size and RESULTS["val_characters"] == len(CORPUS.val_ids)


def test_the_counted_rung_is_the_count_table():
    params, _, _ = maths.load_rung("counts")
    probs = bigram_probs(bigram_counts(CORPUS.train_ids, CORPUS.vocab_size), alpha=1.0)
    np.testing.assert_array_equal(params["wte"], np.log(probs).astype(np.float32))
    assert RECORDS["counts"]["steps"] == 0 and RECORDS["counts"]["curve"]["step"] == [0]
    assert RECORDS["counts"]["val_loss"] == pytest.approx(CORPUS.bigram_baseline(), abs=2e-3)  # the tail's pairs


def test_the_curves_are_measured_where_the_settings_say():
    s = maths.SETTINGS
    for key, rec in RECORDS.items():
        if key == "counts":
            continue
        assert rec["curve"]["step"] == list(range(0, s.steps + 1, s.eval_every))
        assert len(rec["curve"]["train"]) == len(rec["curve"]["val"]) == len(rec["curve"]["step"])
        assert rec["steps"] == s.steps
        assert rec["curve"]["val"][0] == pytest.approx(math.log(CORPUS.vocab_size), abs=0.15)  # near a uniform guess


@pytest.mark.parametrize("key", ["bigram", "one_head"])
def test_retraining_the_first_steps_reproduces_the_shipped_curve(key):
    """Same code, text, settings and seed: the first eval_every steps land where the shipped curve says."""
    s = maths.SETTINGS
    _, record = maths.train_rung(maths.rung(key), CORPUS, steps=s.eval_every)
    shipped = RECORDS[key]["curve"]
    for split in ("train", "val"):
        np.testing.assert_allclose(record["curve"][split], shipped[split][:2], atol=1e-4)


def test_the_tool_writes_a_tiny_ladder_on_a_slice_that_reads_back(tmp_path):
    """python -m tools.train_ladder's own function on 30,000 characters, three rungs, 20 steps: every file it
    writes names the slice by its digest and the settings, and each loss it records is the loss the core
    recomputes from the weights it wrote."""
    text = pydoc_text()[:30_000]
    settings = maths.Settings(steps=20, eval_every=10, eval_windows=8, sample_chars=20, warmup_steps=5)  # tiny
    corpus = text_corpus(text, settings.context, name="slice")
    record = {"text_digest": text_digest(text), "text_characters": len(text)}  # not the shipped file: load would refuse
    #   a corpus_digest without its corpus_file
    results = train_ladder.train_ladder(corpus, record, tmp_path, settings, keys=("counts", "bigram", "one_head"),
                                        log=lambda line: None)
    assert json.loads((tmp_path / "ladder.json").read_text()) == results
    assert results["settings"] == maths.settings_dict(settings) and results["text_digest"] == text_digest(text)
    assert [rec["key"] for rec in results["rungs"]] == ["counts", "bigram", "one_head"]
    for rec in results["rungs"]:
        params, cfg, meta = load(tmp_path / rec["key"])
        assert meta["text_digest"] == text_digest(text) and meta["rung"] == rec
        assert Trainer(cfg, corpus, params=params).evaluate(None) == pytest.approx(rec["val_loss"], abs=TOL)
        assert rec["curve"]["step"] == ([0] if rec["key"] == "counts" else [0, 10, 20])
    assert results["rungs"][2]["val_loss"] < results["rungs"][2]["curve"]["val"][0]  # it learnt something


def test_the_tool_names_its_rungs_and_folder():
    args = train_ladder._parser().parse_args(["--only", "one_head", "heads", "--out", "/tmp/x"])
    assert args.only == ["one_head", "heads"] and args.out == "/tmp/x"
    with pytest.raises(SystemExit):
        train_ladder._parser().parse_args(["--only", "nope"])

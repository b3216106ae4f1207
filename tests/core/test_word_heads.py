"""The shipped toy_english model's heads (core/demos/word_heads.py): each rule of the grammar is right on
test sentences with a distractor, a head looks from the deciding query at the cue, and switching it
off breaks the rule. Thresholds sit a margin under the figures measured on the shipped model (docs/MODELS.md).

Shapes: T sequence length (start marker included), D d_model, L layers, H heads per layer, d_k per head.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from core.demos import word_heads as wh
from core.model import Knockout

N = 128  # test sentences per rule: enough for the margins below, fast to read


@cache
def figures(kind: str) -> dict:
    return wh.rule_figures(wh.word_model(), kind, n=N)


# (rule, accuracy at least, the head with the largest share, its share at least, the carrier: the head
# whose loss costs the most)
MEASURED = {
    "agreement": dict(accuracy=0.95, head=(1, 3), share=0.93, carrier=(1, 3)),  # measured 1.00, share 0.98
    "pronoun": dict(accuracy=0.95, head=(1, 0), share=0.95, carrier=(1, 0)),  # measured 1.00, share 1.00
    "bank": dict(accuracy=0.95, head=(0, 2), share=0.9, carrier=(0, 2)),  # measured 1.00, share 0.96
}


@pytest.mark.parametrize("kind", sorted(MEASURED))
def test_each_rule_is_right_on_test_sentences_with_a_distractor(kind):
    f, m = figures(kind), MEASURED[kind]
    assert all(s.contrast for s in wh.rule_sentences(kind, N))
    assert f["accuracy"] >= m["accuracy"] and f["top"] >= m["accuracy"] - 0.05
    assert f["log_odds"] > 3  # the right class is over 20 times likelier than the wrong one


@pytest.mark.parametrize("kind", sorted(MEASURED))
def test_a_head_looks_from_the_deciding_query_at_the_cue(kind):
    f, m = figures(kind), MEASURED[kind]
    assert f["shares"].shape == (2, 4) and ((0 <= f["shares"]) & (f["shares"] <= 1)).all()
    assert f["head"] == m["head"] and f["share"] >= m["share"]
    stored = wh.word_model().meta["phenomena"][kind]  # what the JSON says, for the pages
    assert tuple(stored["head"]) == f["head"] and stored["share"] == pytest.approx(f["share"], abs=0.05)


@pytest.mark.parametrize("kind", sorted(MEASURED))
def test_switching_off_the_heads_that_look_at_the_cue_breaks_the_rule(kind):
    f, m = figures(kind), MEASURED[kind]
    assert f["carrier"] == m["carrier"]
    assert f["off_accuracy"][m["carrier"]] <= f["accuracy"] - 0.3  # alone, the carrier's loss is felt
    assert f["pair_accuracy"] <= f["accuracy"] - 0.3 and f["pair_log_odds"] < f["log_odds"] - 4
    others = np.delete(f["off_log_odds"].ravel(), np.ravel_multi_index(m["carrier"], f["shares"].shape))
    assert np.median(others) > f["log_odds"] - 1  # most heads barely matter to this rule


def test_trained_attention_reads_a_sentence_and_names_unknown_words():
    model = wh.word_model()
    seen = wh.trained_attention("The dogs near the zebra run.")
    assert seen["tokens"] == [".", "the", "dogs", "near", "the", "zebra", "run", "."]
    assert seen["unknown"] == ["zebra"] and seen["ids"][5] == 0 and seen["cut"] == 0
    T = len(seen["tokens"])
    assert seen["weights"].shape == (model.cfg.n_layers, model.cfg.n_heads, T, T)
    np.testing.assert_allclose(seen["weights"].sum(-1), 1, atol=1e-5)
    assert np.allclose(np.triu(seen["weights"], 1), 0)  # causal: nothing looks ahead
    assert seen["next"].shape == (T, model.cfg.vocab_size)
    long = wh.trained_attention(" ".join(["the dog"] * 10))
    assert len(long["tokens"]) == model.cfg.max_len and long["cut"] == 21 - model.cfg.max_len


def test_first_layer_qkv_is_the_first_layers_own_computation():
    model = wh.word_model()
    f = wh.first_layer_qkv("she saw the river by the bank")
    T, D, H = 8, model.cfg.d_model, model.cfg.n_heads
    assert f["tokens"][0] == "." and len(f["tokens"]) == T
    assert f["token"].shape == f["position"].shape == f["x"].shape == f["attn_in"].shape == (T, D)
    np.testing.assert_allclose(f["token"] + f["position"], f["x"], atol=1e-6)
    np.testing.assert_allclose(f["position"], model.params["wpe"][:T], atol=1e-6)
    assert f["q"].shape == f["k"].shape == f["v"].shape == (H, T, D // H) and f["weights"].shape == (H, T, T)
    seen = wh.trained_attention("she saw the river by the bank".split())  # a list of words reads the same
    np.testing.assert_allclose(f["weights"], seen["weights"][0], atol=1e-6)


def test_knocking_out_a_head_changes_only_what_it_carries():
    """With the pronoun's carrier off the model still agrees verbs: heads do separate jobs."""
    model = wh.word_model()
    carrier = MEASURED["pronoun"]["carrier"]
    agreement = wh.read_rule(model, wh.rule_sentences("agreement", N), Knockout((carrier,)))
    assert agreement["accuracy"] >= figures("agreement")["accuracy"] - 0.1


def test_untrained_is_the_same_architecture_and_training_drew_its_sentences():
    assert wh.untrained().cfg == wh.word_model().cfg and wh.training_draws() == 3000 * 64

"""core.demos.guessing: puzzles picked reproducibly, guesses checked, rounds scored in hits and bits."""

from __future__ import annotations

import numpy as np
import pytest

from core.demos import guessing
from core.model import ModelConfig, init_params
from core.sampling import next_token_probs
from core.tokenize import CharTokenizer

TOK = CharTokenizer("\n abcdefgh.")


def test_a_puzzle_number_always_gives_the_same_position_with_its_context_before_it():
    ids = TOK.encode("abc defg.\nhabc defg.\nha bc\nde fgh." * 5)
    newline = int(TOK.encode("\n")[0])
    seen = set()
    for number in range(40):
        t = guessing.pick_position(ids, number, 8, skip=(newline,))
        assert t == guessing.pick_position(ids, number, 8, skip=(newline,))
        assert 8 <= t < len(ids) and ids[t] != newline
        seen.add(t)
    assert len(seen) > 20  # different numbers, different places


@pytest.mark.parametrize("ids, number, context, message", [
    (np.arange(5) % 3, -1, 2, "puzzle number"),
    (np.arange(5) % 3, 1.5, 2, "puzzle number"),
    (np.arange(5) % 3, 0, 0, "context"),
    (np.arange(5) % 3, 0, 5, "no position"),
    (np.zeros(9, dtype=int), 0, 2, "no position"),  # every candidate is skipped
])
def test_a_puzzle_that_cannot_be_made_says_why(ids, number, context, message):
    with pytest.raises(ValueError, match=message):
        guessing.pick_position(ids, number, context, skip=(0,))


def test_a_guess_is_one_character_of_the_vocabulary():
    assert guessing.check_guess("c", TOK) == TOK.stoi["c"]
    assert guessing.check_guess(" ", TOK) == TOK.stoi[" "]  # a space is a guess


@pytest.mark.parametrize("typed, message", [
    ("", "Type one character first"),
    ("ab", "exactly one character; this guess has 2"),
    ("a ", "exactly one character"),
    ("é", "plain ASCII"),
    ("😀", "plain ASCII"),  # not "2 characters": the emoji is not ASCII whatever its length
    ("👩\u200d💻", "plain ASCII"),
    ("z", "never occurs in this text"),
    ("\t", "never occurs in this text"),
    (None, "Type one character first"),
])
def test_a_bad_guess_is_refused_with_a_sentence(typed, message):
    with pytest.raises(ValueError, match=message):
        guessing.check_guess(typed, TOK)


def test_bits_are_minus_log2_p():
    assert guessing.bits(1.0) == 0.0
    assert guessing.bits(0.5) == 1.0
    assert guessing.bits(1 / 8) == pytest.approx(3.0)
    assert guessing.bits(0.0) == np.inf  # ruled out: infinitely surprising, without a warning


def test_a_round_scores_hits_for_everyone_and_bits_for_the_models():
    bigram = np.array([0.1, 0.6, 0.3])
    transformer = np.array([0.05, 0.15, 0.8])
    r = guessing.score(guess=1, truth=2, probs={"bigram": bigram, "transformer": transformer})
    assert r["hits"] == {"you": False, "bigram": False, "transformer": True}
    assert r["top"] == {"bigram": 1, "transformer": 2}
    assert r["p_guess"] == {"bigram": 0.6, "transformer": 0.15}
    assert r["p_truth"] == {"bigram": 0.3, "transformer": 0.8}
    assert r["bits"]["bigram"] == pytest.approx(-np.log2(0.3))
    assert r["bits"]["transformer"] == pytest.approx(-np.log2(0.8))
    right = guessing.score(2, 2, {"bigram": bigram, "transformer": transformer})
    assert right["hits"]["you"] and right["p_guess"] == right["p_truth"]


def test_the_tally_counts_hits_and_averages_bits():
    probs = {"bigram": np.array([0.5, 0.25, 0.25]), "transformer": np.array([0.25, 0.5, 0.25])}
    rounds = [guessing.score(0, 0, probs), guessing.score(1, 1, probs), guessing.score(0, 2, probs)]
    s = guessing.tally(rounds)
    assert s["rounds"] == 3
    assert s["hits"] == {"you": 2, "bigram": 1, "transformer": 1}
    assert s["mean_bits"]["bigram"] == pytest.approx((1 + 2 + 2) / 3)
    assert s["mean_bits"]["transformer"] == pytest.approx((2 + 1 + 2) / 3)
    empty = guessing.tally([])
    assert empty == {"rounds": 0, "hits": {"you": 0, "bigram": 0, "transformer": 0},
                     "mean_bits": {"bigram": None, "transformer": None}}


def test_each_model_reads_what_it_can():
    """The bigram row of the last id alone; the transformer's next-token distribution over its window."""
    V = TOK.vocab_size
    cfg = ModelConfig(vocab_size=V, d_model=8, n_heads=2, n_layers=1, max_len=6)
    params = init_params(cfg, np.random.default_rng(0))
    table = np.random.default_rng(1).dirichlet(np.ones(V), size=V)  # (V, V)
    context = TOK.encode("abc dabc")  # longer than max_len: the model reads the last 6
    got = guessing.model_probs(params, cfg, table, context)
    np.testing.assert_array_equal(got["bigram"], table[context[-1]])
    np.testing.assert_allclose(got["transformer"], next_token_probs(params, cfg, context[-6:]), rtol=1e-12)
    assert got["transformer"].sum() == pytest.approx(1.0)

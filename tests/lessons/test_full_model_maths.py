"""The Full model lesson's set-ups (lessons/full_model/maths.py): the guessing game's puzzles picked reproducibly,
guesses checked, rounds scored in hits and bits; and why nucleus sampling exists: greedy decoding loops, pure
sampling draws from the tail, top-p never does, and the decoding loop draws what core.sampling.generate draws."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import pydoc_text
from core.model import ModelConfig, init_params
from core.sampling import generate, next_token_probs, nucleus
from core.tokenize import CharTokenizer
from lessons.full_model import maths
from ui.compute import model_store

# ---- the guessing game -------------------------------------------------------------------------------

TOK = CharTokenizer("\n abcdefgh.")


def test_a_puzzle_number_always_gives_the_same_position_with_its_context_before_it():
    ids = TOK.encode("abc defg.\nhabc defg.\nha bc\nde fgh." * 5)
    newline = int(TOK.encode("\n")[0])
    seen = set()
    for number in range(40):
        t = maths.pick_position(ids, number, 8, skip=(newline,))
        assert t == maths.pick_position(ids, number, 8, skip=(newline,))
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
        maths.pick_position(ids, number, context, skip=(0,))


def test_a_guess_is_one_character_of_the_vocabulary():
    assert maths.check_guess("c", TOK) == TOK.stoi["c"]
    assert maths.check_guess(" ", TOK) == TOK.stoi[" "]  # a space is a guess


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
        maths.check_guess(typed, TOK)


def test_bits_are_minus_log2_p():
    assert maths.bits(1.0) == 0.0
    assert maths.bits(0.5) == 1.0
    assert maths.bits(1 / 8) == pytest.approx(3.0)
    assert maths.bits(0.0) == np.inf  # ruled out: infinitely surprising, without a warning


def test_a_round_scores_hits_for_everyone_and_bits_for_the_models():
    bigram = np.array([0.1, 0.6, 0.3])
    transformer = np.array([0.05, 0.15, 0.8])
    r = maths.score(guess=1, truth=2, probs={"bigram": bigram, "transformer": transformer})
    assert r["hits"] == {"you": False, "bigram": False, "transformer": True}
    assert r["top"] == {"bigram": 1, "transformer": 2}
    assert r["p_guess"] == {"bigram": 0.6, "transformer": 0.15}
    assert r["p_truth"] == {"bigram": 0.3, "transformer": 0.8}
    assert r["bits"]["bigram"] == pytest.approx(-np.log2(0.3))
    assert r["bits"]["transformer"] == pytest.approx(-np.log2(0.8))
    right = maths.score(2, 2, {"bigram": bigram, "transformer": transformer})
    assert right["hits"]["you"] and right["p_guess"] == right["p_truth"]


def test_the_tally_counts_hits_and_averages_bits():
    probs = {"bigram": np.array([0.5, 0.25, 0.25]), "transformer": np.array([0.25, 0.5, 0.25])}
    rounds = [maths.score(0, 0, probs), maths.score(1, 1, probs), maths.score(0, 2, probs)]
    s = maths.tally(rounds)
    assert s["rounds"] == 3
    assert s["hits"] == {"you": 2, "bigram": 1, "transformer": 1}
    assert s["mean_bits"]["bigram"] == pytest.approx((1 + 2 + 2) / 3)
    assert s["mean_bits"]["transformer"] == pytest.approx((2 + 1 + 2) / 3)
    empty = maths.tally([])
    assert empty == {"rounds": 0, "hits": {"you": 0, "bigram": 0, "transformer": 0},
                     "mean_bits": {"bigram": None, "transformer": None}}


def test_each_model_reads_what_it_can():
    """The bigram row of the last id alone; the transformer's next-token distribution over its window."""
    V = TOK.vocab_size
    cfg = ModelConfig(vocab_size=V, d_model=8, n_heads=2, n_layers=1, max_len=6)
    params = init_params(cfg, np.random.default_rng(0))
    table = np.random.default_rng(1).dirichlet(np.ones(V), size=V)  # (V, V)
    context = TOK.encode("abc dabc")  # longer than max_len: the model reads the last 6
    got = maths.model_probs(params, cfg, table, context)
    np.testing.assert_array_equal(got["bigram"], table[context[-1]])
    np.testing.assert_allclose(got["transformer"], next_token_probs(params, cfg, context[-6:]), rtol=1e-12)
    assert got["transformer"].sum() == pytest.approx(1.0)


# ---- why top-p ---------------------------------------------------------------------------------------

PROMPT = "The attention "


@pytest.fixture(scope="module")
def model():
    return model_store.load_model("pydoc_char")


@pytest.mark.parametrize("way", maths.WAYS)
def test_decode_draws_what_generate_draws_and_keeps_each_distribution(way):
    cfg = ModelConfig(vocab_size=11, d_model=16, n_heads=2, n_layers=2, max_len=8)
    params = init_params(cfg, np.random.default_rng(1))
    prompt = [1, 2, 3]
    ids, probs = maths.decode(params, cfg, prompt, 20, way, 0.8, 5)  # past max_len: the sliding window
    want = generate(params, cfg, np.array(prompt), 20, temperature=0.0 if way == "greedy" else 1.0,
                    rng=np.random.default_rng(5), top_p=0.8 if way == "top-p" else None)
    np.testing.assert_array_equal(ids, want)
    assert probs.shape == (20, cfg.vocab_size)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    if way == "greedy":
        np.testing.assert_array_equal(ids[3:], probs.argmax(axis=1))


def test_tail_draws_are_the_tokens_outside_the_nucleus():
    probs = np.array([[0.5, 0.3, 0.15, 0.05], [0.9, 0.05, 0.03, 0.02]])
    assert maths.tail_draws(probs, [3, 0], 0.9).tolist() == [True, False]
    assert maths.tail_draws(probs, [2, 1], 0.9).tolist() == [False, True]
    kept = nucleus(probs, 0.9) > 0
    assert kept.sum(axis=1).tolist() == [3, 1]


def test_loop_finds_the_cycle_a_text_ends_in():
    assert maths.loop([5, 1, 2, 3, 1, 2, 3, 1, 2, 3]) == {"period": 3, "start": 1, "cycle": [1, 2, 3]}
    assert maths.loop([1, 2, 3, 4, 5, 6]) is None
    assert maths.loop([7, 7, 7, 7])["period"] == 1


def test_known_word_share():
    assert maths.known_word_share("the cat sat on a mat", {"the", "cat", "mat"}) == pytest.approx(3 / 4)
    assert np.isnan(maths.known_word_share("a b", {"a"}))


def test_on_the_character_model_greedy_loops_pure_wanders_and_top_p_cuts_the_tail(model):
    """The figures the Full model page states: greedy ends in a loop; pure sampling draws from outside the 90%
    nucleus several times in 200 characters and writes fewer real words than top-p, which never does."""
    words = set(maths.WORD.findall(pydoc_text()))
    r = maths.compare(model.params, model.cfg, model.tokenizer.decode, model.tokenizer.encode(PROMPT), 200,
                      (0, 1), 0.9, words)
    assert r["greedy"]["loop"] is not None and r["greedy"]["loop"]["start"] < 150
    assert r["greedy"]["tail"] == [0]
    assert min(r["pure"]["tail"]) >= 5 and r["pure"]["loop"] is None
    assert max(r["pure"]["tail_probs"]) < 0.1  # the tail: characters the model gave little
    assert r["top-p"]["tail"] == [0, 0] and r["top-p"]["texts"][0] != r["top-p"]["texts"][1]
    assert np.mean(r["top-p"]["known"]) > np.mean(r["pure"]["known"]) + 0.1

"""Why nucleus sampling exists (lessons/full_model/maths.py): greedy decoding loops, pure sampling draws from the tail,
top-p never does; the decoding loop draws what core.sampling.generate draws."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import pydoc_text
from core.model import ModelConfig, init_params
from core.sampling import generate, nucleus
from lessons.full_model import maths
from ui.compute import model_store

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

"""The QKV set-ups: the geometry of a score, a · b = |a| |b| cos θ, worked out component by component and by
angle; and the shipped word model on a sentence: its next words, the running average against a trained head,
and one layer's heads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.attention import causal_mask, softmax
from core.demos.word_heads import trained_attention, word_model
from core.toy_english import TOPICS
from lessons.qkv.maths import (
    angle_between,
    arrow,
    average_or_attend,
    extreme_pair,
    layer_heads,
    next_words,
    score_geometry,
    sign_word,
    two_arrows,
)

AGREEMENT = "the dog near the trees runs ."  # an agreement sentence in the word model's words


@pytest.mark.parametrize(("turn", "dot", "sign"), [(0, 1.0, "positive"), (90, 0.0, "zero"), (180, -1.0, "negative"),
                                                   (270, 0.0, "zero"), (360, 1.0, "positive")])
def test_unit_arrows_at_the_three_landmarks(turn, dot, sign):
    g = two_arrows(0, turn)
    assert g["dot"] == dot  # exactly: a right angle gives 0, not 6e-17
    assert g["polar"] == dot and g["sign"] == sign


def test_lengths_scale_the_dot_product():
    assert two_arrows(40, 40, 2.0, 1.5)["dot"] == pytest.approx(3.0)  # aligned: |a| |b|
    assert two_arrows(10, 190, 2.0, 1.5)["dot"] == pytest.approx(-3.0)  # opposite: -|a| |b|
    g = two_arrows(30, 120, 2.0, 1.5)
    assert g["dot"] == 0.0 and g["sign"] == "zero" and g["largest"] == 3.0


@pytest.mark.parametrize("b", range(0, 361, 5))
def test_components_and_angle_agree(b):
    g = two_arrows(35, b, 1.25, 0.75)
    assert g["dot"] == pytest.approx(g["polar"], abs=1e-9)
    assert g["dot"] == pytest.approx(1.25 * 0.75 * math.cos(math.radians(b - 35)), abs=1e-9)
    assert g["sign"] == ("zero" if g["theta"] == 90 else "positive" if g["theta"] < 90 else "negative")
    assert np.linalg.norm(g["a"]) == pytest.approx(1.25) and np.linalg.norm(g["b"]) == pytest.approx(0.75)


def test_angle_between_folds_into_0_to_180():
    assert angle_between(10, 350) == 20 and angle_between(350, 10) == 20
    assert angle_between(0, 180) == 180 and angle_between(90, 90) == 0 and angle_between(0, 270) == 90


def test_arrow_points_anticlockwise_from_x():
    assert arrow(0).tolist() == [1.0, 0.0] and arrow(90, 2).tolist() == [0.0, 2.0]
    assert arrow(180).tolist() == [-1.0, 0.0] and arrow(270).tolist() == [0.0, -1.0]
    assert not np.signbit(arrow(90)).any()  # no -0.0 to print as "-0.000"


@pytest.mark.parametrize(("angle", "length"), [(math.inf, 1), (math.nan, 1), (0, -1), (0, math.nan)])
def test_arrow_refuses_what_is_not_an_arrow(angle, length):
    with pytest.raises(ValueError, match="finite angle"):
        arrow(angle, length)


def test_sign_word():
    assert sign_word(0.0) == "zero" and sign_word(-1e-3) == "negative" and sign_word(1e-3) == "positive"


@pytest.mark.parametrize(("a", "b"), [(30, 120), (45, 135), (10, 280), (75, 345)])
def test_right_angles_anywhere_give_exactly_zero(a, b):
    g = two_arrows(a, b, 1.75, 0.5)
    assert g["dot"] == 0.0 and not math.copysign(1, g["dot"]) < 0 and g["sign"] == "zero"


def test_score_geometry_rebuilds_the_scores():
    rng = np.random.default_rng(3)
    Q, K = rng.standard_normal((5, 4)), rng.standard_normal((6, 4))
    g = score_geometry(Q, K)
    np.testing.assert_allclose(g["scores"], Q @ K.T)
    np.testing.assert_allclose(np.outer(g["q_len"], g["k_len"]) * g["cos"], Q @ K.T, atol=1e-12)
    assert (g["theta"] >= 0).all() and (g["theta"] <= 180).all()
    for i in range(5):  # against a plain loop
        for j in range(6):
            cos = Q[i] @ K[j] / (np.linalg.norm(Q[i]) * np.linalg.norm(K[j]))
            assert g["cos"][i, j] == pytest.approx(cos)


def test_a_zero_vector_has_cosine_zero():
    g = score_geometry(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 1.0]]))
    assert g["cos"][:, 0].tolist() == [0.0, pytest.approx(math.sqrt(0.5))]


def test_extreme_pairs():
    Q = np.array([[1.0, 0.0], [0.0, 2.0]])
    K = np.array([[3.0, 0.0], [0.0, -1.0]])
    high, low = extreme_pair(Q, K), extreme_pair(Q, K, highest=False)
    assert (high["query"], high["key"], high["score"], high["theta"]) == (0, 0, 3.0, 0.0)
    assert (low["query"], low["key"], low["score"], low["theta"]) == (1, 1, -2.0, 180.0)
    assert (low["q_len"], low["k_len"], low["cos"]) == (2.0, 1.0, -1.0)


def test_score_geometry_checks_widths():
    with pytest.raises(ValueError, match="same width"):
        score_geometry(np.ones((2, 3)), np.ones((2, 4)))


def test_the_model_completes_each_rule():
    assert next_words("the dog near the trees", 1)[0][0] in ("runs", "sleeps", "waits", "eats")
    assert next_words("the dogs near the tree", 1)[0][0] in ("run", "sleep", "wait", "eat")
    assert next_words("the queen met the king so", 1)[0][0] == "she"
    assert next_words("the old king called the girl because", 1)[0][0] == "he"
    for cue, sense in (("river", "river"), ("stream", "river"), ("money", "money"), ("cheque", "money")):
        top = next_words(f"he saw the {cue} by the old bank", 3)
        assert {w for w, _ in top} == set(TOPICS[sense]), (cue, top)


def test_averaging_gives_the_cue_an_equal_share_and_attention_gives_it_most():
    a = average_or_attend()
    for s in a["sentences"]:
        assert s["average"].sum() == pytest.approx(1.0) and np.allclose(s["average"][: s["at"] + 1], 1 / (s["at"] + 1))
        assert s["cue_average"] == pytest.approx(1 / (s["at"] + 1)) and s["cue_attended"] > 0.9
        assert s["tokens"][s["cue"]] in ("river", "money")
    np.testing.assert_array_equal(a["sentences"][0]["average"], a["sentences"][1]["average"])  # whatever the words
    assert a["head"] == tuple(word_model().meta["phenomena"]["bank"]["head"])
    with pytest.raises(ValueError):
        average_or_attend("she saw the river", "she saw the money by the bank")


def test_layer_heads_weights_are_the_softmax_of_the_masked_scores():
    a = layer_heads(AGREEMENT, 1)
    T = len(a["tokens"])
    masked = np.where(causal_mask(T), np.asarray(a["scores"], dtype=np.float64), -np.inf)
    assert softmax(masked) == pytest.approx(np.asarray(a["weights"], dtype=np.float64), abs=1e-5)
    assert np.asarray(a["weights"]) == pytest.approx(np.asarray(trained_attention(AGREEMENT)["weights"][1]))

"""The geometry of a score: a · b = |a| |b| cos θ, worked out component by component and by angle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lessons.qkv.maths import angle_between, arrow, extreme_pair, score_geometry, sign_word, two_arrows


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

"""The dot product's geometry on the QKV page: two arrows the student turns, a · b = |a| |b| cos θ worked out by
the core, its sign called out, the link's angles and lengths checked, and the sentence's scores taken apart."""

from __future__ import annotations

import numpy as np
import pytest

from core.demos.heads import single_head
from core.tokenize import word_tokens
from lessons.qkv.maths import extreme_pair, two_arrows
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_alt,
    chart_by_title,
    chart_data,
    chart_spec,
    ok,
    run_page,
    texts,
)
from ui.state.controls import DEFAULT_TEXT

PAGE = "lessons/qkv/page.py"
KEYS = ("qkv_angle_a", "qkv_angle_b", "qkv_len_a", "qkv_len_b")
DEFAULTS = {"qkv_angle_a": 30, "qkv_angle_b": 60, "qkv_len_a": 1.0, "qkv_len_b": 1.0}
CALLOUT = {"positive": "**Positive:**", "zero": "**Zero:**", "negative": "**Negative:**"}


def turned(at) -> dict:
    return {key: at.slider(key=key).value for key in KEYS}


def arrows_chart(at):
    return chart_by_title(at, "a · b =")


def assert_shows(at, angle_a, angle_b, length_a=1.0, length_b=1.0):
    """The chart, the worked numbers and the callout are core's two_arrows for these settings."""
    g = two_arrows(angle_a, angle_b, length_a, length_b)
    chart = arrows_chart(at)
    data = chart_data(chart)
    np.testing.assert_allclose(data[["x", "y"]].to_numpy(dtype=float), np.vstack([g["a"], g["b"]]), rtol=SENT_RTOL,
                               atol=1e-12)
    spec = chart_spec(chart)
    assert spec["title"]["text"] == f"a · b = {g['dot']:.3f}"
    alt = chart_alt(chart)  # what the chart is, not the numbers a move changes: those are in its title and table
    assert alt.startswith("Vector plot, a · b (the dot product of a and b). Two arrows")
    assert f"{g['dot']:.3f}" not in alt
    shown = texts(at)
    assert f"= **{g['dot']:.3f}**" in shown and f"= **{g['polar']:.3f}**, the same number" in shown
    assert CALLOUT[g["sign"]] in shown
    assert not [word for sign, word in CALLOUT.items() if sign != g["sign"] and word in shown]
    return g


@pytest.fixture(scope="module")
def default_page():
    return ok(run_page(PAGE))


def test_defaults(default_page):
    at = default_page
    assert turned(at) == DEFAULTS
    g = assert_shows(at, 30, 60)
    assert g["sign"] == "positive" and g["dot"] == pytest.approx(np.cos(np.radians(30)))
    assert "How a query meets a key: the dot product" in texts(at)
    assert not at.info and not at.warning


@pytest.mark.parametrize(("angle_b", "dot", "sign"), [(30, 1.0, "positive"), (120, 0.0, "zero"),
                                                      (210, -1.0, "negative"), (300, 0.0, "zero")])
def test_turning_b(default_page, angle_b, dot, sign):
    at = default_page
    at.slider(key="qkv_angle_b").set_value(angle_b).run()
    ok(at)
    g = assert_shows(at, 30, angle_b)
    assert g["dot"] == pytest.approx(dot, abs=1e-12) and g["sign"] == sign


def test_lengths(default_page):
    at = default_page
    at.slider(key="qkv_angle_b").set_value(30)
    at.slider(key="qkv_len_a").set_value(2.0)
    at.slider(key="qkv_len_b").set_value(1.5).run()
    ok(at)
    g = assert_shows(at, 30, 30, 2.0, 1.5)
    assert g["dot"] == pytest.approx(3.0)
    assert "would reach its largest, the product of the two lengths, 3" in texts(at)


def test_scores_taken_apart(default_page):
    """The caption under the arrows names the sentence's highest and lowest scores, as the core finds them."""
    at = default_page
    tokens = word_tokens(DEFAULT_TEXT)
    a = single_head(tokens, 16, 8, 0)
    high, low = extreme_pair(a["Q"], a["K"]), extreme_pair(a["Q"], a["K"], highest=False)
    assert high["score"] == pytest.approx(a["scores"].max()) and low["score"] == pytest.approx(a["scores"].min())
    shown = captions(at)
    assert f"the highest score, {high['score']:.2f}, is the query of `{tokens[high['query']]}`" in shown
    assert f"{high['theta']:.0f}° apart" in shown and f"The lowest, {low['score']:.2f}" in shown
    assert low["score"] < 0 and "more than 90°, so they lean away from each other." in shown


def test_the_lowest_score_leans_away_only_when_it_is_negative():
    """A sentence whose lowest score is positive: that pair is under 90° apart, and the caption says so (the words
    follow the sign core computes)."""
    at = ok(run_page(PAGE, {"text": "the cat", "seed": "2"}))
    a = single_head(word_tokens("the cat"), 16, 8, 2)
    low = extreme_pair(a["Q"], a["K"], highest=False)
    assert low["score"] > 0 and low["theta"] < 90
    shown = captions(at)
    assert f"The lowest, {low['score']:.2f}" in shown and f"{low['theta']:.0f}° apart: less than 90°" in shown
    assert "every score in this sentence is positive" in shown and "lean away" not in shown


@pytest.mark.parametrize(("query", "used", "says"), [
    ({"qkv_angle_a": "abc"}, {"qkv_angle_a": 30}, "not a number; using 30"),
    ({"qkv_angle_a": "9999"}, {"qkv_angle_a": 360}, "the allowed range here is 0 to 360"),
    ({"qkv_angle_b": "-45"}, {"qkv_angle_b": 0}, "the allowed range here is 0 to 360"),
    ({"qkv_angle_b": "nan"}, {"qkv_angle_b": 60}, "not a number; using 60"),
    ({"qkv_len_a": "inf"}, {"qkv_len_a": 2.0}, "the allowed range here is 0.5 to 2.0"),
    ({"qkv_len_b": "<b>x</b>"}, {"qkv_len_b": 1.0}, "not a number"),
    ({"qkv_len_b": "-1"}, {"qkv_len_b": 0.5}, "the allowed range here is 0.5 to 2.0"),
], ids=["angle-text", "angle-huge", "angle-negative", "angle-nan", "length-inf", "length-html", "length-negative"])
def test_hostile_link_values(query, used, says):
    at = ok(run_page(PAGE, query))
    assert turned(at) == {**DEFAULTS, **used}
    notes = "\n".join(str(i.value) for i in at.info)
    key = next(iter(query))
    assert key in notes and says in notes, notes
    assert "<b>" not in notes
    values = {**DEFAULTS, **used}
    assert_shows(at, values["qkv_angle_a"], values["qkv_angle_b"], values["qkv_len_a"], values["qkv_len_b"])


def test_link_reproduces_the_arrows():
    at = ok(run_page(PAGE, {"qkv_angle_a": "90", "qkv_angle_b": "270", "qkv_len_a": "0.5"}))
    assert turned(at) == {**DEFAULTS, "qkv_angle_a": 90, "qkv_angle_b": 270, "qkv_len_a": 0.5}
    assert not at.info
    g = assert_shows(at, 90, 270, 0.5)
    assert g["dot"] == -0.5 and g["sign"] == "negative"

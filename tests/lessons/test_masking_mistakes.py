"""Two more masking mistakes, in the core and on the masking page: multiplying the scores by the mask (the future
leaks), and building the additive mask as np.triu(ones, k=1) * -inf (0 * -inf is NaN, and every weight is NaN)."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from core.attention import causal_mask
from core.demos.heads import single_head
from core.tokenize import word_tokens
from lessons.masking import mistakes
from lessons.masking.maths import additive_mask_by_triu, mask_by_multiplying, masking_view, triu_times_inf
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    markdown_tables,
    matrix,
    ok,
    run_page,
    texts,
)
from ui.frame import prose
from ui.state.controls import DEFAULT_TEXT

PAGE = "lessons/masking/page.py"
OPENED = (mistakes.OPEN_KEY,)  # the four mistakes, an aside shut by default: open, as a reader who opened it
TOKENS = word_tokens(DEFAULT_TEXT)  # 7 tokens: the page's default sentence
BROKEN_TITLE = "**Broken:**"


def scaled_scores(tokens=TOKENS, D=16, d_k=8, seed=0) -> np.ndarray:
    return single_head(tokens, D, d_k, seed)["scores"] / math.sqrt(d_k)


# ---- the core ------------------------------------------------------------------------------------------------


def test_multiplying_leaks_exp0_over_the_sum():
    s = scaled_scores()
    T = len(TOKENS)
    m = mask_by_multiplying(s, causal_mask(T))
    # row 0 keeps its own score and T - 1 zeros: each zero gets e^0 / (e^s00 + T - 1)
    assert m["leaked"][0] == pytest.approx((T - 1) / (math.exp(s[0, 0]) + T - 1))
    for i in range(T):  # every row against a plain loop
        row = [s[i, j] if j <= i else 0.0 for j in range(T)]
        e = np.exp(np.array(row) - max(row))
        assert m["leaked"][i] == pytest.approx(e[i + 1:].sum() / e.sum())
    assert m["leaked"][-1] == 0.0  # the last row hides nothing
    assert (m["leaked"][:-1] > 0).all()
    np.testing.assert_allclose(m["wrong"].sum(axis=-1), 1.0)
    assert m["right_leaked"].tolist() == [0.0] * T
    np.testing.assert_array_equal(m["scores"][np.triu_indices(T, 1)], 0.0)


def test_multiplying_by_mask_with_equal_scores():
    m = mask_by_multiplying(np.full((4, 4), 2.0), causal_mask(4))
    assert m["leaked"][0] == pytest.approx(3 / (math.e ** 2 + 3))
    # with all scores 0, multiplying changes nothing: row i leaks (T - 1 - i) / T
    z = mask_by_multiplying(np.zeros((4, 4)), causal_mask(4))
    np.testing.assert_allclose(z["leaked"], [3 / 4, 2 / 4, 1 / 4, 0])


def test_triu_times_inf_is_nan_where_keys_are_allowed():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the NaN is shown, no RuntimeWarning spills out
        masks = additive_mask_by_triu(5)
    allowed = causal_mask(5)
    assert np.isnan(masks["broken"][allowed]).all()
    assert (masks["broken"][~allowed] == -np.inf).all()
    assert (masks["right"][allowed] == 0).all() and (masks["right"][~allowed] == -np.inf).all()


def test_every_row_is_nan_after_the_softmax():
    s = scaled_scores()
    T = len(TOKENS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = triu_times_inf(s)
    assert np.isnan(t["naive"]).all() and t["nan_rows"] == T
    # the guarded softmax saves -inf, not NaN: NaN on and below the diagonal, 0 above it
    assert np.isnan(t["guarded"][causal_mask(T)]).all() and t["guarded_nan"] == T * (T + 1) // 2
    assert (t["guarded"][~causal_mask(T)] == 0).all()
    # the right mask gives the causal weights of the page
    np.testing.assert_allclose(t["right_weights"], single_head(TOKENS, 16, 8, 0, mask=causal_mask(T))["weights"],
                               atol=1e-15)


def test_masking_view_carries_both_mistakes():
    v = masking_view(TOKENS, 16, 8, 0)
    assert v["triu_inf"]["nan_rows"] == 7 and v["multiplied"]["leaked"].shape == (7,)


# ---- the page ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_page():
    return ok(run_page(PAGE, opened=OPENED))


def as_printed(table) -> pd.DataFrame:
    """A table's headings and cells as a reader sees them, all text: ui/drawing/tables.py escapes each
    Markdown marker in them, which the page shows as the plain character."""
    def plain(text):
        return re.sub(r"\\(.)", r"\1", text) if isinstance(text, str) else text

    return table.rename(columns=plain).map(plain)


def mask_tables(at) -> list:
    """The two mask tables, their cells as the page prints them ("NaN", "−∞", "0"): text, not numbers (a column
    of NaN alone would read back as numbers)."""
    return [frame for frame in map(as_printed, markdown_tables(at)) if "query ↓ key →" in frame.columns]


def test_page_shows_the_leak(default_page):
    at = default_page
    m = masking_view(TOKENS, 16, 8, 0)["multiplied"]
    np.testing.assert_allclose(matrix(chart_by_title(at, "wrong: softmax(scores × mask)")).to_numpy(), m["wrong"],
                               rtol=SENT_RTOL, atol=1e-12)
    bars = chart_data(chart_by_title(at, "weight on future keys"))["value"].to_numpy(dtype=float)
    np.testing.assert_allclose(bars, m["leaked"], rtol=SENT_RTOL, atol=1e-12)
    shown = captions(at)
    assert f"puts {m['leaked'][0]:.1%} of its weight on the 6 keys after it" in shown
    assert "the largest weight any row puts on the future is 0" in shown
    assert "Mistake 3: multiplying the scores by the mask" in texts(at)
    assert "np.where(mask, scores, -np.inf)" in texts(at)


def test_page_shows_nan_rows(default_page):
    at = default_page
    broken, right = mask_tables(at)
    assert broken.shape == (7, 8) and right.shape == (7, 8)  # the query column, then 7 keys
    cells = broken.iloc[:, 1:].to_numpy()
    allowed = causal_mask(7)
    assert (cells[allowed] == "NaN").all() and (cells[~allowed] == "−∞").all()
    fixed = right.iloc[:, 1:].to_numpy()
    assert (fixed[allowed] == "0").all() and (fixed[~allowed] == "−∞").all()
    shown = texts(at)
    assert "all 7 of the 7 rows NaN" in shown
    assert "Row 0 is [NaN, NaN, NaN, NaN, NaN, NaN, …]" in shown
    assert "28 of the 49 weights stay NaN" in shown
    assert "row 0 is [1, 0, 0, 0, 0, 0, …] again" in shown
    assert BROKEN_TITLE in shown and "np.triu(np.full((T, T), -np.inf), k=1)" in shown


def test_one_token():
    at = ok(run_page(PAGE, {"seq_len": "1"}, opened=OPENED))
    assert chart_data(chart_by_title(at, "weight on future keys"))["value"].tolist() == [0.0]
    assert "its one row NaN" in texts(at)  # "all 1 of the 1 rows" is not how anyone says one
    broken, _ = mask_tables(at)
    assert broken.iloc[0, 1] == "NaN"


def test_long_text_cuts_the_tables():
    text = " ".join(f"w{i}" for i in range(40))
    at = ok(run_page(PAGE, {"text": text, "seq_len": "32"}, opened=OPENED))
    broken, right = mask_tables(at)
    assert broken.shape == right.shape == (8, 9)
    shown = texts(at)
    assert "The tables show the first 8 rows and columns of 32." in shown
    assert "all 32 of the 32 rows NaN" in shown and "528 of the 1024 weights stay NaN" in shown


def test_the_mistakes_are_an_aside_shut_until_opened():
    """Shut, none of the four is drawn (a slider move costs them nothing); opened, by a click or by a link, all are,
    and the link to share says so. A link that says neither true nor false leaves it shut, and says why."""
    def drawn(at) -> bool:
        return "Mistake 1: masking after the softmax" in texts(at)

    shut = ok(run_page(PAGE))
    assert mistakes.TITLE in [e.label for e in shut.expander] and not drawn(shut)
    assert not any(chart_title(c).startswith("wrong:") for c in charts(shut))
    clicked = ok(run_page(PAGE, opened=OPENED))
    linked = ok(run_page(PAGE, {mistakes.OPEN_KEY: "true"}))
    for at in (clicked, linked):
        assert drawn(at) and "Mistake 4: building the mask as np.triu(…) * −∞" in texts(at)
        assert len(charts(at)) == len(charts(shut)) + 7
        assert at.session_state["_view"][mistakes.OPEN_KEY] is True  # what a shared link carries
    # What to notice, drawn outside it, says where each of its points is
    named = mistakes.TITLE.split(",")[0] + ":"
    assert [line for line in prose.text("masking", "notice").splitlines() if named in line] == [
        line for line in prose.text("masking", "notice").splitlines()
        if any(w in line for w in ("after the softmax", "−1e9", "Multiplying", "multiplying", "np.triu"))]
    garbled = ok(run_page(PAGE, {mistakes.OPEN_KEY: "maybe"}))
    assert not drawn(garbled)
    assert [i.value for i in garbled.info] == [f"The link set {mistakes.OPEN_KEY} to “maybe”; use true or false. "
                                               f"“{mistakes.TITLE}” stays shut."]

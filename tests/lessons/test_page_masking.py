"""The masking page through AppTest: the numbers it draws, its widgets at their extremes, links, hostile input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.demos import context
from core.tokenize import word_tokens
from lessons.masking import maths, mistakes
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    matrix,
    numbered_title,
    ok,
    panel_names,
    panels_on_one_scale,
    run_page,
    seq_len,
    shown_table,
    texts,
)
from ui.drawing.charts import unique_labels
from ui.state.controls import DEFAULT_TEXT

PAGE = "lessons/masking/page.py"
OPENED = (mistakes.OPEN_KEY,)  # the four mistakes, an aside shut by default: open, as a reader who opened it
# heatmap title prefix -> key of lessons.masking.maths.masking_view's result (or a path into it)
HEATMAPS = {"causal mask": "mask", "masked scores": "masked_scores", "weights without": "weights_free",
            "weights with the": "weights_masked", "outputs without": "out_free", "outputs with the": "out_masked",
            "uniform causal": "uniform", "wrong: softmax, then mask": ("after_softmax", "wrong"),
            "naive softmax": ("fully_masked", "naive"), "guarded softmax": ("fully_masked", "ours"),
            "fill −1e9": ("fully_masked", "big_negative")}
DEFAULTS = {"text": DEFAULT_TEXT, "seq_len": 7, "d_model": 16, "d_k": 8, "seed": 0, "masking_pos": 4,
            "masking_word": "dog"}



def settings(at) -> dict:
    sb = at  # every widget, in the sidebar or beside its section
    s = {"text": sb.text_area(key="text").value, "seq_len": seq_len(sb),
         "d_model": int(sb.select_slider(key="d_model").value), "d_k": sb.slider(key="d_k").value,
         "seed": sb.slider(key="seed").value, "masking_word": sb.text_input(key="masking_word").value,
         "masking_pos": sb.slider(key="masking_pos").value}
    return s


def expected(at) -> tuple[list[str], dict]:
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    return tokens, maths.masking_view(tokens, s["d_model"], s["d_k"], s["seed"])


def assert_charts_match_core(at):
    """Every heatmap holds what core computes for the settings on screen, to the 6 significant digits a chart is
    sent with (NaN and -inf where core has them)."""
    tokens, view = expected(at)
    labels = unique_labels(tokens)
    for title, key in HEATMAPS.items():
        chart = chart_by_title(at, title)
        want = np.asarray(view[key[0]][key[1]] if isinstance(key, tuple) else view[key], dtype=float)
        got = matrix(chart).to_numpy()
        finite = np.isfinite(want)
        assert (np.isnan(got) == ~finite).all(), title  # -inf and NaN travel as empty (null) cells
        np.testing.assert_allclose(got[finite], want[finite], rtol=SENT_RTOL, atol=1e-12, err_msg=title)
        rows = chart_data(chart).drop_duplicates("row_i").sort_values("row_i")["row"].tolist()
        assert rows == labels, title
    return tokens, view


def assert_masked_weights(at):
    w = matrix(chart_by_title(at, "weights with the")).to_numpy()
    T = w.shape[0]
    assert (w[np.triu_indices(T, 1)] == 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=SENT_RTOL)  # each weight sent to 6 significant digits
    assert w[0].tolist() == [1.0] + [0.0] * (T - 1)  # exactly
    return w


def peek_matrix(at) -> np.ndarray:
    return matrix(chart_by_title(at, "max |change|")).to_numpy()


def assert_no_peeking(at, position: int):
    diffs = peek_matrix(at)  # (T, 2): [with mask, without]
    assert diffs[:position, 0].tolist() == [0.0] * position  # exactly zero, not merely small
    assert (diffs[position:, 0] > 0).all()
    assert (diffs[:, 1] > 0).all()
    table = shown_table(at, "with the mask")
    # the table's numbers are the chart's, printed "%.3g" (lessons/masking/page.py): within half their 3rd
    # significant digit, beside the chart's own rounding; a zero is zero in both
    np.testing.assert_allclose(table["with the mask"].to_numpy(dtype=float), diffs[:, 0], rtol=5e-3 + SENT_RTOL,
                               atol=0)
    if position > 0:
        assert at.success and f"positions 0 to {position - 1} did not move at all" in at.success[0].value
    return diffs



# ---- defaults ---------------------------------------------------------------------------------------


def test_defaults(default_page):
    at = default_page
    assert settings(at) == DEFAULTS
    assert [t.value for t in at.title] == [numbered_title("masking")]
    assert not at.warning and not at.info and not at.error
    titles = [chart_title(c) for c in charts(at)] + [name for c in charts(at) for name in panel_names(c)]
    for prefix in (*HEATMAPS, "max |change|", "row sums"):
        assert any(t.startswith(prefix) for t in titles), prefix


def test_defaults_chart_data_is_core(default_page):
    _, view = assert_charts_match_core(default_page)
    mask = matrix(chart_by_title(default_page, "causal mask")).to_numpy()
    assert mask.tolist() == np.tril(np.ones((7, 7))).tolist()
    assert_masked_weights(default_page)
    free = matrix(chart_by_title(default_page, "weights without")).to_numpy()
    assert (free[np.triu_indices(7, 1)] > 0).all()  # without the mask every key gets some weight
    # the last row sees every key either way
    np.testing.assert_allclose(view["out_masked"][-1], view["out_free"][-1], atol=1e-15)
    assert "exactly **[1, 0, 0, 0, 0, 0, …]**" in texts(default_page)


@pytest.mark.parametrize("level", ["technical", "simple"])
def test_the_outputs_share_one_colour_scale(default_page, level):
    """Outputs without and with the mask are one quantity, compared cell by cell: one colour scale, so the last
    rows, equal in numbers, are equal in colour. Row 0 with the mask is V[0] exactly (the Technical name says so;
    V is the Technical text's)."""
    at = default_page if level == "technical" else ok(run_page(PAGE, {"level": "simple"}, timeout=120))
    chart, _ = panels_on_one_scale(at, "Outputs, ")
    masked = "outputs with the causal mask" + (": row 0 = V[0]" if level == "technical" else "")
    assert panel_names(chart) == ["outputs without a mask", masked]
    view = assert_charts_match_core(default_page)[1]
    assert (view["out_masked"][0] == view["V"][0]).all()  # exactly: its weights are [1, 0, ..., 0]


def test_averaging_trick(default_page):
    uniform = matrix(chart_by_title(default_page, "uniform causal")).to_numpy()
    np.testing.assert_allclose(uniform, [[1 / (i + 1) if j <= i else 0 for j in range(7)] for i in range(7)],
                               rtol=SENT_RTOL)
    table = shown_table(default_page, "row")
    _, view = expected(default_page)
    dims = [c for c in table.columns if c.startswith("d")]
    values = table[dims].to_numpy(dtype=float)
    # the query picked (the last row until a click): W V's row, the mean, then the value rows it averages
    assert table["row"].tolist()[:2] == ["out[6] of the uniform weights", "mean of V[0..6]"]
    # printed "%.3f" (views.number_table's default): within half its last digit
    np.testing.assert_allclose(values[2:], view["V"][:, : len(dims)], rtol=0, atol=5e-4)
    np.testing.assert_allclose(values[1], view["V"][:, : len(dims)].mean(axis=0), rtol=0, atol=5e-4)
    np.testing.assert_allclose(values[0], values[1], atol=1e-14)  # the same number, so the same print


def test_mistakes(default_page):
    at = default_page
    sums = chart_data(chart_by_title(at, "row sums"))["value"].to_numpy()
    assert (sums[:-1] < 1).all() and sums[-1] == pytest.approx(1.0, abs=SENT_RTOL)
    naive = matrix(chart_by_title(at, "naive softmax")).to_numpy()
    guarded = matrix(chart_by_title(at, "guarded softmax")).to_numpy()
    leak = matrix(chart_by_title(at, "fill −1e9")).to_numpy()
    assert np.isnan(naive[0]).all() and guarded[0].tolist() == [0.0] * 7
    np.testing.assert_allclose(leak[0], 1 / 7, rtol=SENT_RTOL)
    np.testing.assert_allclose(naive[1:], guarded[1:])
    text = texts(at)
    assert "Row 0, naive: [NaN, NaN, NaN, NaN, NaN, NaN, …]" in text
    assert "row 0 in float16 with the −1e9 fill is [NaN" in text
    # the trade-off: under the causal mask the finite fill changes no weight at all
    assert "−1e9 or −∞: a trade-off" in text and "the weights differ from −∞'s by **0**" in text
    fills = shown_table(at, "in float16")  # every cell a number as printed, "-inf" among them
    assert fills.set_index("fill value").loc[-1e9, "in float16"] == -np.inf


def test_no_peeking_defaults(default_page):
    assert_no_peeking(default_page, 4)
    assert "Replace token 4, `the`, with `dog`" in texts(default_page)


def test_shapes_notice_and_code(default_page):
    shown = captions(default_page)
    for caption in ("mask · shape (7, 7) = (T, T)", "each map · shape (7, 8) = (T, d_k)", "changes · shape (7, 2)",
                    "W · shape (7, 7)", "row sums · shape (7,) = (T,)"):
        assert caption in shown, caption
    text = texts(default_page)
    assert "What to notice" in text and "no_peeking" in text and "masking_view" in text


# ---- widgets ----------------------------------------------------------------------------------------


LONG_TEXT = " ".join(f"w{i}" for i in range(40))
MOVES = [("slider", "d_k", 1), ("slider", "d_k", 64), ("select_slider", "d_model", 4),
         ("select_slider", "d_model", 128), ("slider", "seed", 999), ("slider", "seq_len", 32),
         ("slider", "masking_pos", 0), ("slider", "masking_pos", 31), ("slider", "masking_pos", 10),
         ("text_input", "masking_word", "ocean"), ("slider", "seq_len", 2), ("slider", "masking_pos", 1),
         ("slider", "seed", 0)]


def test_every_widget_at_its_extremes():
    at = ok(run_page(PAGE, {"text": LONG_TEXT}, opened=OPENED))
    for kind, key, value in MOVES:
        getattr(at, kind)(key=key).set_value(value).run()
        ok(at)
        s = settings(at)
        assert s[key] == value, key
        tokens, _ = assert_charts_match_core(at)
        assert len(tokens) == s["seq_len"]
        assert_masked_weights(at)
        position = min(s["masking_pos"], len(tokens) - 1)  # past the end means the last token
        assert_no_peeking(at, position)
        assert (f"past the last token, so the last position, {position}, is changed" in texts(at)) == (
            position < s["masking_pos"])
        if position == 0:
            assert "Position 0 has no earlier positions" in texts(at)


def test_slider_ranges(default_page):
    sb = default_page  # every widget, in the sidebar or beside its section
    assert (sb.slider(key="masking_pos").min, sb.slider(key="masking_pos").max) == (0, 31)
    assert (sb.slider(key="seq_len").min, sb.slider(key="seq_len").max) == (1, 7)  # the text's 7 tokens
    assert (sb.slider(key="d_k").min, sb.slider(key="d_k").max) == (1, 64)


def test_position_survives_text_edits():
    """The position slider keeps one range, so editing the text never resets it (a changing range would)."""
    at = ok(run_page(PAGE, opened=OPENED))
    at.slider(key="masking_pos").set_value(2).run()
    at.sidebar.text_area(key="text").set_value("a shorter text now").run()
    ok(at)
    assert settings(at)["masking_pos"] == 2
    assert_no_peeking(at, 2)
    at.slider(key="masking_pos").set_value(1).run()
    assert_no_peeking(ok(at), 1)
    at.sidebar.text_area(key="text").set_value("tiny").run()
    assert settings(ok(at))["masking_pos"] == 1
    assert "no later token to change" in texts(at)


def test_one_token_has_nothing_to_change():
    at = ok(run_page(PAGE, {"text": "hello"}, opened=OPENED))
    assert_charts_match_core(at)
    assert matrix(chart_by_title(at, "weights with the")).to_numpy().tolist() == [[1.0]]
    assert "no later token to change" in texts(at)
    with pytest.raises(AssertionError):
        chart_by_title(at, "max |change|")
    assert seq_len(at) == 1  # one token: no seq_len slider to move
    at = ok(run_page(PAGE, opened=OPENED))
    ok(at.sidebar.slider(key="seq_len").set_value(1).run())  # the same through seq_len
    assert "no later token to change" in texts(at)


@pytest.mark.parametrize(("word", "shown"), [
    ("The", "same embedding"), ("", "has no letters"), ("two words", "only the first"), ("🐱", None),
    ("<script>alert(1)</script>", "only the first"),
])
def test_replacement_words(word, shown):
    at = ok(run_page(PAGE, opened=OPENED))
    at.text_input(key="masking_word").set_value(word).run()
    ok(at)
    if shown:
        assert shown in texts(at)
    if word == "The":  # same word up to case: the embedding is the same and nothing changes anywhere
        assert not peek_matrix(at).any()
    elif word:
        assert_no_peeking(at, 4)
    else:
        with pytest.raises(AssertionError):
            chart_by_title(at, "max |change|")


# ---- links ------------------------------------------------------------------------------------------


def test_deep_link_equals_setting_widgets_by_hand():
    query = {"text": "a link carries every setting too", "d_k": "16", "seed": "3", "masking_pos": "2",
             "masking_word": "fish"}
    linked = ok(run_page(PAGE, query, opened=OPENED))
    by_hand = ok(run_page(PAGE, opened=OPENED))
    # by_hand.sidebar afresh each time: a changed text changes the Query row box's options
    by_hand.sidebar.text_area(key="text").set_value(query["text"]).run()
    by_hand.sidebar.slider(key="d_k").set_value(16).run()
    by_hand.sidebar.slider(key="seed").set_value(3).run()
    by_hand.slider(key="masking_pos").set_value(2).run()
    by_hand.text_input(key="masking_word").set_value("fish").run()
    ok(by_hand)
    assert settings(linked) == settings(by_hand) == {**DEFAULTS, "text": query["text"],
                                                    "seq_len": len(word_tokens(query["text"])), "d_k": 16, "seed": 3,
                                                    "masking_pos": 2, "masking_word": "fish"}
    for title in (*HEATMAPS, "max |change|", "row sums"):
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, title)),
                                      chart_data(chart_by_title(by_hand, title)))
    assert not linked.info
    assert_no_peeking(linked, 2)


def test_hostile_url_values():
    at = ok(run_page(PAGE, {"masking_pos": "99", "d_k": "abc", "masking_word": "x" * 100}, opened=OPENED))
    s = settings(at)
    assert (s["masking_pos"], s["d_k"], s["masking_word"]) == (31, 8, "x" * 40)
    notes = "\n".join(str(i.value) for i in at.info)
    assert "masking_pos" in notes and "0 to 31" in notes
    assert "Position 31 is past the last token, so the last position, 6, is changed." in texts(at)
    assert "d_k" in notes and "not a number" in notes
    assert "masking_word" in notes and "first 40" in notes
    assert_charts_match_core(at)
    assert_no_peeking(at, 6)
    at = ok(run_page(PAGE, {"masking_pos": "-1.5e308"}, opened=OPENED))
    assert settings(at)["masking_pos"] == 0


# ---- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " \n\t "])
def test_empty_text_warns(text):
    at = ok(run_page(PAGE, opened=OPENED))
    at.sidebar.text_area(key="text").set_value(text).run()
    ok(at)
    assert len(at.warning) == 1 and "no tokens" in at.warning[0].value
    assert not charts(at)


def test_500_words():
    text = " ".join(["to", "be", "or", "not"][i % 4] for i in range(500))
    at = ok(run_page(PAGE, {"text": text, "seq_len": "32", "masking_pos": "20"}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert len(tokens) == 32 and "Showing the first 32 of 500 tokens (seq_len)." in texts(at)
    assert_no_peeking(at, 20)


def test_other_scripts_and_emoji():
    at = ok(run_page(PAGE, {"text": "猫が 🐱 مرحبا Ünïcödé", "masking_word": "犬"}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == ["猫が", "🐱", "مرحبا", "Ünïcödé"]
    assert_no_peeking(at, 3)
    assert "with `犬`" in texts(at)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "[link](javascript:alert(1)) **bold** :red[x]"])
def test_markup_is_shown_only_as_text(text):
    at = ok(run_page(PAGE, {"text": text, "masking_word": "<b>x</b>"}, opened=OPENED))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == word_tokens(text, 16)
    for el in [*at.markdown, *at.info, *at.success, *at.caption]:
        plain = re.sub(r"(`+)(.+?)\1", "", str(el.value))  # code spans show their content verbatim
        for fragment in ("<script", "<b>", "](javascript", ":red[", "**bold**"):
            assert fragment not in plain, el.value


# ---- the three mask conventions ---------------------------------------------------------------------------


CONVENTIONS = {"allowed": "allowed: 1 = may look", "blocked": "blocked: 1 = hidden", "additive": "additive: 0 or −∞"}


def assert_conventions(at):
    """The allowed mask is the causal one, the blocked mask its opposite (np.triu k=1), the additive mask 0
    where allowed and −∞ (an empty cell) where blocked; the three give the same weights, which are the page's."""
    tokens, view = expected(at)
    T = len(tokens)
    allowed = matrix(chart_by_title(at, CONVENTIONS["allowed"])).to_numpy()
    blocked = matrix(chart_by_title(at, CONVENTIONS["blocked"])).to_numpy()
    additive = matrix(chart_by_title(at, CONVENTIONS["additive"])).to_numpy()
    assert allowed.tolist() == np.tril(np.ones((T, T))).tolist()
    assert blocked.tolist() == np.triu(np.ones((T, T)), k=1).tolist()
    assert (allowed + blocked == 1).all()
    assert np.isnan(additive[blocked == 1]).all() and (additive[allowed == 1] == 0).all()  # -inf travels as null
    table = shown_table(at, "convention")
    diffs = table["largest |difference| from this app's weights"].tolist()
    assert diffs == [0.0, 0.0, 0.0]
    assert "the largest difference between any two is **0**" in texts(at)
    # and what they agree on is the causal weights drawn above, row for row
    conv = context.mask_conventions(view["scaled_scores"])
    for w in conv["weights"].values():
        np.testing.assert_allclose(w, view["weights_masked"], atol=1e-15)
        np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_conventions_defaults(default_page):
    assert_conventions(default_page)
    shown = captions(default_page)
    assert "blocked · shape (7, 7) = (T, T) bool, = ~allowed" in shown
    assert "additive · shape (7, 7) = (T, T) float, −∞ where blocked" in shown
    assert "mask_conventions" in texts(default_page)


@pytest.mark.parametrize(("key", "value"), [("seq_len", "1"), ("seq_len", "2"), ("d_k", "64"), ("seed", "999")])
def test_conventions_at_extremes(key, value):
    at = ok(run_page(PAGE, {key: value}, opened=OPENED))
    assert_conventions(at)


def test_conventions_follow_the_text():
    at = ok(run_page(PAGE, opened=OPENED))
    at.sidebar.text_area(key="text").set_value("🐱 mask me").run()
    assert_conventions(ok(at))

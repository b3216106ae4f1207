"""The Context and order page through AppTest: one word in two contexts, cross-attention, the word-order
test, encoder against decoder and the recurrence, at defaults, at extremes, through links and bad input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.tokenize import word_tokens
from lessons.communication import maths
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
from ui.state.controls import DEFAULT_TEXT
from ui.text import counted

PAGE = "lessons/communication/page.py"
ONE, TWO = "I sat on the bank of the river", "I paid the money into the bank"
DEFAULTS = {"text": DEFAULT_TEXT, "seq_len": 7, "d_model": 16, "d_k": 8, "seed": 0, "comm_one": ONE,
            "comm_two": TWO, "comm_word": "bank", "comm_shuffle": 1, "comm_order": "", "comm_positions": False,
            "comm_keep": 0.5}
TEXTS = ("comm_one", "comm_two", "comm_word", "comm_order")
CONTEXT_CHARTS = ("the shared word's output", "its attention row in sentence 1", "its attention row in sentence 2",
                  "self-attention", "cross-attention")
ORDER_CHARTS = ("outputs, rows moved", "shuffled sentence's outputs", "difference: shuffled")
SENTENCE_CHARTS = (*ORDER_CHARTS, "encoder: no mask", "decoder: causal mask", "how much of token 0")



def settings(at) -> dict:
    """The values the controls hold now (those below the sidebar sentence only when it has tokens)."""
    sb = at.sidebar
    s = {"text": sb.text_area(key="text").value, "seq_len": seq_len(sb),
         "d_model": int(sb.select_slider(key="d_model").value), "d_k": sb.slider(key="d_k").value,
         "seed": sb.slider(key="seed").value, **{k: at.text_input(key=k).value for k in TEXTS[:3]}}
    if any(box.key == "comm_order" for box in at.text_input):
        s.update({"comm_order": at.text_input(key="comm_order").value,
                  "comm_shuffle": at.slider(key="comm_shuffle").value,
                  "comm_positions": at.toggle(key="comm_positions").value,
                  "comm_keep": at.slider(key="comm_keep").value})
    return s


def head_args(s: dict) -> tuple[int, int, int]:
    return s["d_model"], s["d_k"], s["seed"]


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def table_with(at, column: str) -> pd.DataFrame:
    return shown_table(at, column)


def assert_contexts(at) -> dict:
    """The shared word's outputs, cosine and attention rows are core's for the sentences on screen (to the
    4 decimals a chart is sent with)."""
    s = settings(at)
    one, two = word_tokens(s["comm_one"], 32), word_tokens(s["comm_two"], 32)  # seq_len is the sidebar text's
    r = maths.same_word_two_contexts(one, two, word_tokens(s["comm_word"])[0], *head_args(s))
    outputs = matrix(chart_by_title(at, "the shared word's output")).to_numpy()
    np.testing.assert_allclose(outputs, np.vstack([r["out_a"], r["out_b"]]), rtol=SENT_RTOL, atol=1e-14)
    assert metric(at, "cosine similarity") == f"{r['cosine']:.4f}"
    for n, key in ((1, "weights_a"), (2, "weights_b")):
        row = matrix(chart_by_title(at, f"its attention row in sentence {n}")).to_numpy()
        np.testing.assert_allclose(row[0], r[key], rtol=SENT_RTOL, atol=1e-15)
        assert row.sum() == pytest.approx(1.0, abs=SENT_RTOL)
    cross = matrix(chart_by_title(at, "cross-attention")).to_numpy()
    assert cross.shape == (len(one), len(two))
    np.testing.assert_allclose(cross, maths.cross_attention(one, two, *head_args(s))["weights"], rtol=SENT_RTOL,
                               atol=1e-15)
    np.testing.assert_allclose(cross.sum(axis=1), 1.0, atol=SENT_RTOL)
    own = matrix(chart_by_title(at, "self-attention")).to_numpy()
    assert own.shape == (len(one), len(one))
    return r


def shown_order(at) -> list[int]:
    line = next(str(m.value) for m in at.markdown if "**New order:**" in str(m.value))
    return [int(p) for p in re.search(r"\*\*New order:\*\* ([\d ]+) \(", line).group(1).split()]


def assert_order(at) -> dict:
    """The permutation property: without positions the shuffled outputs are the old rows moved (rounding);
    with positions they differ. Both largest differences are shown. (The charts carry 4 decimals.)"""
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    perm = shown_order(at)
    assert sorted(perm) == list(range(len(tokens)))
    r = maths.order_view(tokens, *head_args(s), perm, s["comm_positions"])
    moved = matrix(chart_by_title(at, "outputs, rows moved")).to_numpy()
    shuffled = matrix(chart_by_title(at, "shuffled sentence's outputs")).to_numpy()
    np.testing.assert_allclose(moved, r["out"][perm], rtol=SENT_RTOL, atol=1e-15)
    np.testing.assert_allclose(shuffled, r["out_permuted"], rtol=SENT_RTOL, atol=1e-15)
    rows = chart_data(chart_by_title(at, "shuffled sentence's outputs")).drop_duplicates("row_i")
    assert [re.sub(r" \(\d+\)$", "", x) for x in rows.sort_values("row_i")["row"]] == [tokens[p] for p in perm]
    assert metric(at, "largest difference without positions") == f"{r['max_diff_without']:.1e}"
    assert metric(at, "largest difference with positions") == f"{r['max_diff_with']:.3g}"
    assert metric(at, "largest difference, causal mask, no positions") == f"{r['max_diff_causal']:.3g}"
    assert r["max_diff_without"] < 1e-12
    if s["comm_positions"]:
        sent = SENT_RTOL * (np.abs(shuffled).max() + np.abs(moved).max())  # what rounding both may move
        assert np.abs(shuffled - moved).max() == pytest.approx(r["max_diff_with"], abs=sent)
    else:  # every row moved with its word, nothing else
        np.testing.assert_allclose(shuffled, moved, rtol=SENT_RTOL, atol=1e-12)
    if perm != sorted(perm):
        assert r["max_diff_with"] > 1e-3
    return r


def assert_encoder_decoder_and_reach(at) -> None:
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    T = len(tokens)
    r = maths.encoder_decoder(tokens, *head_args(s))
    enc = matrix(chart_by_title(at, "encoder: no mask")).to_numpy()
    dec = matrix(chart_by_title(at, "decoder: causal mask")).to_numpy()
    np.testing.assert_allclose(enc, r["weights_encoder"], rtol=SENT_RTOL, atol=1e-15)  # as sent: 4 decimals
    np.testing.assert_allclose(dec, r["weights_decoder"], rtol=SENT_RTOL, atol=1e-15)
    np.testing.assert_allclose(enc.sum(axis=1), 1.0, atol=SENT_RTOL)
    np.testing.assert_allclose(dec.sum(axis=1), 1.0, atol=SENT_RTOL)
    assert (dec[np.triu_indices(T, 1)] == 0).all() and (enc > 0).all()
    hears = table_with(at, "hears (decoder)")
    assert hears["hears (encoder)"].tolist() == [T] * T and hears["hears (decoder)"].tolist() == list(range(1, T + 1))
    assert counted(T * T, "message") in texts(at) and f"decoder {T * (T + 1) // 2}" in texts(at)
    reach = table_with(at, "recurrence share")
    keep = s["comm_keep"]
    # the shares are printed "%.4g" (lessons/communication/views.py): within half their 4th significant digit
    np.testing.assert_allclose(reach["recurrence share"], keep ** np.arange(T), rtol=5e-4, atol=1e-12)
    np.testing.assert_allclose(reach["attention share"], r["weights_decoder"][:, 0], rtol=5e-4, atol=1e-12)
    assert reach["recurrence steps"].tolist() == list(range(T)) and reach["attention steps"].tolist() == [1] * T


def assert_page(at) -> None:
    assert_contexts(at)
    assert_order(at)
    assert_encoder_decoder_and_reach(at)



# ---- defaults ---------------------------------------------------------------------------------------


def test_defaults(default_page):
    at = default_page
    assert settings(at) == DEFAULTS
    assert [t.value for t in at.title] == [numbered_title("communication")]
    assert not at.warning and not at.info and not at.error
    titles = [chart_title(c) for c in charts(at)] + [name for c in charts(at) for name in panel_names(c)]
    for prefix in (*CONTEXT_CHARTS, *SENTENCE_CHARTS):
        assert any(t.startswith(prefix) for t in titles), prefix
    assert_page(at)


def test_the_word_order_maps_share_one_colour_scale(default_page):
    """Both outputs and their difference are one quantity, compared cell by cell: the panels of one chart on one
    colour scale, so equal outputs look alike and a rounding-sized difference looks like 0."""
    chart, _ = panels_on_one_scale(default_page, "Outputs and difference, ")
    assert panel_names(chart) == ["outputs, rows moved", "shuffled sentence's outputs", "difference: shuffled − moved"]


def test_encoder_and_decoder_weights_share_the_scale_0_to_1(default_page):
    chart, design = panels_on_one_scale(default_page, "Weights, ")
    cells = design["spec"]["layer"][1]["encoding"]
    assert cells["color"]["scale"]["domain"] == [0.0, 1.0]  # fixed, not the extent
    assert (cells["x"]["title"], cells["y"]["title"]) == ("key", "query")  # as each map drawn alone says
    assert panel_names(chart) == ["encoder: no mask", "decoder: causal mask"]


def test_defaults_values_a_student_checks(default_page):
    at = default_page
    r = assert_contexts(at)
    assert (r["index_a"], r["index_b"]) == (4, 6)  # "bank" in each sentence
    assert r["cosine"] < 0.999  # two contexts, two different outputs
    assert "random (fixed by the seed)" in texts(at)
    shown = captions(at)
    for caption in ("outputs · shape (2, 8) = (2, d_k)", "weights · shape (8, 7) = (T₁, T₂)",
                    "weights · shape (8, 8) = (T₁, T₁)", "row · shape (1, 7) = (1, T₂)",
                    "each map · shape (7, 8) = (T, d_k)", "each map · shape (7, 7) = (T, T), rows sum to 1"):
        assert caption in shown, caption
    order = assert_order(at)
    assert order["max_diff_without"] < 1e-15 * 10  # rounding
    assert "49 messages" in texts(at) and "decoder 28" in texts(at)
    assert "took **6 sequential steps** and kept **0.0156**" in texts(at)  # 0.5 ** 6
    assert "gave token 0 the weight **0.0528**" in texts(at)  # the decoder's a_60 at the defaults
    assert "by only 1 − keep, near 0 (here, with keep = 0.5, by 0.5)" in texts(at)
    for reason in ("**Path length.**", "**Parallel training.**", "**Choice by content.**"):
        assert reason in texts(at)
    assert "What to notice" in texts(at) and "reach_of_first_token" in texts(at)


# ---- every control, and the extremes ------------------------------------------------------------------


LONG_TEXT = " ".join(f"w{i}" for i in range(40))
MOVES = [("slider", "comm_shuffle", 0), ("slider", "comm_shuffle", 999), ("toggle", "comm_positions", True),
         ("slider", "comm_keep", 0.0), ("slider", "comm_keep", 1.0), ("slider", "comm_keep", 0.35),
         ("text_input", "comm_word", "the"), ("text_input", "comm_one", "the bank was closed"),
         ("text_input", "comm_two", "we walked along the river bank"), ("toggle", "comm_positions", False)]
SIDEBAR_MOVES = [("slider", "d_k", 1), ("slider", "d_k", 64), ("select_slider", "d_model", 4),
                 ("select_slider", "d_model", 128), ("slider", "seed", 999), ("slider", "seq_len", 32),
                 ("slider", "seq_len", 2)]


def test_every_control_moved():
    at = ok(run_page(PAGE))
    for kind, key, value in MOVES:
        getattr(at, kind)(key=key).set_value(value).run()
        ok(at)
        assert settings(at)[key] == value, key
        assert not at.warning, key
        assert_page(at)


def test_sidebar_extremes():
    at = ok(run_page(PAGE, {"text": LONG_TEXT, "comm_positions": "true"}))
    for kind, key, value in SIDEBAR_MOVES:
        getattr(at.sidebar, kind)(key=key).set_value(value).run()
        ok(at)
        assert settings(at)[key] == value, key
        assert_page(at)
    assert len(shown_order(at)) == 2


def test_shuffle_seed_changes_the_order():
    at = ok(run_page(PAGE))
    before = shown_order(at)
    at.slider(key="comm_shuffle").set_value(7).run()
    assert shown_order(ok(at)) != before
    assert shown_order(at) == maths.shuffled_order(7, 7).tolist()


def test_typed_order():
    at = ok(run_page(PAGE, {"text": "dog bites man"}))
    at.text_input(key="comm_order").set_value("2 1 0").run()
    ok(at)
    assert shown_order(at) == [2, 1, 0]
    assert "**Shuffled:** `man` · `bites` · `dog`" in texts(at)
    assert_order(at)
    at.toggle(key="comm_positions").set_value(True).run()
    assert assert_order(ok(at))["max_diff_with"] > 1e-3


@pytest.mark.parametrize(("typed", "says"), [("0 1", "exactly once"), ("a b c", "whole numbers"),
                                             ("<script>alert(1)</script>", "whole numbers"), ("0 0 1", "exactly once")])
def test_bad_typed_order_falls_back_to_the_seed(typed, says):
    at = ok(run_page(PAGE, {"text": "dog bites man"}))
    at.text_input(key="comm_order").set_value(typed).run()
    ok(at)
    assert len(at.warning) == 1 and says in at.warning[0].value and "shuffle seed" in at.warning[0].value
    assert shown_order(at) == maths.shuffled_order(3, 1).tolist()
    assert "<script" not in at.warning[0].value
    assert_order(at)


def test_one_token():
    at = ok(run_page(PAGE, {"text": "hello"}))
    assert "One token has no order to change" in texts(at)
    with pytest.raises(AssertionError):
        chart_by_title(at, "shuffled sentence's outputs")
    assert matrix(chart_by_title(at, "decoder: causal mask")).to_numpy().tolist() == [[1.0]]
    assert_contexts(at)
    assert_encoder_decoder_and_reach(at)


# ---- links --------------------------------------------------------------------------------------------


def test_deep_link_equals_setting_controls_by_hand():
    query = {"text": "man bites dog today", "d_k": "4", "seed": "5", "comm_one": "the river bank flooded",
             "comm_two": "the bank raised its rates", "comm_word": "bank", "comm_shuffle": "12",
             "comm_positions": "true", "comm_keep": "0.25"}
    linked = ok(run_page(PAGE, query))
    by_hand = ok(run_page(PAGE))
    by_hand.sidebar.text_area(key="text").set_value(query["text"]).run()
    by_hand.sidebar.slider(key="d_k").set_value(4).run()
    by_hand.sidebar.slider(key="seed").set_value(5).run()
    for key in ("comm_one", "comm_two"):
        by_hand.text_input(key=key).set_value(query[key]).run()
    by_hand.slider(key="comm_shuffle").set_value(12).run()
    by_hand.toggle(key="comm_positions").set_value(True).run()
    by_hand.slider(key="comm_keep").set_value(0.25).run()
    ok(by_hand)
    want = {**DEFAULTS, "text": query["text"],
            "seq_len": len(word_tokens(query["text"])), "d_k": 4, "seed": 5, "comm_one": query["comm_one"],
            "comm_two": query["comm_two"], "comm_shuffle": 12, "comm_positions": True, "comm_keep": 0.25}
    assert settings(linked) == settings(by_hand) == want
    for prefix in (*CONTEXT_CHARTS, *SENTENCE_CHARTS):
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, prefix)),
                                      chart_data(chart_by_title(by_hand, prefix)))
    assert not linked.info
    assert_page(linked)


def test_hostile_url():
    at = ok(run_page(PAGE, {"comm_keep": "abc", "comm_shuffle": "1e9", "comm_positions": "maybe",
                            "comm_word": "x" * 100, "comm_order": "<img src=x onerror=alert(1)>"}))
    s = settings(at)
    assert (s["comm_keep"], s["comm_shuffle"], s["comm_positions"]) == (0.5, 999, False)
    notes = "\n".join(str(i.value) for i in at.info)
    for key in ("comm_keep", "comm_shuffle", "comm_positions", "comm_word"):
        assert key in notes, key
    assert any("does not appear" in w.value for w in at.warning)  # "xxx…" is in neither sentence
    assert any("whole numbers" in w.value for w in at.warning)
    for el in [*at.markdown, *at.warning, *at.info, *at.caption]:
        plain = re.sub(r"(`+)(.+?)\1", "", str(el.value))
        assert "<img" not in plain, el.value
    assert_order(at)
    assert_encoder_decoder_and_reach(at)


# ---- bad input ----------------------------------------------------------------------------------------


def test_empty_second_sentence():
    at = ok(run_page(PAGE))
    at.text_input(key="comm_two").set_value("").run()
    ok(at)
    assert any("second sentence has no tokens" in w.value for w in at.warning)
    assert "Cross-attention needs two sentences" in texts(at)
    for prefix in CONTEXT_CHARTS:
        with pytest.raises(AssertionError):
            chart_by_title(at, prefix)
    assert_order(at)  # the rest of the page still works
    assert_encoder_decoder_and_reach(at)


@pytest.mark.parametrize(("word", "says"), [("ocean", "does not appear in the first sentence"),
                                            ("money", "does not appear in the first sentence"),
                                            ("river", "does not appear in the second sentence"),
                                            ("", "no letters"), ("  ", "no letters")])
def test_shared_word_missing(word, says):
    at = ok(run_page(PAGE))
    at.text_input(key="comm_word").set_value(word).run()
    ok(at)
    assert any(says in w.value for w in at.warning), [w.value for w in at.warning]
    with pytest.raises(AssertionError):
        chart_by_title(at, "the shared word's output")
    assert chart_by_title(at, "cross-attention")  # both sentences are still there to cross-attend


def test_two_word_shared_word_uses_the_first():
    at = ok(run_page(PAGE))
    at.text_input(key="comm_word").set_value("bank account").run()
    ok(at)
    assert "only the first, `bank`, is followed" in texts(at)
    assert_contexts(at)


def test_emoji_and_other_scripts():
    at = ok(run_page(PAGE, {"comm_one": "🐱 sat on the 🏦", "comm_two": "我的 🏦 很近", "comm_word": "🏦",
                            "text": "猫が 🐱 مرحبا Ünïcödé"}))
    assert not at.warning
    r = assert_contexts(at)
    assert (r["index_a"], r["index_b"]) == (4, 1) and r["cosine"] < 1
    assert_order(at)
    assert_encoder_decoder_and_reach(at)


@pytest.mark.parametrize("text", ["", " \n "])
def test_empty_sidebar_text(text):
    at = ok(run_page(PAGE))
    at.sidebar.text_area(key="text").set_value(text).run()
    ok(at)
    assert any("no tokens" in w.value for w in at.warning)
    assert_contexts(at)  # the two-sentence part above does not need it


def test_try_this_keep_near_one_holds_token_0_better_than_attention():
    """Try this, step 6: at keep 0.95 the recurrence keeps more of token 0 than the random attention weight,
    and each new token gets in by only 1 − keep: how much is kept is not why attention won."""
    at = ok(run_page(PAGE, {"comm_keep": "0.95"}))
    reach = table_with(at, "recurrence share")
    assert reach["recurrence share"].iloc[-1] > reach["attention share"].iloc[-1]
    assert "(here, with keep = 0.95, by 0.05)" in texts(at)


@pytest.mark.parametrize("two", [ONE, "of the river I sat on THE bank"])
def test_the_same_words_twice_give_the_same_output_and_the_text_says_so(two):
    """Sentence 2 holding the same words as sentence 1 (in any order and case): the shared word reads the same
    company, its two outputs are the same, and the page says so instead of calling them different."""
    at = ok(run_page(PAGE, {"comm_two": two}))
    r = assert_contexts(at)
    assert r["same_words"] and r["cosine"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(r["out_a"], r["out_b"], rtol=1e-12, atol=1e-12)
    shown = texts(at)
    assert f"The two outputs of `bank` are the same, with cosine similarity **{r['cosine']:.4f}**" in shown
    assert "outputs of `bank` differ" not in shown


def test_the_defaults_two_outputs_differ():
    r = maths.same_word_two_contexts(word_tokens(ONE), word_tokens(TWO), "bank", 16, 8, 0)
    assert not r["same_words"] and r["cosine"] < 0.999


def test_one_recurrence_step_is_said_in_the_singular():
    """Two tokens: the last position is one recurrence step from token 0, one factor of keep."""
    at = ok(run_page(PAGE, {"text": "the cat"}))
    assert "took **1 sequential step** and kept **0.5** of token 0 (1 factor of keep = 0.5)" in texts(at)

"""The QKV page through AppTest: what it shows at its defaults, at its extremes, and for hostile input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.demos import context
from core.demos.heads import single_head
from core.demos.measures import spread, weight_summary
from core.tokenize import word_tokens
from tests.apptest_helpers import (
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_spec,
    chart_title,
    charts,
    matrix,
    numbered_title,
    ok,
    run_page,
    seq_len,
    shown_table,
    texts,
)
from ui.drawing.charts import unique_labels
from ui.sections import explain
from ui.state.controls import DEFAULT_TEXT
from ui.text import CODE_KEY

PAGE = "lessons/qkv/page.py"
# chart title prefix -> key of core.demos.heads.single_head's result
CHARTS = {"X": "X", "W_Q": "W_Q", "W_K": "W_K", "W_V": "W_V", "Q:": "Q", "K:": "K", "V:": "V",
          "scores": "scores", "softmax": "weights"}
DEFAULTS = {"seq_len": 7, "d_model": 16, "d_k": 8, "seed": 0}



def settings(at) -> dict:
    """The values the sidebar widgets hold now."""
    return {"text": at.sidebar.text_area(key="text").value,
            "seq_len": seq_len(at),
            "d_model": int(at.sidebar.select_slider(key="d_model").value),
            "d_k": at.sidebar.slider(key="d_k").value,
            "seed": at.sidebar.slider(key="seed").value}


def expected(at) -> tuple[list[str], dict]:
    s = settings(at)
    tokens = word_tokens(s["text"], s["seq_len"])
    return tokens, single_head(tokens, s["d_model"], s["d_k"], s["seed"])


def assert_charts_match_core(at):
    """Every heatmap holds the arrays core computes for the settings on screen (to the 6 significant digits
    a chart is sent with), with token labels."""
    tokens, arrays = expected(at)
    labels = unique_labels(tokens)
    for title, name in CHARTS.items():
        chart = chart_by_title(at, title)
        np.testing.assert_allclose(matrix(chart).to_numpy(), arrays[name], rtol=SENT_RTOL, atol=1e-12,
                                   err_msg=f"chart {title!r}")
        df = chart_data(chart)
        if name in ("X", "Q", "K", "V", "scores", "weights"):  # rows are tokens
            rows = df.drop_duplicates("row_i").sort_values("row_i")["row"].tolist()
            assert rows == labels, title
        if name in ("scores", "weights"):  # and so are the columns
            cols = df.drop_duplicates("col_i").sort_values("col_i")["col"].tolist()
            assert cols == labels, title
    return tokens, arrays


def assert_shapes(at, T: int, D: int, d_k: int):
    shapes = {"X": (T, D), "W_Q": (D, d_k), "W_K": (D, d_k), "W_V": (D, d_k), "Q:": (T, d_k), "K:": (T, d_k),
              "V:": (T, d_k), "scores": (T, T), "softmax": (T, T)}
    for title, shape in shapes.items():
        assert matrix(chart_by_title(at, title)).shape == shape, title
    shown = captions(at)
    assert f"X · shape ({T}, {D}) = (T, d_model)" in shown
    assert f"each map · shape ({D}, {d_k}) = (d_model, d_k)" in shown  # W_Q, W_K, W_V: panels of one chart
    assert f"each map · shape ({T}, {d_k}) = (T, d_k)" in shown  # Q, K, V
    assert f"Q Kᵀ · shape ({T}, {T}) = (T, T)" in shown


def weighted_sum_table(at) -> pd.DataFrame:
    return shown_table(at, "value row")


SUM_PRINTED = 5e-4  # the weighted-sum table prints "%.3f" (ui/sections/explain.py): half its last digit
WALK_PRINTED = 5e-5  # the walk-through prints "%.4f" (ui/sections/walkthrough_views.py): half its last digit


def assert_weighted_sum(at):
    """The explanation's sum row is z = weights[query] @ V for the query it shows (the last token)."""
    tokens, arrays = expected(at)
    query = len(tokens) - 1
    table = weighted_sum_table(at)
    assert table["value row"].tolist() == [*unique_labels(tokens), "= z (sum)"]
    dims = [c for c in table.columns if c.startswith("dim ")]
    assert len(dims) == min(arrays["V"].shape[1], explain.MAX_DIMS_IN_TABLE)
    z = arrays["weights"][query] @ arrays["V"][:, :len(dims)]
    np.testing.assert_allclose(table[dims].iloc[-1].to_numpy(dtype=float), z, rtol=0, atol=SUM_PRINTED)
    np.testing.assert_allclose(table[dims].iloc[-1].to_numpy(dtype=float), arrays["out"][query][:len(dims)],
                               rtol=0, atol=SUM_PRINTED)
    # each term row is weight * value row, and the weights column is the query's row of weights
    np.testing.assert_allclose(table["weight"].iloc[:-1].to_numpy(dtype=float), arrays["weights"][query], rtol=0,
                               atol=SUM_PRINTED)
    np.testing.assert_allclose(table["weight"].iloc[-1], 1.0)  # the sum of the weights prints 1.000
    terms = arrays["weights"][query][:, None] * arrays["V"][:, :len(dims)]
    np.testing.assert_allclose(table[dims].iloc[:-1].to_numpy(dtype=float), terms, rtol=0, atol=SUM_PRINTED)
    label = re.escape(unique_labels(tokens)[query])
    assert re.search(rf"z\({label}\)", texts(at).replace("\\", ""))



# ---- defaults ---------------------------------------------------------------------------------------


def test_defaults_show_the_sentence(default_page):
    at = default_page
    assert settings(at) == {"text": DEFAULT_TEXT, **DEFAULTS}
    tokens = word_tokens(DEFAULT_TEXT)
    assert tokens == ["The", "cat", "sat", "on", "the", "warm", "mat"]
    assert "**Tokens:** " + " · ".join(f"`{t}`" for t in tokens) in texts(at)
    assert [t.value for t in at.title] == [numbered_title("qkv")]
    assert not at.warning


def test_defaults_shapes(default_page):
    assert_shapes(default_page, T=7, D=16, d_k=8)
    # W_Q, W_K, W_V are one chart's panels, and so are Q, K, V: the other maps are charts of their own
    assert len(charts(default_page)) >= len(CHARTS) - 4


def test_defaults_chart_data_is_core(default_page):
    assert_charts_match_core(default_page)


def test_weights_rows_sum_to_one(default_page):
    weights = matrix(chart_by_title(default_page, "softmax")).to_numpy()
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=SENT_RTOL)  # each weight sent to 6 digits
    assert (weights >= 0).all()


def test_weighted_sum_explanation(default_page):
    assert_weighted_sum(default_page)


def test_what_to_notice_and_code(default_page):
    text = texts(default_page)
    assert "What to notice" in text
    assert "single_head" in text  # the 'show the code' expander names the core function it shows


def test_closed_code_panel_draws_nothing():
    """Closed (as every page opens), "Show the code" is its label alone: no listing is drawn (nor its source
    read). Opened (a click), the core functions' listings are there; a slider move keeps it open and filled."""
    at = ok(run_page(PAGE))
    (box,) = [e for e in at.expander if e.label == "Show the code"]
    assert box.proto.expanded is False
    assert not at.code and "single_head" not in texts(at)
    at.session_state[CODE_KEY] = True  # a click on the label
    ok(at.run())
    listings = [str(c.value) for c in at.code]
    assert any("def single_head" in c for c in listings) and any("def walk_through" in c for c in listings)
    (formula,) = [c for c in listings if "def scaled_dot_product_attention" in c]
    assert "raise" not in formula  # the formula alone: its inputs' checks are a function of their own
    at.sidebar.slider(key="d_k").set_value(3).run()
    assert [str(c.value) for c in ok(at).code] == listings


# ---- extremes and widget moves ----------------------------------------------------------------------


def test_slider_ranges(default_page):
    at = default_page
    # seq_len runs to the text's length (7 tokens), at most 32 (a longer text: test_long_text_at_the_maximum)
    assert (at.sidebar.slider(key="seq_len").min, at.sidebar.slider(key="seq_len").max) == (1, 7)
    assert (at.sidebar.slider(key="d_k").min, at.sidebar.slider(key="d_k").max) == (1, 64)
    assert (at.sidebar.slider(key="seed").min, at.sidebar.slider(key="seed").max) == (0, 999)
    options = [int(o) for o in at.sidebar.select_slider(key="d_model").options]
    assert (min(options), max(options)) == (4, 128)


LONG_TEXT = " ".join(f"w{i}" for i in range(40))


@pytest.mark.parametrize(("kind", "key", "value"), [
    ("slider", "seq_len", 1), ("slider", "seq_len", 32), ("slider", "seq_len", 5),
    ("select_slider", "d_model", 4), ("select_slider", "d_model", 128), ("select_slider", "d_model", 24),
    ("slider", "d_k", 1), ("slider", "d_k", 64), ("slider", "d_k", 13),
    ("slider", "seed", 0), ("slider", "seed", 999), ("slider", "seed", 123),
])
def test_every_widget_at_its_extremes(kind, key, value):
    at = ok(run_page(PAGE, {"text": LONG_TEXT}))
    before = chart_data(chart_by_title(at, "scores"))
    getattr(at.sidebar, kind)(key=key).set_value(value).run()
    ok(at)
    s = settings(at)
    assert s[key] == value
    T = min(s["seq_len"], 40)
    assert_shapes(at, T=T, D=s["d_model"], d_k=s["d_k"])
    _, arrays = assert_charts_match_core(at)
    np.testing.assert_allclose(arrays["weights"].sum(axis=1), 1.0, atol=1e-12)
    assert_weighted_sum(at)
    if value != DEFAULTS[key] and key != "d_model":  # every move but d_model changes the scores
        after = chart_data(chart_by_title(at, "scores"))
        assert not (before.shape == after.shape and np.allclose(before["value"], after["value"]))


def test_largest_settings_at_once():
    at = ok(run_page(PAGE, {"text": LONG_TEXT, "seq_len": "32", "d_model": "128", "d_k": "64", "seed": "999"}))
    assert_shapes(at, T=32, D=128, d_k=64)
    assert_charts_match_core(at)
    # beyond 16 x 16 the cells carry no printed values (only colour and hover)
    assert "Showing the first 32 of 40 tokens (seq_len)." in texts(at)


def test_text_edit_redraws():
    at = ok(run_page(PAGE))
    at.sidebar.text_area(key="text").set_value("queries meet keys").run()
    ok(at)
    tokens, _ = assert_charts_match_core(at)
    assert tokens == ["queries", "meet", "keys"]
    assert_shapes(at, T=3, D=16, d_k=8)
    assert_weighted_sum(at)


def test_deep_link_equals_setting_widgets_by_hand():
    query = {"text": "a link carries every setting", "seq_len": "4", "d_model": "32", "d_k": "3", "seed": "42"}
    linked = ok(run_page(PAGE, query))
    by_hand = ok(run_page(PAGE))
    by_hand.sidebar.text_area(key="text").set_value(query["text"]).run()
    by_hand.sidebar.slider(key="seq_len").set_value(4).run()
    by_hand.sidebar.select_slider(key="d_model").set_value(32).run()
    by_hand.sidebar.slider(key="d_k").set_value(3).run()
    by_hand.sidebar.slider(key="seed").set_value(42).run()
    ok(by_hand)
    assert settings(linked) == settings(by_hand) == {"text": query["text"], "seq_len": 4, "d_model": 32, "d_k": 3,
                                                    "seed": 42}
    for title in CHARTS:
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, title)),
                                      chart_data(chart_by_title(by_hand, title)))
    assert not linked.info  # a valid link gives no notes


# ---- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_empty_text_warns(text):
    at = ok(run_page(PAGE))
    at.sidebar.text_area(key="text").set_value(text).run()
    ok(at)
    assert len(at.warning) == 1
    assert "no tokens" in at.warning[0].value
    assert not [c for c in charts(at) if chart_title_is_matrix(c)]


def chart_title_is_matrix(chart) -> bool:
    return any(chart_title(chart).startswith(t) for t in CHARTS)


def test_empty_text_in_link_warns():
    at = ok(run_page(PAGE, {"text": ""}))
    # an empty parameter either means "no text" (a warning) or is dropped (the default sentence)
    if at.warning:
        assert "no tokens" in at.warning[0].value
    else:
        assert settings(at)["text"] == DEFAULT_TEXT


def test_one_token():
    at = ok(run_page(PAGE, {"text": "hello"}))
    assert_shapes(at, T=1, D=16, d_k=8)
    assert matrix(chart_by_title(at, "softmax")).to_numpy().tolist() == [[1.0]]
    assert_charts_match_core(at)
    assert_weighted_sum(at)


def test_500_words_are_capped_by_seq_len():
    text = " ".join(["to", "be", "or", "not"][i % 4] for i in range(500))  # 500 words in 1,499 characters
    at = ok(run_page(PAGE, {"text": text}))
    assert not at.info  # under MAX_TEXT_CHARS: nothing was cut from the text itself
    assert_shapes(at, T=16, D=16, d_k=8)
    assert "Showing the first 16 of 500 tokens (seq_len)." in texts(at)
    at.sidebar.slider(key="seq_len").set_value(32).run()
    ok(at)
    assert "Showing the first 32 of 500 tokens (seq_len)." in texts(at)
    assert_charts_match_core(at)


def test_other_scripts_and_emoji():
    text = "猫が 🐱 مرحبا Ünïcödé"
    at = ok(run_page(PAGE, {"text": text}))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == ["猫が", "🐱", "مرحبا", "Ünïcödé"]
    assert "`猫が` · `🐱` · `مرحبا` · `Ünïcödé`" in texts(at)
    assert_weighted_sum(at)


def strip_code_spans(markdown: str) -> str:
    return re.sub(r"(`+)(.+?)\1", "", markdown)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
                                  "[link](javascript:alert(1)) **bold** :red[x] $x$"])
def test_markup_is_shown_only_as_text(text):
    at = ok(run_page(PAGE, {"text": text}))
    tokens, _ = assert_charts_match_core(at)
    assert tokens == word_tokens(text, 16)  # seq_len at its default on a long text: 16
    for md in at.markdown:
        body = str(md.value)
        if md.allow_html:  # only the app's own HTML (styles) may be raw, never anything the user typed
            assert "alert" not in body and "<img" not in body and "<script" not in body
        plain = strip_code_spans(body)
        # raw fragments of the user's markup never reach Markdown outside a code span...
        for fragment in ("<script", "<img", "](javascript", ":red[", "**bold**"):
            assert fragment not in plain, body
        # ...and where the user's words are shown as Markdown, every markup character is backslash-escaped
        if "alert" in plain:
            assert not re.search(r"(?<!\\)[<>\[\]$]", plain), body
    tokens_line = next(str(md.value) for md in at.markdown if str(md.value).startswith("**Tokens:**"))
    assert tokens_line == "**Tokens:** " + " · ".join(f"`{t}`" for t in tokens)


def test_hostile_url_numbers():
    at = ok(run_page(PAGE, {"seq_len": "100000", "d_k": "-3", "d_model": "abc"}))
    assert settings(at) == {"text": DEFAULT_TEXT, "seq_len": 7, "d_model": 16, "d_k": 1, "seed": 0}
    notes = [str(i.value) for i in at.info]
    assert any("seq_len" in n and "1 to 7" in n for n in notes)  # the range over the text's 7 tokens
    assert any("d_k" in n and "1 to 64" in n for n in notes)
    assert any("d_model" in n and "not a number" in n for n in notes)
    assert_shapes(at, T=7, D=16, d_k=1)
    assert_charts_match_core(at)


def test_notes_disappear_after_the_next_move():
    at = ok(run_page(PAGE, {"d_k": "99999"}))
    assert at.info
    at.sidebar.slider(key="seed").set_value(1).run()
    ok(at)
    assert not at.info
    assert settings(at)["d_k"] == 64


# ---- one query worked by hand ---------------------------------------------------------------------------


def walk_table(at) -> pd.DataFrame:
    return shown_table(at, "q · k (score)")


def assert_walk_through(at, query: int):
    """Each written-out dot product is its cell of the scores heatmap, and the softmax column its row of the
    weights heatmap: the numbers a student would check against the maps above."""
    tokens, arrays = expected(at)
    scores = matrix(chart_by_title(at, "scores")).to_numpy()
    weights = matrix(chart_by_title(at, "softmax")).to_numpy()
    table = walk_table(at)
    assert table["key"].tolist() == unique_labels(tokens)
    # the maps carry 4 decimals (or 4 significant digits) of each number, the table 4 decimals
    np.testing.assert_allclose(table["q · k (score)"].to_numpy(dtype=float), scores[query], rtol=SENT_RTOL,
                               atol=WALK_PRINTED)
    d_k = arrays["Q"].shape[1]
    np.testing.assert_allclose(table["÷ √d_k"].to_numpy(dtype=float), scores[query] / np.sqrt(d_k),
                               rtol=SENT_RTOL, atol=WALK_PRINTED)
    exps = table["exp(· − max)"].to_numpy(dtype=float)
    assert exps.max() == 1.0  # the largest scaled score minus itself
    s = settings(at)
    walked = context.walk_through(tokens, s["d_model"], s["d_k"], s["seed"], query)  # what the page prints
    np.testing.assert_allclose(exps, walked["exps"], rtol=0, atol=WALK_PRINTED)
    np.testing.assert_allclose(table["weight"].to_numpy(dtype=float), walked["weights"], rtol=0, atol=WALK_PRINTED)
    # the printed weights are the printed exps over their sum: each exp may be off by half a digit, their sum (at
    # least 1, the max's exp) by T halves, the printed weight by one more
    np.testing.assert_allclose(table["weight"].to_numpy(dtype=float), exps / exps.sum(), rtol=0,
                               atol=WALK_PRINTED * (len(exps) + 2))
    np.testing.assert_allclose(table["weight"].to_numpy(dtype=float), weights[query], rtol=SENT_RTOL,
                               atol=WALK_PRINTED)
    assert table["weight"].sum() == pytest.approx(1.0, abs=len(exps) * WALK_PRINTED)
    q, k = arrays["Q"][query], arrays["K"][0]

    def written(x: float) -> str:  # a negative factor is bracketed, as on paper
        return f"({x:.2f})" if x < 0 else f"{x:.2f}"

    assert table["q · k written out"].iloc[0].startswith(f"{written(q[0])}·{written(k[0])}")
    assert (table["q · k written out"].str.contains(r"\+ … \(")).all() == (d_k > 4)
    text = texts(at)
    assert f"divide each by their sum, **{walked['exp_sum']:.4f}**" in text
    assert f"row {query} of the scores heatmap" in text
    return table


def test_walk_through_defaults(default_page):
    assert_walk_through(default_page, 6)  # the last token until a row is clicked
    assert "One query worked by hand" in texts(default_page)
    assert "walk_through" in texts(default_page)  # its code is in the show-the-code expander


def test_walk_through_follows_the_query_row_box():
    at = ok(run_page(PAGE))
    box = at.selectbox(key="query")
    assert box.options == unique_labels(DEFAULT_TEXT.split()) and box.value == "mat"
    box.set_value("sat").run()
    ok(at)
    assert_walk_through(at, 2)
    table = weighted_sum_table(at)
    _, arrays = expected(at)
    np.testing.assert_allclose(table["weight"].iloc[:-1].to_numpy(dtype=float), arrays["weights"][2], rtol=0,
                               atol=SUM_PRINTED)


def test_a_link_picks_the_query_row():
    at = ok(run_page(PAGE, {"query": "cat"}))
    assert at.selectbox(key="query").value == "cat"
    assert_walk_through(at, 1)


def test_the_weights_map_outlines_the_picked_row_and_a_click_picks():
    """The clickable map carries the picked row (its `shown` parameter); a click calls back with its row."""
    at = ok(run_page(PAGE, {"query": "on"}))
    spec = chart_spec(chart_by_title(at, "softmax"))
    assert {p["name"]: p.get("value") for p in spec["params"]}["shown"] == 3
    assert "pick" in {p["name"] for p in spec["params"]}  # on the outer view, where Vega makes its signal


@pytest.mark.parametrize(("key", "value"), [("d_k", 1), ("d_k", 64), ("seq_len", 1), ("seed", 999)])
def test_walk_through_at_extremes(key, value):
    at = ok(run_page(PAGE, {key: str(value)}))
    tokens, _ = expected(at)
    table = assert_walk_through(at, len(tokens) - 1)
    if value == 1 and key == "seq_len":
        assert table["weight"].tolist() == [1.0]


def test_walk_through_with_repeated_words_and_emoji():
    at = ok(run_page(PAGE, {"text": "🐱 the 🐱 the"}))
    table = assert_walk_through(at, 3)
    assert table["key"].tolist() == ["🐱 (0)", "the (1)", "🐱 (2)", "the (3)"]
    np.testing.assert_array_equal(table["q · k (score)"].iloc[0], table["q · k (score)"].iloc[2])  # same key


def test_random_weights_lower_case_and_the_spread_that_d_k_does_not_pass_on():
    """The page says its weights are random and that `The` and `the` share a row; under the scores it prints
    the raw scores' spread (grows with d_k), the spread the softmax reads and the weights' entropy (they do not)."""
    at = ok(run_page(PAGE))
    assert "random numbers fixed by the seed" in captions(at) and "`The` and `the` are one word here" in captions(at)
    rows = {}
    for d_k in (1, 64):
        at.sidebar.slider(key="d_k").set_value(d_k).run()
        _, a = expected(ok(at))
        line = next(c for c in captions(at).split("\n") if c.startswith("Spread (standard deviation) of the raw"))
        assert f"raw scores: {spread(a['scores']):.2f}" in line
        assert f"which the softmax reads: {spread(a['scores'] / np.sqrt(d_k)):.2f}" in line
        assert f"weights: {weight_summary(a['weights'])['entropy']:.2f} bits" in line
        rows[d_k] = spread(a["scores"]), spread(a["scores"] / np.sqrt(d_k)), weight_summary(a["weights"])["entropy"]
    assert rows[64][0] > 5 * rows[1][0]  # the raw spread grows with d_k ...
    assert 0.5 < rows[64][1] / rows[1][1] < 2 and abs(rows[64][2] - rows[1][2]) < 0.5  # ... what the softmax reads not

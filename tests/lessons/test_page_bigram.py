"""The bigram page through AppTest: its counts match the text, its rows sum to 1, its samples use only the
vocabulary (and only seen pairs without smoothing), and its loss sits above the transformer's."""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest

from core.data import CorpusUnavailable, pydoc_corpus, pydoc_text
from core.model_file import load
from core.tokenize import CharTokenizer
from lessons.bigram import cached as bigram_cached
from lessons.bigram import maths as bigram_maths
from lessons.bigram import views as bigram_views
from tests.apptest_helpers import (
    ROOT,
    SENT_RTOL,
    chart_by_title,
    chart_data,
    chart_spec,
    chart_title,
    matrix,
    numbered_title,
    ok,
    run_page,
    shown_table,
    texts,
)

PAGE = "lessons/bigram/page.py"
OWN = "Your own text"
VISIBLE = {" ": "␣", "\n": "⏎"}
_, CFG, META = load(ROOT / "core" / "weights" / "pydoc_char")
TOK = CharTokenizer.from_dict(META["tokenizer"])
V = TOK.vocab_size  # 95



def label(c: str) -> str:
    return VISIBLE.get(c, c)


def pydoc_fit_text() -> str:
    """The first 90% of the documentation text: what the bigram model is fit on."""
    text = pydoc_text()
    return text[: len(text) - int(len(text) * 0.1)]


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def loss_value(text: str) -> float:
    return math.inf if text == "∞" else float(text.split()[0])


def sampled(at) -> str:
    return at.code[0].value


def assert_counts_match(at, text: str, n: int):
    """The drawn counts are the n most frequent characters' pair counts, counted here with a Counter."""
    pairs, singles = Counter(pairwise(text)), Counter(text)
    top = sorted(singles, key=lambda c: (-singles[c], c))[:n]  # ties: the earlier character in the vocabulary
    df = chart_data(chart_by_title(at, "counts[a, b]"))
    rows = df.drop_duplicates("row_i").sort_values("row_i")["row"].tolist()
    assert rows == [label(c) for c in top]
    expected = np.array([[pairs[(a, b)] for b in top] for a in top])
    np.testing.assert_array_equal(matrix(chart_by_title(at, "counts[a, b]")).to_numpy(), expected)
    assert f"has {len(text) - 1:,} pairs" in texts(at) and f"sums to exactly that: {len(text) - 1:,}" in texts(at)
    return pairs, singles, top


def assert_rows_sum_to_one(at):
    probs = matrix(chart_by_title(at, "P(next = b | a)")).to_numpy()
    assert (probs >= 0).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=SENT_RTOL)  # each sent to 6 significant digits
    table = shown_table(at, "all V")  # printed "%.9f" (lessons/bigram/page.py): each sum reads 1.000000000
    np.testing.assert_allclose(table["drawn row"].to_numpy(float), 1.0, atol=1e-12)
    np.testing.assert_allclose(table["all V"].to_numpy(float), 1.0, atol=1e-12)
    return probs



# ---- defaults: the Python documentation --------------------------------------------------------------


def test_defaults_counts_match_the_text(default_page):
    at = default_page
    assert [t.value for t in at.title] == [numbered_title("bigram")]
    _, _, top = assert_counts_match(at, pydoc_fit_text(), 12)
    assert top[0] == " "  # the space is the most frequent character
    assert "counts · shape (12, 12) = (n, n) of the full (V, V) = (95, 95)" in texts(at)


def test_defaults_counts_are_coloured_by_their_square_root(default_page):
    """One cell (a space after a space) outnumbers the median cell many times over: on a linear scale the map was
    one colour. It is coloured by the square root of the count from 0 (not rounded up), and the page says so,
    with the largest cell and the median as the drawn counts give them."""
    at = default_page
    chart = chart_by_title(at, "counts[a, b]")
    assert "√count" in chart_title(chart)
    scales = [node["scale"] for node in walk(chart_spec(chart)) if isinstance(node.get("scale"), dict)
              and node["scale"].get("scheme")]
    assert scales == [{"scheme": "viridis", "type": "sqrt", "zero": True}], scales
    counts = matrix(chart).to_numpy()
    a, b = np.unravel_index(np.argmax(counts), counts.shape)
    assert (a, b) == (0, 0)  # the space, the most frequent character, after itself
    median = np.median(counts[counts > 0])
    assert counts[a, b] / median > 5
    said = texts(at)
    assert "The colour is the square root of the count" in said
    assert f"the largest cell, `␣ → ␣` ({int(counts[a, b]):,} pairs), is {counts[a, b] / median:.1f} times" in said
    assert f"non-empty drawn cells ({median:,.0f})" in said


def space_pairs_by_hand(text: str) -> dict:
    """The pairs of a space after a space, sorted by the run of spaces each is in, with a regular expression: a
    run at the start of a line, a run of two after the end of a sentence, any other run."""
    found = Counter()
    for run in re.finditer(r" {2,}", text):
        before = text[run.start() - 1] if run.start() else "\n"
        kind = ("indent" if before == "\n" else
                "sentence" if len(run.group()) == 2 and before in ".!?" else "inside")
        found[kind] += len(run.group()) - 1
    return found


def test_defaults_the_largest_cell_is_layout_and_says_so(default_page):
    """The largest cell (a space after a space) is not the gap between words: the page sorts its pairs into
    indentation, columns lined up inside a line and two spaces after a sentence, counted here from the text."""
    text = pydoc_fit_text()
    found = space_pairs_by_hand(text)
    total = Counter(pairwise(text))[(" ", " ")]
    assert sum(found.values()) == total
    said = texts(default_page)
    assert f"Of its {total:,} pairs, {found['indent']:,} ({found['indent'] / total:.0%}) are in the spaces that " \
           "start a line" in said
    assert f"{found['inside']:,} ({found['inside'] / total:.0%}) are in runs inside a line that line up columns" in said
    assert f"and {found['sentence']:,} are the two spaces it puts after the end of a sentence." in said
    assert "is not the gap between two words" in said


def test_space_pairs_sorts_each_run():
    space, line_break, stop, letter = 1, 0, 3, 4
    ids = [space, space, space, letter, line_break, space, space, stop, space, space, letter, space, space, space]
    assert bigram_maths.space_pairs(ids, space, line_break, (stop,)) == {
        "pairs": 6, "indent": 3, "sentence": 1, "inside": 2}  # a run of n spaces holds n - 1 pairs
    assert bigram_maths.space_pairs([], space, line_break)["pairs"] == 0


def walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_defaults_rows_are_smoothed_probabilities(default_page):
    probs = assert_rows_sum_to_one(default_page)
    pairs, singles, top = assert_counts_match(default_page, pydoc_fit_text(), 12)
    text = pydoc_fit_text()
    for i, a in enumerate(top[:3]):  # P(b | a) = (count + 1) / (pairs starting with a + V)
        starts = singles[a] - (text[-1] == a)
        for j, b in enumerate(top[:3]):
            assert probs[i, j] == pytest.approx((pairs[(a, b)] + 1) / (starts + V), rel=SENT_RTOL)
    assert "probs · shape (12, 13)" in texts(default_page)


def test_defaults_loss_bigram_above_transformer(default_page):
    shown = metrics(default_page)
    bigram, transformer = loss_value(shown["Bigram model"]), loss_value(shown["Transformer"])
    baseline = pydoc_corpus(tokenizer=TOK).bigram_baseline()  # core.data's own add-one baseline
    assert bigram == pytest.approx(baseline, abs=5e-4)
    assert transformer == pytest.approx(META["val_loss"], abs=0.01)  # what the model scored when it was saved
    assert transformer < bigram < math.log(V)
    assert shown[f"Uniform guess over {V} characters"] == f"{math.log(V):.3f} nats"
    assert any("lower" in str(s.value) for s in default_page.success)


def test_defaults_sample_uses_the_vocabulary(default_page):
    text = sampled(default_page)
    assert len(text) == 201 and text[0] == pydoc_fit_text()[0]
    assert set(text) <= set(TOK.itos)
    assert "What to notice" in texts(default_page) and "bigram_sample" in texts(default_page)


# ---- moving each control --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 5, 40])
def test_characters_drawn(n):
    at = ok(run_page(PAGE, {"bg_top": str(n)}))
    assert_counts_match(at, pydoc_fit_text(), n)
    assert assert_rows_sum_to_one(at).shape == (n, n + 1)


def test_without_smoothing_only_seen_pairs_are_sampled():
    at = ok(run_page(PAGE))
    at.sidebar.slider(key="bg_alpha").set_value(0.0).run()
    ok(at)
    text, fit = sampled(at), pydoc_fit_text()
    seen = set(pairwise(fit))
    assert all(pair in seen for pair in pairwise(text))
    assert_rows_sum_to_one(at)
    assert metrics(at)["Bigram model"] == "∞"  # some held-out pair never occurred in the fitted text
    assert any("−log 0 = ∞" in str(w.value) for w in at.warning)
    assert not at.success  # no finite gap to the transformer to speak of


def test_more_smoothing_flattens_rows():
    at = ok(run_page(PAGE, {"bg_alpha": "2"}))
    two = matrix(chart_by_title(at, "P(next = b | a)")).to_numpy()
    at.sidebar.slider(key="bg_alpha").set_value(0.05).run()
    small = matrix(chart_by_title(ok(at), "P(next = b | a)")).to_numpy()
    assert two[:, :-1].max() < small[:, :-1].max()  # the most likely pair loses probability to the rest
    assert loss_value(metrics(at)["Bigram model"]) < 2.4  # a little smoothing fits held-out text best


def test_seed_and_length():
    at = ok(run_page(PAGE, {"bg_length": "10"}))
    first = sampled(at)
    assert len(first) == 11
    at.slider(key="bg_length").set_value(500).run()
    assert len(sampled(ok(at))) == 501 and sampled(at).startswith(first)  # the same draws, continued
    seed_0 = sampled(at)
    at.slider(key="seed").set_value(7).run()
    seed_7 = sampled(ok(at))
    assert seed_7 != seed_0 and seed_7[0] == seed_0[0]  # same start, other draws
    at.slider(key="seed").set_value(0).run()
    assert sampled(ok(at)) == seed_0  # the same seed writes the same text


# ---- the user's own text --------------------------------------------------------------------------------

TEXT = "abracadabra, abracadabra! the cat sat on the mat and the rat ate the hat."


def test_own_text_counts_and_losses():
    at = ok(run_page(PAGE))
    at.sidebar.radio(key="bg_source").set_value(OWN).run()
    at.sidebar.text_input(key="bg_text").set_value(TEXT).run()
    ok(at)
    held = max(2, int(len(TEXT) * 0.1))
    assert_counts_match(at, TEXT[:-held], 12)
    assert_rows_sum_to_one(at)
    assert set(sampled(at)) <= set(TOK.itos)
    assert f"each of the {held - 1:,} next characters" in texts(at)
    bigram, transformer = (loss_value(metrics(at)[k]) for k in ("Bigram model", "Transformer"))
    assert math.isfinite(bigram) and math.isfinite(transformer)
    if transformer < bigram:  # the sentence under the numbers says which way round they are
        assert any("lower" in str(x.value) for x in at.success)
    else:
        assert any("higher" in str(x.value) for x in at.info)


def test_deep_link_equals_setting_widgets_by_hand():
    query = {"bg_source": OWN, "bg_text": TEXT, "bg_top": "6", "bg_alpha": "0.5", "bg_length": "50", "seed": "3"}
    linked = ok(run_page(PAGE, query))
    by_hand = ok(run_page(PAGE))
    by_hand.sidebar.radio(key="bg_source").set_value(OWN).run()
    by_hand.sidebar.text_input(key="bg_text").set_value(TEXT).run()
    by_hand.sidebar.slider(key="bg_top").set_value(6).run()
    by_hand.sidebar.slider(key="bg_alpha").set_value(0.5).run()
    by_hand.slider(key="bg_length").set_value(50).run()
    by_hand.slider(key="seed").set_value(3).run()
    ok(by_hand)
    for title in ("counts[a, b]", "P(next = b | a)"):
        pd.testing.assert_frame_equal(chart_data(chart_by_title(linked, title)),
                                      chart_data(chart_by_title(by_hand, title)))
    assert sampled(linked) == sampled(by_hand) and len(sampled(linked)) == 51
    assert metrics(linked) == metrics(by_hand)
    assert not linked.info


# ---- bad input ---------------------------------------------------------------------------------------------


def test_hostile_link_values():
    at = ok(run_page(PAGE, {"bg_top": "1000", "bg_alpha": "-1", "bg_length": "nan", "bg_source": "<b>evil</b>",
                            "bg_text": "x" * 5000}))
    notes = "\n".join(str(i.value) for i in at.info)
    for key in ("bg_top", "bg_alpha", "bg_length", "bg_source", "bg_text"):
        assert key in notes, key
    assert "<b>" not in notes
    assert at.sidebar.slider(key="bg_top").value == 40 and at.sidebar.slider(key="bg_alpha").value == 0.0
    assert len(at.sidebar.text_input(key="bg_text").value) == 3000
    assert_counts_match(at, pydoc_fit_text(), 40)  # the unknown source fell back to the documentation


@pytest.mark.parametrize("text", ["", "ab", "   "])
def test_too_short_text_says_so(text):
    at = ok(run_page(PAGE, {"bg_source": OWN}))
    at.sidebar.text_input(key="bg_text").set_value(text).run()
    ok(at)
    assert any("at least 4 characters" in str(w.value) for w in at.warning)
    assert not at.metric  # nothing is scored


def test_unknown_characters_and_markup_are_shown_as_text():
    text = "héllo wörld <script>alert(1)</script> **bold** :red[x] $x$ 🐱 " * 3
    at = ok(run_page(PAGE, {"bg_source": OWN, "bg_text": text}))
    warning = next(str(w.value) for w in at.warning if "Not in the vocabulary" in str(w.value))
    assert "`é`" in warning and "`ö`" in warning and "`🐱`" in warning
    assert warning.startswith("Not in the vocabulary: 4 characters of your text")  # é ö $ 🐱
    for md in at.markdown:
        if md.allow_html:
            assert "<script" not in str(md.value)
    assert set(sampled(at)) <= set(TOK.itos)  # é, ö, 🐱 read as the unknown character
    assert_rows_sum_to_one(at)


def test_documentation_missing_falls_back_to_own_text(monkeypatch):
    def missing(*args, **kwargs):
        raise CorpusUnavailable("The documentation corpus (core/weights/pydoc_corpus.txt.gz) is missing.")

    monkeypatch.setattr(bigram_cached, "pydoc_corpus", missing)
    bigram_cached.split_text.clear()
    try:
        at = ok(run_page(PAGE))
        assert any("pydoc_corpus.txt.gz) is missing. Until then the page uses your own text" in str(w.value)
                   for w in at.warning)
        held = max(2, int(len(bigram_views.OWN_TEXT) * 0.1))
        assert_counts_match(at, bigram_views.OWN_TEXT[:-held], 12)
    finally:
        bigram_cached.split_text.clear()


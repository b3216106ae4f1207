"""Every lesson's "Try this" steps, followed through AppTest as a student would follow them.

Each test sets the widgets a step names (by their keys), reruns the page and checks what the step says the
student will see, reading the numbers the page shows (charts' data, tables, metrics, captions) or, where the
page draws no number for it, the core's result for the same settings. A test is named
test_<lesson>_step_<n>; test_every_step_has_a_test fails when a lesson's [[try_this]] part gains a step
without one.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from core.bigram import bigram_counts
from core.data import pydoc_corpus
from core.demos.measures import entropy
from core.tokenize import CharTokenizer, word_tokens
from lessons import COURSE
from lessons.full_model import head_view as hv
from lessons.scaling import mistake as d_v_mistake
from lessons.training import session as ts
from tests.apptest_helpers import (
    SENT_ATOL,
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_spec,
    matrix,
    move_chart_control,
    ok,
    open_panels,
    run_page,
    shown_matrix,
    shown_table,
    texts,
)
from ui.compute import model_store
from ui.frame import prose
from ui.sections.model_views import GENERATED

STEP = re.compile(r"^(\d+)\. ", re.MULTILINE)
TEST_NAME = re.compile(r"^test_([a-z_]+?)_step_(\d+)(?:_|$)")


def steps(lesson: str) -> list[int]:
    """The numbers of a lesson's Try-this steps, as its prose lists them."""
    return [int(n) for n in STEP.findall(prose.parts(lesson).get("try_this", ""))]


def page(lesson: str, query: dict | None = None, timeout: float = 120):
    return ok(run_page(f"lessons/{lesson}/page.py", query, timeout=timeout))


def table_with(at, column: str):
    """The first table on the page with this column, its numbers as printed (see shown_table)."""
    return shown_table(at, column)


def metric(at, label: str) -> str:
    """The value of the first metric whose label starts with `label`."""
    for m in at.metric:
        if m.label.startswith(label):
            return m.value
    raise AssertionError(f"no metric {label!r}; labels: {[m.label for m in at.metric]}")


def number_after(text: str, before: str) -> float:
    """The number written right after `before` in text."""
    found = re.search(re.escape(before) + r"\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", text)
    assert found, f"{before!r} not in {text[:300]!r}"
    return float(found.group(1))


def row_entropy(weights: np.ndarray) -> float:
    """Mean row entropy in bits of a (T, T) map read off a chart (sent to 4 decimals)."""
    return float(entropy(np.clip(weights, 0, None)).mean())


# ---- the registry: every step has its test --------------------------------------------------------------


def test_every_step_has_a_test():
    tested: dict[str, set[int]] = {}
    for name in globals():
        found = TEST_NAME.match(name)
        if found:
            tested.setdefault(found.group(1), set()).add(int(found.group(2)))
    for lesson in COURSE:
        name = lesson.path.split("/")[1]
        listed = steps(name)
        assert listed == list(range(1, len(listed) + 1)), f"{name}: steps numbered {listed}"
        assert tested.get(name, set()) == set(listed), (
            f"{name}: its Try-this steps {listed}, tested {sorted(tested.get(name, ()))}")
    assert set(tested) <= {lesson.path.split("/")[1] for lesson in COURSE}, sorted(tested)


# ---- qkv ----------------------------------------------------------------------------------------------


QKV_MAPS = ("X", "Q:", "K:", "V:")


def test_qkv_step_1_repeated_word_shares_its_rows():
    at = page("qkv")
    # The default sentence: "The" (row 0) and "the" (row 4)
    for title in QKV_MAPS:
        m = matrix(chart_by_title(at, title)).to_numpy()
        np.testing.assert_array_equal(m[0], m[4], err_msg=title)
        assert not np.allclose(m[0], m[1]), title  # a different word, a different row
    at.sidebar.text_area(key="text").set_value("a dog saw the Dog").run()
    for title in QKV_MAPS:
        m = matrix(chart_by_title(ok(at), title)).to_numpy()
        np.testing.assert_array_equal(m[1], m[4], err_msg=title)
        assert not np.allclose(m[1], m[2]), title


def test_qkv_step_2_a_picked_row_is_a_weighted_sum_of_values():
    at = page("qkv")
    at.selectbox(key="query").set_value("cat").run()  # what a click on row 1 of the weights does
    ok(at)
    weights = matrix(chart_by_title(at, "softmax")).to_numpy()
    V = matrix(chart_by_title(at, "V:")).to_numpy()
    table = table_with(at, "value row")
    assert "Output for “cat”" in texts(at)
    dims = [c for c in table.columns if c.startswith("dim ")]
    # the table prints "%.3f" (ui/sections/explain.py): half its last digit, beside what the charts' 4 decimals move
    printed = 5e-4
    np.testing.assert_allclose(table["weight"].iloc[:-1].to_numpy(float), weights[1], rtol=0,
                               atol=printed + SENT_ATOL)
    np.testing.assert_allclose(table[dims].iloc[:-1].to_numpy(float), weights[1][:, None] * V,
                               atol=printed + SENT_ATOL * (1 + np.abs(V).max()))  # products of numbers sent rounded
    np.testing.assert_allclose(table[dims].iloc[-1].to_numpy(float), weights[1] @ V,
                               atol=printed + len(V) * SENT_ATOL * (1 + np.abs(V).max()))


def test_qkv_step_3_the_row_worked_by_hand_matches_the_maps():
    at = page("qkv")
    at.selectbox(key="query").set_value("cat").run()
    ok(at)
    scores = matrix(chart_by_title(at, "scores")).to_numpy()
    weights = matrix(chart_by_title(at, "softmax")).to_numpy()
    walk = table_with(at, "q · k (score)")
    # the walk-through prints "%.4f" (ui/sections/walkthrough_views.py): half its last digit, beside what the
    # charts' 4 decimals move
    printed = 5e-5
    np.testing.assert_allclose(walk["q · k (score)"].to_numpy(float), scores[1], rtol=0, atol=printed + SENT_ATOL)
    np.testing.assert_allclose(walk["÷ √d_k"].to_numpy(float), scores[1] / np.sqrt(8), rtol=0,
                               atol=printed + SENT_ATOL)
    exps = walk["exp(· − max)"].to_numpy(float)
    # each printed exp may be off by `printed`, their sum (at least 1: the max's exp is 1) by T of them, the
    # printed weight by one more
    np.testing.assert_allclose(walk["weight"].to_numpy(float), exps / exps.sum(), rtol=0,
                               atol=printed * (len(exps) + 2))
    np.testing.assert_allclose(walk["weight"].to_numpy(float), weights[1], rtol=0, atol=printed + SENT_ATOL)


def spreads(at) -> tuple[float, float, float]:
    """The caption under the maps: the raw scores' spread, the scaled scores' spread, the mean row entropy."""
    line = next(c for c in captions(at).splitlines() if c.startswith("Spread (standard deviation)"))
    return (number_after(line, "of the raw scores:"), number_after(line, "which the softmax reads:"),
            number_after(line, "Mean row entropy of the weights:"))


def test_qkv_step_4_d_k_widens_the_raw_scores_not_the_scaled_ones():
    at = page("qkv")
    at.sidebar.slider(key="d_k").set_value(1).run()
    raw_1, scaled_1, entropy_1 = spreads(ok(at))
    at.sidebar.slider(key="d_k").set_value(64).run()
    raw_64, scaled_64, entropy_64 = spreads(ok(at))
    assert 4 < raw_64 / raw_1 < 16  # √64 = 8, within a factor of 2: "roughly like √d_k"
    assert 0.5 < scaled_1 < 1.5 and 0.5 < scaled_64 < 1.5  # near 1 at both ends
    assert abs(entropy_64 - entropy_1) < 0.1 * np.log2(7)  # a few tenths of a bit out of log2 7 = 2.81


def test_qkv_step_5_a_new_seed_new_numbers_same_shapes():
    at = page("qkv")
    before = {t: matrix(chart_by_title(at, t)).to_numpy() for t in ("X", "W_Q", "W_K", "W_V", "scores")}
    at.sidebar.slider(key="seed").set_value(1).run()
    ok(at)
    for title, old in before.items():
        new = matrix(chart_by_title(at, title)).to_numpy()
        assert new.shape == old.shape, title
        assert np.abs(new - old).max() > 0.1, title


# ---- scaling ------------------------------------------------------------------------------------------


def scaling_weights(at) -> np.ndarray:
    return shown_matrix(at, chart_by_title(at, "weights: click a row")).to_numpy()


def test_scaling_step_1_unscaled_at_512_one_key_per_row():
    at = page("scaling")
    at.sidebar.slider(key="d_k").set_value(512).run()
    at.toggle(key="scaling_on").set_value(False).run()
    w = scaling_weights(ok(at))
    assert (w.max(axis=1) > 0.95).all(), w.max(axis=1)
    assert row_entropy(w) < 0.1


def test_scaling_step_2_scaled_at_512_rows_spread_again():
    at = page("scaling", {"d_k": "512", "scaling_on": "false"})
    at.toggle(key="scaling_on").set_value(True).run()
    w = scaling_weights(ok(at))
    assert (w.max(axis=1) < 0.6).all(), w.max(axis=1)
    assert row_entropy(w) > 0.8 * np.log2(7)


def test_scaling_step_3_saturation_curves():
    at = page("scaling")
    df = chart_data(chart_by_title(at, "max weight vs d_k"))
    series = {name: group.sort_values("x")["y"].to_numpy(float) for name, group in df.groupby("series")}
    unscaled = next(v for k, v in series.items() if "unscaled" in k)
    scaled = next(v for k, v in series.items() if "unscaled" not in k)
    assert unscaled[-1] > 0.9 and (np.diff(unscaled) > -0.02).all() and unscaled[-1] - unscaled[0] > 0.5
    assert scaled.max() - scaled.min() < 0.1
    np.testing.assert_allclose(unscaled[0], scaled[0], rtol=1e-6)  # d_k = 1: the same divisor


def test_scaling_step_4_tau_and_root_d_k_divide_the_same_scores():
    at = page("scaling")
    at.sidebar.slider(key="d_k").set_value(4).run()
    on = scaling_weights(ok(at))  # scaling on, τ = 1: the scores divided by √4 = 2
    summary_on = next(c for c in captions(at).splitlines() if c.startswith("Mean row entropy"))
    at.toggle(key="scaling_on").set_value(False).run()
    off = scaling_weights(ok(at))
    assert not np.allclose(off, on)  # the raw scores alone are sharper
    move_chart_control(at, "attn_temp", 2.0).run()  # τ, the weights map's own slider (as the browser reports it)
    np.testing.assert_allclose(scaling_weights(ok(at)), on, rtol=1e-12)
    assert next(c for c in captions(at).splitlines() if c.startswith("Mean row entropy")) == summary_on


def mistake(at) -> tuple[np.ndarray, np.ndarray]:
    return (matrix(chart_by_title(at, "wrong: softmax")).to_numpy(),
            matrix(chart_by_title(at, "right: softmax")).to_numpy())


def test_scaling_step_5_dividing_by_root_d_v():
    at = page("scaling")
    assert d_v_mistake.TITLE in [e.label for e in at.expander]
    assert f"Open **{d_v_mistake.TITLE}**" in prose.text("scaling", "try_this")  # the step names the aside
    at = ok(open_panels(at, d_v_mistake.OPEN_KEY).run())  # the step's "Open …", as a click would
    assert at.sidebar.slider(key="d_k").value == 64 and at.slider(key="scaling_d_v").value == 64
    wrong, right = mistake(at)
    np.testing.assert_array_equal(wrong, right)
    at.slider(key="scaling_d_v").set_value(512).run()
    wrong, right = mistake(ok(at))
    assert row_entropy(wrong) > row_entropy(right) + 0.1 and wrong.max(axis=1).mean() < right.max(axis=1).mean()
    at.slider(key="scaling_d_v").set_value(4).run()
    wrong, right = mistake(ok(at))
    assert row_entropy(wrong) < row_entropy(right) - 0.5 and wrong.max(axis=1).mean() > right.max(axis=1).mean()


# ---- masking ------------------------------------------------------------------------------------------


def test_masking_step_1_the_mask_zeroes_the_upper_triangle():
    at = page("masking")
    free = matrix(chart_by_title(at, "weights without")).to_numpy()
    masked = matrix(chart_by_title(at, "weights with the")).to_numpy()
    upper = np.triu_indices(7, 1)
    assert (free[upper] > 0).all()
    assert (masked[upper] == 0).all()
    np.testing.assert_allclose(masked.sum(axis=1), 1.0, atol=SENT_RTOL)


def test_masking_step_2_row_0_attends_to_itself():
    at = page("masking")
    masked = matrix(chart_by_title(at, "weights with the")).to_numpy()
    assert masked[0].tolist() == [1.0] + [0.0] * 6
    assert "exactly **[1, 0, 0, 0, 0, 0, …]**" in texts(at)


def test_masking_step_3_three_ways_to_write_the_mask_agree():
    at = page("masking")
    allowed = matrix(chart_by_title(at, "allowed: 1 = may look")).to_numpy()
    blocked = matrix(chart_by_title(at, "blocked: 1 = hidden")).to_numpy()
    assert allowed.tolist() == np.tril(np.ones((7, 7))).tolist() and (allowed + blocked == 1).all()
    table = table_with(at, "convention")
    assert table["largest |difference| from this app's weights"].tolist() == [0.0, 0.0, 0.0]
    assert "the largest difference between any two is **0**" in texts(at)


def test_masking_step_4_a_later_token_moves_no_earlier_output():
    at = page("masking")
    at.slider(key="masking_pos").set_value(3).run()
    at.text_input(key="masking_word").set_value("ocean").run()
    ok(at)
    changes = table_with(at, "with the mask")
    masked, free = changes["with the mask"].to_numpy(float), changes["without a mask"].to_numpy(float)
    assert masked[:3].tolist() == [0.0, 0.0, 0.0]  # exactly: not merely small
    assert (masked[3:] > 0).all() and (free[:3] > 0).all()
    assert "positions 0 to 2 did not move at all" in at.success[0].value


# ---- multi_head ---------------------------------------------------------------------------------------


def head_maps(at, title: str) -> np.ndarray:
    """The grid's maps as (H, T, T)."""
    df = chart_data(chart_by_title(at, title))
    H, T = df["panel_i"].nunique(), df["row_i"].nunique()
    return df.sort_values(["panel_i", "row_i", "col_i"])["value"].to_numpy(float).reshape(H, T, T)


def test_multi_head_step_1_four_heads_four_patterns():
    at = page("multi_head")
    at.sidebar.select_slider(key="heads").set_value(1).run()
    assert metric(ok(at), "d_k = D / H") == "16"
    at.sidebar.select_slider(key="heads").set_value(4).run()
    assert metric(ok(at), "d_k = D / H") == "4" and metric(at, "d_model") == "16"
    maps = head_maps(at, "Attention weights, one map per head")
    assert maps.shape == (4, 7, 7)
    for i in range(4):
        for j in range(i):
            assert np.abs(maps[i] - maps[j]).max() > 0.05, (i, j)  # each head its own pattern


def test_multi_head_step_2_three_implementations_agree_to_rounding():
    at = page("multi_head")
    table = table_with(at, "implementation")
    diffs = table[["max |Δ output| vs reshape", "max |Δ weights| vs reshape"]].to_numpy(float)
    assert diffs.max() < 1e-14  # float64 rounding, of the order of 1e-16
    assert at.success and "Largest difference between the three implementations" in at.success[0].value


def test_multi_head_step_3_d_k_1_each_row_peaks_on_one_of_two_words():
    at = page("multi_head")
    assert at.sidebar.toggle(key="mh_causal").value is False
    at.sidebar.select_slider(key="heads").set_value(16).run()
    assert metric(ok(at), "d_k = D / H") == "1"
    words = [t.lower() for t in word_tokens(at.sidebar.text_area(key="text").value)]
    maps = head_maps(at, "Attention weights, one map per head")
    assert maps.shape[0] == 16
    for h, m in enumerate(maps):
        peaks = {words[j] for j in m.argmax(axis=1)}
        assert len(peaks) <= 2, (h, peaks)
    # the head looked at closely (head 1) shows its q and k: a positive query peaks on the largest k
    q = matrix(chart_by_title(at, "Q of head 1")).to_numpy()[:, 0]
    k = matrix(chart_by_title(at, "K of head 1")).to_numpy()[:, 0]
    expected = [words[int(k.argmax() if qi > 0 else k.argmin())] for qi in q]
    assert [words[j] for j in maps[0].argmax(axis=1)] == expected


# ---- communication ------------------------------------------------------------------------------------


def test_communication_step_1_the_shared_word_has_two_outputs():
    at = page("communication")
    outputs = matrix(chart_by_title(at, "the shared word's output")).to_numpy()
    assert outputs.shape[0] == 2 and np.abs(outputs[0] - outputs[1]).max() > 0.01
    cosine = float(metric(at, "cosine similarity"))
    assert cosine < 0.999
    a, b = outputs
    np.testing.assert_allclose(cosine, a @ b / np.linalg.norm(a) / np.linalg.norm(b), atol=1e-4)


def test_communication_step_2_cross_attention_is_t1_by_t2():
    at = page("communication")
    T1 = len(word_tokens(at.text_input(key="comm_one").value))
    T2 = len(word_tokens(at.text_input(key="comm_two").value))
    assert (T1, T2) == (8, 7)
    cross = matrix(chart_by_title(at, "cross-attention: sentence 1 reads sentence 2")).to_numpy()
    assert cross.shape == (T1, T2)
    np.testing.assert_allclose(cross.sum(axis=1), 1.0, atol=SENT_RTOL)
    assert f"({T1}, {T2})" in captions(at)


def test_communication_step_3_without_positions_a_shuffle_only_moves_rows():
    at = page("communication")
    assert at.toggle(key="comm_positions").value is False
    at.slider(key="comm_shuffle").set_value(7).run()
    order = re.search(r"\*\*New order:\*\* ([\d ]+) \(", texts(ok(at))).group(1).split()
    assert order != sorted(order, key=int) == [str(i) for i in range(7)]  # a real shuffle of the 7 words
    moved = matrix(chart_by_title(at, "outputs, rows moved")).to_numpy()
    shuffled = matrix(chart_by_title(at, "shuffled sentence's outputs")).to_numpy()
    np.testing.assert_allclose(shuffled, moved, rtol=SENT_RTOL, atol=1e-12)
    assert float(metric(at, "largest difference without positions")) < 1e-12


def test_communication_step_4_with_positions_the_shuffle_changes_outputs():
    at = page("communication", {"comm_shuffle": "7"})
    at.toggle(key="comm_positions").set_value(True).run()
    ok(at)
    moved = matrix(chart_by_title(at, "outputs, rows moved")).to_numpy()
    shuffled = matrix(chart_by_title(at, "shuffled sentence's outputs")).to_numpy()
    assert np.abs(shuffled - moved).max() > 0.1
    assert float(metric(at, "largest difference with positions")) > 0.1


def test_communication_step_5_encoder_and_decoder_differ_by_the_mask():
    at = page("communication")
    encoder = matrix(chart_by_title(at, "encoder: no mask")).to_numpy()
    decoder = matrix(chart_by_title(at, "decoder: causal mask")).to_numpy()
    T = len(encoder)
    assert (encoder > 0).all() and (decoder[np.triu_indices(T, 1)] == 0).all()
    np.testing.assert_allclose(encoder[-1], decoder[-1], rtol=SENT_RTOL)  # the last token hears all either way
    hears = table_with(at, "hears (encoder)")
    assert hears["hears (encoder)"].tolist() == [T] * T
    assert hears["hears (decoder)"].tolist() == list(range(1, T + 1))


def test_communication_step_6_a_keep_near_1_holds_token_0():
    at = page("communication")
    at.slider(key="comm_keep").set_value(0.95).run()
    ok(at)
    reach = table_with(at, "recurrence share")
    last = reach.iloc[-1]
    assert last["recurrence share"] > last["attention share"]
    # printed "%.4g" (lessons/communication/views.py): within half its 4th significant digit
    np.testing.assert_allclose(last["recurrence share"], 0.95 ** (len(reach) - 1), rtol=5e-4)
    text = texts(at)
    assert "(here, with keep = 0.95, by 0.05)" in text
    for reason in ("**Path length.**", "**Parallel training.**", "**Choice by content.**"):
        assert reason in text


# ---- tiles --------------------------------------------------------------------------------------------


def test_tiles_step_1_m_only_rises_and_rescales_where_it_does():
    at = page("tiles")
    blocks = 4  # 7 tokens in blocks of 2
    for step in range(1, blocks + 1):
        at.slider(key="tl_step").set_value(step).run()
        m = matrix(chart_by_title(ok(at), "running max m")).to_numpy()
        rescale = matrix(chart_by_title(at, "rescale exp")).to_numpy()
        assert m.shape == rescale.shape == (7, step)
        assert (rescale[:, 0] == 0).all()  # the first block raises m from −∞: the empty start counts for nothing
        rose = np.diff(m, axis=1) > 0
        assert (np.diff(m, axis=1) >= 0).all()  # m never goes down
        assert ((rescale[:, 1:] < 1) == rose).all()  # below 1 exactly where m rose
        assert (rescale[:, 1:][~rose] == 1).all()
    assert rose.any()  # the default sentence does show a rise after the first block


@pytest.mark.parametrize("block", [1, 2, 3, 7])
def test_tiles_step_2_the_last_block_equals_the_full_softmax(block):
    at = page("tiles", {"tl_block": str(block), "tl_step": "32"})  # past the last block: the last one
    tiled = matrix(chart_by_title(at, "tiled: acc / l so far")).to_numpy()
    full = matrix(chart_by_title(at, "full:")).to_numpy()
    np.testing.assert_allclose(tiled, full, rtol=SENT_RTOL, atol=1e-12)
    diff = number_after(at.success[0].value, "largest |tiled − full| =")
    assert diff < 1e-15  # float64 rounding, about 1e-16


def memory(at) -> dict[str, str]:
    return {m.label.split(" (")[0]: m.value for m in at.metric}


def test_tiles_step_3_memory_at_100000_tokens():
    at = page("tiles")
    at.number_input(key="tl_length").set_value(100_000).run()
    shown = memory(ok(at))
    assert re.fullmatch(r"\d\d\.\d GB", shown["Full scores"]), shown
    assert re.fullmatch(r"\d\d\.\d MB", shown["One tile"]), shown
    assert re.fullmatch(r"\d\d\.\d KB", shown["FlashAttention block"]), shown
    at.number_input(key="tl_length").set_value(200_000).run()
    doubled = memory(ok(at))
    assert doubled["FlashAttention block"] == shown["FlashAttention block"]
    assert doubled["Full scores"] != shown["Full scores"]


# ---- bigram -------------------------------------------------------------------------------------------


def losses(at) -> tuple[str, str]:
    return metric(at, "Bigram model"), metric(at, "Transformer")


def nats(value: str) -> float:
    return float(value.removesuffix(" nats"))


def test_bigram_step_1_a_row_with_its_other_column_sums_to_1():
    at = page("bigram")
    probs = matrix(chart_by_title(at, "P(next = b | a)")).to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-4)  # each cell sent to 6 significant digits
    sums = table_with(at, "drawn row")
    np.testing.assert_allclose(sums["drawn row"].to_numpy(float), 1.0, atol=1e-9)
    np.testing.assert_allclose(sums["all V"].to_numpy(float), 1.0, atol=1e-9)


def test_bigram_step_2_alpha_0_samples_seen_pairs_and_an_infinite_loss():
    at = page("bigram")
    at.sidebar.slider(key="bg_alpha").set_value(0.0).run()
    ok(at)
    assert metric(at, "Bigram model") == "∞"
    assert any("−log 0 = ∞" in w.value for w in at.warning)
    tok = model_store.load_model(model_store.default_model()).tokenizer
    fit = pydoc_corpus(tokenizer=CharTokenizer("".join(tok.itos[1:]))).train_ids
    seen = bigram_counts(np.asarray(fit), tok.vocab_size) > 0
    sample = tok.encode(at.code[0].value)
    assert len(sample) > 100
    assert all(seen[a, b] for a, b in itertools.pairwise(sample))


def test_bigram_step_3_the_transformer_beats_the_bigram_on_the_documentation():
    at = page("bigram")
    bigram, transformer = losses(at)
    assert nats(transformer) < nats(bigram) - 0.5
    assert at.success and "lower" in at.success[0].value


def test_bigram_step_4_on_la_la_la_the_bigram_wins():
    at = page("bigram")
    at.sidebar.radio(key="bg_source").set_value("Your own text").run()
    at.sidebar.text_input(key="bg_text").set_value("la " * 200).run()
    ok(at)
    bigram, transformer = losses(at)
    assert nats(bigram) < nats(transformer) - 1
    assert any("loss is" in i.value and "higher" in i.value for i in at.info)


# ---- full_model ---------------------------------------------------------------------------------------


def bars(at) -> np.ndarray:
    return chart_data(chart_by_title(at, "P(next | prompt)"))["value"].to_numpy(float)


def test_full_model_step_1_temperature_0_one_character_2_flat():
    at = page("full_model")
    at.slider(key="sample_temp").set_value(0.0).run()
    assert bars(ok(at)).tolist() == [1.0]
    at.slider(key="sample_temp").set_value(1.0).run()
    at_1 = bars(ok(at))
    at.slider(key="sample_temp").set_value(2.0).run()
    at_2 = bars(ok(at))
    assert at_2[0] < 0.5 * at_1[0]  # the most likely character loses most of its share
    assert at_2[0] / at_2[-1] < at_1[0] / at_1[-1]  # and the drawn bars are nearer one another


def generated(at) -> str:
    text = at.session_state[GENERATED]["texts"]["trained"]
    assert text in [c.value for c in at.code]  # shown on the page
    return text


def test_full_model_step_2_the_same_seed_generates_the_same_text():
    at = page("full_model")
    at.button(key="fm_generate").click().run()
    first = generated(ok(at))
    at.button(key="fm_generate").click().run()
    assert generated(ok(at)) == first
    at.sidebar.slider(key="seed").set_value(1).run()
    at.button(key="fm_generate").click().run()
    assert generated(ok(at)) != first


def nucleus_caption(at) -> str:
    return next(c.value for c in at.caption if "the nucleus holds" in c.value)


def test_full_model_step_3_top_p_keeps_a_few_characters_and_says_so():
    at = page("full_model")
    at.slider(key="fm_top_p").set_value(0.5).run()
    drawn = chart_data(chart_by_title(ok(at), "P(next | prompt)"))
    inside = drawn["group"].str.startswith("in the nucleus").to_numpy()
    n = int(inside.sum())
    assert 1 <= n <= 5 and inside[:n].all() and not inside[n:].any()  # the most likely few, from the top
    caption = nucleus_caption(at)
    assert f"the nucleus holds {n} of the" in caption
    mass = number_after(caption, "characters,")
    assert mass >= 0.5 and mass - drawn["value"].to_numpy(float)[:n].sum() == pytest.approx(0, abs=2e-3)


def head_view(at) -> np.ndarray:
    """The head view's lines as (heads shown, T, T): the chart holds every head, and its check boxes (parameters
    of its design) say which are drawn."""
    chart = chart_by_title(at, "Layer ")
    df = chart_data(chart)
    H, T = df["head_i"].nunique(), df["q_i"].nunique()
    every = df.sort_values(["head_i", "q_i", "k_i"])["value"].to_numpy(float).reshape(H, T, T)
    on = {p["name"]: p["value"][0]["on"] for p in chart_spec(chart)["params"]}
    return every[[on[hv.switch_key(h)] for h in range(H)]]


def test_full_model_step_4_one_head_at_a_time_each_reads_differently():
    """Untick every head's box but one (a link that says so: the boxes are the chart's own, clicked in the browser,
    tests/browser/test_head_view_switches.py), then change the layer."""
    at = page("full_model")
    H = head_view(at).shape[0]
    assert H >= 2
    seen = []
    for layer in at.radio(key="fm_hv_layer").options:
        for keep in range(H):
            link = {"fm_hv_layer": layer, **{hv.switch_key(h): str(h == keep).lower() for h in range(H)}}
            view = head_view(page("full_model", link))
            assert view.shape[0] == 1
            seen.append(view[0])
    for i in range(len(seen)):
        for j in range(i):
            assert np.abs(seen[i] - seen[j]).max() > 0.1, (i, j)  # no two heads read alike


def test_full_model_step_5_five_puzzles_are_scored():
    at = page("full_model")
    for _ in range(5):
        at.text_input(key="fm_guess_text").set_value("e")
        at.button(key="fm_guess_check").click().run()
        assert any("the next character was" in el.value for el in [*at.success, *at.info])
        at.button(key="fm_guess_next").click().run()
    ok(at)
    you, transformer = metric(at, "You"), metric(at, "Transformer's top choice")
    assert re.fullmatch(r"[0-5] of 5 right", you) and re.fullmatch(r"[0-5] of 5 right", transformer)
    assert "Score this session** (5 puzzles)" in texts(at)


def test_full_model_step_6_one_head_at_100000_is_gigabytes():
    at = page("full_model")
    at.number_input(key="fm_length").set_value(100_000).run()
    assert re.fullmatch(r"\d+(\.\d)? GB", metric(ok(at), "One head's weights")), metric(at, "One head's weights")


# ---- circuit ------------------------------------------------------------------------------------------


def repeat_queries(letters: str) -> list[tuple[int, int]]:
    """(query, key after the latest earlier occurrence of the query's letter) for every query that has one."""
    pairs = []
    for i, c in enumerate(letters):
        j = letters.rfind(c, 0, i)
        if j >= 0:
            pairs.append((i, j + 1))
    return pairs


def circuit_maps(at) -> tuple[str, np.ndarray, np.ndarray]:
    chart = chart_by_title(at, "layer 1 · head 2")
    rows = chart_data(chart).drop_duplicates("row_i").sort_values("row_i")["row"].tolist()
    letters = "".join(r[0] for r in rows)  # labels are a letter and its position, "Q0"
    return letters, matrix(chart).to_numpy(), matrix(chart_by_title(at, "layer 2 · head 2")).to_numpy()


def test_circuit_step_1_previous_token_and_induction_heads():
    at = page("circuit")
    letters, previous, induction = circuit_maps(at)
    T = len(letters)
    back = previous[np.arange(1, T), np.arange(T - 1)]  # the weight each query i puts on key i − 1
    assert (previous[1:].argmax(axis=1) == np.arange(T - 1)).mean() > 0.9 and back.mean() > 0.5
    shares = table_with(at, "previous-token share").set_index("head")
    assert shares["previous-token share"].idxmax() == "layer 1 · head 2"
    assert shares["induction share"].idxmax() == "layer 2 · head 2"
    # in the repeat (the orange letters: the second half of the stretch), the key after the earlier copy
    second = [(i, k) for i, k in repeat_queries(letters) if letters[k] == letters[i + 1:i + 2]]
    assert len(second) >= 7
    assert all(induction[i].argmax() == k for i, k in second)


def test_circuit_step_2_near_0_on_the_repeat_far_above_uniform_on_the_first_copy():
    at = page("circuit")
    uniform = float(metric(at, "Uniform guess"))
    assert float(metric(at, "Mean loss, repeat")) < 0.05
    assert float(metric(at, "Mean loss, first copy")) > 2 * uniform


def knocked_out(at, head: str) -> float:
    at.selectbox(key="ci_off").set_value(head).run()
    ok(at)
    delta = next(m for m in at.metric if m.label.endswith("off")).delta
    return 0.0 if delta == "no change" else float(delta)  # a change that rounds to 0.000 reads "no change"


def test_circuit_step_3_knocking_out_the_circuit():
    at = page("circuit")
    assert knocked_out(at, "layer 1 · head 2") > 3
    assert knocked_out(at, "layer 2 · head 2") > 3
    assert abs(knocked_out(at, "layer 1 · head 1")) < 0.1
    assert abs(knocked_out(at, "layer 2 · head 1")) < 0.1


def test_circuit_step_4_a_typed_stretch_is_copied_too():
    at = page("circuit")
    at.sidebar.radio(key="ci_source").set_value("typed").run()
    at.sidebar.text_input(key="ci_text").set_value("QUICKBROWN" * 2).run()
    ok(at)
    assert not at.warning
    letters, _, induction = circuit_maps(at)
    assert letters == "QUICKBROWN" * 2
    assert all(induction[i].argmax() == k for i, k in repeat_queries(letters))  # the key after the earlier copy
    assert float(metric(at, "Mean loss, repeat")) < 0.1


def test_circuit_step_5_long_stretches_and_the_positional_head():
    at = page("circuit")
    at.sidebar.slider(key="ci_length").set_value(20).run()
    at_20 = float(metric(ok(at), "Mean loss, repeat"))
    at.sidebar.slider(key="ci_length").set_value(24).run()
    at_24 = float(metric(ok(at), "Mean loss, repeat"))
    assert at_24 > at_20 + 1
    assert knocked_out(at, "layer 1 · head 1") < -(at_24 - at_20)  # it drops again, below the loss at 20


# ---- training -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained():
    """The training page before and after a press of Train on the copy task (one layer, to keep it short),
    each chunk of training run to its end in one rerun."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ts, "fair_budget", lambda *args, **kwargs: 600.0)
        at = page("training", {"tr_layers": "1"}, timeout=600)
        assert at.sidebar.radio(key="tr_data").value == "copy"
        before = head_maps(at, "Attention on a fixed example")
        at.button(key="tr_train").click().run()
        for _ in range(10):
            if not at.session_state[ts.SESSION_KEY].running:
                break
            at.run()
        assert at.session_state[ts.SESSION_KEY].run.state == "finished"
        return before, ok(at)


def shifted_diagonal(maps: np.ndarray, L: int) -> np.ndarray:
    """Each head's mean weight, over the second half's queries t = L .. 2L − 1, on key t − L."""
    t = np.arange(L, 2 * L)
    return maps[:, t, t - L].mean(axis=1)


def test_training_step_1_a_head_turns_into_a_shifted_diagonal(trained):
    before, at = trained
    L = at.sidebar.slider(key="tr_length").value
    after = head_maps(at, "Attention on a fixed example")
    assert after.shape[1] >= 2 * L
    best = int(shifted_diagonal(after, L).argmax())
    assert shifted_diagonal(after, L)[best] > 0.8 and shifted_diagonal(before, L).max() < 0.3
    t = np.arange(L, 2 * L)
    assert (after[best][t].argmax(axis=1) == t - L).all()


def test_training_step_2_attention_takes_the_loss_below_the_bigram_line(trained):
    _, at = trained
    curve = chart_data(chart_by_title(at, "Loss while training"))
    series = {name: group.sort_values("x")["y"].to_numpy(float) for name, group in curve.groupby("series")}
    bigram = series["bigram baseline"][0]
    assert series["validation"][0] > bigram - 0.05  # it starts at the line (or above)
    assert series["validation"][-1] < 0.5 * bigram
    assert float(metric(at, "Validation loss")) < float(metric(at, "Bigram baseline"))


# ---- block --------------------------------------------------------------------------------------------


def plain_markdown(at, start: str) -> str:
    """The Markdown element that contains `start`, without its bold marks."""
    return next(m.value for m in at.markdown if start in m.value).replace("**", "")


def test_block_step_1_layer_norm_rows_come_out_mean_0_variance_1():
    at = page("block")
    before = set()
    for position in (0, 3, 7, 12):
        at.sidebar.slider(key="block_pos").set_value(position).run()
        line = plain_markdown(ok(at), "comes in with mean")
        before.add((number_after(line, "comes in with mean"), number_after(line, "and variance")))
        assert abs(number_after(line, "its mean is")) < 1e-6
        assert 0.99 < number_after(line, "its variance") <= 1.0
    assert len(before) == 4  # every row comes in with its own mean and variance


def stream_steps(at) -> float:
    """The typical (median) step from one position to the next of the row lengths along the prompt, over
    their mean, for the line that steps most."""
    df = chart_data(chart_by_title(at, "Row lengths along the prompt"))
    steps = [np.median(np.abs(np.diff(g.sort_values("x")["y"].to_numpy(float)))) / g["y"].astype(float).mean()
             for _, g in df.groupby("series")]
    return max(steps)


def test_block_step_2_one_repeated_character_changes_smoothly():
    at = page("block")
    varied = stream_steps(at)
    at.sidebar.text_input(key="block_prompt").set_value("a" * 16).run()
    ok(at)
    assert "The model reads `aaaaaaaaaaaaaaaa`" in texts(at)
    assert stream_steps(at) < 0.5 * varied


def ffn_share(at) -> float:
    line = plain_markdown(at, "Averaged over the prompt")
    return number_after(line[line.index("Averaged over the prompt"):], "the feed-forward")


def test_block_step_3_block_2_feed_forward_adds_more():
    at = page("block")
    first = ffn_share(at)
    at.sidebar.slider(key="block_layer").set_value(2).run()
    assert ffn_share(ok(at)) > first


def depth_lines(at) -> tuple[np.ndarray, np.ndarray]:
    df = chart_data(chart_by_title(at, "Output moved by"))
    lines = {name: g.sort_values("x")["y"].to_numpy(float) for name, g in df.groupby("series")}
    return lines["pre-norm"], lines["post-norm"]


def test_block_step_4_deep_post_norm_climbs_away():
    at = page("block")
    slider = at.sidebar.slider(key="block_depth")
    slider.set_value(slider.min).run()
    pre, post = depth_lines(ok(at))
    gap_shallow = post[-1] / pre[-1]
    at.sidebar.slider(key="block_depth").set_value(at.sidebar.slider(key="block_depth").max).run()
    pre, post = depth_lines(ok(at))
    assert post[-1] / pre[-1] > 2 * gap_shallow and post[-1] > 2 * pre[-1]
    for seed in (1, 2, 3):
        at.sidebar.slider(key="seed").set_value(seed).run()
        pre, post = depth_lines(ok(at))
        assert post[-1] > 1.5 * pre[-1], seed


# ---- ladder -------------------------------------------------------------------------------------------


def test_ladder_step_1_bits_grow_every_bar_and_line_by_one_over_ln_2():
    at = page("ladder")
    nats = chart_data(chart_by_title(at, "Validation loss of each rung"))
    at.radio(key="ld_unit").set_value("bits").run()
    bits = chart_data(chart_by_title(ok(at), "Validation loss of each rung"))
    for column in ("value", "ref_0", "ref_1"):
        np.testing.assert_allclose(bits[column] * np.log(2), nats[column], rtol=SENT_RTOL)


def test_ladder_step_2_with_residuals_the_heads_look_less_at_their_own_character():
    at = page("ladder")
    at.selectbox(key="ld_rung").set_value("one head").run()
    one = table_with(ok(at), "own character")["own character"].mean()
    at.selectbox(key="ld_rung").set_value("+ residuals").run()
    residual = table_with(ok(at), "own character")["own character"].mean()
    assert residual < one


def test_ladder_step_3_one_head_for_300_steps_lands_on_the_shipped_run():
    from lessons.ladder import live, maths
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(live, "fair_budget", lambda *args, **kwargs: 600.0)
        at = page("ladder", timeout=300)
        assert at.selectbox(key="ld_train_rung").value == "one head"
        assert at.slider(key="ld_train_steps").value == 300
        at.button(key="ld_train").click().run()
        for _ in range(5):
            if at.session_state[live.LIVE_KEY].state != "running":
                break
            at.run()
    shipped = {rec["key"]: rec for rec in maths.read_results()["rungs"]}["one_head"]["curve"]
    mine = number_after(texts(ok(at)), "your run's validation loss is **")
    assert mine == pytest.approx(shipped["val"][shipped["step"].index(300)], abs=1e-4)
    assert "the same." in texts(at)


def test_ladder_step_4_layer_norm_ends_with_training_below_validation():
    at = page("ladder")
    at.selectbox(key="ld_gap_rung").set_value("+ layer norm").run()
    df = chart_data(chart_by_title(ok(at), "+ layer norm: training against validation"))
    assert df[df.series == "training"]["y"].iloc[-1] < df[df.series == "validation"]["y"].iloc[-1]

"""The transformer-block page through AppTest: the numbers it shows are core's, its controls at their extremes,
links and hostile prompts."""

from __future__ import annotations

import numpy as np
import pytest

from core.model import forward
from lessons import COURSE
from lessons.block import maths
from lessons.block.views import DEFAULT_DEPTH, DEFAULT_POSITION, DEFAULT_PROMPT, MAX_DEPTH, MODEL, STREAM
from tests.apptest_helpers import (
    SENT_RTOL,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    for_lesson,
    matrix,
    ok,
    run_page,
    texts,
)
from ui.compute import model_store

CHARTS = 10  # layer norm (2), GELU and the units (2), what each group writes, firing, the stream (2), wirings, depth
PAGE = "lessons/block/page.py"


def the_model():
    return model_store.load_model(MODEL)


def ids_of(prompt: str) -> np.ndarray:
    m = the_model()
    return np.array(m.tokenizer.encode(prompt)[-m.cfg.max_len:], dtype=np.int64)


def core_reading(prompt: str = DEFAULT_PROMPT, layer: int = 0, position: int = DEFAULT_POSITION) -> dict:
    m = the_model()
    return maths.block_reading(m.params, m.cfg, ids_of(prompt), layer, position)


def titled(at, *parts: str):
    """The first chart whose title holds every one of parts."""
    found = [c for c in charts(at) if all(p in chart_title(c) for p in parts)]
    assert found, (parts, [chart_title(c) for c in charts(at)])
    return found[0]


def lines(at, title: str) -> dict[str, np.ndarray]:
    """A line chart's series by name, in x order."""
    df = chart_data(titled(at, title)).sort_values("x", kind="stable")
    return {name: group["y"].to_numpy(dtype=float) for name, group in df.groupby("series", sort=False)}


def test_defaults_title_and_sections(default_page):
    at = default_page
    lesson = COURSE.lesson("block")
    assert [t.value for t in at.title] == [f"{COURSE.number(lesson)} · {lesson.title}"]
    assert not at.warning and not at.error and not at.info
    shown = texts(at)
    assert "These are trained weights" in shown and MODEL in shown and "Python's own documentation" in shown
    for heading in ("Layer norm on one row", "The feed-forward layer", "The residual stream",
                    "Pre-norm against post-norm", "Why deep post-norm stacks are harder to train"):
        assert heading in shown
    assert len(charts(at)) == CHARTS


def test_layer_norm_row_is_cores_and_has_mean_0_variance_1(default_page):
    at, r = default_page, core_reading()
    steps = matrix(titled(at, f"row {DEFAULT_POSITION} ", "through layer norm")).to_numpy()
    ln = r["ln"]
    np.testing.assert_allclose(steps, np.stack([ln["x"], ln["x_hat"], ln["out"]]), rtol=SENT_RTOL, atol=1e-6)
    assert abs(steps[1].mean()) < 1e-5 and steps[1].var() == pytest.approx(1.0, abs=1e-4)  # what a user checks
    assert abs(steps[0].mean()) > 0.01
    gb = matrix(chart_by_title(at, "block 1's ln_1")).to_numpy()
    m = the_model()
    np.testing.assert_allclose(gb, np.stack([m.params["blocks"][0]["ln_1"]["g"], m.params["blocks"][0]["ln_1"]["b"]]),
                               rtol=SENT_RTOL, atol=1e-7)
    shown = texts(at)
    assert f"mean **{ln['before']['mean']:.4f}** and variance **{ln['before']['var']:.4f}**" in shown
    assert f"its variance **{ln['normalised']['var']:.5f}**" in shown


def test_ffn_shapes_gelu_and_firing(default_page):
    at, r = default_page, core_reading()
    T, D = len(ids_of(DEFAULT_PROMPT)), the_model().cfg.d_model
    caption = "\n".join(c.value for c in at.caption)
    for shape in (f"({T}, {D})", f"({D}, {4 * D})", f"({T}, {4 * D})", f"({4 * D}, {D})"):
        assert shape in caption
    curves = lines(at, "GELU against ReLU")
    c = maths.activation_curves()
    np.testing.assert_allclose(curves["GELU"], c["gelu"], rtol=SENT_RTOL, atol=1e-9)
    np.testing.assert_allclose(curves["ReLU"], np.maximum(c["x"], 0), atol=1e-9)
    firing = lines(at, "How many hidden units fire")["share of hidden units that fire"]
    np.testing.assert_allclose(firing, (r["ffn_pre"] > 0).mean(axis=-1), rtol=SENT_RTOL)
    assert f"**{r['firing_row']} of the {4 * D}** hidden units fire" in texts(at)


def test_the_units_that_do_not_fire_write_as_much_as_those_that_do(default_page):
    """What the firing units and the others write through W_proj, recomputed here from the trace: at the default
    row of block 1 the ~220 units that do not fire write a longer vector than the ~30 that do, and on average
    over the prompt too; in block 2 they still write a fifth as much or more. The page's bars and sentence say it."""
    at, m = default_page, the_model()
    _, trace = forward(m.params, m.cfg, ids_of(DEFAULT_PROMPT))
    for layer in (0, 1):
        tr, w_proj = trace.layers[layer], m.params["blocks"][layer]["mlp"]["w_proj"]
        fires = tr.ffn_pre > 0
        on = np.linalg.norm((tr.ffn_act * fires) @ w_proj, axis=-1)  # (T,)
        off = np.linalg.norm((tr.ffn_act * ~fires) @ w_proj, axis=-1)
        r = core_reading(layer=layer)
        np.testing.assert_allclose(r["written"]["firing"], on, rtol=1e-5)
        np.testing.assert_allclose(r["written"]["silent"], off, rtol=1e-5)
        assert off.mean() > 0.2 * on.mean()
        assert -tr.ffn_act[~fires].min() < 0.171  # GELU's deepest dip: each silent unit passes little on
    r = core_reading()
    assert r["written_row"]["silent"] > r["written_row"]["firing"] and r["written_mean"]["silent"] > \
        r["written_mean"]["firing"]
    bars = chart_data(titled(at, f"row {DEFAULT_POSITION} ", "written through W_proj"))
    np.testing.assert_allclose(bars["value"].to_numpy(dtype=float), [r["written_row"]["firing"],
                                                                      r["written_row"]["silent"]], rtol=SENT_RTOL)
    shown = texts(at)
    assert f"length **{r['written_row']['firing']:.2f}**" in shown and "many small amounts add up" in shown
    assert "contribute almost nothing" not in shown


def test_residual_sums_and_lengths(default_page):
    at, r = default_page, core_reading()
    bars = chart_data(titled(at, f"row {DEFAULT_POSITION} ", "piece by piece"))
    assert bars["label"].tolist() == list(STREAM.values())
    m = the_model()
    _, trace = forward(m.params, m.cfg, ids_of(DEFAULT_PROMPT))
    tr, p = trace.layers[0], DEFAULT_POSITION
    want = [np.linalg.norm(a[p]) for a in (tr.x, tr.attn_out, tr.res_1, tr.ffn_out, tr.res_2)]
    np.testing.assert_allclose(bars["value"].to_numpy(dtype=float), want, rtol=SENT_RTOL)
    np.testing.assert_array_equal(tr.x + tr.attn_out, tr.res_1)  # the sums the page says are exact
    np.testing.assert_array_equal(tr.res_1 + tr.ffn_out, tr.out)
    assert "x + attention and the block's own sum is 0, and between that plus the feed-forward and the block's " \
           "output 0" in texts(at)
    stream = lines(at, "Row lengths along the prompt")
    np.testing.assert_allclose(stream[STREAM["res_2"]], np.linalg.norm(tr.out, axis=-1), rtol=SENT_RTOL)
    assert r["row_norms"]["res_2"] == pytest.approx(want[-1], rel=1e-6)


def test_pre_and_post_on_the_same_input(default_page):
    at = default_page
    m = the_model()
    _, trace = forward(m.params, m.cfg, ids_of(DEFAULT_PROMPT))
    w = maths.wirings(m.params["blocks"][0], m.cfg, trace.layers[0].x)
    drawn = lines(at, "The same block, wired two ways")
    np.testing.assert_allclose(drawn["pre-norm output"], np.linalg.norm(trace.layers[0].out, axis=-1), rtol=SENT_RTOL)
    np.testing.assert_allclose(drawn["post-norm output"], w["norms"]["post"], rtol=SENT_RTOL)
    assert not np.allclose(drawn["pre-norm output"], drawn["post-norm output"])
    assert f"differ by up to **{w['max_difference']:.3f}**" in texts(at)
    assert "(largest difference 0)" in texts(at)  # pre-norm is the model's own block


def test_depth_experiment_is_cores(default_page):
    a = maths.amplification(DEFAULT_DEPTH, 0)
    drawn = lines(default_page, "Output moved by")
    np.testing.assert_allclose(drawn["pre-norm"], a["pre"], rtol=SENT_RTOL)
    np.testing.assert_allclose(drawn["post-norm"], a["post"], rtol=SENT_RTOL)
    assert a["ratio"] > 1.05 and f"**{a['ratio']:.2f} times** as far" in texts(default_page)


def test_the_default_stack_is_set_beside_ten_others(default_page):
    """The default (seed 0, the deepest stack) was kept for showing the effect: the page sets its ratio beside
    the ten seeds' stacks of that depth, each from core, and says where it stands among them."""
    ratios = [maths.amplification(DEFAULT_DEPTH, seed)["ratio"] for seed in range(10)]
    spread = maths.ratio_spread(DEFAULT_DEPTH)
    np.testing.assert_array_equal(spread["ratios"], ratios)
    assert (spread["low"], spread["median"], spread["high"]) == (min(ratios), np.median(ratios), max(ratios))
    said = texts(default_page)
    assert (f"Over the ten stacks of seeds 0 to 9, each {DEFAULT_DEPTH} blocks deep, post-norm moved from "
            f"{min(ratios):.2f} to {max(ratios):.2f} times as far as pre-norm, averaged over the depths, with a "
            f"median of {np.median(ratios):.2f}: seed 0's {ratios[0]:.2f} is ") in said
    where = "the largest of them" if ratios[0] == max(ratios) else (
        "above their median" if ratios[0] > np.median(ratios) else "below their median")
    assert f"seed 0's {ratios[0]:.2f} is {where}." in said
    assert DEFAULT_DEPTH == MAX_DEPTH and "The page opens on seed 0 and the deepest stack the slider allows." in said


def test_at_another_depth_the_ten_stacks_are_measured_only_when_asked():
    """Ten stacks are ten times the work of one: a move of the depth slider measures one stack, and the ten only
    at the depth the page opens on or when the switch asks."""
    assert "each 12 blocks deep" not in texts(ok(run_page(PAGE, {"block_depth": "12"})))
    assert "each 12 blocks deep" in texts(ok(run_page(PAGE, {"block_depth": "12", "block_spread": "true"})))


@pytest.mark.parametrize("seed, depth", [(3, 32), (999, 12), (5, 2)])
def test_another_seed_is_placed_among_the_ten(seed, depth):
    at = ok(run_page(PAGE, {"seed": str(seed), "block_depth": str(depth), "block_spread": "true"}))
    ratio = maths.amplification(depth, seed)["ratio"]
    ratios = [maths.amplification(depth, s)["ratio"] for s in range(10)]
    median = np.median(ratios)
    if seed < 10 and ratio in (max(ratios), min(ratios)):
        where = "the largest of them" if ratio == max(ratios) else "the smallest of them"
    else:
        where = "above their median" if ratio > median else "below their median"
    assert f"each {depth} blocks deep" in texts(at) and f"seed {seed}'s {ratio:.2f} is {where}." in texts(at)


def test_controls_move_the_view():
    at = ok(run_page(PAGE))
    ok(at.sidebar.slider(key="block_layer").set_value(2).run())
    r = core_reading(layer=1)
    steps = matrix(titled(at, f"row {DEFAULT_POSITION} ", "through layer norm")).to_numpy()
    np.testing.assert_allclose(steps[0], r["ln"]["x"], rtol=SENT_RTOL, atol=1e-6)
    chart_by_title(at, "block 2's ln_1")
    ok(at.sidebar.slider(key="block_pos").set_value(63).run())  # past the end: the last character
    T = len(ids_of(DEFAULT_PROMPT))
    assert f"Position 63 is past the end of the prompt, so its last character, {T - 1}, is used." in texts(at)
    titled(at, f"row {T - 1} ", "through layer norm")
    ok(at.sidebar.slider(key="block_depth").set_value(MAX_DEPTH).run())
    ok(at.sidebar.slider(key="seed").set_value(999).run())
    drawn = lines(at, "Output moved by")
    np.testing.assert_allclose(drawn["post-norm"], maths.amplification(MAX_DEPTH, 999)["post"], rtol=SENT_RTOL)
    ok(at.sidebar.slider(key="block_depth").set_value(2).run())
    assert len(lines(at, "Output moved by")["pre-norm"]) == 2


@pytest.mark.parametrize("query, note", [
    ({"block_pos": "abc"}, "not a number"),
    ({"block_pos": "1e9", "block_layer": "-5"}, "allowed range"),
    ({"block_depth": "inf"}, "allowed range"),
    ({"block_layer": "nan", "block_depth": "0"}, "not a number"),
    ({"block_prompt": "x" * 5000}, "only the first"),
])
def test_bad_links_are_corrected_and_said(query, note):
    at = ok(run_page(PAGE, query))
    assert note in "\n".join(i.value for i in at.info)
    assert len(charts(at)) == CHARTS


@pytest.mark.parametrize("prompt, said", [
    ("", "The prompt is empty"),
    ("T", None),
    ("日本語 😀 wörld", "not in the model's vocabulary"),
    ("<script>alert('x')</script> **bold** [link](http://e.com) `tick` {x}", None),
    ("ab" * 300, "sees only the last"),
    ("\n\n\n", None),
])
def test_hostile_prompts(prompt, said):
    at = ok(run_page(PAGE, {"block_prompt": prompt}))
    shown = texts(at)
    if said:
        assert said in shown
    titles = [chart_title(c) for c in charts(at)]
    assert any(t.startswith("Output moved by") for t in titles)  # the depth experiment never needs the prompt
    if not prompt:
        assert len(titles) == 1
        return
    assert len(titles) == CHARTS
    ids = ids_of(prompt)
    position = min(DEFAULT_POSITION, len(ids) - 1)
    steps = matrix(titled(at, f"row {position} ", "through layer norm")).to_numpy()
    np.testing.assert_allclose(steps[2], core_reading(prompt, 0, position)["ln"]["out"], rtol=SENT_RTOL, atol=1e-6)


def test_questions_answers_come_from_core():
    bank = {ex.id: ex for ex in for_lesson("block")}
    assert bank["ln_first"].answer == pytest.approx(-3 / np.sqrt(5), abs=1e-5)
    assert bank["ffn_width"].answer == 256
    assert bank["gelu_minus_one"].answer == pytest.approx(-0.1588, abs=1e-3)
    assert bank["residual_length"].answer == 5.0
    assert bank["which_wiring"].options[bank["which_wiring"].correct].startswith("pre-norm")


# ---- the Try-this steps -----------------------------------------------------------------------------------


def test_try_moving_the_position():
    at = ok(run_page(PAGE))
    means = []
    for position in (0, 12, 30):
        ok(at.sidebar.slider(key="block_pos").set_value(position).run())
        steps = matrix(titled(at, f"row {position} ", "through layer norm")).to_numpy()
        means.append(steps[0].mean())
        assert abs(steps[1].mean()) < 1e-5 and 0.999 < steps[1].var() < 1.0 + 1e-6
    assert len({round(m, 4) for m in means}) == 3  # the input rows differ


def test_try_a_repeated_character():
    at = ok(run_page(PAGE, {"block_prompt": "a" * 16}))
    repeated = lines(at, "Row lengths along the prompt")[STREAM["res_2"]]
    varied = lines(ok(run_page(PAGE)), "Row lengths along the prompt")[STREAM["res_2"]]
    assert np.abs(np.diff(np.diff(repeated[2:]))).mean() < np.abs(np.diff(np.diff(varied[2:]))).mean()


def test_try_block_two():
    assert core_reading(layer=1)["ffn_share"] > core_reading(layer=0)["ffn_share"]


def test_try_the_deepest_stack():
    shallow, deep = maths.amplification(2, 0), maths.amplification(MAX_DEPTH, 0)
    assert deep["ratio"] > shallow["ratio"] and deep["post"][-1] > 1.5 * deep["pre"][-1]
    assert np.mean([maths.amplification(MAX_DEPTH, s)["ratio"] for s in (1, 2)]) > 1.2


def test_simple_level_keeps_the_pictures_and_drops_the_formulas():
    from ui.text import CODE_KEY

    technical = ok(run_page(PAGE, opened=[CODE_KEY]))
    simple = ok(run_page(PAGE, {"level": "simple"}, opened=[CODE_KEY]))
    formula = "LN(x) = γ ⊙ (x − mean(x))"
    assert formula in texts(technical) and formula not in texts(simple)
    assert any(e.label == "Show the code" for e in technical.expander)
    assert not any(e.label == "Show the code" for e in simple.expander)
    assert len(charts(simple)) == len(charts(technical)) == CHARTS
    assert "[technical]" not in texts(technical) + texts(simple)
    assert "[layer norm](/glossary#layer-norm" in texts(simple)  # each term linked where it first appears

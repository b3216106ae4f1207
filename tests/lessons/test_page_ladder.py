"""The Ladder page through AppTest: every figure it shows is the shipped results' (the bars, their reference
lines, the table, the curves, the samples) or the core's on the shipped weights (the attention maps, where the heads
look); every sentence's claim holds for those numbers; its controls (unit, rung, prompt, the live run) work; and it
renders at the Simple level and with the results missing."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from core.data import pydoc_corpus
from lessons.ladder import cached, live, maths
from lessons.ladder import views as lv
from tests.apptest_helpers import (
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    numbered_title,
    ok,
    run_page,
    shown_table,
    texts,
)
from ui.frame import page as frame_page

PAGE = "lessons/ladder/page.py"
RESULTS = maths.read_results()
RECS = {rec["key"]: rec for rec in RESULTS["rungs"]}
FALLS = {f["key"]: f["fall"] for f in maths.steps_between(RESULTS)}
CORPUS = pydoc_corpus(maths.SETTINGS.context)


@pytest.fixture(scope="module")
def at():
    return ok(run_page(PAGE))


def own_weight(key: str) -> float:
    params, cfg, _ = maths.load_rung(key)
    return float(np.mean(maths.where_heads_look(params, cfg, CORPUS)["own"]))


def test_the_page_opens_with_its_number_and_the_ladder(at):
    assert at.title[0].value == numbered_title("ladder")
    shown = texts(at)
    assert f"{RESULTS['train_characters']:,} characters to train on" in shown
    assert f"{maths.SETTINGS.steps:,} steps of {maths.SETTINGS.batch_size} windows" in shown


def test_the_bars_are_the_shipped_validation_losses_with_their_two_lines(at):
    df = chart_data(chart_by_title(at, "Validation loss of each rung"))
    assert list(df["label"]) == [r.label for r in maths.RUNGS]
    np.testing.assert_allclose(df["value"], [RECS[k]["val_loss"] for k in maths.KEYS], rtol=5e-4)
    np.testing.assert_allclose(df["ref_0"], RECS["counts"]["val_loss"], rtol=5e-4)
    np.testing.assert_allclose(df["ref_1"], math.log(RESULTS["vocab_size"]), rtol=5e-4)


def test_the_table_is_the_shipped_results(at):
    table = shown_table(at, "validation (bits)")
    assert list(table["rung"]) == [r.label for r in maths.RUNGS]
    assert list(table["parameters"]) == [RECS[k]["parameters"] for k in maths.KEYS]
    # printed as lessons/ladder/views.py says: the losses "%.3f", the time "%.1f"; each within half its last digit
    np.testing.assert_allclose(table["validation (nats)"], [RECS[k]["val_loss"] for k in maths.KEYS], rtol=0,
                               atol=5e-4)
    np.testing.assert_allclose(table["validation (bits)"], [RECS[k]["val_loss"] / math.log(2) for k in maths.KEYS],
                               rtol=0, atol=5e-4)
    np.testing.assert_allclose(table["training time (s)"], [RECS[k]["seconds"] for k in maths.KEYS], rtol=0,
                               atol=5e-2)


def test_each_step_says_the_fall_the_table_shows(at):
    shown = texts(at)
    for key, fall in FALLS.items():
        if key == "bigram":
            assert f"**{abs(fall):.3f}** nats {'above' if fall < 0 else 'below'} the counted one" in shown
            continue
        word = "fell by" if fall > 0 else "rose by"
        assert f"{word} **{abs(fall):.3f}**" in shown, key
    largest = max((k for k in FALLS if k != "bigram"), key=FALLS.get)
    line = next(line for line in shown.splitlines() if line.lower().startswith(f"- **{maths.rung(largest).label}"))
    assert "largest single fall" in line
    assert shown.count("largest single fall") == 1


def test_the_steps_claims_hold_for_the_numbers():
    """What the sentences of the steps say, beyond the figures they print."""
    assert FALLS["residual"] > 0  # "even one block gains here"
    assert abs(FALLS["bigram"]) < 0.05  # the counted and the learnt bigram "nearly meet"
    assert own_weight("ffn") > own_weight("residual")  # "their weight on it drops from ... to ..."
    assert RECS["heads"]["parameters"] == RECS["one_head"]["parameters"]  # "The parameters are the same"
    ln, res = RECS["layer_norm"]["curve"], RECS["residual"]["curve"]
    step = ln["step"].index(300)
    assert ln["val"][step] < res["val"][step]  # "at step 300 ... the rung before it ..."
    assert res["val"][step] - ln["val"][step] > FALLS["layer_norm"]  # "a wider lead than it keeps at the end"


def test_what_to_notice_holds_for_the_numbers():
    below = [own_weight(k) for k in ("one_head", "heads", "ffn")]
    above = [own_weight(k) for k in ("residual", "layer_norm", "blocks")]
    assert min(below) > max(above)
    # "the share also falls between rungs that leave that path alone"
    assert own_weight("one_head") > own_weight("heads") or own_weight("residual") > own_weight("layer_norm")
    assert RECS["residual"]["parameters"] == RECS["ffn"]["parameters"]  # residuals add no parameter
    assert RECS["layer_norm"]["parameters"] - RECS["residual"]["parameters"] == 6 * maths.SETTINGS.d_model
    assert min(FALLS["residual"], FALLS["layer_norm"]) > FALLS["ffn"]
    assert RECS["ffn"]["parameters"] >= 2 * RECS["heads"]["parameters"]  # "which doubles the parameters"
    overfit = [rec["train_loss"] < rec["val_loss"] for rec in RESULTS["rungs"]]
    first = overfit.index(True)
    assert all(overfit[first:]) and not any(overfit[:first])  # only the last rungs


def test_the_gap_is_said_as_the_curves_show_it(at):
    shown = texts(at)
    first = next(rec["key"] for rec in RESULTS["rungs"] if rec["train_loss"] < rec["val_loss"])
    assert f"The first rung whose training loss falls below its validation loss is **{maths.rung(first).label}**" \
        in shown
    for key in maths.KEYS[maths.KEYS.index(first):]:  # "their validation loss still falls at the last step"
        assert RECS[key]["curve"]["val"][-1] < RECS[key]["curve"]["val"][-2]
    assert RECS["counts"]["val_loss"] < RECS["counts"]["train_loss"]  # "the validation split is easier"
    df = chart_data(chart_by_title(at, "more blocks: training against validation"))
    blocks = RECS["blocks"]["curve"]
    np.testing.assert_allclose(df[df.series == "training"]["y"], blocks["train"], rtol=5e-4)
    np.testing.assert_allclose(df[df.series == "validation"]["y"], blocks["val"], rtol=5e-4)


def test_the_validation_curves_are_the_shipped_ones(at):
    df = chart_data(chart_by_title(at, "Validation loss while training"))
    for r in maths.RUNGS[1:]:
        np.testing.assert_allclose(df[df.series == lv.numbered(r.key)]["y"], RECS[r.key]["curve"]["val"], rtol=5e-4)
    assert set(df[df.series == lv.numbered("counts")]["y"].round(4)) == {round(RECS["counts"]["curve"]["val"][0], 4)}
    assert sorted(set(df.series)) == [lv.numbered(k) for k in maths.KEYS]  # the legend sorts them in the table's order


def test_the_samples_are_the_shipped_ones_side_by_side(at):
    codes = [c.value for c in at.code if c.value.startswith(maths.SETTINGS.sample_prompt)]
    assert codes[:len(maths.KEYS)] == [maths.SETTINGS.sample_prompt + RECS[k]["sample"] for k in maths.KEYS]


@pytest.mark.parametrize("key", maths.ATTENTION_KEYS)
def test_each_attention_rung_draws_every_head_on_the_prompt(key):
    page = ok(run_page(PAGE, {"ld_rung": maths.rung(key).label}))
    params, cfg, _ = maths.load_rung(key)
    grid = next(c for c in charts(page) if re.search(r"\d+ layers? x \d+ heads?", chart_title(c)))
    df = chart_data(grid)
    assert df["panel"].nunique() == cfg.n_layers * cfg.n_heads
    tok = cached.rung_model(key)[2]
    ids = maths.readable(tok, page.text_input(key="ld_prompt").value, cfg.max_len)
    weights = maths.attention_on(params, cfg, ids)
    assert df["value"].astype(float).max() == pytest.approx(weights.max(), abs=5e-4)
    looks = shown_table(page, "own character")
    seen = maths.where_heads_look(params, cfg, CORPUS)
    # printed "%.2f" (lessons/ladder/page.py): within half its last digit
    np.testing.assert_allclose(looks["own character"], seen["own"].ravel(), rtol=0, atol=5e-3 + 1e-6)
    assert f"put **{np.mean(seen['own']):.0%}** of their weight" in texts(page)


def test_bits_divide_every_bar_and_line_by_ln_2():
    page = ok(run_page(PAGE, {"ld_unit": "bits"}))
    df = chart_data(chart_by_title(page, "Validation loss of each rung"))
    np.testing.assert_allclose(df["value"], [RECS[k]["val_bits"] for k in maths.KEYS], rtol=5e-4)
    np.testing.assert_allclose(df["ref_1"], math.log2(RESULTS["vocab_size"]), rtol=5e-4)


def test_a_prompt_of_unknown_characters_says_so():
    page = ok(run_page(PAGE, {"ld_prompt": "ééé"}))
    assert "holds no character the rungs know" in texts(page)


def test_train_a_rung_yourself_lands_on_the_shipped_curve():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(live, "fair_budget", lambda *args, **kwargs: 600.0)
        page = ok(run_page(PAGE, {"ld_train_steps": "200"}, timeout=300))
        assert "Press **Train** to train it again for 200 steps with seed 0." in texts(page)
        page.button(key="ld_train").click().run()
        for _ in range(5):
            if page.session_state[live.LIVE_KEY].state != "running":
                break
            page.run()
        ok(page)
    run = page.session_state[live.LIVE_KEY]
    assert run.state == "finished" and run.steps == 200
    shipped = RECS["one_head"]["curve"]
    np.testing.assert_allclose(run.curve["val"], shipped["val"][:3], atol=1e-4)
    assert re.search(r"At step 200, your run's validation loss is \*\*[\d.]+\*\* and the shipped run's was "
                     r"\*\*[\d.]+\*\*: the same", texts(page))
    df = chart_data(chart_by_title(page, "one head: your run on the shipped one"))
    assert set(df.series) == {"shipped run", "your run"}


def test_another_seed_trains_elsewhere_and_says_by_how_much():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(live, "fair_budget", lambda *args, **kwargs: 600.0)
        page = ok(run_page(PAGE, {"ld_train_steps": "100", "seed": "7"}, timeout=300))
        page.button(key="ld_train").click().run()
        for _ in range(5):
            if page.session_state[live.LIVE_KEY].state != "running":
                break
            page.run()
        ok(page)
    run = page.session_state[live.LIVE_KEY]
    shipped = RECS["one_head"]["curve"]["val"][1]
    assert run.seed == 7 and run.curve["val"][-1] != pytest.approx(shipped, abs=1e-4)
    assert f"your run (seed 7) is at **{run.curve['val'][-1]:.4f}**" in texts(page)
    assert f"{abs(run.curve['val'][-1] - shipped):.4f} apart" in texts(page)


def test_before_a_run_the_panel_draws_the_shipped_curve_up_to_the_steps_asked(at):
    df = chart_data(chart_by_title(at, "one head: your run on the shipped one"))
    curve = RECS["one_head"]["curve"]
    n = curve["step"].index(live.DEFAULT_STEPS) + 1
    np.testing.assert_allclose(df["y"], curve["val"][:n], rtol=5e-4)


def test_a_left_run_waits():
    state = {}
    run = live.LiveRun("one_head", 100, 0, maths.trainer_for(maths.rung("one_head"), CORPUS))
    state[live.LIVE_KEY] = run
    live.pause_if_left(state, now=run.last_active + live.PAUSE_AFTER_S + 1)
    assert run.state == "stopped"


def test_the_simple_level_renders_its_own_text():
    page = ok(run_page(PAGE, {"level": "simple"}))
    shown = texts(page)
    assert "This page measures what each piece is worth" in shown
    assert "He et al." not in shown


def test_without_its_results_the_page_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(maths, "RESULTS", tmp_path / "ladder.json")
    cached.results.clear()
    try:
        page = run_page(PAGE)
        assert any("cannot be read" in str(e.value) for e in page.error)
    finally:
        cached.results.clear()
        frame_page.built_questions.cache_clear()  # the questions of the missing results: none, kept per process

"""The sections issue 38 added, each drawn from the core and saying what the core measured: QKV's opening (why
attention), Scaling's overflow, Multi-head's "attention is not explanation", Full model's "why top-p",
Circuit's phase change, Block's firing split (tests/lessons/test_page_block.py), Training's fixed-length note."""

from __future__ import annotations

import numpy as np
import pytest

from core.data import pydoc_text
from core.demos.word_heads import word_model
from lessons.circuit.maths import phase_change
from lessons.full_model import maths, why_top_p
from lessons.multi_head import not_explanation
from lessons.multi_head.maths import looked_at_or_used
from lessons.qkv.maths import average_or_attend, next_words
from lessons.scaling.maths import overflow
from tests.apptest_helpers import (
    SENT_ATOL,
    SENT_RTOL,
    chart_by_title,
    chart_data,
    matrix,
    ok,
    run_page,
    shown_table,
    texts,
)
from ui.compute import model_store
from ui.sections import trained_views as tv


def test_qkv_opens_with_the_average_against_a_trained_head():
    at = ok(run_page("lessons/qkv/page.py"))
    a = average_or_attend()
    shown = texts(at)
    assert at.markdown[1].value.startswith("## Why attention")  # before any matrix, right after the idea
    for n, s in enumerate(a["sentences"], 1):
        rows = matrix(chart_by_title(at, f"the row of “bank”, sentence {n}")).to_numpy()
        np.testing.assert_allclose(rows, np.stack([s["average"], s["attended"]]), rtol=SENT_RTOL, atol=SENT_ATOL)
    first, second = a["sentences"]
    assert f"it takes {first['cue_average']:.3f} of each of the {first['at'] + 1} tokens" in shown
    w1, w2 = first["cue_attended"], second["cue_attended"]
    assert (f"**{w1:.2f}** of the row of “bank” in the first sentence, and “money” **{w2:.2f}** in the "
            "second") in shown
    assert f"only {a['off_accuracy']:.0%} of the time" in shown
    assert f"`{next_words(average_or_attend.__defaults__[0], 1)[0][0]}`" in shown  # the model's likeliest next word
    assert "there is no mask yet" in shown
    # the trained view keeps the opening: it is outside the live part
    assert "## Why attention" in texts(ok(run_page("lessons/qkv/page.py", {"weights": "trained"})))


def test_positions_are_taught_on_qkv_before_any_view_uses_them():
    shown = texts(ok(run_page("lessons/qkv/page.py")))
    assert "position vector" in shown and "leave positions out" in shown


def test_scaling_shows_the_overflow_at_the_technical_level_only():
    o = overflow()
    technical = texts(ok(run_page("lessons/scaling/page.py")))
    assert "## Large scores and the computer: overflow" in technical
    assert f"above {o['limits']['float64']:.1f} in float64" in technical
    assert "weights [NaN, NaN, NaN]" in technical and f"[{o['weights'][0]:.4g}," in technical
    assert "overflow" not in texts(ok(run_page("lessons/scaling/page.py", {"level": "simple"}))).lower()


@pytest.mark.parametrize("weights", ["random", "trained"])
def test_multi_head_says_attention_is_not_explanation_with_the_knockouts(weights):
    at = ok(run_page("lessons/multi_head/page.py", {"weights": weights}))
    f = looked_at_or_used("bank")
    needed, (a, b) = f["needed"], f["also_looking"][:2]
    shown = texts(at)
    assert "## Attention is not explanation" in shown
    assert (f"{tv.head_name(*needed)} the model picks the right kind of word after “bank” "
            f"{f['off_accuracy'][needed]:.0%} of the time") in shown
    assert (f"{tv.head_name(*a)} and {tv.head_name(*b)} look there too, with {f['shares'][a]:.2f} and "
            f"{f['shares'][b]:.2f}") in shown
    assert f"without both of them at once, {f['also_off_accuracy']:.0%}" in shown  # one cannot stand in for the other
    assert "where a coin toss would be right half the time" in shown and "as with every head on" not in shown
    # the words follow the numbers: the two lookers are spare, and the needed head leaves about a coin toss
    spare = f["also_off_accuracy"] >= f["accuracy"] - not_explanation.SPARE
    assert spare == ("the model still gets the rule right without them" in shown)
    assert (f["off_accuracy"][needed] < not_explanation.TOSS) == (
        f"The head it cannot do without is {tv.head_name(*needed)}." in shown)
    table = shown_table(at, "weight on the cue")
    # printed "%.2f" (lessons/multi_head/not_explanation.py): within half its last digit
    np.testing.assert_allclose(table["weight on the cue"], f["shares"].ravel(), rtol=0, atol=5e-3)
    np.testing.assert_allclose(table["right with it off"], f["off_accuracy"].ravel(), rtol=0, atol=5e-3)
    assert f["off_accuracy"][needed] < 0.6 and min(f["off_accuracy"][a], f["off_accuracy"][b]) > 0.95
    assert f["also_off_accuracy"] > 0.95  # the page says the model still gets the rule right without both
    assert min(f["off_log_odds"][a], f["off_log_odds"][b]) < f["log_odds"] - 1  # and that it is less sure


def test_full_model_shows_why_top_p_on_the_character_model():
    at = ok(run_page("lessons/full_model/page.py"))
    model = model_store.load_model("pydoc_char")
    r = maths.compare(model.params, model.cfg, model.tokenizer.decode, model.tokenizer.encode(why_top_p.PROMPT),
                      why_top_p.LENGTH, why_top_p.SEEDS, why_top_p.P, set(maths.WORD.findall(pydoc_text())))
    shown = texts(at)
    loop = r["greedy"]["loop"]
    assert f"from its character {loop['start']} on" in shown and f"a loop of {loop['period']} characters" in shown
    assert f"drew on average {np.mean(r['pure']['tail']):.1f} of its {why_top_p.LENGTH} characters" in shown
    assert f"{np.mean(r['pure']['known']):.0%} of the words pure sampling wrote" in shown
    assert f"against {np.mean(r['top-p']['known']):.0%} for top-p" in shown
    # "still a different text for each of its fixed seeds": no two of top-p's seeds wrote the same text
    assert f"a different text for each of its {len(why_top_p.SEEDS)} fixed seeds" in shown
    assert len(set(r["top-p"]["texts"])) == len(why_top_p.SEEDS) == len(r["top-p"]["texts"])
    plain = [c.value for c in at.main.code if c.language != "text"]  # the page's own generation is "text"
    assert r["greedy"]["texts"][0] in plain and r["top-p"]["texts"][0] in plain
    assert "is what decided the next-character bars" not in shown and "knocking the head out (below)" in shown


def test_circuit_draws_the_phase_change_from_its_training_log():
    at = ok(run_page("lessons/circuit/page.py"))
    meta = model_store.load_model("circuit").meta
    p = phase_change(meta["log"], float(np.log(24)))
    curve = chart_data(chart_by_title(at, "The loss on the repeat while the model trained"))
    val = curve[curve["series"] == "validation loss (the repeat)"]
    np.testing.assert_allclose(val["y"].to_numpy(float), meta["log"]["val_loss"], rtol=SENT_RTOL)
    np.testing.assert_array_equal(val["x"].to_numpy(float), meta["log"]["step"])
    shown = texts(at)
    assert f"stayed at {p['stuck_loss']:.2f} or above for the first {p['stuck_step']:,} steps" in shown
    assert f"to {p['fall'][3]:.2f} at step {p['fall'][2]:,}" in shown and "This log records losses, not heads" in shown


def test_training_says_its_induction_task_is_solved_by_position():
    at = ok(run_page("lessons/training/page.py", {"tr_data": "induction"}))
    pattern = model_store.load_model("induction").meta["pattern"]
    note = "\n".join(i.value for i in at.info)
    assert "position alone solves it" in note and "Induction circuit, lesson 10" in note
    assert f"puts {pattern['mass']:.2f} of its weight on the answer's key" in note
    assert "position alone solves it" not in "\n".join(i.value for i in ok(run_page("lessons/training/page.py")).info)


def test_the_word_lessons_never_call_the_test_sentences_held_out():
    for page in ("qkv", "multi_head", "communication"):
        shown = texts(ok(run_page(f"lessons/{page}/page.py", {"weights": "trained"})))
        assert "held-out" not in shown and "held out" not in shown.replace("not held out", ""), page
    assert word_model().meta["phenomena"]  # the figures the pages quote

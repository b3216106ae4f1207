"""Check-yourself exercises: every exercise of every lesson, answered right and wrong on its page.

The answers in each lesson's questions.py are computed by the core; here each one is recomputed a second way
(plain NumPy or arithmetic), so a bank answer that drifted, or a number copied from a tutorial's
printout (seed 001 printed 0.432 for a weight that is 0.456), fails here before a student sees it.

The "Check yourself" expander is filled only while open: the tests on a page open it first (its state key,
ui.frame.exercises.open_key(lesson), set as a click would); test_closed_exercises_draw_nothing checks the closed one.
"""

from __future__ import annotations

import builtins
import json
import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from core.demos.heads import single_head
from core.sampling import probs_from_logits
from core.tokenize import word_tokens
from lessons import COURSE
from tests.apptest_helpers import (
    BANK,
    ROOT,
    chart_by_title,
    chart_title,
    charts,
    for_lesson,
    matrix,
    ok,
    open_panels,
    run_app,
    run_page,
)
from ui.frame.exercises import PROGRESS, Exercise, check, open_key, parse_number
from ui.state.controls import DEFAULT_TEXT

PAGES = {lesson.url_path: lesson.path for lesson in COURSE}
CASES = [(url, ex) for url in BANK if url in PAGES for ex in for_lesson(url)]
IDS = [f"{url}-{ex.id}" for url, ex in CASES]


def _softmax(x):
    e = np.exp(np.asarray(x, dtype=np.float64) - np.max(x))
    return e / e.sum()


def _dot_variance(d_k: int, pairs: int = 20_000) -> float:
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, pairs, d_k))
    return float((q * k).sum(-1).var())


# (lesson, exercise id) -> the right answer worked out independently of the lessons' questions and core.costs
EXPECTED_NUMBERS = {
    ("qkv", "score_count"): len(DEFAULT_TEXT.split()) ** 2,  # 7 words, (T, T) scores: 49
    ("qkv", "first_weight"): 0.456,  # softmax([1, 0, 0.5] / √2)[0]; NOT the tutorial's 0.432
    ("scaling", "factor_64"): 8.0,  # √64
    ("scaling", "variance"): 256.0,  # Var(q·k) = d_k
    ("masking", "row0"): 1.0,  # a softmax over one allowed key
    ("masking", "late_mask"): 0.5,  # 0.25 + 0.25 kept of four equal weights
    ("masking", "multiplied"): 3 / (math.e**2 + 3),  # scores [2, 0, 0, 0]: the three zeros keep e⁰ each
    ("qkv", "dot_angle"): 2 * 2 * math.cos(math.radians(120)),  # |a| |b| cos θ = -2
    ("multi-head", "dk_per_head"): 64 / 8,
    ("multi-head", "attn_params"): 64 * 192 + 192 + 64 * 64 + 64,  # 16,640
    ("model", "temp0"): 1.0,
    ("model", "memory"): 100_000 * 100_000 * 2 / 1e9,  # 20 GB
    ("training", "uniform_loss"): math.log(16 + 2),  # the copy task: letters A-P, the bar and the unknown token
    ("model", "bits"): 2.0,  # a probability of 1/4 is two halvings
    ("model", "head_view"): 1,  # the first character can read only itself
    ("model", "kv_cache"): 2 * 1000 * 64 * 2 * 4,  # keys and values, 64 numbers, 2 layers, float32
    ("tiles", "rescale"): math.exp(2 - 5),  # exp(m_old - m_new)
    ("tiles", "tile_ratio"): 65_536 / 128,  # (T, T) over (T, b)
    ("bigram", "banana"): (2 + 1) / (2 + 3),  # a -> n twice, nothing else; add 1 to each of the 3 counts
    ("bigram", "pairs"): 1000 - 1,
    ("communication", "order_rows"): 0,  # without positions a shuffle only moves the output rows
    ("communication", "reach"): 0.9**10,  # ten steps that each keep 0.9
    ("communication", "cross_count"): 5 * 8,  # (Tq, Tkv) weights
    ("circuit", "uniform"): math.log(24),  # -ln(1/24)
    ("block", "ln_first"): (2 - 5) / math.sqrt(5),  # row [2, 4, 6, 8]: mean 5, variance 5
    ("block", "ffn_width"): 4 * 64,  # d_ff = 4 D
    ("block", "gelu_minus_one"): -0.5 * (1 + math.erf(-1 / math.sqrt(2))),  # x Φ(x) at x = -1
    ("block", "residual_length"): 5.0,
    ("ladder", "uniform"): math.log(95),  # the documentation text's 95 characters (docs/MODELS.md)
    ("ladder", "bits"): json.loads((ROOT / "lessons/ladder/weights/ladder.json").read_text())["rungs"][-1]["val_loss"]
    / math.log(2),  # the shipped last rung's nats, in bits
    ("ladder", "extra_heads"): 0,  # heads are slices of the same W_qkv and W_O
}
# (lesson, exercise id) -> the option a student must pick (checked by what the option says)
EXPECTED_OPTIONS = {
    ("qkv", "why_same_rows"): "same embedding",
    ("scaling", "bug_dv"): "line 4",
    ("masking", "which_causal"): "Picture B",
    ("bigram", "context_target"): "target a; the bigram model reads “n”",  # "ban" -> "a"; the last is "n"
    ("training", "bigram"): "attention",
    ("communication", "who_hears"): "encoder",
    ("qkv", "trained_row"): "the subject",  # docs/MODELS.md: the agreement head's share on the subject is 0.98
    ("multi-head", "head_off"): "coin toss",  # docs/MODELS.md: 47.7% with the agreement head off
    ("communication", "bank_vectors"): "near 0",  # docs/MODELS.md: cosine 0.07 after layer 2
    ("circuit", "most_needed"): "layer 1 · head 2",  # the previous-token head (docs/MODELS.md: +13 nats)
    ("block", "which_wiring"): "pre-norm",
    ("scaling", "overflow"): "NaN",  # exp(1000) is inf in float64; inf / inf is NaN
    ("multi-head", "looked_at"): "Still right almost always",  # docs/MODELS.md: layer 2's heads off change little
    ("block", "firing_or_not"): "that do not",  # issue 38: 2.90 against 1.06 at the default row
    ("model", "top_p"): "e, a and o",  # 0.5 + 0.3 < 0.9 keeps o too; then 0.95 >= 0.9 stops
    ("model", "greedy_twice"): "The same text",  # greedy draws nothing at random
    ("training", "fixed_length"): "always 7 keys back",  # induction: key i - L + 1 with L = 8
    ("circuit", "flat_then_fall"): "stayed near the uniform guess",  # docs/MODELS.md: 5,000 flat steps, then 0.55
    ("ladder", "largest"): "+ residuals",  # the shipped ladder: 2.057 -> 1.799, the largest step
    ("ladder", "gap"): "+ layer norm",  # training 1.604 against validation 1.655, the rungs above it the other way
}
# A plausible wrong number for each numeric exercise (the tutorial's 0.432 for the first weight)
WRONG_NUMBERS = {("qkv", "first_weight"): "0.432", ("scaling", "factor_64"): "64", ("scaling", "variance"): "16",
                 ("masking", "late_mask"): "1", ("model", "memory"): "10",
                 ("tiles", "rescale"): "0.135", ("tiles", "tile_ratio"): "65536", ("bigram", "banana"): "1",
                 ("bigram", "pairs"): "1000", ("communication", "reach"): "0.1"}



def run_open(lesson: str) -> AppTest:
    """The lesson's page with its exercises open."""
    return ok(run_page(PAGES[lesson], opened=[open_key(lesson)]))


def right_response(ex: Exercise):
    """What a student who knows the answer types (a number as printed, 3 decimals at most) or picks."""
    if ex.answer is None:
        return ex.correct
    return f"{ex.answer:.3f}".rstrip("0").rstrip(".") if ex.tolerance else f"{ex.answer:.0f}"


def wrong_response(lesson: str, ex: Exercise):
    if ex.answer is None:
        return (ex.correct + 1) % len(ex.options)
    return WRONG_NUMBERS.get((lesson, ex.id), f"{2 * ex.answer + 1:g}")


def submit(at: AppTest, lesson: str, ex: Exercise, response) -> AppTest:
    """Type (or pick) an answer and press Check, as a student does."""
    key = f"ex_{lesson}_{ex.id}"
    if ex.answer is None:
        at.radio(key=f"{key}_answer").set_value(response)
    else:
        at.text_input(key=f"{key}_answer").set_value(response)
    buttons = [b for b in at.button if b.form_id == f"{key}_form"]
    assert len(buttons) == 1, f"no Check button for {key}"
    buttons[0].click()
    return ok(at.run())


def panel(at: AppTest):
    """The 'Check yourself' expander: feedback is looked for inside it (lessons have their own alerts)."""
    found = [e for e in at.expander if e.label == "Check yourself"]
    assert len(found) == 1, [e.label for e in at.expander]
    return found[0]


def shown(at: AppTest, kind: str) -> list[str]:
    """The texts of one kind of element (success, error, info, caption) in the exercises' panel."""
    return [str(e.value) for e in getattr(panel(at), kind)]


def score_caption(at: AppTest) -> str:
    found = [c for c in shown(at, "caption") if "solved in this session" in c]
    assert len(found) == 1, found
    return found[0]


def solved(at: AppTest, lesson: str) -> dict:
    return dict(at.session_state[PROGRESS].get(lesson, {})) if PROGRESS in at.session_state else {}


# ---- the answers themselves ---------------------------------------------------------------------------


def test_every_exercise_has_an_independent_answer():
    """A new exercise must get a second, independent answer here too."""
    for lesson, build in BANK.items():
        for ex in build():
            known = (lesson, ex.id) in EXPECTED_NUMBERS or (lesson, ex.id) in EXPECTED_OPTIONS
            assert known, f"{lesson}/{ex.id} has no independent answer in this test"
            assert (ex.answer is None) != (ex.correct is None), f"{lesson}/{ex.id}: a number or an option, not both"
            assert ex.explanation.strip(), f"{lesson}/{ex.id} explains nothing"


@pytest.mark.parametrize(("lesson", "ex"), CASES + [(url, ex) for url in BANK if url not in PAGES
                                                   for ex in for_lesson(url)],
                         ids=lambda v: v.id if isinstance(v, Exercise) else v)
def test_bank_answer_is_right(lesson, ex):
    if ex.answer is not None:
        want = EXPECTED_NUMBERS[(lesson, ex.id)]
        assert check(ex, repr(want))[0], f"{lesson}/{ex.id}: bank says {ex.answer}, independently {want}"
        assert math.isclose(ex.answer, want, rel_tol=1e-3, abs_tol=5e-4), (ex.answer, want)
    else:
        assert EXPECTED_OPTIONS[(lesson, ex.id)] in ex.options[ex.correct], (ex.options, ex.correct)


def test_first_weight_is_0456_not_the_tutorials_0432():
    ex = next(e for e in for_lesson("qkv") if e.id == "first_weight")
    w = _softmax(np.array([1.0, 0.0, 0.5]) / np.sqrt(2))
    assert round(float(w[0]), 3) == 0.456 and round(ex.answer, 3) == 0.456
    assert check(ex, "0.456")[0]
    assert not check(ex, "0.432")[0]  # the published (wrong) value is marked wrong
    # and the explanation prints the whole row, which sums to 1
    assert f"{w[0]:.3f}, {w[1]:.3f}, {w[2]:.3f}" in ex.explanation
    assert w.sum() == pytest.approx(1.0)


def test_the_numbers_behind_the_answers():
    """Each fact the explanations state, recomputed with NumPy."""
    assert _dot_variance(256) == pytest.approx(256, rel=0.05)
    causal = np.tril(np.ones((4, 4), dtype=bool))
    late = np.where(causal, _softmax(np.zeros(4)), 0.0)  # softmax first, then zero the future
    assert late[1].sum() == pytest.approx(0.5)
    early = np.where(causal[1], 0.0, -np.inf)
    assert _softmax(early).sum() == pytest.approx(1.0)  # masking first keeps the row whole
    assert _softmax(np.where(causal[0], 0.0, -np.inf))[0] == 1.0
    assert probs_from_logits(np.array([0.3, 2.0, -1.0, 1.9]), 0.0).max() == 1.0
    # "the" twice: identical rows of Q, because Q = X W_Q works row by row on equal embeddings
    head = single_head(word_tokens("the cat saw the dog"), 16, 8, 0)
    np.testing.assert_array_equal(head["Q"][0], head["Q"][3])
    ex = next(e for e in for_lesson("scaling") if e.id == "bug_dv")
    line = ex.code.splitlines()[int(ex.options[ex.correct].split()[-1]) - 1]
    assert "sqrt(d_v)" in line


@pytest.mark.parametrize("text", ["1/8", " 1/8 ", "0.125", ".125", "125e-3", "2/16", "+1/8"])
def test_fractions_and_decimals_parse(text):
    assert parse_number(text) == 0.125


@pytest.mark.parametrize("text", ["import os", "__import__('os')", "1/0", "nan", "inf", "0x10", "1/2/3", "", "8 8/"])
def test_non_numbers_are_rejected(text):
    with pytest.raises(ValueError):
        parse_number(text)


# ---- on the page ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lesson", "ex"), CASES, ids=IDS)
def test_exercise_on_its_page(lesson, ex):
    """Wrong: an error and the explanation, nothing solved. Right: a success, the explanation, the score moves."""
    at = run_open(lesson)
    n = len(for_lesson(lesson))
    panel(at)
    assert score_caption(at) == f"0 of {n} solved in this session."

    submit(at, lesson, ex, wrong_response(lesson, ex))
    assert not shown(at, "success"), shown(at, "success")
    assert any(("Not quite" in e or "Not this one" in e) for e in shown(at, "error")), shown(at, "error")
    assert ex.explanation in shown(at, "info")
    assert solved(at, lesson) == {ex.id: False}  # tried, not solved
    assert score_caption(at) == f"0 of {n} solved in this session."

    submit(at, lesson, ex, right_response(ex))
    assert shown(at, "success") == [f"Right: {ex.answer:.6g}." if ex.answer is not None else "Right."]
    assert not shown(at, "error"), shown(at, "error")
    assert ex.explanation in shown(at, "info")
    assert solved(at, lesson) == {ex.id: True}
    assert score_caption(at) == f"1 of {n} solved in this session."  # in the same run as the answer

    ok(at.run())  # any later run: the mark stays, the feedback goes
    assert "✓ Solved earlier in this session." in shown(at, "caption")
    assert not shown(at, "success") and score_caption(at) == f"1 of {n} solved in this session."

    submit(at, lesson, ex, wrong_response(lesson, ex))  # a later wrong answer does not unsolve it
    assert solved(at, lesson) == {ex.id: True}


def exercise_widgets(at: AppTest) -> list:
    """The exercises' answer boxes, options and Check buttons on the page."""
    return [*[w for w in [*at.text_input, *at.radio] if (w.key or "").startswith("ex_")],
            *[b for b in at.button if (b.form_id or "").startswith("ex_")]]


def test_closed_exercises_draw_nothing():
    """Closed (as every page opens), "Check yourself" is its label alone: no forms, no pictures, no score.
    Opened (a click), every exercise is drawn; closed and opened again, what was solved is still solved."""
    n = len(for_lesson("masking"))
    pictures = next(e for e in for_lesson("masking") if e.id == "which_causal").options
    at = ok(run_page(PAGES["masking"]))
    assert panel(at).proto.expanded is False
    assert not exercise_widgets(at) and not panel(at).caption
    assert not [c for c in charts(at) if any(chart_title(c).startswith(p) for p in pictures)]
    at.session_state[open_key("masking")] = True  # a click on the label
    ok(at.run())
    assert len([b for b in at.button if (b.form_id or "").startswith("ex_")]) == n
    assert score_caption(at) == f"0 of {n} solved in this session."
    for name in pictures:
        chart_by_title(at, name)
    ex = for_lesson("masking")[0]
    submit(at, "masking", ex, right_response(ex))
    at.session_state[open_key("masking")] = False
    ok(at.run())
    assert not exercise_widgets(at) and solved(at, "masking") == {ex.id: True}
    at.session_state[open_key("masking")] = True
    ok(at.run())
    assert score_caption(at) == f"1 of {n} solved in this session."
    assert "✓ Solved earlier in this session." in shown(at, "caption")


def test_which_picture_is_causal_matches_the_pictures():
    """The masking quiz's right option names the picture that is lower-triangular on screen."""
    at = run_open("masking")
    ex = next(e for e in for_lesson("masking") if e.id == "which_causal")
    pictures = {name: matrix(chart_by_title(at, name)).to_numpy() for name in ex.options}
    causal = [name for name, m in pictures.items() if np.allclose(np.triu(m, 1), 0)]
    assert causal == [ex.options[ex.correct]]
    assert not np.allclose(np.tril(pictures[ex.options[1 - ex.correct]], -1), np.tril(pictures[causal[0]], -1))


PAYLOADS = ["import os", "__import__('os').getcwd()", "open('x').read()", "1/0", "exit()"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_code_is_not_a_number_and_is_never_run(payload, monkeypatch):
    """Typed code is refused as 'not a number', counts as no attempt, and is never evaluated."""
    seen = []

    def spy(real):
        def wrapper(source, *args, **kwargs):
            if isinstance(source, str) and payload in source:
                seen.append((real.__name__, source))
            return real(source, *args, **kwargs)
        return wrapper

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, spy(getattr(builtins, name)))
    at = run_open("scaling")
    ex = next(e for e in for_lesson("scaling") if e.id == "factor_64")
    submit(at, "scaling", ex, payload)
    assert shown(at, "error") == ["That is not a number. Write it like 0.125, 1/8 or 2e10."]
    assert not shown(at, "success")
    assert ex.explanation in shown(at, "info")
    assert seen == []
    assert solved(at, "scaling") == {}  # a typo is not an attempt
    assert score_caption(at) == f"0 of {len(for_lesson('scaling'))} solved in this session."


def test_empty_answer_asks_for_a_number():
    at = run_open("scaling")
    ex = next(e for e in for_lesson("scaling") if e.id == "factor_64")
    submit(at, "scaling", ex, "")
    assert shown(at, "error") == ["Type a number first."]
    assert solved(at, "scaling") == {}


def test_no_option_picked_asks_for_one():
    at = run_open("scaling")
    ex = next(e for e in for_lesson("scaling") if e.id == "bug_dv")
    submit(at, "scaling", ex, None)
    assert shown(at, "error") == ["Pick one of the options first."]
    assert solved(at, "scaling") == {}


@pytest.mark.parametrize(("lesson", "ex_id", "typed"), [("scaling", "factor_64", "16/2"),
                                                         ("masking", "late_mask", "1/2"),
                                                         ("model", "memory", "2e1"),
                                                         ("multi-head", "attn_params", "16,640")])
def test_answers_in_other_notations(lesson, ex_id, typed):
    at = run_open(lesson)
    ex = next(e for e in for_lesson(lesson) if e.id == ex_id)
    submit(at, lesson, ex, typed)
    assert shown(at, "success") == [f"Right: {ex.answer:.6g}."]


def test_progress_counts_solved_ones_on_the_page():
    at = run_open("scaling")
    exs = for_lesson("scaling")
    for ex in exs[:2]:
        submit(at, "scaling", ex, right_response(ex))
    submit(at, "scaling", exs[2], wrong_response("scaling", exs[2]))
    assert solved(at, "scaling") == {exs[0].id: True, exs[1].id: True, exs[2].id: False}
    assert score_caption(at) == f"2 of {len(exs)} solved in this session."
    submit(at, "scaling", exs[2], right_response(exs[2]))
    assert score_caption(at) == f"3 of {len(exs)} solved in this session."


def test_home_page_shows_the_total_progress():
    """Solve on two lessons in one session, then open the home page: solved and tried over all lessons."""
    at = ok(run_app(PAGES["scaling"], opened=[open_key("scaling"), open_key("masking")]))
    exs = for_lesson("scaling")
    submit(at, "scaling", exs[0], right_response(exs[0]))
    submit(at, "scaling", exs[1], wrong_response("scaling", exs[1]))
    ok(at.switch_page(PAGES["masking"]).run())
    masking = for_lesson("masking")
    submit(at, "masking", masking[0], right_response(masking[0]))
    assert score_caption(at) == f"1 of {len(masking)} solved in this session."
    at._page_hash = calc_hash("")  # the home page (a function page, url path "") as the nav link opens it
    ok(at.run())
    assert [str(t.value) for t in at.title] == ["Attention Lab"]
    assert [s.value for s in at.main.success] == ["Check-yourself progress this session: 2 solved of 3 tried."]
    ok(at.switch_page(PAGES["scaling"]).run())  # and back: the lesson remembers its own
    assert score_caption(at) == f"1 of {len(exs)} solved in this session."


def test_home_page_says_nothing_before_any_answer():
    at = ok(run_app())
    assert not [s.value for s in at.main.success if "progress" in s.value]


@pytest.mark.parametrize("text, number", [("0,6", 0.6), ("-0,5", -0.5), (",5", 0.5), ("3,14", 3.14), ("12,5", 12.5),
                                          ("0,125", 0.125), ("1,5/3", 0.5), ("1,000", 1000), ("16,640", 16640),
                                          ("1,234,567.5", 1234567.5)])
def test_a_comma_is_read_as_what_it_can_only_be(text, number):
    """A decimal comma where a comma cannot separate thousands ("0,6" is 0.6, never 6); thousands where it can."""
    assert parse_number(text) == pytest.approx(number, rel=1e-12)


@pytest.mark.parametrize("text", ["1,2,3", "0,6.1", "1,23,456", "6,"])
def test_a_comma_that_could_mean_neither_is_refused_with_a_hint(text):
    with pytest.raises(ValueError, match="decimals with a point"):
        parse_number(text)


def test_a_decimal_comma_answer_is_right():
    ex = Exercise("comma", "?", "", answer=0.6)
    assert check(ex, "0,6") == (True, "Right: 0.6.")
    ok_, feedback = check(ex, "0,6.1")
    assert not ok_ and "decimals with a point" in feedback


def test_a_checked_answer_is_there_after_a_visit_to_another_page():
    """Leaving the page drops every widget's value: the answers typed and picked come back from the session."""
    at = ok(run_app(PAGES["scaling"], opened=[open_key("scaling")]))
    typed = next(ex for ex in for_lesson("scaling") if ex.answer is not None)
    picked = next(ex for ex in for_lesson("scaling") if ex.answer is None)
    submit(at, "scaling", typed, "8.5")
    submit(at, "scaling", picked, wrong_response("scaling", picked))
    ok(at.switch_page(PAGES["qkv"]).run())
    open_panels(at, open_key("scaling"))
    ok(at.switch_page(PAGES["scaling"]).run())
    assert at.text_input(key=f"ex_scaling_{typed.id}_answer").value == "8.5"
    assert at.radio(key=f"ex_scaling_{picked.id}_answer").index == wrong_response("scaling", picked)


def test_a_decimal_comma_read_as_thousands_is_said_when_it_was_the_answer():
    """"-1,342" is -1342 (a group of three after the comma), but a student who meant -1.342 is told so."""
    ex = Exercise("ln", "?", "", answer=-1.342, tolerance=0.001)
    ok_, feedback = check(ex, "-1,342")
    assert not ok_ and feedback == ("Not quite: you said -1342, the comma read as a thousands separator. With a "
                                    "decimal point, -1.342, it would be right.")
    assert check(Exercise("k", "?", "", answer=16640.0), "16,000") == (False, "Not quite: you said 16000.")

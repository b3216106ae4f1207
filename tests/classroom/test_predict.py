"""Predict questions: each answer worked out again here with plain loops over what core computes (the head's Q and
K, the model's logits), and against what the lesson's page draws; a setting that cannot make a fair question is
refused with a sentence a teacher can act on."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from classroom.questions import from_spec, grade, to_spec
from core.demos.heads import single_head
from core.model import forward
from core.tokenize import word_tokens
from lessons.full_model.questions import TOP_CHARS, character_model, next_character
from lessons.masking.maths import masking_view
from lessons.scaling.maths import scaling_view
from lessons.scaling.questions import STAY, rise_or_fall
from ui.drawing.charts import unique_labels
from ui.frame.class_question import char_text, number_text
from ui.frame.predict import attend_most
from ui.state.controls import DEFAULT_TEXT
from ui.text import escape_md

# (sentence, d_model, d_k, seed, max_tokens): the lessons' default, repeated words ("The" and "the" are one word to
# the embedding), a cut sentence, two tokens, a word three times, punctuation
SETTINGS = [(DEFAULT_TEXT, 16, 8, 0, 16), (DEFAULT_TEXT, 16, 8, 1, 16), (DEFAULT_TEXT, 16, 8, 2, 16),
            ("the cat saw the dog", 8, 4, 3, 16), ("the cat saw the dog and the bird", 32, 16, 5, 6),
            ("cat dog", 4, 2, 7, 16), ("a b a b a", 16, 8, 11, 16), ("Hello, world!", 12, 3, 42, 16),
            ("one two three four five six seven eight nine ten", 64, 64, 9, 32)]


def _softmax_loop(scores: list[float]) -> list[float]:
    top = max(scores)
    e = [math.exp(s - top) if s != -math.inf else 0.0 for s in scores]
    return [x / sum(e) for x in e]


def row_by_hand(tokens, D, d_k, seed, i, masked=False, scale=None) -> list[float]:
    """Query i's weights from the head's Q and K: dot products, scale, mask and softmax in plain Python."""
    head = single_head(tokens, D, d_k, seed)
    Q, K = head["Q"].tolist(), head["K"].tolist()
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    scores = [sum(q * k for q, k in zip(Q[i], K[j])) * scale if (j <= i or not masked) else -math.inf
              for j in range(len(tokens))]
    return _softmax_loop(scores)


def dots_by_hand(tokens, D, d_k, seed, i) -> list[float]:
    """Query i's dot products q·k with every key, before √d_k and the mask, in plain Python."""
    head = single_head(tokens, D, d_k, seed)
    Q, K = head["Q"].tolist(), head["K"].tolist()
    return [sum(q * k for q, k in zip(Q[i], K[j])) for j in range(len(tokens))]


def argmax_loop(values) -> int:
    best = 0
    for j, v in enumerate(values):
        if v > values[best]:
            best = j
    return best


# ---- which key a query attends to most ------------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0][:12]}-{s[3]}")
@pytest.mark.parametrize("masked", [False, True])
def test_attend_most_answers_the_argmax(setting, masked):
    sentence, D, d_k, seed, max_tokens = setting
    tokens = word_tokens(sentence, max_tokens)
    drawn = masking_view(tokens, D, d_k, seed)["weights_masked" if masked else "weights_free"]  # what the page draws
    asked = 0
    for i in range(len(tokens)):
        row = row_by_hand(tokens, D, d_k, seed, i, masked)
        seen = tokens[:i + 1] if masked else tokens
        if (masked and i == 0) or len({t.lower() for t in seen}) == 1:
            with pytest.raises(ValueError, match="nothing to predict"):
                attend_most(sentence, D, d_k, seed, max_tokens, i, masked=masked)
            continue
        best = argmax_loop(row)
        same = [j for j, t in enumerate(tokens) if t.lower() == tokens[best].lower() and (j <= i or not masked)]
        runner = max((j for j in range(len(seen)) if j not in same), key=lambda j: row[j])
        dots = dots_by_hand(tokens, D, d_k, seed, i)
        # the room reads the dot products: a winner shown equal to the runner-up is not a fair question
        places = next((p for p in (2, 3) if number_text(dots[best], p) != number_text(dots[runner], p)), None)
        if places is None:
            with pytest.raises(ValueError, match="too close to call"):
                attend_most(sentence, D, d_k, seed, max_tokens, i, masked=masked)
            continue
        q = attend_most(sentence, D, d_k, seed, max_tokens, i, masked=masked)
        assert best == argmax_loop([d if j <= i or not masked else -math.inf for j, d in enumerate(dots)])
        # every key's q·k is in the prompt, later keys included, to the decimals that tell the winner apart
        labels = unique_labels(tokens)
        assert "dot product q·k with each key is " + " · ".join(
            f"`{labels[j]}` {number_text(dots[j], places)}" for j in range(len(tokens))) + "." in q.prompt
        asked += 1
        assert [q.answer, *q.also_right] == same  # the first of the tied keys, then the others
        assert q.kind == "key" and q.options == tuple(map(escape_md, unique_labels(tokens)))
        assert q.view["tokens"] == unique_labels(tokens) and q.view["query"] == i and q.view["masked"] == masked
        np.testing.assert_allclose(q.view["weights"], row, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(q.view["weights"], drawn[i], rtol=1e-12, atol=1e-15)
        for j in range(len(tokens)):
            assert grade(q, str(j)) is (j in same)
        w_places = next((p for p in (2, 3, 4, 5, 6) if f"{row[best]:.{p}f}" != f"{row[runner]:.{p}f}"), 6)
        assert f"{row[best]:.{w_places}f} of its weight" in q.explanation
        assert f"`{labels[best]}`'s {number_text(dots[best], places)}, against" in q.explanation
        assert from_spec(json.loads(json.dumps(to_spec(q)))) == q
    assert asked or len(tokens) < 3


def test_a_word_twice_makes_both_copies_right():
    """On the lessons' sentence at seed 1, `cat` attends most to `The`, and `the` (one word to the embedding) ties."""
    q = attend_most(DEFAULT_TEXT, 16, 8, 1, 16, 1)
    assert q.options[q.answer] == "The" and [q.options[j] for j in q.also_right] == ["the"]
    assert grade(q, "0") and grade(q, "4") and not grade(q, "1")
    assert "each counts as right" in q.explanation


def test_a_masked_query_never_wins_a_future_key():
    for seed in range(6):
        for i in range(1, 7):
            q = attend_most(DEFAULT_TEXT, 16, 8, seed, 16, i, masked=True)
            assert q.answer <= i and all(j <= i for j in q.also_right)
            assert all(w == 0.0 for w in q.view["weights"][i + 1:])


@pytest.mark.parametrize(("args", "message"), [
    (("cat", 16, 8, 0, 16, 0), "single token"),
    (("cat dog", 16, 8, 0, 1, 0), r"or raise seq_len\)\."),
    (("", 16, 8, 0, 16, 0), "no tokens"),
    (("   ...", 16, 8, 0, 16, 5), "query must be a token's position, 0 to 2"),
    (("the cat", 16, 8, 0, 16, 2), "query must be a token's position, 0 to 1"),
    (("the cat", 16, 8, 0, 16, -1), "query must be"),
    (("the cat", 16, 8, 0, 16, True), "query must be"),
    (("the cat", 16, 8, 0, 16, 1.0), "query must be"),
    (("the cat", 16, 8, 0, 16, None), "query must be"),
    (("the the the", 16, 8, 0, 16, 1), "nothing to predict"),
    (("the cat", 0, 8, 0, 16, 1), "d_model must be"),
    (("the cat", 16, 0, 0, 16, 1), "d_k must be"),
    (("the cat", 16, 8, -1, 16, 1), "seed must be"),
    (("the cat", 16, 8, 0, 0, 1), "number of tokens used must be"),
])
def test_attend_most_refuses_an_unfair_setting(args, message):
    with pytest.raises(ValueError, match=message):
        attend_most(*args)


def test_the_first_query_under_the_mask_is_refused():
    with pytest.raises(ValueError, match=r"first token.*sees only itself"):
        attend_most(DEFAULT_TEXT, 16, 8, 0, 16, 0, masked=True)
    with pytest.raises(ValueError, match="Every key that `The` can see is the word `the`, so all get"):
        attend_most("the The cat", 16, 8, 0, 16, 1, masked=True)  # both visible keys are one word


def test_the_prompt_gives_what_the_answer_can_be_reasoned_from():
    """Random weights: nothing learned decides the winner, so the prompt shows the query's dot products and the
    steps after them; the explanation says those steps keep the order of the dot products, and under the mask
    that a later key's larger dot product does not count."""
    q = attend_most(DEFAULT_TEXT, 16, 8, 0, 16, 6)
    assert "(d_model = 16, d_k = 8, seed 0, random untrained weights, scores divided by √d_k)" in q.prompt
    assert q.prompt.endswith("Then each is divided by √d_k and a softmax is taken. Which key will `mat` attend to "
                             "most?")
    assert "Dividing by √d_k and the softmax keep the order of the dot products (e^x grows with x), so the key " \
           "with the largest q·k gets the most weight" in q.explanation
    assert "The weights are random (seed 0), nothing learned" in q.explanation
    masked = attend_most(DEFAULT_TEXT, 16, 8, 0, 16, 3, masked=True)
    assert "causal mask)" in masked.prompt
    assert "divided by √d_k, the causal mask is applied and a softmax is taken." in masked.prompt
    assert "so the key it sees with the largest q·k" in masked.explanation
    assert ("Under the causal mask it sees `The` to `on` only: the 3 keys after it get 0, whatever their dot "
            "products." in masked.explanation)
    last_but_one = attend_most(DEFAULT_TEXT, 16, 8, 0, 16, 5, masked=True)
    assert ("it sees `The` to `warm` only: the key after it gets 0, whatever its dot product."
            in last_but_one.explanation)


def test_a_later_key_with_a_larger_dot_product_is_named():
    """Under the mask, a key after the query may have the largest q·k of the row: the prompt shows it, and the
    explanation says it comes after the query (the room that forgot the mask picks it)."""
    tokens = word_tokens(DEFAULT_TEXT)
    found = 0
    for seed in range(6):
        for i in range(1, len(tokens) - 1):
            dots = dots_by_hand(tokens, 16, 8, seed, i)
            seen = [d for j, d in enumerate(dots) if j <= i]
            larger = [j for j in range(i + 1, len(tokens)) if dots[j] > max(seen)]
            try:
                q = attend_most(DEFAULT_TEXT, 16, 8, seed, 16, i, masked=True)
            except ValueError:
                continue
            named = "after it." in q.explanation and "larger" in q.explanation
            assert named == bool(larger)
            if larger:
                found += 1
                after = re.split(r"whatever (?:its dot product|their dot products)\.", q.explanation)[1]
                assert all(f"`{unique_labels(tokens)[j]}`" in after for j in larger)
    assert found, "no masked row here has a later key with a larger dot product: pick other settings"


def test_a_sentence_is_shown_as_text_never_as_markdown():
    q = attend_most("**bold** [link](http://x) <b>", 16, 8, 0, 16, 1)
    assert "**bold**" not in q.prompt.replace("`**`", "") and "](http" not in q.prompt.replace("`", "")
    assert all("\\" in o or o.isalnum() for o in q.options)  # markers escaped in the options


# ---- the character model's next character ---------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["The attention ", "Th", "import numpy as n", "return x", "x = 1",
                                    "a" * 100, "def f(x):\n    return x"])
def test_next_character_is_the_models_argmax(prompt):
    model = character_model()
    ids = model.tokenizer.encode(prompt)[-model.cfg.max_len:]
    logits, _ = forward(model.params, model.cfg, ids)
    last = logits[-1].tolist()
    best = argmax_loop(last)  # the argmax of the logits is the argmax of any softmax of them at temperature > 0
    q = next_character(prompt)
    assert q.kind == "char" and q.answer == model.tokenizer.itos[best]
    probs = _softmax_loop(last)
    order = sorted(range(len(probs)), key=lambda j: -probs[j])[:TOP_CHARS]
    assert [c for c, _ in q.view["top"]] == [model.tokenizer.itos[j] for j in order]
    np.testing.assert_allclose([p for _, p in q.view["top"]], [probs[j] for j in order], rtol=1e-9)
    assert q.view["prompt"] == prompt and grade(q, q.answer) and f"{probs[best]:.2f}" in q.explanation
    assert from_spec(json.loads(json.dumps(to_spec(q)))) == q
    if len(prompt) > model.cfg.max_len:
        assert f"last {model.cfg.max_len} characters" in q.explanation


def test_the_prompt_names_the_model_and_what_it_read():
    """What it was trained on comes from the model's own record; the capital warning says what to check."""
    model = character_model()
    q = next_character("The attention ")
    assert model.meta["data"] == "pydoc" and q.view["model"] == model.name
    assert f"the character model `{model.name}` (trained on Python's own documentation) say" in q.prompt
    assert "Capitals count: check that your phone did not make it a capital." in q.prompt
    assert next_character("The attention ", model.name) == q


def test_another_model_is_asked_by_name():
    with pytest.raises(ValueError, match="no saved model called 'nope'"):
        next_character("abc", "nope")
    with pytest.raises(ValueError, match="trained on a synthetic task"):
        next_character("abc", "copy")


def test_a_tiny_probability_is_not_printed_as_zero():
    """After "q" the model gives `_` less than 0.005: it reads "below 0.01", not a "0.00" that looks impossible."""
    q = next_character("q")
    (best, p0), (second, p1), (third, p2) = q.view["top"][:3]
    assert p2 < 0.005 <= p1
    assert q.explanation.startswith(f"The model gives {char_text(best)} a probability of {p0:.2f}, then "
                                    f"{char_text(second)} {p1:.2f} and {char_text(third)} below 0.01 (temperature 1)")
    assert "0.00" not in q.explanation


def test_a_space_is_an_answer_a_student_can_type():
    q = next_character("return x")
    assert q.answer == " " and grade(q, " ") and not grade(q, "") and not grade(q, "x")
    assert "(a space)" in q.explanation


@pytest.mark.parametrize(("prompt", "message"), [
    ("", "prompt is empty"), ("x" * 1001, "at most 1000"), ("café", "never saw `é`"),
    ("naïve\tcafé", "never saw `ï`, `⇥` and `é`: it would read each"),
    ("def f():", "line break, which a phone cannot type"), (None, "prompt is empty"),
])
def test_next_character_refuses_what_cannot_be_asked(prompt, message):
    with pytest.raises(ValueError, match=message):
        next_character(prompt)


def test_the_refused_line_break_is_what_the_model_says():
    model = character_model()
    logits, _ = forward(model.params, model.cfg, model.tokenizer.encode("def f():"))
    assert model.tokenizer.itos[argmax_loop(logits[-1].tolist())] == "\n"


# ---- rise or fall without scaling ------------------------------------------------------------------------------


def largest_by_hand(tokens, D, d_k, seed, i) -> float:
    return max(row_by_hand(tokens, D, d_k, seed, i, scale=1.0))


def rows_sentence_by_hand(tokens, D, seed) -> str:
    """The count of the sentence's rows whose largest weight rises by STAY or more from d_k 4 to 64, falls by as
    much, or stays, as the explanation gives it."""
    changes = [largest_by_hand(tokens, D, 64, seed, i) - largest_by_hand(tokens, D, 4, seed, i)
               for i in range(len(tokens))]
    rise, fall = sum(c >= STAY for c in changes), sum(c <= -STAY for c in changes)
    stay = len(changes) - rise - fall
    def s(n):  # the verb's -s after a count of 1
        return "s" if n == 1 else ""
    return (f"Over every row of this sentence from d_k = 4 to 64: {rise} of the {len(changes)} rise{s(rise)}, {fall} "
            f"fall{s(fall)} and {stay} stay{s(stay)} within {STAY:g}.")


def test_rise_or_fall_answers_from_the_two_settings():
    """The keyed answer is what the row does: a rise or a fall by STAY or more is asked, whichever way it goes
    (a fall too: the room sees the exception the tendency allows); a smaller change is refused."""
    asked = {0: 0, 1: 0}
    refused = 0
    for sentence, D, _, seed, max_tokens in SETTINGS:
        tokens = word_tokens(sentence, max_tokens)
        for i in range(len(tokens)):
            before, after = (largest_by_hand(tokens, D, d_k, seed, i) for d_k in (4, 64))
            if len({t.lower() for t in tokens}) == 1 or abs(after - before) < STAY:
                with pytest.raises(ValueError, match="pick another s"):
                    rise_or_fall(sentence, D, seed, max_tokens, query=i)
                refused += 1
                continue
            q = rise_or_fall(sentence, D, seed, max_tokens, query=i)
            page = [scaling_view(tokens, D, d_k, seed)["weights_unscaled"][i].max() for d_k in (4, 64)]  # as drawn
            np.testing.assert_allclose(q.view["largest"], [before, after], rtol=1e-9)
            np.testing.assert_allclose(q.view["largest"], page, rtol=1e-12)
            answer = 0 if after > before else 1
            assert q.answer == answer and grade(q, str(answer)) and not grade(q, "2")
            assert not grade(q, str(1 - answer))
            assert f"{before:.3f}" in q.explanation and f"{after:.3f}" in q.explanation
            assert q.explanation.endswith(rows_sentence_by_hand(tokens, D, seed))
            assert from_spec(json.loads(json.dumps(to_spec(q)))) == q
            asked[answer] += 1
    assert asked[0] and asked[1] and refused, "these settings should hold rows of every kind"


def lead_by_hand(tokens, D, d_k, seed, i) -> float:
    """How far the row's largest unscaled score leads the best score of another word."""
    head = single_head(tokens, D, d_k, seed)
    Q, K = head["Q"].tolist(), head["K"].tolist()
    scores = [sum(q * k for q, k in zip(Q[i], K[j])) for j in range(len(tokens))]
    top = argmax_loop(scores)
    return scores[top] - max(s for s, t in zip(scores, tokens) if t.lower() != tokens[top].lower())


@pytest.mark.parametrize("seed", range(12))
def test_a_row_against_the_tendency_is_asked_as_the_exception(seed):
    """The class's sentence at d_model 16: a row whose largest weight falls is asked and keyed "fall", and the
    explanation says it goes against the tendency, with its weights, spread and lead, and that an answer of "rise"
    reasoned as the lesson does; a row that stays within STAY is refused with its change."""
    tokens = word_tokens(DEFAULT_TEXT)
    for i in range(len(tokens)):
        before, after = (largest_by_hand(tokens, 16, d_k, seed, i) for d_k in (4, 64))
        if after - before >= STAY:
            q = rise_or_fall(DEFAULT_TEXT, 16, seed, 16, query=i)
            assert q.answer == 0 and "goes against that tendency" not in q.explanation
            continue
        if after - before > -STAY:  # stays: too small a change to ask about
            with pytest.raises(ValueError) as refused:
                rise_or_fall(DEFAULT_TEXT, 16, seed, 16, query=i)
            message = str(refused.value)
            assert (f"row changes by only {after - before:+.3f} ({before:.3f} at d_k = 4, {after:.3f} at d_k = 64), "
                    f"less than the {STAY:g}") in message and message.endswith("pick another seed or query.")
            continue
        q = rise_or_fall(DEFAULT_TEXT, 16, seed, 16, query=i)
        assert q.answer == 1 and grade(q, "1") and not grade(q, "0")
        lead = lead_by_hand(tokens, 16, 64, seed, i)
        assert f"a fall of {before - after:.3f}" in q.explanation
        assert ("so the largest weight tends towards 1 as d_k grows; this row goes against that tendency"
                in q.explanation)
        # the lead explains the row, unless copies of the top word cap its weight: then the cap does, alone
        capped = "copies of a word with one embedding" in q.explanation
        assert (f"A lead of {lead:.2f} makes that key's weight e^{lead:.2f} ≈ " in q.explanation) != capped
        assert ("If you answered rise, you reasoned as the lesson does, from what happens over many rows: this row is "
                "one of the exceptions.") in q.explanation
        assert q.explanation.endswith(rows_sentence_by_hand(tokens, 16, seed))


def test_the_default_question_is_asked_and_explained():
    q = rise_or_fall(DEFAULT_TEXT, 16, 0, 16)
    tokens = word_tokens(DEFAULT_TEXT)
    assert q.answer == 0
    assert ("the largest weight tends towards 1 as d_k grows. In this row, its scores' standard deviation is "
            in q.explanation)
    assert (f"its largest score leads the best other word's by {lead_by_hand(tokens, 16, 4, 0, 6):.2f} and "
            f"{lead_by_hand(tokens, 16, 64, 0, 6):.2f}") in q.explanation


def test_rise_or_fall_asks_about_the_last_token_by_default():
    q = rise_or_fall(DEFAULT_TEXT, 16, 0, 16)
    assert q.view["query"] == 6 and "the largest weight in `mat`'s row (whichever key has it)" in q.prompt
    assert q.options[2] == f"stay: change by less than {STAY:g}"
    assert q.view["d_k"] == [4, 64] and "from 4 to 64, will the largest weight" in q.prompt
    assert "rise, fall, or stay within 0.05?" in q.prompt and "projections drawn afresh for each d_k" in q.prompt


def test_other_sizes_and_directions():
    q = rise_or_fall(DEFAULT_TEXT, 16, 0, 16, d_k_from=64, d_k_to=4)
    tokens = word_tokens(DEFAULT_TEXT)
    assert q.view["largest"] == pytest.approx([largest_by_hand(tokens, 16, d, 0, 6) for d in (64, 4)], rel=1e-9)
    assert "from 64 to 4" in q.prompt and q.answer == 1  # narrower scores: the tendency is a fall


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("cat", 16, 0, 16), {}, "single token"), (("", 16, 0, 16), {}, "no tokens"),
    ((DEFAULT_TEXT, 16, 0, 16), {"query": 7}, "0 to 6"), ((DEFAULT_TEXT, 16, 0, 16), {"query": -1}, "query must be"),
    ((DEFAULT_TEXT, 16, 0, 16), {"d_k_from": 8, "d_k_to": 8}, "two different sizes"),
    ((DEFAULT_TEXT, 16, 0, 16), {"d_k_from": 0}, "d_k_from must be"),
    ((DEFAULT_TEXT, 16, -3, 16), {}, "seed must be"),
    (("the the The", 16, 0, 16), {}, r"Every key is the word `the`, so each gets 1/3 of the weight"),
])
def test_rise_or_fall_refuses_an_unfair_setting(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        rise_or_fall(*args, **kwargs)


def test_a_repeated_top_word_caps_the_largest_weight():
    """`The` and `the` tie: when they win the row at d_k = 64, neither passes 0.5, and the question (or its
    refusal) says why."""
    said = []
    for seed in range(10):
        for i in range(7):
            try:
                q = rise_or_fall(DEFAULT_TEXT, 16, seed, 16, query=i)
            except ValueError as refused:
                text, largest = str(refused), None
            else:
                text, largest = q.explanation, q.view["largest"][1]
            if "copies of a word" in text:
                said.append(text)
                assert "none can pass 0.50" in text and (largest is None or largest <= 0.5 + 1e-12)
    assert said, "no row here is won by a repeated word: pick other settings"

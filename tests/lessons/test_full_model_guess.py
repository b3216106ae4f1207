"""The guessing game on the Full model page: a held-out stretch of the documentation, a guess checked and scored
against the bigram model and the transformer (hits, and the models' bits from core), a running score for the
session, the puzzle bound to the link, and hostile guesses refused with a sentence."""

from __future__ import annotations

import numpy as np
import pytest

from core.backward import loss_only
from core.bigram import bigram_counts, bigram_probs
from core.data import bigram_loss, pydoc_corpus
from lessons.full_model import maths
from lessons.full_model.guess import GAP, MAX_PUZZLE
from tests.apptest_helpers import ok, run_page, shown_table
from ui.compute import model_store

PAGE = "lessons/full_model/page.py"
# The model runs in float32, and a matrix product rounds differently with other BLAS threads or shapes.
F32_RTOL = 1e-5


@pytest.fixture(scope="module")
def game():
    """The shipped documentation model and, computed here from the core, the held-out text and bigram table."""
    model = next(m for m in map(model_store.load_model, model_store.char_models()) if m.meta.get("data") == "pydoc")
    corpus = pydoc_corpus(tokenizer=model.tokenizer)
    table = bigram_probs(bigram_counts(corpus.train_ids, model.cfg.vocab_size), 1.0)
    return model, corpus.val_ids, table


def puzzle(game, number: int) -> dict:
    model, held, table = game
    L = model.cfg.max_len
    t = maths.pick_position(held, number, L, skip=(model.tokenizer.stoi["\n"],))
    probs = maths.model_probs(model.params, model.cfg, table, held[t - L:t])
    return {"t": t, "text": model.tokenizer.decode(held[t - L:t]), "truth": model.tokenizer.itos[held[t]],
            "truth_id": int(held[t]), "probs": probs}


def shown_text(at) -> str:
    return next(c.value for c in at.code if c.value.endswith(GAP))


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def guess(at, typed: str):
    at.text_input(key="fm_guess_text").input(typed)
    return at.button(key="fm_guess_check").click().run()


def a_wrong_guess(p: dict) -> str:
    return next(c for c in "etaoinsrh" if c != p["truth"])


def test_the_puzzle_is_held_out_text_and_a_right_guess_scores(game):
    at = ok(run_page(PAGE))
    p = puzzle(game, 0)
    assert shown_text(at) == p["text"] + GAP  # the 64 characters the transformer reads, then the gap
    assert "Nothing scored yet" in "\n".join(c.value for c in at.caption)
    ok(guess(at, p["truth"]))
    assert any(s.value.startswith("Right: the next character was") for s in at.success)
    shown = metrics(at)
    assert shown["You"] == "1 of 1 right"
    for m, label in (("bigram", "Bigram"), ("transformer", "Transformer")):
        top = int(np.argmax(p["probs"][m]))
        assert shown[f"{label}'s top choice"] == f"{int(top == p['truth_id'])} of 1 right"
        # bits = -log2 P(truth), the model's own probability of the true character
        assert float(shown[f"{label}, bits on the truth"]) == pytest.approx(-np.log2(p["probs"][m][p["truth_id"]]),
                                                                           abs=0.0051)  # printed to 2 decimals
    table = shown_table(at, "model")
    # printed "%.4f" (lessons/full_model/guess.py): half its last digit, beside float32's own rounding
    np.testing.assert_allclose(table["bits on the truth"], [-np.log2(p["probs"][m][p["truth_id"]])
                                                            for m in maths.MODELS], rtol=F32_RTOL, atol=5e-5)
    truth_column = next(c for c in table.columns if c.startswith("P(truth"))
    np.testing.assert_allclose(table[truth_column], [p["probs"][m][p["truth_id"]] for m in maths.MODELS],
                               rtol=F32_RTOL, atol=5e-5)
    assert not [t for t in at.text_input if t.key == "fm_guess_text"]  # no box once answered


def test_a_wrong_guess_then_the_next_puzzle_keeps_a_running_score(game):
    at = ok(run_page(PAGE))
    first, second = puzzle(game, 0), puzzle(game, 1)
    wrong = a_wrong_guess(first)
    ok(guess(at, wrong))
    assert any("Not this time" in i.value and f"`{wrong}`" in i.value for i in at.info)
    assert metrics(at)["You"] == "0 of 1 right"
    probs = first["probs"]
    table = shown_table(at, "model")
    guess_column = next(c for c in table.columns if c.startswith("P(your guess"))
    g = game[0].tokenizer.stoi[wrong]
    # printed "%.4f" (lessons/full_model/guess.py): half its last digit, beside float32's own rounding
    np.testing.assert_allclose(table[guess_column], [probs[m][g] for m in maths.MODELS], rtol=F32_RTOL, atol=5e-5)
    ok(at.button(key="fm_guess_next").click().run())
    assert at.number_input(key="fm_puzzle").value == 1
    assert shown_text(at) == second["text"] + GAP
    ok(guess(at, second["truth"]))
    shown = metrics(at)
    assert shown["You"] == "1 of 2 right"
    for m, label in (("bigram", "Bigram"), ("transformer", "Transformer")):
        rounds = [maths.score(game[0].tokenizer.stoi[wrong], first["truth_id"], first["probs"]),
                  maths.score(second["truth_id"], second["truth_id"], second["probs"])]
        want = maths.tally(rounds)
        assert float(shown[f"{label}, bits on the truth"]) == pytest.approx(want["mean_bits"][m], abs=0.0051)
        assert shown[f"{label}'s top choice"] == f"{want['hits'][m]} of 2 right"
    # back to the first puzzle: its result is kept, not scored twice
    ok(at.number_input(key="fm_puzzle").set_value(0).run())
    assert metrics(at)["You"] == "1 of 2 right" and any("Not this time" in i.value for i in at.info)
    ok(at.button(key="fm_guess_reset").click().run())
    assert "Nothing scored yet" in "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("typed, message", [
    ("", "Type one character first"),
    ("ab", "Type exactly one character; this guess has 2"),
    ("é", "plain ASCII"),
    ("👩\u200d💻", "plain ASCII"),
    ("$", "never occurs in this text"),
    ("<script>", "Type exactly one character"),
])
def test_a_hostile_guess_is_refused_with_a_sentence_and_not_scored(typed, message):
    at = ok(run_page(PAGE))
    ok(guess(at, typed))
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]
    assert "Nothing scored yet" in "\n".join(c.value for c in at.caption)
    assert not at.exception


def test_a_shared_link_opens_the_same_puzzle_and_a_bad_one_says_so(game):
    linked = ok(run_page(PAGE, {"fm_puzzle": "42"}))
    assert shown_text(linked) == puzzle(game, 42)["text"] + GAP
    for raw, message, used in (("abc", "not a number", 0), ("1e9", "allowed range", MAX_PUZZLE),
                               ("-3", "allowed range", 0)):
        at = ok(run_page(PAGE, {"fm_puzzle": raw}))
        assert any(message in i.value and "fm_puzzle" in i.value for i in at.info)
        assert shown_text(at) == puzzle(game, used)["text"] + GAP


def test_without_the_documentation_model_the_game_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)  # no shipped model
    at = ok(run_page(PAGE))
    assert any("needs the shipped character model trained on Python's documentation" in i.value for i in at.info)
    assert not any(c.value.endswith(GAP) for c in at.code)


# ---- the game's bits are the loss in base 2 ------------------------------------------------------------------


def loss_by_windows(model, corpus) -> float:
    """The transformer's held-out loss in nats as core's training measures it: every validation window of the
    corpus (core.data.TextCorpus.val_batches), each batch's core.backward.loss_only weighted by its size."""
    total = weight = 0.0
    for ids, targets, _ in corpus.val_batches(64):
        total += ids.size * loss_only(model.params, model.cfg, ids, targets)
        weight += ids.size
    return total / weight


def test_bits_are_nats_divided_by_ln_2():
    for p in (0.5, 0.25, 0.9, 1e-6):
        assert maths.bits(p) == pytest.approx(maths.in_bits(-np.log(p)), rel=1e-12)
    assert maths.in_bits(1.0) == pytest.approx(1 / np.log(2), rel=1e-15)  # 1 nat = 1.443 bits
    assert maths.in_bits(np.log(2)) == pytest.approx(1.0, rel=1e-15)  # a coin flip: ln 2 nats = 1 bit


def test_the_held_out_loss_is_trainings_validation_loss(game):
    """maths.held_out_loss on the game's held-out text is the loss core's validation windows give, and the one the
    model's own record kept when it was trained."""
    model, held, _ = game
    corpus = pydoc_corpus(context=model.cfg.max_len, tokenizer=model.tokenizer)
    np.testing.assert_array_equal(corpus.val_ids, held)
    loss = maths.held_out_loss(model.params, model.cfg, held)
    assert loss == pytest.approx(loss_by_windows(model, corpus), rel=F32_RTOL)
    assert loss == pytest.approx(model.meta["val_loss"], rel=F32_RTOL)
    with pytest.raises(ValueError, match="more than 64 ids"):
        maths.held_out_loss(model.params, model.cfg, held[:64])


def test_the_puzzles_mean_bits_are_each_puzzles_score(game):
    """puzzle_bits (the contexts in batches) is the mean of score()'s bits over the same puzzles, one at a time."""
    model, held, table = game
    numbers = range(24)
    rounds = [maths.score(p["truth_id"], p["truth_id"], p["probs"]) for p in (puzzle(game, k) for k in numbers)]
    want = maths.tally(rounds)["mean_bits"]
    got = maths.puzzle_bits(model.params, model.cfg, table, held, numbers, (model.tokenizer.stoi["\n"],),
                            batch_size=10)
    assert got == pytest.approx(want, rel=F32_RTOL)
    assert [maths.pick_position(held, k, 64, (1,)) for k in numbers] == list(maths.pick_positions(held, numbers,
                                                                                                  64, (1,)))


def test_the_score_sets_the_bits_beside_the_loss_in_one_unit(game):
    """Once a puzzle is scored, the page says the bits are the loss in base 2, with the held-out loss of each model
    in nats and in bits and their mean bits over puzzles 0 to 999, every number computed here from core."""
    model, held, table = game
    at = ok(run_page(PAGE))
    ok(guess(at, puzzle(game, 0)["truth"]))
    said = "\n".join(c.value for c in at.caption)
    t_nats = maths.held_out_loss(model.params, model.cfg, held)
    b_nats = bigram_loss(np.log(table), held[:-1], held[1:])
    assert b_nats == pytest.approx(pydoc_corpus(tokenizer=model.tokenizer).bigram_baseline(), rel=1e-12)
    means = maths.puzzle_bits(model.params, model.cfg, table, held, range(1000), (model.tokenizer.stoi["\n"],))
    assert f"1 nat = 1/ln 2 = {1 / np.log(2):.3f} bits" in said
    assert (f"is {t_nats:.2f} nats = {t_nats / np.log(2):.2f} bits a character for the transformer and "
            f"{b_nats:.2f} nats = {b_nats / np.log(2):.2f} bits for the bigram model") in said
    assert (f"Over puzzles 0 to 999, the transformer averages {means['transformer']:.2f} bits and the bigram model "
            f"{means['bigram']:.2f}.") in said
    assert "always reads 64 characters" in said

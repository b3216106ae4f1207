"""The shipped `circuit` model: a 2-layer attention-only transformer with a previous-token head in layer 0
and an induction head in layer 1, checked on the stretch lengths it was trained on and on ones it never saw,
through the lesson's set-ups (lessons/circuit/maths.py), which are checked here too.

Shapes: B batch, T sequence length, L layers, H heads per layer.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from core.demos.knockout import knockout_table
from core.model import Knockout, forward
from core.model_file import load
from core.tasks import RepeatTask, induction_keys
from lessons.circuit.maths import (
    copying_by_length,
    example,
    induction_mass,
    letter_dependence,
    previous_token_mass,
    read_sequence,
    task_figures,
)
from ui.compute import model_store

WEIGHTS = Path(__file__).resolve().parents[2] / "core" / "weights"
PREVIOUS, INDUCTION, OTHER = (0, 1), (1, 1), (0, 0)  # (layer, head)


@cache
def shipped():
    return load(WEIGHTS / "circuit")


def task(min_length: int, max_length: int) -> RepeatTask:
    t = shipped()[2]["task"]
    return RepeatTask(t["context"], min_length, max_length, t["n_symbols"])


@cache
def figures(min_length: int, max_length: int) -> dict:
    params, cfg, _ = shipped()
    return task_figures(params, cfg, task(min_length, max_length), n=512)


def repeat_batch(min_length: int, max_length: int, seed: int = 99):
    """ids, targets (B, T) and the repeat's query positions (B, T) of 512 fresh sequences."""
    tk = task(min_length, max_length)
    seq, start, length = tk.sequences(np.random.default_rng(seed), 512)
    return seq[:, :-1], seq[:, 1:], tk.halves(start, length, tk.context)[1]


def repeat_accuracy(min_length: int, max_length: int, knockout: Knockout | None = None) -> float:
    params, cfg, _ = shipped()
    ids, targets, repeat = repeat_batch(min_length, max_length)
    logits, _ = forward(params, cfg, ids, knockout=knockout)
    return float(((logits.argmax(-1) == targets) * repeat).sum() / repeat.sum())


def test_it_is_a_small_attention_only_model_with_its_command():
    _, cfg, meta = shipped()
    assert cfg.attention_only and cfg.n_layers == 2 and cfg.n_heads == 2
    assert meta["data"] == "repeat" and meta["command"].startswith("python -m tools.train --data repeat")
    assert "--d-ff 0" in meta["command"] and meta["command"].endswith("--out core/weights/circuit")
    assert (meta["task"]["min_length"], meta["task"]["max_length"]) == (4, 16)
    assert (WEIGHTS / "circuit.npz").stat().st_size < 200_000


def test_it_is_not_offered_as_a_language_model():
    assert "circuit" in model_store.shipped_models()
    assert "circuit" not in model_store.char_models()


def test_the_repeat_is_predicted_and_the_first_copy_is_not():
    f = figures(4, 16)
    assert f["repeat_loss"] < 0.02 and f["repeat_accuracy"] > 0.99
    assert f["first_loss"] > np.log(24)  # fresh letters: no better than a uniform guess


@pytest.mark.parametrize(("lengths", "accuracy"), [((2, 3), 0.9), ((17, 20), 0.88)])
def test_it_holds_on_stretch_lengths_it_never_saw(lengths, accuracy):
    f = figures(*lengths)
    assert f["repeat_accuracy"] > accuracy and f["repeat_loss"] < 0.6 < 10 < f["first_loss"]


def test_a_previous_token_head_then_an_induction_head():
    for lengths in ((4, 16), (17, 20)):
        f = figures(*lengths)
        assert f["previous"][PREVIOUS] > 0.55 and f["previous"][OTHER] < 0.15
        assert f["induction"][INDUCTION] > (0.85 if lengths == (4, 16) else 0.6)
        assert f["induction"][1, 0] < 0.05


@pytest.mark.parametrize("lengths", [(4, 16), (17, 20)])
def test_knocking_out_either_head_of_the_circuit_breaks_copying(lengths):
    params, cfg, _ = shipped()
    ids, targets, repeat = repeat_batch(*lengths)
    for mode in ("zero", "mean"):
        rise = knockout_table(params, cfg, ids, targets, repeat, mode)  # (L, H) nats
        assert rise[PREVIOUS] > 5 and rise[INDUCTION] > 3, rise
        assert abs(rise[1, 0]) < 0.1 and abs(rise[OTHER]) < 0.35, rise
    for head in (PREVIOUS, INDUCTION):
        assert repeat_accuracy(*lengths, Knockout((head,))) < 0.1


def test_the_other_layer_0_head_is_what_fails_on_the_longest_stretches():
    """On stretches of 21..24 letters the model slips; without layer 0's other head it does not."""
    assert repeat_accuracy(21, 24) < 0.8
    assert repeat_accuracy(21, 24, Knockout((OTHER,))) > 0.97


def test_that_head_attends_by_position_and_the_induction_head_by_letter():
    """letter_dependence: with other letters at the same places, the rows of layer 0's other head (and of the
    previous-token head) hardly move, while the induction head's share little weight with their first version."""
    params, cfg, meta = shipped()
    moved = letter_dependence(params, cfg, meta["task"]["n_symbols"], n=64)
    assert moved.shape == (cfg.n_layers, cfg.n_heads) and ((moved >= 0) & (moved <= 1)).all()
    assert moved[OTHER] < 0.1 and moved[PREVIOUS] < 0.1 and moved[INDUCTION] > 0.5
    assert letter_dependence(params, cfg, meta["task"]["n_symbols"], n=8, seed=3).shape == moved.shape


def test_it_completes_an_example_from_the_lesson_helper():
    params, cfg, meta = shipped()
    t = meta["task"]
    for seed in range(20):
        ids = example(t["context"], 10, seed, t["n_symbols"])
        logits, _ = forward(params, cfg, ids)
        earlier = np.flatnonzero(ids[:-1] == ids[-1])[-1]  # the last letter's place in the first copy
        assert logits[-1].argmax() == ids[earlier + 1], seed


@pytest.mark.parametrize("letters", ["AB", "ABCDEFGH", "QFBPLANCKWORDPLANCKWORD"])
def test_read_sequence_measures_the_repeat_only_where_there_is_one(letters):
    """The mean loss over every prediction is always there; the repeat's figures are NaN exactly when
    nothing repeats (the page then leaves them out), never a silent 0."""
    params, cfg, meta = shipped()
    ids = np.array([meta["tokenizer"]["chars"].index(c) + 1 for c in letters])
    a = read_sequence(params, cfg, ids)
    assert a["losses"].shape == (len(letters) - 1,) and np.isclose(a["loss"], a["losses"].mean())
    repeats = bool(a["repeat"].any())
    assert repeats == (letters == "QFBPLANCKWORDPLANCKWORD")
    assert np.isnan(a["repeat_loss"]) != repeats and np.isnan(a["first_loss"]) != repeats
    assert np.isnan(a["induction"]).all() != repeats and np.isfinite(a["previous"]).all()


def test_the_training_log_shows_a_sudden_fall_after_a_flat_stretch():
    """The log kept in the model's JSON (tools/train.py, meta["log"]) is the run docs/MODELS.md records: near
    the uniform guess for 5,000 steps, then 0.55 at step 6,000; the last evaluation is the shipped val loss."""
    from lessons.circuit.maths import phase_change

    meta = shipped()[2]
    log, uniform = meta["log"], float(np.log(24))
    assert log["step"][:2] == [500, 1000] and log["step"][-1] == meta["steps"]
    by_step = dict(zip(log["step"], log["val_loss"]))
    assert by_step[5000] == pytest.approx(2.84, abs=0.005) and by_step[6000] == pytest.approx(0.55, abs=0.005)
    assert by_step[16000] == pytest.approx(meta["val_loss"], abs=1e-5)
    p = phase_change(log, uniform)
    assert p["stuck_step"] == 5000 and p["done_step"] == 6500 and p["fall"][:3:2] == (5500, 6000)
    assert p["share"] < 0.1 and p["stuck_loss"] > 0.8 * uniform > 0.1 * uniform > p["done_loss"]
    with pytest.raises(ValueError):
        phase_change({"step": [1, 2], "val_loss": [3.0, 2.9]}, uniform)  # never fell far: no phase change


# ---- the set-ups' pieces: the head measures, an example, how far copying reaches ---------------------


def test_induction_keys_and_the_head_measures():
    ids = np.array([3, 1, 2, 3, 1, 2])  # "C A B C A B"
    np.testing.assert_array_equal(induction_keys(ids), [-1, -1, -1, 1, 2, 3])
    T = len(ids)
    prev = np.eye(T, k=-1)
    prev[0, 0] = 1
    induct = np.zeros((T, T))
    induct[np.arange(T), np.where(induction_keys(ids) >= 0, induction_keys(ids), np.arange(T))] = 1
    w = np.stack([np.stack([prev, induct])[None], np.stack([induct, prev])[None]])[:, 0]  # (L=2, H=2, T, T)
    np.testing.assert_allclose(previous_token_mass(w), [[1, 0], [0, 1]])
    np.testing.assert_allclose(induction_mass(w, ids), [[0, 1], [1, 0]])


def test_example_ends_inside_the_repeat():
    ids = example(20, 6, seed=3, n_symbols=16)
    assert len(ids) == 20
    key = induction_keys(ids)[-1]  # the letter after the last one's first copy: the answer
    assert key >= 0 and ids[key] != ids[-1]
    with pytest.raises(ValueError, match="stretch"):
        example(10, 8, seed=0, n_symbols=16)


def test_copying_by_length_is_what_the_circuit_lesson_says():
    """The figures under the circuit lesson's loss chart: near 0 at the trained lengths (4 to 16), worse at 2,
    failing at 20 and 24, and at 24 right again without layer 1 · head 1 (counted from 1, as on screen)."""
    model = model_store.load_model("circuit")
    n_symbols = len(model.meta["tokenizer"]["chars"])
    at_2, at_4, at_16, at_20, at_24 = copying_by_length(model.params, model.cfg, n_symbols, (2, 4, 16, 20, 24),
                                                        n=128)
    assert at_4 < 0.05 and at_16 < 0.05
    assert at_2 > 0.1 and at_20 > 0.4 and at_24 > 3
    assert copying_by_length(model.params, model.cfg, n_symbols, (24,), n=128, off=(0, 0))[0] < 0.1

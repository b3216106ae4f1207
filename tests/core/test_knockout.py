"""Knocking out heads through the one model forward, the knockout table, and the repeat task's data."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from core.attention import softmax
from core.demos.knockout import compare, knockout_table, position_losses
from core.model import Knockout, ModelConfig, forward, init_params
from core.model_file import load
from core.tasks import RepeatTask, make_data
from core.train import pattern_mass

ROOT = Path(__file__).resolve().parents[2]
CFG = ModelConfig(vocab_size=11, d_model=16, n_heads=4, n_layers=2, max_len=12)
PARAMS = init_params(CFG, np.random.default_rng(0), dtype=np.float64)
IDS = np.random.default_rng(1).integers(0, 11, size=(3, 10))


def test_there_is_one_model_forward():
    out = subprocess.run(["grep", "-rn", "def .*forward", "core/"], cwd=ROOT, capture_output=True, text=True).stdout
    assert len(out.strip().splitlines()) == 1 and "core/model.py" in out


def test_zero_knockout_removes_exactly_that_heads_share_of_w_o():
    """Zeroing head h before W_O must equal subtracting heads[h] @ W_O[h rows] from the layer's output."""
    _, trace = forward(PARAMS, CFG, IDS)
    _, off = forward(PARAMS, CFG, IDS, knockout=Knockout(((1, 2),)))
    tr, d_k = trace.layers[1], CFG.d_k
    w_o = PARAMS["blocks"][1]["attn"]["w_o"][2 * d_k:3 * d_k]  # (d_k, D): head 2's rows
    np.testing.assert_allclose(off.layers[1].attn_out, tr.attn_out - tr.heads[:, 2] @ w_o, atol=1e-12)
    np.testing.assert_array_equal(off.layers[0].out, trace.layers[0].out)  # layer 0 untouched
    np.testing.assert_array_equal(off.layers[1].weights, tr.weights)  # the pattern is still drawn


def test_mean_knockout_uses_the_heads_mean_over_batch_and_positions():
    _, trace = forward(PARAMS, CFG, IDS)
    _, off = forward(PARAMS, CFG, IDS, knockout=Knockout(((0, 1),), "mean"))
    mean = trace.layers[0].heads[:, 1].mean(axis=(0, 1))  # (d_k,)
    np.testing.assert_allclose(off.layers[0].heads[:, 1], np.broadcast_to(mean, (3, 10, CFG.d_k)))
    np.testing.assert_array_equal(off.layers[0].heads[:, 0], trace.layers[0].heads[:, 0])


def test_no_knockout_is_the_plain_forward():
    a, _ = forward(PARAMS, CFG, IDS)
    b, _ = forward(PARAMS, CFG, IDS, knockout=Knockout())
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("heads, mode, message", [
    (((2, 0),), "zero", "no head 0 in layer 2"), (((0, 4),), "zero", "no head 4 in layer 0"),
    (((0, 0),), "half", "knockout mode"),
])
def test_bad_knockouts_say_what_is_wrong(heads, mode, message):
    with pytest.raises(ValueError, match=message):
        forward(PARAMS, CFG, IDS, knockout=Knockout(heads, mode))


def test_knockout_table_is_the_loss_rise_of_each_head():
    ids, targets = IDS[:, :-1], IDS[:, 1:]
    table = knockout_table(PARAMS, CFG, ids, targets, mode="zero")
    assert table.shape == (2, 4)
    base = position_losses(forward(PARAMS, CFG, ids)[0], targets).mean()
    off = position_losses(forward(PARAMS, CFG, ids, knockout=Knockout(((1, 3),)))[0], targets).mean()
    assert table[1, 3] == pytest.approx(off - base)
    logits = forward(PARAMS, CFG, ids)[0]
    p = softmax(logits)
    manual = -np.log(np.take_along_axis(p, targets[..., None], -1)[..., 0])
    np.testing.assert_allclose(position_losses(logits, targets), manual, atol=1e-10)


def test_compare_gives_both_readings():
    seen = compare(PARAMS, CFG, IDS[0], Knockout(((0, 0),), "mean"))
    assert seen["probs"].shape == seen["probs_off"].shape == (11,)
    assert seen["probs"].sum() == pytest.approx(1) and seen["probs_off"].sum() == pytest.approx(1)
    assert seen["losses"].shape == (9,) and not np.allclose(seen["losses"], seen["losses_off"])
    np.testing.assert_array_equal(seen["weights"][0], seen["weights_off"][0])  # layer 0 still looks the same
    assert not np.allclose(seen["weights"][1], seen["weights_off"][1])  # layer 1 reads a changed stream


def test_the_pydoc_model_needs_some_heads_far_more_than_others():
    params, cfg, meta = load(ROOT / "core" / "weights" / "pydoc_char")
    from core.tokenize import CharTokenizer
    ids = CharTokenizer.from_dict(meta["tokenizer"]).encode("The attention is computed for each statement ")
    table = knockout_table(params, cfg, ids[:-1], ids[1:])
    assert table.max() > 1.0 and np.sort(table.ravel())[0] < 0.2


def test_repeat_task_sequences_and_keys():
    task = RepeatTask(context=32, min_length=4, max_length=10, n_symbols=16)
    seq, start, length = task.sequences(np.random.default_rng(0), 200)
    assert seq.shape == (200, 33) and seq.min() >= 1 and seq.max() <= 16
    assert set(np.unique(length)) <= set(range(4, 11)) and len(np.unique(start)) > 10
    for s, p, L in zip(seq, start, length):
        assert list(s[p:p + L]) == list(s[p + L:p + 2 * L]) and len(set(s[p:p + L])) == L
    batch = task.train_batch(np.random.default_rng(0), 200)
    keys = task.expected_keys(batch)
    assert (batch.mask.sum(axis=1) == length - 1).all()
    b, q = np.nonzero(keys >= 0)
    np.testing.assert_array_equal(keys[b, q], q - length[b] + 1)  # the token after the first copy
    np.testing.assert_array_equal(batch.ids[b, keys[b, q]], batch.targets[b, q])  # it holds the answer
    assert make_data("repeat", 32, 10, 16) == RepeatTask(32, 4, 10, 16)  # stretches of 4..10 by default
    assert make_data("repeat", 32, 10, 16, min_length=2) == RepeatTask(32, 2, 10, 16)
    with pytest.raises(ValueError, match="two copies must fit"):
        RepeatTask(context=10, max_length=8)


def test_pattern_mass_takes_per_sequence_keys():
    task = RepeatTask(context=12, min_length=3, max_length=5, n_symbols=10)
    cfg = ModelConfig(vocab_size=task.vocab_size, d_model=16, n_heads=2, n_layers=2, max_len=12)
    params = init_params(cfg, np.random.default_rng(0))
    batch = task.val_batches(32, 32)[0]
    _, trace = forward(params, cfg, batch.ids)
    keys = task.expected_keys(batch)
    b, q = np.nonzero(keys >= 0)
    want = [[layer.weights[i, h, j, keys[i, j]] for h in range(2)] for layer in trace.layers
            for i, j in [(b, q)]]
    np.testing.assert_allclose(pattern_mass(params, cfg, task, 32), np.array(want).mean(axis=-1), rtol=1e-5)

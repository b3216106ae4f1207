"""The Multi-head set-ups: how spread out each head's attention is, and, on the shipped word model, the heads
that look at the bank cue beside the one the model needs (attention is not explanation)."""

from __future__ import annotations

import numpy as np

from lessons.multi_head.maths import head_entropies, looked_at_or_used

N = 128  # test sentences per rule: enough for the margins below, fast to read


def test_head_entropies_by_hand():
    w = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.5, 0.5]]])  # (H=2, T=2, T=2)
    spread = head_entropies(w)
    np.testing.assert_allclose(spread["per_head"], [0.5, 1.0])  # head 1: rows of 0 and 1 bit; head 2: 1 and 1
    assert spread["mean"] == 0.75 and spread["uniform"] == 1.0


def test_attention_is_not_explanation_two_heads_look_at_the_bank_cue_and_neither_is_needed():
    """What Multi-head's section states, with margins: the needed head's knockout leaves a coin toss; two other
    heads put about half their weight on the cue, and with either off the rule stays right."""
    f = looked_at_or_used("bank", n=N)
    assert f["needed"] == (0, 2) and f["off_accuracy"][f["needed"]] < 0.65
    assert len(f["also_looking"]) >= 2
    for head in f["also_looking"][:2]:
        assert 0.3 <= f["shares"][head] < 0.7
        assert f["off_accuracy"][head] >= 0.95 and f["off_log_odds"][head] > 3
    # both off at once: still right (one does not stand in for the other), only less sure
    assert f["also_off_accuracy"] >= 0.95 and 3 < f["also_off_log_odds"] < f["log_odds"] - 1

"""The toy English (core/toy_english.py), its word tokenizer, and the shipped model trained on it.

Shapes: B batch, T sequence length (words read, start marker included), V vocabulary.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from core.backward import loss_only
from core.model_file import load
from core.tasks import make_data
from core.tokenize import WordTokenizer
from core.toy_english import (
    ANIMALS,
    CUES,
    KINDS,
    PEOPLE,
    SENTENCES,
    THINGS,
    TOPICS,
    VERBS,
    ToyEnglish,
    all_sentences,
    bank,
    grammar_entropy,
    grammar_loss,
    sample,
    vocabulary,
)

WEIGHTS = Path(__file__).resolve().parents[2] / "core" / "weights"


@cache
def shipped():
    return load(WEIGHTS / "toy_english")


def sentences(kind: str, n: int = 300, seed: int = 3):
    rng = np.random.default_rng(seed)
    return [sample(rng, kind) for _ in range(n)]


def number_of(noun: str, table: dict) -> str:
    return next(k for k, words in table.items() if noun in words)


# ---- the grammar's rules hold in what it generates ---------------------------------------------


def test_the_verb_agrees_with_the_subject_not_the_nearer_noun():
    contrasts = 0
    for s in sentences("agreement"):
        w = s.words
        assert w[0] == "the" and w[-1] == "." and w[s.decided] == w[-2]
        subject, verb, near = w[s.cue], w[s.decided], w[-3]
        assert number_of(verb, VERBS) == number_of(subject, ANIMALS)
        contrasts += number_of(near, THINGS) != number_of(subject, ANIMALS)
        assert s.contrast == (number_of(near, THINGS) != number_of(subject, ANIMALS))
        assert verb in s.right and set(s.wrong) == set(VERBS[{"sg": "pl", "pl": "sg"}[number_of(verb, VERBS)]])
    assert 100 < contrasts < 200  # the nearer noun's number is independent of the subject's: half differ


def test_the_pronoun_refers_to_the_subject_whoever_else_is_named():
    others = 0
    for s in sentences("pronoun"):
        w = s.words
        people = [i for i, word in enumerate(w) if any(word in p for p in PEOPLE.values())]
        assert people[0] == s.cue and len(people) == 2
        assert w[s.decided] == number_of(w[s.cue], PEOPLE) and w[s.decided] in ("he", "she")
        others += number_of(w[people[1]], PEOPLE) != w[s.decided]
        assert w[s.decided - 1] in ("then", "so", "because")
    assert 100 < others < 200


def test_the_word_after_bank_follows_river_or_money():
    seen = set()
    for s in sentences("bank"):
        w = s.words
        assert w[s.cue + 1 : s.cue + 3] == ("by", "the") and w[s.decided - 1] == "bank"
        assert s.decided - s.cue in (4, 5)  # an adjective before "bank", or none
        sense = number_of(w[s.cue], CUES)
        assert number_of(w[s.decided], TOPICS) == sense and s.contrast
        seen.add(sense)
    assert seen == {"river", "money"}


def test_every_word_is_in_the_vocabulary_and_sentences_fit_the_context():
    vocab = set(vocabulary())
    for kind in KINDS:
        for s in sentences(kind, 100):
            assert set(s.words) <= vocab and len(s.words) + 1 <= 12
    assert len(vocabulary()) == len(vocab) < 100


# ---- the grammar's entropy: exact, by listing every sentence -----------------------------------


def test_listing_every_sentence_gives_probabilities_that_sum_to_one():
    found = all_sentences(bank)
    assert len(found) == 2 * 2 * 2 * 3 * 4 * 3  # every choice sequence gives its own sentence
    assert math.isclose(sum(found.values()), 1.0) and math.isclose(min(found.values()), 1 / 288)
    for s in sentences("bank", 20):
        assert math.isclose(math.exp(s.log_p), found[s.words])  # sample knows its own probability


# Every choice is uniform and no two choice sequences give the same words, so a kind's entropy is
# log(number of sentences) over its mean number of predictions (its words and the closing ".").
SENTENCE_COUNTS = {"agreement": 2 * 6 * 4 * 3 * 4 * 2 * 6 * 4, "pronoun": 4 * 2 * 5 * 4 * 2 * 5 * 3 * 4, "bank": 288}
MEAN_LENGTHS = {"agreement": 7 + 2 * 0.75, "pronoun": 8 + 0.75 + 4 / 3, "bank": 9 + 0.75}


def by_hand(kind: str | None = None) -> float:
    if kind:
        return math.log(SENTENCE_COUNTS[kind]) / MEAN_LENGTHS[kind]
    bits = math.log(3) + sum(map(math.log, SENTENCE_COUNTS.values())) / 3  # the kind, then its choices
    return bits / (sum(MEAN_LENGTHS.values()) / 3)


@pytest.mark.parametrize("kind", ["bank", "pronoun"])
def test_entropy_per_word_matches_a_count_by_hand(kind):
    assert len(all_sentences(SENTENCES[kind])) == SENTENCE_COUNTS[kind]
    assert grammar_entropy(kind) == pytest.approx(by_hand(kind))


def test_the_grammars_loss_on_a_sample_is_near_its_entropy():
    drawn = [sample(np.random.default_rng(5)) for _ in range(1)] + sentences("bank", 50)
    assert grammar_loss(drawn[1:]) == pytest.approx(math.log(288) * 50 / sum(len(s.words) for s in drawn[1:]))
    val = ToyEnglish(16).val_sentences(512)
    assert abs(grammar_loss(val) - by_hand()) < 0.05 and {s.kind for s in val} == set(KINDS)


def test_the_data_source_reads_one_sentence_per_sequence():
    data = make_data("toy_english", 16)
    assert isinstance(data, ToyEnglish) and data.seq_len == 16 and data.vocab_size == len(vocabulary()) + 1
    batch = data.train_batch(np.random.default_rng(0), 8)
    tok = data.tokenizer
    dot = tok.stoi["."]
    assert batch.ids.shape == batch.targets.shape == batch.mask.shape == (8, 16)
    assert (batch.ids[:, 0] == dot).all() and (batch.ids[:, 1:] == batch.targets[:, :-1]).all()
    for ids, targets, mask in zip(*batch):
        n = int(mask.sum())
        assert mask[:n].all() and not mask[n:].any()  # the sentence's words and its closing "."
        assert targets[n - 1] == dot and dot not in targets[: n - 1]
        assert tok.decode(ids[1:n]).endswith(tuple("abcdefghijklmnopqrstuvwxyz"))
    with pytest.raises(ValueError, match="longest sentence"):
        ToyEnglish(10)


# ---- the word tokenizer ------------------------------------------------------------------------


def test_word_tokenizer_round_trip_and_unknown_words():
    tok = WordTokenizer(vocabulary())
    assert tok.itos[0] == "<unk>" and tok.vocab_size == len(vocabulary()) + 1
    for s in sentences("agreement", 20) + sentences("bank", 20):
        ids = tok.encode(s.text)
        assert (ids > 0).all() and tok.decode(ids) == s.text
    assert tok.split("The Dog, near the TREES.") == ["the", "dog", ",", "near", "the", "trees", "."]
    ids = tok.encode("The zebra runs.")
    assert ids.tolist() == [tok.stoi["the"], 0, tok.stoi["runs"], tok.stoi["."]]
    assert tok.decode(ids) == "the <unk> runs."
    assert tok.unknown("The zebra and the Zebra, ok?") == ["zebra", ",", "ok", "?"]
    assert tok.encode("").shape == (0,) and tok.decode([]) == ""


def test_word_tokenizer_saves_its_vocabulary():
    tok = WordTokenizer(["b", "a", "A", "."])
    d = tok.to_dict()
    assert d == {"kind": "word", "words": ["b", "a", "."]}
    back = WordTokenizer.from_dict(d)
    assert back.itos == tok.itos and back.encode("a b.").tolist() == [2, 1, 3]
    with pytest.raises(ValueError, match="one word"):
        WordTokenizer(["two words"])
    with pytest.raises(ValueError, match="at least one word"):
        WordTokenizer([])


# ---- the shipped model ---------------------------------------------------------------------------


def test_the_shipped_model_records_how_it_was_made():
    _, cfg, meta = shipped()
    assert meta["data"] == "toy_english" and meta["command"].startswith("python -m tools.train --data toy_english")
    assert meta["command"].endswith("--out core/weights/toy_english") and meta["seed"] == 0
    assert WordTokenizer.from_dict(meta["tokenizer"]).itos == WordTokenizer(vocabulary()).itos
    assert cfg.vocab_size == len(vocabulary()) + 1 and cfg.max_len == 16 and cfg.n_layers == 2
    assert meta["grammar_entropy"] == pytest.approx(by_hand(), abs=1e-4)  # listed every sentence: the same
    assert set(meta["phenomena"]) == set(KINDS)
    assert (WEIGHTS / "toy_english.npz").stat().st_size < 400_000


def test_the_shipped_model_is_near_the_grammars_entropy_and_far_below_the_bigram():
    params, cfg, meta = shipped()
    entropy = by_hand()
    assert entropy + 0.4 < meta["bigram_val_loss"] < math.log(cfg.vocab_size)
    assert abs(meta["val_loss"] - entropy) < 0.03
    assert 0 < meta["val_loss"] - meta["grammar_val_loss"] < 0.02  # on the same sentences: just above the best
    data = ToyEnglish(cfg.max_len)
    drawn = data.val_sentences(256)  # recomputed here: 256 of the validation sentences
    batch = data.encode(drawn)
    val = loss_only(params, cfg, batch.ids, batch.targets, batch.mask)
    assert 0 < val - grammar_loss(drawn) < 0.03 and val < meta["bigram_val_loss"] - 0.4


def test_the_command_line_records_the_grammars_figures(tmp_path, monkeypatch):
    """The wiring of `python -m tools.train --data toy_english` (2 steps of a tiny model). The two slow
    baselines are stood in for: the shipped model's tests above check their real values."""
    from tools import train as cli

    monkeypatch.setattr(ToyEnglish, "bigram_baseline", lambda self: 1.5)
    monkeypatch.setattr(ToyEnglish, "grammar_entropy", staticmethod(lambda: 1.0))
    out = tmp_path / "tiny"
    cli.main(["--data", "toy_english", "--context", "12", "--d-model", "16", "--heads", "2", "--layers", "1",
              "--steps", "2", "--batch", "8", "--eval-every", "2", "--out", str(out)])
    _, cfg, meta = load(out)
    assert cfg.max_len == 12 and meta["data"] == "toy_english" and meta["tokenizer"]["kind"] == "word"
    assert meta["grammar_entropy"] == 1.0 and meta["bigram_val_loss"] == 1.5
    assert meta["val_loss"] > meta["grammar_val_loss"] > 0.9  # an untrained model: far above the best
    assert set(meta["phenomena"]) == set(KINDS) and len(meta["phenomena"]["bank"]["head"]) == 2


def test_the_test_sentences_are_mostly_training_sentences():
    """The word model's "test sentences" are not held out: the grammar is small and training drew 192,000
    sentences. Replaying the training draws (the trainer's seed: init_params, then every batch) finds them,
    in the shares chance_drawn gives: every bank sentence, about 90% of agreement and 96% of pronoun ones."""
    from core.demos import word_heads as wh
    from core.model import init_params
    from core.toy_english import KINDS, chance_drawn, sample, sentence_count

    model = wh.word_model()
    rng = np.random.default_rng(model.meta["seed"])
    init_params(model.cfg, rng, dtype=np.float32)  # what the trainer drew first
    draws = wh.training_draws(model)
    seen = {sample(rng).words for _ in range(draws)}
    assert [sentence_count(kind) for kind in KINDS] == [27_648, 19_200, 288]  # docs/MODELS.md
    for kind in KINDS:
        share = np.mean([s.words in seen for s in wh.rule_sentences(kind)])
        assert share == pytest.approx(chance_drawn(kind, draws), abs=0.04), kind
    assert chance_drawn("bank", draws) > 0.999 and 0.85 < chance_drawn("agreement", draws) < 0.95
    assert chance_drawn("bank", 0) == 0.0

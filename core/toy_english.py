"""A toy English whose rules we wrote: short sentences where the next word depends on an earlier one.

Three kinds of sentence, one function each, every choice drawn uniformly from a small table of words:

    agreement  the old dog near the trees runs .        the verb agrees with the subject (dog: runs,
               the dogs behind the tree sleep .         dogs: run), not with the nearer noun between them
    pronoun    the king met the girl so he left .       the pronoun refers to the subject: king -> he,
               the queen saw the boy because she smiled . queen -> she, whoever the other person is
    bank       she saw the river by the bank path .     the word after "bank" is decided by river/money
               he found the cash by the old bank loan .  (a bank path, a bank loan): the model must read
                                                        the cue into "bank" to predict it
A sequence the model reads is "." (the end of the sentence before: a start marker), the sentence, its
closing "." and more "." to fill the window; only the predictions of the sentence's words and its
closing "." count in the loss. Because every choice is uniform over a table, the grammar's own entropy
(the best loss any model can reach) is computed exactly by listing every sentence it can make.

Shapes: B batch, T sequence length (words read, start marker included), V vocabulary.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from core.data import Batch, bigram_log_probs, bigram_loss
from core.tokenize import WordTokenizer

# ---- the words ----------------------------------------------------------------------------------

ADJECTIVES = ((), ("old",), ("small",), ("happy",))  # an optional adjective: none, or one of three
ANIMALS = {"sg": ("dog", "cat", "bird", "horse", "wolf", "goat"),
           "pl": ("dogs", "cats", "birds", "horses", "wolves", "goats")}
THINGS = {"sg": ("tree", "house", "wall", "car", "gate", "rock"),
          "pl": ("trees", "houses", "walls", "cars", "gates", "rocks")}
PLACES = ("near", "behind", "beside")
VERBS = {"sg": ("runs", "sleeps", "waits", "eats"), "pl": ("run", "sleep", "wait", "eat")}

PEOPLE = {"he": ("king", "prince", "boy", "man", "father"),
          "she": ("queen", "princess", "girl", "woman", "mother")}
MEETS = ("saw", "met", "helped", "called")
LINKS = (("and", "then"), ("so",), ("because",))
ENDINGS = ("smiled", "left", "slept", "laughed")

CUES = {"river": ("river", "stream", "lake"), "money": ("money", "cash", "cheque")}
FINDS = ("saw", "found")
BANK_ADJECTIVES = ((), ("old",), ("small",), ("new",))
TOPICS = {"river": ("path", "grass", "mud"), "money": ("clerk", "loan", "card")}

KINDS = ("agreement", "pronoun", "bank")
START = "."  # the start marker, and the end of every sentence


@dataclass(frozen=True)
class Sentence:
    """One sentence and where its phenomenon sits.

    words: the sentence with its closing "." (no start marker). decided: index in words of the word the
    rule decides (the verb, the pronoun, the topic noun); cue: index of the word that decides it (the
    subject, the antecedent, river/money). right / wrong: the words the rule allows there, and those of
    the other class (runs, sleeps, ... / run, sleep, ...). contrast: the sentence holds a distractor of the
    other class (a noun of the other number, a person of the other sex; always True for bank). log_p: the
    natural log of the sentence's probability under the grammar (set by sample).
    """

    kind: str
    words: tuple[str, ...]
    decided: int
    cue: int
    right: tuple[str, ...]
    wrong: tuple[str, ...]
    contrast: bool
    log_p: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(self.words[:-1]) + "."


Pick = Callable[[Sequence], object]  # pick(options) -> one of them; every option equally likely


def other(number_or_class: str, table: dict) -> str:
    """The other key of a two-key table ("sg" -> "pl", "he" -> "she", "river" -> "money")."""
    return next(k for k in table if k != number_or_class)


def agreement(pick: Pick) -> Sentence:
    """the [adjective] ANIMAL PLACE the [adjective] THING VERB .   the verb takes the subject's number."""
    number, near_number = pick(("sg", "pl")), pick(("sg", "pl"))  # the two numbers are independent
    subject = ["the", *pick(ADJECTIVES), pick(ANIMALS[number])]
    place = [pick(PLACES), "the", *pick(ADJECTIVES), pick(THINGS[near_number])]
    words = (*subject, *place, pick(VERBS[number]), ".")
    return Sentence("agreement", words, decided=len(words) - 2, cue=len(subject) - 1, right=VERBS[number],
                    wrong=VERBS[other(number, VERBS)], contrast=near_number != number)


def pronoun(pick: Pick) -> Sentence:
    """the [adjective] PERSON MEETS the PERSON LINK PRONOUN ENDING .   the pronoun is the subject's (he for
    king, she for queen), whoever the second person is."""
    sex, other_sex = pick(("he", "she")), pick(("he", "she"))
    subject = ["the", *pick(ADJECTIVES), pick(PEOPLE[sex])]
    rest = [pick(MEETS), "the", pick(PEOPLE[other_sex]), *pick(LINKS)]
    words = (*subject, *rest, sex, pick(ENDINGS), ".")
    return Sentence("pronoun", words, decided=len(subject) + len(rest), cue=len(subject) - 1, right=(sex,),
                    wrong=(other(sex, PEOPLE),), contrast=other_sex != sex)


def bank(pick: Pick) -> Sentence:
    """he|she FINDS the CUE by the [adjective] bank TOPIC .   the word after "bank" makes a compound that
    only the cue decides: river, stream, lake give a bank path, bank grass, bank mud; money, cash, cheque a
    bank clerk, bank loan, bank card. To predict it, the model must carry the cue into "bank"."""
    sense = pick(("river", "money"))
    words = (pick(("he", "she")), pick(FINDS), "the", pick(CUES[sense]), "by", "the", *pick(BANK_ADJECTIVES),
             "bank", pick(TOPICS[sense]), ".")
    return Sentence("bank", words, decided=len(words) - 2, cue=3, right=TOPICS[sense],
                    wrong=TOPICS[other(sense, TOPICS)], contrast=True)


SENTENCES = {"agreement": agreement, "pronoun": pronoun, "bank": bank}


def sentence(pick: Pick) -> Sentence:
    """A sentence of any kind: the kind first (each a third of the time), then its own choices."""
    return SENTENCES[pick(KINDS)](pick)


def sample(rng: np.random.Generator, kind: str | None = None) -> Sentence:
    """One random sentence, of the given kind or of any (None), with its log-probability log_p: the sum of
    -log(number of options) over its picks (no two sequences of picks make the same sentence, so that is
    the sentence's own probability; tests/core/test_toy_english.py checks it against all_sentences)."""
    if kind is not None and kind not in SENTENCES:
        raise ValueError(f"Unknown sentence kind {kind!r}; choose one of {', '.join(KINDS)}.")
    log_p = 0.0

    def pick(options):  # each option equally likely
        nonlocal log_p
        log_p -= math.log(len(options))
        return options[int(rng.integers(len(options)))]

    made = (SENTENCES[kind] if kind else sentence)(pick)
    return replace(made, log_p=log_p)


def grammar_loss(sentences: Sequence[Sentence]) -> float:
    """The grammar's own loss on these sentences, in nats per predicted word: sum of -log p over the sum of
    their lengths (words and closing "."). What a model that knew the rules exactly would score on them.
    For a kind's sentences, p is the probability within that kind."""
    return -sum(s.log_p for s in sentences) / sum(len(s.words) for s in sentences)


def vocabulary() -> list[str]:
    """Every word the grammar uses, once, in a fixed order (the start marker "." first)."""
    words = [START, "the", "by", "bank"]
    tables = (ADJECTIVES, BANK_ADJECTIVES, LINKS)
    for table in tables:
        words += [w for option in table for w in option]
    for table in (ANIMALS, THINGS, VERBS, PEOPLE, CUES, TOPICS):
        for key, options in table.items():
            words += [*options, key] if table is PEOPLE else list(options)
    words += [*PLACES, *MEETS, *ENDINGS, *FINDS]
    return list(dict.fromkeys(words))


# ---- every sentence the grammar can make, and its entropy --------------------------------------


def all_sentences(make: Callable[[Pick], Sentence] = sentence) -> dict[tuple[str, ...], float]:
    """{words: probability} over every sentence make can produce, by trying each sequence of choices in
    turn (like an odometer: advance the last choice that has options left, reset the ones after it).
    Two choice sequences that give the same words add up."""
    found: dict[tuple[str, ...], float] = {}
    script: list[int] = []
    while True:
        trail: list[tuple[int, int]] = []  # (chosen index, number of options) of each pick, in order

        def pick(options, trail=trail, script=script):
            i = script[len(trail)] if len(trail) < len(script) else 0
            trail.append((i, len(options)))
            return options[i]

        words = make(pick).words
        found[words] = found.get(words, 0.0) + math.prod(1.0 / n for _, n in trail)
        while trail and trail[-1][0] + 1 == trail[-1][1]:
            trail.pop()
        if not trail:
            return found
        script = [i for i, _ in trail[:-1]] + [trail[-1][0] + 1]


@functools.cache
def grammar_entropy(kind: str | None = None) -> float:
    """The best loss any model can reach, in nats per predicted word: E[-log p(sentence)] / E[words + 1]
    (every word and the closing "." is predicted; one "." per sentence is the start marker's prediction).
    Exact: the sum runs over every sentence (of the kind, or of the whole grammar)."""
    found = all_sentences(SENTENCES[kind] if kind else sentence)
    p = np.array(list(found.values()))
    lengths = np.array([len(words) for words in found])  # words + closing ".", each one prediction
    return float(-(p * np.log(p)).sum() / (p * lengths).sum())


@functools.cache
def sentence_count(kind: str) -> int:
    """How many different sentences the kind has (every sentence of a kind is equally likely)."""
    if kind not in SENTENCES:
        raise ValueError(f"Unknown sentence kind {kind!r}; choose one of {', '.join(KINDS)}.")
    return len(all_sentences(SENTENCES[kind]))


def chance_drawn(kind: str, draws: int) -> float:
    """The chance that one given sentence of the kind is among `draws` sentences drawn from the grammar (each
    draw picks the kind with chance 1/3, then one of its sentence_count(kind) sentences): 1 - (1 - p)^draws.
    For the sentences the word model trained on, this is the share of any fresh sample it had already seen."""
    if int(draws) != draws or draws < 0:
        raise ValueError(f"The number of draws must be a whole number, 0 or more; got {draws!r}.")
    p = 1.0 / (len(KINDS) * sentence_count(kind))
    return float(-math.expm1(draws * math.log1p(-p)))


# ---- the data source the trainer reads ----------------------------------------------------------


@dataclass(frozen=True)
class ToyEnglish:
    """Sentences of the grammar, one per sequence of `context` words, drawn fresh at every batch.

    ids[:, 0] is the start marker ".", the sentence follows, then "." to the end; the mask counts the
    predictions of the sentence's words and of its closing ".".
    """

    context: int = 16  # T words read (the longest sentence with its start marker is 12)

    name = "toy_english"

    def __post_init__(self):
        if int(self.context) != self.context or self.context < longest_sentence():
            raise ValueError(f"The context must hold the longest sentence and its start marker: at least "
                             f"{longest_sentence()} words, got {self.context!r}.")

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer(vocabulary())

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def seq_len(self) -> int:
        return self.context

    def encode(self, sentences: Sequence[Sentence]) -> Batch:
        """B sentences -> Batch(ids, targets, mask), each (B, T)."""
        stoi = _stoi()
        seq = np.full((len(sentences), self.context + 1), stoi[START], dtype=np.int64)  # "." everywhere
        mask = np.zeros((len(sentences), self.context), dtype=np.float32)
        for b, s in enumerate(sentences):
            seq[b, 1 : len(s.words) + 1] = [stoi[w] for w in s.words]
            mask[b, : len(s.words)] = 1.0  # positions 0..n-1 predict the n words (closing "." included)
        return Batch(seq[:, :-1], seq[:, 1:], mask)

    def train_batch(self, rng: np.random.Generator, batch_size: int) -> Batch:
        return self.encode([sample(rng) for _ in range(batch_size)])

    def val_sentences(self, max_windows: int | None = 256, split: str = "val") -> list[Sentence]:
        """A fixed set of max_windows sentences (2,048 for None), its own seed per split."""
        if split not in ("val", "train"):
            raise ValueError(f"split must be 'val' or 'train', got {split!r}.")
        rng = np.random.default_rng(20_240_601 if split == "val" else 11)
        return [sample(rng) for _ in range(2048 if max_windows is None else max_windows)]

    def val_batches(self, batch_size: int = 64, max_windows: int | None = 256, split: str = "val") -> list[Batch]:
        """val_sentences in batches."""
        found = self.val_sentences(max_windows, split)
        return [self.encode(found[i : i + batch_size]) for i in range(0, len(found), batch_size)]

    def bigram_baseline(self) -> float:
        """Validation loss (nats per predicted word) of an add-one bigram model fit on 20,000 sentences."""
        train = self.train_batch(np.random.default_rng(7), 20_000)
        log_probs = bigram_log_probs(train.ids, train.targets, self.vocab_size, train.mask)
        val = self.val_batches(max_windows=2048)
        prev, nxt, w = (np.concatenate([getattr(b, f) for b in val]) for f in ("ids", "targets", "mask"))
        return bigram_loss(log_probs, prev, nxt, w)

    @staticmethod
    def grammar_entropy() -> float:
        return grammar_entropy()


@functools.cache
def _stoi() -> dict[str, int]:
    return WordTokenizer(vocabulary()).stoi


@functools.cache
def longest_sentence() -> int:
    """Words of the longest sentence, its closing "." and the start marker included: each kind with every
    pick taking its longest option (the picks add their words independently)."""
    def longest(options):
        return max(options, key=lambda o: len(o) if isinstance(o, tuple) else 1)
    return 1 + max(len(SENTENCES[kind](longest).words) for kind in KINDS)

"""The toy-English model (core/weights/toy_english): what it reads, which head carries each rule, and what
switching that head off costs.

    model = word_model()                                   # the shipped model, loaded once
    seen = trained_attention("the dogs near the tree run")  # tokens, every head's weights, unknown words
    figures = phenomenon_figures(model)                    # per rule: accuracy, head shares, knockouts

For each rule of core/toy_english the *deciding query* is the position whose next word the rule decides
(the word just before the verb, before the pronoun, before the topic noun), and the *cue* is the word
that decides it (the subject, the antecedent, river/money). A head that carries the rule puts its
weight, at the deciding query, on the cue.

Shapes: B batch, T sequence length (start marker included), D d_model, L layers, H heads per layer,
d_k per-head width, V vocabulary.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.attention import softmax
from core.model import Knockout, ModelConfig, forward, init_params
from core.model_file import load
from core.tokenize import WordTokenizer
from core.toy_english import ANIMALS, CUES, KINDS, LINKS, PEOPLE, START, THINGS, Sentence, ToyEnglish, sample

WEIGHTS = Path(__file__).resolve().parents[1] / "weights" / "toy_english"
TEST_SEED = 424_242  # the test sentences: a seed neither training nor validation uses (the sentences themselves
# are not held out: the grammar is small and training drew most of them; core.toy_english.chance_drawn)
RULE_SENTENCES = 256  # test sentences per rule, as the shipped figures (meta["phenomena"]) were measured


@dataclass(frozen=True)
class WordModel:
    params: dict
    cfg: ModelConfig
    tokenizer: WordTokenizer
    meta: dict


@functools.cache
def word_model(path: str | Path = WEIGHTS) -> WordModel:
    """A saved word-level model (the shipped toy_english by default), read once; its arrays are read-only."""
    params, cfg, meta = load(path)
    tokenizer = WordTokenizer.from_dict(meta["tokenizer"])
    if tokenizer.vocab_size != cfg.vocab_size:
        raise ValueError(f"The model has {cfg.vocab_size} token ids but its tokenizer {tokenizer.vocab_size} words.")
    return WordModel(params, cfg, tokenizer, meta)


@functools.cache
def untrained(seed: int = 0) -> WordModel:
    """The shipped model's configuration and words with fresh random weights (init_params, as training starts
    from): the same architecture before training, for like-for-like comparisons."""
    model = word_model()
    params = init_params(model.cfg, np.random.default_rng(seed))
    return WordModel(params, model.cfg, model.tokenizer, {**model.meta, "trained": False})


def training_draws(model: WordModel | None = None) -> int:
    """How many sentences training drew (steps x batch size: one sentence per sequence, fresh at every batch)."""
    meta = (model or word_model()).meta
    return int(meta["steps"]) * int(meta["train_config"]["batch_size"])


# ---- what the pages call: one sentence read by the model ---------------------------------------


def read_words(sentence: str | list[str], model: WordModel | None = None) -> dict:
    """The start marker and the sentence's words (text, or a list of words) as the model reads them: tokens
    (T,) str, ids (T,), unknown (the words outside the vocabulary, read as <unk>), cut (words dropped past
    max_len). The pages' functions below take the sentence the same two ways."""
    model = model or word_model()
    sentence = sentence if isinstance(sentence, str) else " ".join(sentence)
    words = [START, *model.tokenizer.split(sentence)]
    keep = words[: model.cfg.max_len]
    ids = np.array([model.tokenizer.stoi.get(w, 0) for w in keep], dtype=np.int64)
    return {"tokens": keep, "ids": ids, "unknown": model.tokenizer.unknown(sentence),
            "cut": len(words) - len(keep)}


def trained_attention(sentence: str | list[str], model: WordModel | None = None) -> dict:
    """read_words' fields, plus weights (L, H, T, T): every head's attention over the sentence, and next
    (T, V): the model's next-word probabilities at every position."""
    model = model or word_model()
    seen = read_words(sentence, model)
    logits, trace = forward(model.params, model.cfg, seen["ids"])  # (T, V)
    weights = np.stack([layer.weights for layer in trace.layers])  # (L, H, T, T)
    return {**seen, "weights": weights, "next": softmax(logits.astype(np.float64))}


def first_layer_qkv(sentence: str | list[str], model: WordModel | None = None) -> dict:
    """What the first layer computes from the sentence: read_words' fields, token (T, D) the rows of wte,
    position (T, D) the positional vectors, x (T, D) their sum, attn_in (T, D) layer norm of x (what the
    projections read), q, k, v (H, T, d_k) and weights (H, T, T) of layer 0's heads."""
    model = model or word_model()
    seen = read_words(sentence, model)
    _, trace = forward(model.params, model.cfg, seen["ids"])
    first = trace.layers[0]
    token = np.asarray(model.params["wte"])[seen["ids"]]  # (T, D)
    return {**seen, "token": token, "position": trace.x - token, "x": trace.x, "attn_in": first.attn_in,
            "q": first.q, "k": first.k, "v": first.v, "weights": first.weights}


# ---- the rules measured on test sentences -------------------------------------------------------


def rule_sentences(kind: str, n: int = RULE_SENTENCES, seed: int = TEST_SEED) -> list[Sentence]:
    """n sentences of the kind with a distractor of the other class (Sentence.contrast), from their own seed."""
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    found: list[Sentence] = []
    while len(found) < n:
        s = sample(rng, kind)
        if s.contrast:
            found.append(s)
    return found


def read_rule(model: WordModel, sentences: list[Sentence], knockout: Knockout | None = None) -> dict:
    """The model on sentences of one kind, at each one's deciding query: accuracy (share where the rule's
    words get more probability than the other class's: runs, sleeps, ... vs run, sleep, ...), top
    (share whose most likely next word is one the rule allows), log_odds (mean log of that ratio) and
    shares (L, H): the mean weight each head puts from the deciding query on the cue."""
    batch = ToyEnglish(model.cfg.max_len).encode(sentences)
    logits, trace = forward(model.params, model.cfg, batch.ids, knockout=knockout)  # (B, T, V)
    b = np.arange(len(sentences))
    query = np.array([s.decided for s in sentences])  # position j predicts word j (position 0: the marker)
    cue = np.array([s.cue + 1 for s in sentences])  # word j sits at position j + 1
    probs = softmax(logits[b, query].astype(np.float64))  # (B, V)
    stoi = model.tokenizer.stoi
    right = np.array([probs[i, [stoi[w] for w in s.right]].sum() for i, s in enumerate(sentences)])
    wrong = np.array([probs[i, [stoi[w] for w in s.wrong]].sum() for i, s in enumerate(sentences)])
    top = [model.tokenizer.itos[t] in s.right for t, s in zip(probs.argmax(-1), sentences)]
    shares = np.array([layer.weights[b, :, query, cue].mean(axis=0) for layer in trace.layers])  # (L, H)
    return {"accuracy": float((right > wrong).mean()), "top": float(np.mean(top)),
            "log_odds": float(np.mean(np.log(right) - np.log(wrong))), "shares": shares}


def rule_figures(model: WordModel, kind: str, n: int = RULE_SENTENCES, seed: int = TEST_SEED) -> dict:
    """read_rule's figures for n test sentences of the kind, and what switching heads off (zeroed) does:

    off_accuracy, off_log_odds (L, H): each head off alone; head, share: the head with the largest share;
    carrier: the head whose loss costs the most log-odds (the two often differ: a head can look at the cue
    while another one carries it); pair: the two heads with the largest shares, pair_accuracy and
    pair_log_odds with both off (two heads that look at the same cue can stand in for each other)."""
    sentences = rule_sentences(kind, n, seed)
    seen = read_rule(model, sentences)
    L, H = seen["shares"].shape
    off_accuracy, off_log_odds = np.zeros((L, H)), np.zeros((L, H))
    for layer in range(L):
        for head in range(H):
            off = read_rule(model, sentences, Knockout(((layer, head),)))
            off_accuracy[layer, head], off_log_odds[layer, head] = off["accuracy"], off["log_odds"]
    ranked = [tuple(int(i) for i in np.unravel_index(flat, (L, H))) for flat in np.argsort(-seen["shares"], None)]
    carrier = tuple(int(i) for i in np.unravel_index(off_log_odds.argmin(), (L, H)))
    pair_off = read_rule(model, sentences, Knockout(tuple(ranked[:2])))
    return {**seen, "head": ranked[0], "share": float(seen["shares"][ranked[0]]), "off_accuracy": off_accuracy,
            "off_log_odds": off_log_odds, "carrier": carrier, "pair": tuple(ranked[:2]),
            "pair_accuracy": pair_off["accuracy"], "pair_log_odds": pair_off["log_odds"]}


def phenomenon_figures(model: WordModel | None = None, n: int = RULE_SENTENCES, seed: int = TEST_SEED) -> dict:
    """rule_figures for every kind of sentence: {"agreement": {...}, "pronoun": {...}, "bank": {...}}."""
    model = model or word_model()
    return {kind: rule_figures(model, kind, n, seed) for kind in KINDS}


def summary(figures: dict) -> dict:
    """The figures a saved model's JSON keeps, rounded, per kind: accuracy, top, log-odds; the head with the
    largest share, its share, and accuracy and log-odds with it off; the same for the carrier (the head
    whose loss costs most); the two heads with the largest shares and accuracy and log-odds with both off."""
    out = {}
    for kind, f in figures.items():
        head, carrier = f["head"], f["carrier"]
        out[kind] = {"accuracy": round(f["accuracy"], 4), "top": round(f["top"], 4),
                     "log_odds": round(f["log_odds"], 3), "head": list(head), "share": round(f["share"], 4),
                     "off_accuracy": round(float(f["off_accuracy"][head]), 4),
                     "off_log_odds": round(float(f["off_log_odds"][head]), 3),
                     "carrier": list(carrier), "carrier_share": round(float(f["shares"][carrier]), 4),
                     "carrier_off_accuracy": round(float(f["off_accuracy"][carrier]), 4),
                     "carrier_off_log_odds": round(float(f["off_log_odds"][carrier]), 3),
                     "pair": [list(h) for h in f["pair"]], "pair_accuracy": round(f["pair_accuracy"], 4),
                     "pair_log_odds": round(f["pair_log_odds"], 3)}
    return out


# ---- one sentence: where its rule sits ----------------------------------------------------------


def rule_positions(tokens: list[str]) -> dict | None:
    """Which rule of the toy English the tokens (as read_words gives them, start marker first) hold, and where:
    kind, cue (the position of the subject, the antecedent, or river/money) and query (the deciding query:
    the nearer noun after the subject, the link word before the pronoun, "bank"), as read_rule measures
    them. None when none of the three patterns is there; the first kind found, in the order bank, pronoun,
    agreement, when several are."""
    patterns = {"bank": ([w for ws in CUES.values() for w in ws], ("bank",)),
                "pronoun": ([w for ws in PEOPLE.values() for w in ws], tuple(option[-1] for option in LINKS)),
                "agreement": ([w for ws in ANIMALS.values() for w in ws], [w for ws in THINGS.values() for w in ws])}
    for kind, (cues, queries) in patterns.items():
        cue = next((i for i, t in enumerate(tokens) if t in cues), None)
        query = next((i for i, t in enumerate(tokens) if cue is not None and i > cue and t in queries), None)
        if query is not None:
            return {"kind": kind, "cue": cue, "query": query}
    return None

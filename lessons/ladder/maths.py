"""The ladder from a bigram to a transformer: each rung adds one piece, and every rung is trained by core.train on
the shipped documentation text with the same split, budget and seed (`python -m tools.train_ladder` trains them
and writes what this lesson ships: lessons/ladder/weights/). Here: the rungs, the training of one, and the
figures the page computes from the shipped results. Pure NumPy on the core.

Shapes: V vocabulary, T context, D d_model, H heads, L layers (blocks), N characters generated.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from core.bigram import BigramConfig, bigram_counts, bigram_probs, generate_bigram
from core.costs import count_params
from core.data import TextCorpus
from core.model import ModelConfig, forward
from core.model_file import load
from core.sampling import generate
from core.tokenize import CharTokenizer
from core.train import TrainConfig, Trainer

WEIGHTS = Path(__file__).resolve().parent / "weights"  # what tools.train_ladder writes and this lesson reads
RESULTS = WEIGHTS / "ladder.json"
COMMAND = "python -m tools.train_ladder"


@dataclass(frozen=True)
class Settings:
    """What every rung shares: the text's windows, the model's width, the budget, the seed, the sample drawn."""

    context: int = 32  # T: characters a window holds (the transformers' max_len)
    d_model: int = 32  # D
    n_heads: int = 4  # H of the rungs with several heads (the one-head rung has 1, of width D)
    more_blocks: int = 4  # L of the last rung
    steps: int = 2000  # optimiser steps per trained rung
    batch_size: int = 32  # windows per step
    lr: float = 1e-2  # peak learning rate, after the warm-up, for every rung (the Training lesson's default);
    #   cosine down to a tenth of it by the last step
    warmup_steps: int = 100
    weight_decay: float = 0.1
    seed: int = 0  # the initial weights and the order of the batches
    eval_every: int = 100  # a point of the curves every this many steps
    eval_windows: int = 512  # windows of each split a curve's point is measured on (spread over the split)
    sample_prompt: str = "The "
    sample_chars: int = 200
    sample_temperature: float = 1.0
    sample_seed: int = 0

    def train_config(self) -> TrainConfig:
        return TrainConfig(lr=self.lr, batch_size=self.batch_size, weight_decay=self.weight_decay,
                           warmup_steps=self.warmup_steps, decay_steps=self.steps)


SETTINGS = Settings()


@dataclass(frozen=True)
class Rung:
    """One rung: what it is called, what it adds to the rung below, and which pieces its model has."""

    key: str  # its files' name
    label: str  # its name on the bars
    adds: str  # what it adds to the rung below, in a phrase
    attention: bool = True  # False: the bigram table, no attention at all
    counted: bool = False  # the bigram table filled by counting pairs instead of by training
    several_heads: bool = True  # settings.n_heads heads of width D / H; False: one head of width D
    feed_forward: bool = False
    residual: bool = False
    layer_norm: bool = False  # pre-norm: before each sublayer, and ln_f before the output head
    more_blocks: bool = False  # settings.more_blocks blocks; False: one


RUNGS = (
    Rung("counts", "bigram (counted)", "the next character from the one before, by counting pairs",
         attention=False, counted=True),
    Rung("bigram", "bigram (learnt)", "the same table of pairs, learnt by gradient descent", attention=False),
    Rung("one_head", "one head", "one attention head over token and position embeddings", several_heads=False),
    Rung("heads", "several heads", "several narrower heads in the same width"),
    Rung("ffn", "+ feed-forward", "a feed-forward layer after attention", feed_forward=True),
    Rung("residual", "+ residuals", "residual connections around both sublayers", feed_forward=True, residual=True),
    Rung("layer_norm", "+ layer norm", "layer norm before each sublayer and before the output (pre-norm)",
         feed_forward=True, residual=True, layer_norm=True),
    Rung("blocks", "more blocks", "more blocks of the same kind", feed_forward=True, residual=True, layer_norm=True,
         more_blocks=True),
)
KEYS = tuple(r.key for r in RUNGS)
ATTENTION_KEYS = tuple(r.key for r in RUNGS if r.attention)


def key_of(label: str) -> str:
    """The rung a label names (a control offers the labels: the link carries what the reader sees)."""
    return next(r.key for r in RUNGS if r.label == label)


def labels(keys) -> list[str]:
    return [rung(k).label for k in keys]


def rung(key: str) -> Rung:
    for r in RUNGS:
        if r.key == key:
            return r
    raise ValueError(f"There is no rung {key!r}; the rungs are {', '.join(KEYS)}.")


def config(r: Rung, vocab_size: int, settings: Settings = SETTINGS) -> ModelConfig | BigramConfig:
    """The model a rung is, for a vocabulary of vocab_size characters. Every transformer rung has learned
    positions and a tied output head (logits = h @ wte.T), as this app's models do."""
    if not r.attention:
        return BigramConfig(vocab_size=vocab_size, max_len=settings.context)
    return ModelConfig(vocab_size=vocab_size, d_model=settings.d_model,
                       n_heads=settings.n_heads if r.several_heads else 1,
                       n_layers=settings.more_blocks if r.more_blocks else 1, max_len=settings.context,
                       d_ff=None if r.feed_forward else 0, residual=r.residual,
                       norm="pre" if r.layer_norm else "none", pos_encoding="learned")


def pieces(cfg: ModelConfig | BigramConfig) -> dict[str, bool | int]:
    """Which pieces a model has: attention heads, feed-forward, residuals, layer norm, blocks."""
    if isinstance(cfg, BigramConfig):
        return {"heads": 0, "feed_forward": False, "residual": False, "layer_norm": False, "blocks": 0}
    return {"heads": cfg.n_heads, "feed_forward": not cfg.attention_only, "residual": cfg.residual,
            "layer_norm": cfg.layer_norm, "blocks": cfg.n_layers}


# ---- training one rung -------------------------------------------------------------------------------------


def counted_table(corpus: TextCorpus) -> dict:
    """The counted bigram as the learnt one's table: wte[a] = log P(next | a), add-one counts of the training split."""
    probs = bigram_probs(bigram_counts(corpus.train_ids, corpus.vocab_size), alpha=1.0)
    return {"wte": np.log(probs).astype(np.float32)}


def trainer_for(r: Rung, corpus: TextCorpus, settings: Settings = SETTINGS) -> Trainer:
    """The Trainer of a rung before its first step (the counted bigram: already filled, it takes no step)."""
    cfg = config(r, corpus.vocab_size, settings)
    params = counted_table(corpus) if r.counted else None
    return Trainer(cfg, corpus, settings.train_config(), seed=settings.seed, params=params)


def curve_point(trainer: Trainer, settings: Settings) -> tuple[float, float]:
    """(training, validation) loss now, each on the same eval_windows windows spread over its split."""
    return (trainer.evaluate(settings.eval_windows, split="train"), trainer.evaluate(settings.eval_windows))


def sample(params: dict, cfg, tokenizer: CharTokenizer, settings: Settings = SETTINGS) -> str:
    """The rung's text after the prompt: sample_chars characters at sample_temperature, seed sample_seed."""
    prompt = tokenizer.encode(settings.sample_prompt)
    rng = np.random.default_rng(settings.sample_seed)
    if isinstance(cfg, BigramConfig):
        ids = generate_bigram(params["wte"], prompt, settings.sample_chars, settings.sample_temperature, rng)
    else:
        ids = generate(params, cfg, prompt, settings.sample_chars, settings.sample_temperature, rng=rng)
    return tokenizer.decode(ids[len(prompt):])


def train_rung(r: Rung, corpus: TextCorpus, settings: Settings = SETTINGS, steps: int | None = None):
    """Train one rung from scratch: (trainer, its record). steps: stop sooner (a test); the schedule is still the
    settings' own, so the first steps are those of the full run."""
    start = time.perf_counter()
    trainer = trainer_for(r, corpus, settings)
    total = 0 if r.counted else settings.steps if steps is None else steps
    curve = {"step": [0], "train": [], "val": []}
    for value, key in zip(curve_point(trainer, settings), ("train", "val")):
        curve[key].append(round(value, 6))
    while trainer.steps < total:
        trainer.step(min(settings.eval_every, total - trainer.steps))
        train, val = curve_point(trainer, settings)
        curve["step"].append(trainer.steps)
        curve["train"].append(round(train, 6))
        curve["val"].append(round(val, 6))
    val = trainer.evaluate(None)  # every window of each split: a few hundred windows of the training text can
    #   put its loss on either side of the validation loss, which every window of it does not
    record = {
        "key": r.key, "parameters": count_params(trainer.params), "steps": trainer.steps,
        "seconds": round(trainer.seconds if not r.counted else time.perf_counter() - start, 3),
        "val_loss": val, "val_bits": val / math.log(2), "train_loss": trainer.evaluate(None, split="train"),
        "curve": curve, "sample": sample(trainer.params, trainer.cfg, corpus.tokenizer, settings),
        "pieces": pieces(trainer.cfg),
    }
    return trainer, record


# ---- reading the shipped results -----------------------------------------------------------------------


def read_results(path: Path | None = None) -> dict:
    """ladder.json (RESULTS unless path says another): the settings, the corpus's digest, the run's time and one
    record per rung, in RUNGS' order."""
    return json.loads(Path(RESULTS if path is None else path).read_text(encoding="utf-8"))


def load_rung(key: str, folder: Path = WEIGHTS):
    """(params, cfg, meta) of a shipped rung; core.model_file.load checks that the corpus is the one it was
    trained on."""
    return load(folder / key)


def settings_of(results: dict) -> Settings:
    """The Settings a results file was made with (a field the code no longer has raises TypeError)."""
    return replace(SETTINGS, **results["settings"])


def table(results: dict) -> list[dict]:
    """One row per rung: its label, parameters, training time, validation loss in nats and bits, the gap."""
    labels = {r.key: r.label for r in RUNGS}
    return [{"rung": labels[rec["key"]], "parameters": rec["parameters"], "seconds": rec["seconds"],
             "val_nats": rec["val_loss"], "val_bits": rec["val_bits"], "train_nats": rec["train_loss"],
             "gap": rec["val_loss"] - rec["train_loss"]} for rec in results["rungs"]]


def steps_between(results: dict) -> list[dict]:
    """What each rung bought over the one below it: the fall in validation loss, nats and as a share of it."""
    recs = results["rungs"]
    return [{"key": b["key"], "fall": a["val_loss"] - b["val_loss"],
             "share": (a["val_loss"] - b["val_loss"]) / a["val_loss"]} for a, b in itertools.pairwise(recs)]


def settings_dict(settings: Settings = SETTINGS) -> dict:
    return asdict(settings)


# ---- what the page draws of a rung -----------------------------------------------------------------------


def readable(tokenizer: CharTokenizer, prompt: str, max_len: int) -> np.ndarray:
    """The prompt as ids the rung can read: characters it does not know dropped, the last max_len kept; (T,)."""
    known = "".join(c for c in prompt if not tokenizer.unknown(c))
    return tokenizer.encode(known)[-max_len:]


def attention_on(params: dict, cfg: ModelConfig, ids: np.ndarray) -> np.ndarray:
    """Every head's attention weights on ids (T,): (L, H, T, T), rows the queries."""
    _, trace = forward(params, cfg, ids)
    return np.stack([layer.weights for layer in trace.layers])


LOOK_WINDOWS = 64  # validation windows where_heads_look averages over


def where_heads_look(params: dict, cfg: ModelConfig, corpus: TextCorpus,
                     windows: int = LOOK_WINDOWS) -> dict[str, np.ndarray]:
    """How much weight each head puts, on average, on the query's own character and on the one before it, over
    `windows` windows of the validation split (queries from position 1 on: position 0 sees only itself).
    -> {"own": (L, H), "previous": (L, H)}."""
    ids = np.concatenate([b.ids for b in corpus.val_batches(64, windows)])  # (B, T)
    _, trace = forward(params, cfg, ids)
    w = np.stack([layer.weights for layer in trace.layers])  # (L, B, H, T, T)
    T = w.shape[-1]
    q = np.arange(1, T)
    return {"own": w[..., q, q].mean(axis=(1, 3)), "previous": w[..., q, q - 1].mean(axis=(1, 3))}

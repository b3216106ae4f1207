"""The command line that trains a small transformer and ships it (.npz + .json with its provenance).

    python -m tools.train --data pydoc --d-model 64 --heads 4 --layers 2 --steps 3000 --out core/weights/pydoc_char
    python -m tools.train --help

It prints the training and validation loss at every evaluation (and keeps them in the JSON's meta["log"],
a resumed run from where it resumed) and, with --checkpoint, saves the training
state there so that --resume can go on after an interruption.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

from core.data import pydoc_record
from core.demos import word_heads
from core.demos.word_heads import WordModel
from core.model import ModelConfig
from core.model_file import save
from core.tasks import RepeatTask, SyntheticTask, make_data
from core.toy_english import ToyEnglish, grammar_loss
from core.train import TrainConfig, Trainer, pattern_mass
from tools.checkpoint import load_checkpoint, save_checkpoint
from tools.process import keep_freed_memory


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.train", description="Train a small transformer and save it.")
    ap.add_argument("--data", default="pydoc", help="pydoc, copy, reverse, induction, repeat or toy_english")
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--d-ff", type=int, default=None, help="feed-forward width (default 4 * d_model)")
    ap.add_argument("--context", type=int, default=64,
                    help="characters per window (text data, repeat); words per sentence window (toy_english)")
    ap.add_argument("--task-length", type=int, default=8,
                    help="letters in a synthetic task's first half (repeat: the longest stretch)")
    ap.add_argument("--task-min-length", type=int, default=None,
                    help="repeat: the shortest stretch (default min(4, --task-length))")
    ap.add_argument("--symbols", type=int, default=16, help="letters a synthetic task draws from")
    ap.add_argument("--pos-encoding", default="sinusoidal", choices=["sinusoidal", "learned"])
    ap.add_argument("--norm", default="pre", choices=["pre", "post"])
    ap.add_argument("--activation", default="gelu", choices=["gelu", "relu"])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--checkpoint", default=None, help="save training state here at every evaluation")
    ap.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    ap.add_argument("--out", required=True, help="path of the model to write (.npz and .json)")
    return ap


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    keep_freed_memory()
    data = make_data(args.data, args.context, length=args.task_length, n_symbols=args.symbols,
                     min_length=args.task_min_length)
    if args.resume and args.checkpoint and Path(args.checkpoint).with_suffix(".npz").exists():
        trainer = load_checkpoint(args.checkpoint, data)
    else:
        cfg = ModelConfig(vocab_size=data.vocab_size, d_model=args.d_model, n_heads=args.heads,
                          n_layers=args.layers, max_len=data.seq_len, d_ff=args.d_ff,
                          pos_encoding=args.pos_encoding, norm=args.norm, activation=args.activation)
        tc = TrainConfig(lr=args.lr, batch_size=args.batch, weight_decay=args.weight_decay,
                         warmup_steps=args.warmup, decay_steps=args.steps)
        trainer = Trainer(cfg, data, tc, seed=args.seed)
    log = {"step": [], "train_loss": [], "val_loss": []}  # every evaluation, kept in the model's JSON
    while trainer.steps < args.steps:
        losses = trainer.step(min(args.eval_every, args.steps - trainer.steps))
        val = trainer.evaluate()
        for key, value in (("step", trainer.steps), ("train_loss", round(float(np.mean(losses)), 5)),
                           ("val_loss", round(float(val), 5))):
            log[key].append(value)
        print(f"step {trainer.steps:6d}  train {np.mean(losses):.4f}  val {val:.4f}  {trainer.seconds:7.1f} s",
              flush=True)
        if args.checkpoint:
            save_checkpoint(trainer, args.checkpoint)
    meta = {
        "tokenizer": data.tokenizer.to_dict(), "data": data.name, "steps": trainer.steps,
        "train_loss": trainer.evaluate(1024, split="train"), "val_loss": trainer.evaluate(None),
        "bigram_val_loss": data.bigram_baseline(), "wall_time_s": round(trainer.seconds, 1),
        "train_config": asdict(trainer.train_cfg), "seed": args.seed,
        "command": "python -m tools.train " + shlex.join(argv), "log": log,
    }
    if args.data == "pydoc":  # the text it learnt, by digest: load refuses it beside another (core.model_file.load)
        meta.update(pydoc_record())
    if isinstance(data, (SyntheticTask, RepeatTask)):
        meta["task"] = asdict(data)
        mass = pattern_mass(trainer.params, trainer.cfg, data)
        layer, head = np.unravel_index(mass.argmax(), mass.shape)
        meta["pattern"] = {"layer": int(layer), "head": int(head), "mass": round(float(mass.max()), 4)}
    if isinstance(data, ToyEnglish):
        meta["grammar_entropy"] = round(data.grammar_entropy(), 4)  # the best loss, over the whole grammar
        meta["grammar_val_loss"] = round(grammar_loss(data.val_sentences(None)), 4)  # on val_loss's sentences
        model = WordModel(trainer.params, trainer.cfg, data.tokenizer, meta)
        meta["phenomena"] = word_heads.summary(word_heads.phenomenon_figures(model))
    save(args.out, trainer.params, trainer.cfg, meta)
    shown = ("train_loss", "val_loss", "bigram_val_loss", "grammar_entropy", "grammar_val_loss", "wall_time_s",
             "phenomena")
    print(json.dumps({k: meta[k] for k in shown if k in meta}))


if __name__ == "__main__":
    main()

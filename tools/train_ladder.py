"""Retrain every rung of the Ladder lesson from scratch, on the shipped documentation text with the same split,
budget and seed, and write what the lesson ships: each rung's weights (NAME.npz + NAME.json, core.model_file) and
ladder.json (the settings, the corpus's digest, and per rung its losses, curves, sample and training time).

    python -m tools.train_ladder                       # every rung, into lessons/ladder/weights/ (a few minutes)
    python -m tools.train_ladder --only one_head --out /tmp/ladder

The rungs and their settings are lessons/ladder/maths.py's RUNGS and SETTINGS; tests/lessons/test_ladder_results.py
checks that the shipped files match them. It prints one line per rung and how long the whole run took.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

from core.data import TextCorpus, pydoc_corpus, pydoc_record
from core.model_file import save
from lessons.ladder import maths
from tools.process import keep_freed_memory, one_blas_thread


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.train_ladder",
                                 description="Retrain the Ladder lesson's rungs and write its shipped results.")
    ap.add_argument("--only", nargs="+", choices=maths.KEYS, default=None, help="these rungs only (default: all)")
    ap.add_argument("--out", default=str(maths.WEIGHTS), help="folder to write into (default: the lesson's)")
    return ap


def train_ladder(corpus: TextCorpus, corpus_record: dict, folder: Path, settings: maths.Settings = maths.SETTINGS,
                 keys: tuple[str, ...] = maths.KEYS, command: str = maths.COMMAND, log=print) -> dict:
    """Train the rungs `keys` in order, write each one's model file and ladder.json into folder; return the results."""
    folder = Path(folder)
    started, cpu, load = time.perf_counter(), time.process_time(), _load_average()
    records = []
    for key in keys:
        r = maths.rung(key)
        trainer, record = maths.train_rung(r, corpus, settings)
        meta = {"tokenizer": corpus.tokenizer.to_dict(), "data": corpus.name, "rung": record,
                "settings": maths.settings_dict(settings), "command": command, **corpus_record}
        save(folder / key, trainer.params, trainer.cfg, meta)
        records.append(record)
        log(f"{key:11s} {record['parameters']:7,d} parameters  val {record['val_loss']:.4f} nats "
            f"({record['val_bits']:.3f} bits)  train {record['train_loss']:.4f}  {record['seconds']:7.1f} s")
    results = {
        "settings": maths.settings_dict(settings), "command": command, **corpus_record,
        "vocab_size": corpus.vocab_size, "val_characters": len(corpus.val_ids),
        "train_characters": len(corpus.train_ids), "rungs": records,
        "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
        "machine": {"cpus": os.cpu_count(), "load_average_before": load, "load_average_after": _load_average()},
    }
    (folder / maths.RESULTS.name).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


def _load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system does not say): the training times beside them
    are measured on a machine that may have been busy with other work."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser().parse_args(argv)
    keep_freed_memory()
    one_blas_thread()  # one BLAS thread: two were slower on a shared machine, and round differently
    keys = tuple(k for k in maths.KEYS if args.only is None or k in args.only)
    command = "python -m tools.train_ladder" + (" " + shlex.join(argv) if argv else "")
    results = train_ladder(pydoc_corpus(maths.SETTINGS.context), pydoc_record(), Path(args.out), keys=keys,
                           command=command)
    print(f"{len(keys)} rungs in {results['seconds']:.0f} s of wall time ({results['cpu_seconds']:.0f} s of CPU) "
          f"on {results['machine']['cpus']} cores; written to {args.out}", flush=True)


if __name__ == "__main__":
    main()

"""Training throughput of the shipped character model's configuration: ms per step and tokens per second.

    python bench/bench_train.py              # medians over 30 steps
    python bench/bench_train.py --profile    # and where the time goes, by function

Times one full optimiser step (batch, forward, backward, clipping, AdamW) and, apart, loss_and_grads alone.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.backward import loss_and_grads
from core.model import ModelConfig
from core.train import TrainConfig, Trainer
from tools.process import keep_freed_memory

WEIGHTS = Path(__file__).resolve().parents[1] / "core" / "weights" / "pydoc_char.json"


class RandomText:
    """Random token windows of the model's size: the data does not change the cost of a step."""

    name = "random"

    def __init__(self, V: int, T: int):
        self.vocab_size, self.seq_len = V, T

    def train_batch(self, rng, batch_size):
        ids = rng.integers(0, self.vocab_size, (batch_size, self.seq_len + 1))
        return ids[:, :-1], ids[:, 1:], None


def shipped_config() -> tuple[ModelConfig, int]:
    doc = json.loads(WEIGHTS.read_text())
    return ModelConfig(**doc["config"]), doc["meta"]["train_config"]["batch_size"]


def median_ms(fn, repeats: int) -> tuple[float, float]:
    """Median wall-clock and CPU (all threads of this process) milliseconds of fn().

    On a shared machine the CPU time is the steadier figure: other processes stretch the wall clock.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return 1e3 * float(np.median(wall)), 1e3 * float(np.median(cpu))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    cfg, B = shipped_config()
    T = cfg.max_len
    keep_freed_memory()
    trainer = Trainer(cfg, RandomText(cfg.vocab_size, T), TrainConfig(batch_size=B), seed=0)
    trainer.step(3)  # warm up: first allocations, BLAS threads
    ids, targets, _ = trainer.data.train_batch(np.random.default_rng(1), B)
    step_ms = median_ms(lambda: trainer.step(1), args.repeats)
    grad_ms = median_ms(lambda: loss_and_grads(trainer.params, cfg, ids, targets), args.repeats)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"model: D={cfg.d_model} H={cfg.n_heads} layers={cfg.n_layers} T={T} V={cfg.vocab_size}, "
          f"batch {B} ({B * T} tokens), float32, {os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS={threads}")
    print(f"load average {psutil.getloadavg()[0]:.1f} (above {os.cpu_count()} means other work shares the CPUs)")
    print(f"{'what':<24}{'wall ms/step':>14}{'tokens/s':>10}{'CPU ms/step':>14}")
    for name, (wall, cpu) in (("optimiser step (all)", step_ms), ("loss_and_grads only", grad_ms)):
        print(f"{name:<24}{wall:>14.1f}{B * T / wall * 1e3:>10,.0f}{cpu:>14.1f}")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(lambda: trainer.step(20))
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)


if __name__ == "__main__":
    main()

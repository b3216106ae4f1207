"""Timing of the NumPy core: one multi-head attention forward, and generation with and without the KV cache.

Run from the repository root:  python bench/bench_core.py
Prints median and minimum wall-clock times over several repeats (after a warm-up), measured with
time.perf_counter. Shapes: T sequence length, D d_model, H heads.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.attention import causal_mask, multi_head_attention  # noqa: E402
from core.model import ModelConfig, init_params  # noqa: E402
from core.sampling import generate  # noqa: E402

MHA_SHAPES = [(16, 64, 4), (64, 64, 4), (512, 256, 8)]  # (T, D, H)
GEN_CFG = ModelConfig(vocab_size=64, d_model=64, n_heads=4, n_layers=2, max_len=288)
PROMPT_LEN, NEW_TOKENS = 32, 256  # 32 + 256 = 288 = max_len: the cache is used for every step


def time_it(fn, repeats: int, warmup: int = 1) -> list[float]:
    """Seconds per call for `repeats` calls, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def bench_attention() -> None:
    print("multi_head_attention forward, float32, causal mask, one sequence (T, D)")
    print(f"{'T':>5} {'D':>5} {'H':>3} {'repeats':>8} {'median ms':>10} {'min ms':>10}")
    rng = np.random.default_rng(0)
    for T, D, H in MHA_SHAPES:
        x = rng.standard_normal((T, D)).astype(np.float32)
        w_qkv = (rng.standard_normal((D, 3 * D)) * 0.02).astype(np.float32)
        b_qkv = np.zeros(3 * D, dtype=np.float32)
        w_o = (rng.standard_normal((D, D)) * 0.02).astype(np.float32)
        b_o = np.zeros(D, dtype=np.float32)
        mask = causal_mask(T)
        repeats = 200 if T <= 64 else 20
        times = time_it(partial(multi_head_attention, x, w_qkv, b_qkv, w_o, b_o, H, mask), repeats, warmup=3)
        print(f"{T:>5} {D:>5} {H:>3} {repeats:>8} {statistics.median(times) * 1e3:>10.3f} {min(times) * 1e3:>10.3f}")


def bench_generation() -> None:
    cfg = GEN_CFG
    params = init_params(cfg, np.random.default_rng(0))  # float32
    prompt = np.random.default_rng(1).integers(0, cfg.vocab_size, size=PROMPT_LEN)
    print(f"\ngenerate: {NEW_TOKENS} new tokens after a {PROMPT_LEN}-token prompt, greedy (temperature 0), float32")
    print(f"model: vocab_size={cfg.vocab_size}, d_model={cfg.d_model}, n_heads={cfg.n_heads}, "
          f"n_layers={cfg.n_layers}, max_len={cfg.max_len}, d_ff={cfg.ff_width}, {cfg.pos_encoding}, {cfg.norm}-norm")
    print(f"{'KV cache':>9} {'repeats':>8} {'median s':>9} {'min s':>8} "
          f"{'tokens/s (median)':>18} {'tokens/s (best)':>16}")
    results, outputs = {}, {}
    for use_cache in (True, False):
        def run(use_cache=use_cache):
            outputs[use_cache] = generate(params, cfg, prompt, NEW_TOKENS, temperature=0, use_cache=use_cache)

        times = time_it(run, repeats=3)
        med, best = statistics.median(times), min(times)
        results[use_cache] = med
        label = "on" if use_cache else "off"
        print(f"{label:>9} {3:>8} {med:>9.3f} {best:>8.3f} {NEW_TOKENS / med:>18.0f} {NEW_TOKENS / best:>16.0f}")
    print(f"speed-up from the cache (median): {results[False] / results[True]:.1f}x")
    same = np.array_equal(outputs[True], outputs[False])
    print(f"same tokens with and without the cache: {'yes' if same else 'no (float32 near-tie)'}")


def main() -> None:
    start = time.perf_counter()
    print(f"Attention Lab core benchmark | Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}\n")
    bench_attention()
    print(f"(attention section: {time.perf_counter() - start:.1f} s)")
    bench_generation()
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

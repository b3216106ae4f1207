"""Timing of the NumPy core: causal attention alone, one multi-head attention forward, and generation with and
without the KV cache.

Run from the repository root:  python bench/bench_core.py
Prints median and minimum wall-clock times over several repeats (after a warm-up), measured with
time.perf_counter. Shapes: T sequence length, D d_model, H heads, d_k = D / H per head.

Where PyTorch happens to be installed, the attention tables gain PyTorch's columns for the same maths on
the CPU, same weights, same thread count: `torch.nn.functional.scaled_dot_product_attention` (fused, causal,
returns no weights) and the same maths written out (matmul, masked softmax: the weights, as the core
returns them). PyTorch is in no requirements file; use an environment of its own with this checkout on
the path, e.g.
    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch numpy
    PYTHONPATH=. /tmp/torchvenv/bin/python bench/bench_core.py
Without PyTorch the columns are left out, with a note.
"""

from __future__ import annotations

import os
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

from core.attention import causal_mask, multi_head_attention, scaled_dot_product_attention  # noqa: E402
from core.model import ModelConfig, init_params  # noqa: E402
from core.sampling import generate  # noqa: E402

MHA_SHAPES = [(16, 64, 4), (64, 64, 4), (256, 256, 8), (512, 256, 8), (1024, 256, 8)]  # (T, D, H)
SDPA_SHAPES = [(64, 4, 16), (512, 8, 32)]  # (T, H, d_k): the attention inside MHA_SHAPES' (64, 64, 4) and (512, 256, 8)

try:
    import torch
except ImportError:  # the usual case: PyTorch is not a dependency
    torch = None
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


def torch_forwards(x, w_qkv, b_qkv, w_o, b_o, H):
    """PyTorch's two forms of the same multi-head forward (inference, no autograd): fused SDPA, and the
    maths written out with the weights materialised as the core does."""
    F = torch.nn.functional
    T, D = x.shape
    x, w_qkv, b_qkv, w_o, b_o = (torch.from_numpy(a) for a in (x, w_qkv, b_qkv, w_o, b_o))
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def heads():
        q, k, v = (x @ w_qkv + b_qkv).split(D, dim=-1)
        return (t.view(T, H, D // H).transpose(0, 1) for t in (q, k, v))  # (H, T, d_k)

    def fused():
        with torch.inference_mode():
            q, k, v = heads()
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return out.transpose(0, 1).reshape(T, D) @ w_o + b_o

    def explicit():
        with torch.inference_mode():
            q, k, v = heads()
            scores = (q @ k.transpose(-1, -2)) / (D // H) ** 0.5
            weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
            return (weights @ v).transpose(0, 1).reshape(T, D) @ w_o + b_o, weights

    return fused, explicit


def torch_attentions(q, k, v):
    """PyTorch's fused causal attention and the same maths written out (weights materialised), on (H, T, d_k)."""
    F = torch.nn.functional
    T, d_k = q.shape[-2:]
    q, k, v = (torch.from_numpy(a) for a in (q, k, v))
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    def fused():
        with torch.inference_mode():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def explicit():
        with torch.inference_mode():
            weights = torch.softmax((q @ k.transpose(-1, -2) / d_k**0.5).masked_fill(~mask, float("-inf")), dim=-1)
            return weights @ v, weights

    return fused, explicit


def bench_sdpa() -> None:
    print("scaled_dot_product_attention alone, float32, causal mask, heads (H, T, d_k); median ms (min ms)")
    head = f"{'T':>5} {'H':>3} {'d_k':>4} {'repeats':>8} {'core':>17}"
    if torch is not None:
        head += f" {'torch SDPA':>17} {'torch explicit':>17} {'core/SDPA':>10} {'core/explicit':>14}"
    print(head)
    rng = np.random.default_rng(0)
    for T, H, d_k in SDPA_SHAPES:
        q, k, v = (rng.standard_normal((H, T, d_k)).astype(np.float32) for _ in range(3))
        repeats = 200 if T <= 64 else 40
        core = time_it(partial(scaled_dot_product_attention, q, k, v, causal_mask(T)), repeats, warmup=3)
        line = f"{T:>5} {H:>3} {d_k:>4} {repeats:>8} {cell(core):>17}"
        if torch is not None:
            t_fused, t_explicit = (time_it(f, repeats, warmup=3) for f in torch_attentions(q, k, v))
            line += (f" {cell(t_fused):>17} {cell(t_explicit):>17}"
                     f" {statistics.median(core) / statistics.median(t_fused):>10.1f}"
                     f" {statistics.median(core) / statistics.median(t_explicit):>14.1f}")
        print(line, flush=True)
    print()


def bench_attention() -> None:
    print("multi_head_attention forward, float32, causal mask, one sequence (T, D); median ms (min ms)")
    if torch is None:
        print("PyTorch is not installed here: its columns are left out (see this script's docstring)")
        head = f"{'T':>5} {'D':>5} {'H':>3} {'repeats':>8} {'core':>17}"
    else:
        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads; NumPy's BLAS threads: "
              f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset (all cores)')}")
        head = (f"{'T':>5} {'D':>5} {'H':>3} {'repeats':>8} {'core':>17} {'torch SDPA':>17} {'torch explicit':>17}"
                f" {'core/SDPA':>10} {'core/explicit':>14} {'max |diff|':>11}")
    print(head)
    rng = np.random.default_rng(0)
    for T, D, H in MHA_SHAPES:
        x = rng.standard_normal((T, D)).astype(np.float32)
        w_qkv = (rng.standard_normal((D, 3 * D)) * 0.02).astype(np.float32)
        b_qkv = np.zeros(3 * D, dtype=np.float32)
        w_o = (rng.standard_normal((D, D)) * 0.02).astype(np.float32)
        b_o = np.zeros(D, dtype=np.float32)
        mask = causal_mask(T)
        repeats = 200 if T <= 64 else 20
        core = time_it(partial(multi_head_attention, x, w_qkv, b_qkv, w_o, b_o, H, mask), repeats, warmup=3)
        line = f"{T:>5} {D:>5} {H:>3} {repeats:>8} {cell(core):>17}"
        if torch is not None:
            fused, explicit = torch_forwards(x, w_qkv, b_qkv, w_o, b_o, H)
            t_fused = time_it(fused, repeats, warmup=3)
            t_explicit = time_it(explicit, repeats, warmup=3)
            ours = multi_head_attention(x, w_qkv, b_qkv, w_o, b_o, H, mask)[0]
            diff = float(np.abs(ours - fused().numpy()).max())
            line += (f" {cell(t_fused):>17} {cell(t_explicit):>17}"
                     f" {statistics.median(core) / statistics.median(t_fused):>10.1f}"
                     f" {statistics.median(core) / statistics.median(t_explicit):>14.1f} {diff:>11.1e}")
        print(line, flush=True)


def cell(times: list[float]) -> str:
    return f"{statistics.median(times) * 1e3:.3f} ({min(times) * 1e3:.3f})"


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
    bench_sdpa()
    bench_attention()
    print(f"(attention section: {time.perf_counter() - start:.1f} s)")
    bench_generation()
    print(f"\ntotal benchmark time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

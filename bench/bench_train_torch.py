"""The same training step in PyTorch on the CPU, as a yardstick for core/train.py (NumPy).

PyTorch is NOT a dependency of this project (no requirements file names it); this script runs only where
it happens to be installed, in a separate environment, and says so otherwise:

    python -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch numpy
    /tmp/torchenv/bin/python bench/bench_train_torch.py --threads 1

It builds the shipped character model's configuration (read from core/weights/pydoc_char.json) with the
same layout as core/model.py: tied embedding head, sinusoidal positions, pre-norm blocks, tanh GELU,
causal multi-head attention written out with matmuls and a softmax (no fused kernel, as in the NumPy code),
AdamW with gradient clipping, and times one optimiser step on random token windows.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

WEIGHTS = Path(__file__).resolve().parents[1] / "core" / "weights" / "pydoc_char.json"


def build(torch, cfg: dict):
    nn = torch.nn
    D, H, L, T, V = cfg["d_model"], cfg["n_heads"], cfg["n_layers"], cfg["max_len"], cfg["vocab_size"]
    F = cfg.get("d_ff") or 4 * D

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc, self.proj = nn.Linear(D, F), nn.Linear(F, D)

        def forward(self, x, mask):
            B, T_, _ = x.shape
            q, k, v = self.qkv(self.ln_1(x)).split(D, dim=-1)
            q, k, v = (t.view(B, T_, H, D // H).transpose(1, 2) for t in (q, k, v))
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(D // H)
            w = torch.softmax(scores.masked_fill(~mask[:T_, :T_], float("-inf")), dim=-1)
            x = x + self.o((w @ v).transpose(1, 2).reshape(B, T_, D))
            return x + self.proj(torch.nn.functional.gelu(self.fc(self.ln_2(x)), approximate="tanh"))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(V, D)
            pos = torch.arange(T)[:, None]
            angle = pos / torch.pow(10000.0, torch.arange(0, D, 2) / D)
            pe = torch.zeros(T, D)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
            self.register_buffer("pe", pe)
            self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)))
            self.blocks = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = nn.LayerNorm(D)

        def forward(self, ids):
            x = self.wte(ids) + self.pe[: ids.shape[1]]
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.ln_f(x) @ self.wte.weight.T  # tied head

    return Model()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed in this environment; this yardstick is skipped (see the docstring).")
        return
    torch.set_num_threads(args.threads)
    doc = json.loads(WEIGHTS.read_text())
    cfg, B = doc["config"], doc["meta"]["train_config"]["batch_size"]
    T, V = cfg["max_len"], cfg["vocab_size"]
    model = build(torch, cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
    gen = torch.Generator().manual_seed(0)

    def step():
        ids = torch.randint(0, V, (B, T + 1), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(ids[:, :-1]).reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(5):
        step()
    wall, cpu = [], []
    for _ in range(args.steps):
        w, c = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    wall.sort(), cpu.sort()
    mid = len(wall) // 2
    n_params = sum(p.numel() for p in model.parameters())
    print(f"PyTorch {torch.__version__}, {args.threads} thread(s); D={cfg['d_model']} H={cfg['n_heads']} "
          f"layers={cfg['n_layers']} T={T} V={V} batch={B}; {n_params:,} parameters")
    print(f"  one AdamW step: median {1e3 * wall[mid]:.1f} ms wall, {1e3 * cpu[mid]:.1f} ms CPU; "
          f"{B * T / wall[mid]:,.0f} tokens/s")


if __name__ == "__main__":
    main()

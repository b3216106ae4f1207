"""What a model costs: parameters, and the memory and arithmetic of attention at a given length.

Shapes: T sequence length, D d_model, H heads, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

from core.model import ModelConfig
from core.model_file import flatten

DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
FLOAT_OF_BYTES = {2: "float16", 4: "float32", 8: "float64"}  # the float each size of number stands for


def count_params(params) -> int:
    """Number of scalars in a parameter tree."""
    return int(sum(a.size for a in flatten(params).values()))


def param_count(cfg: ModelConfig) -> dict:
    """Parameters by part, from the config alone (matches count_params(init_params(cfg)))."""
    D, F, V, L = cfg.d_model, cfg.ff_width, cfg.vocab_size, cfg.n_layers
    per_block = {
        "attention (W_qkv, W_o)": 3 * D * D + 3 * D + D * D + D,
        "feed-forward": D * F + F + F * D + D if F else 0,  # d_ff = 0: attention only
        "layer norms": (2 * D if cfg.attention_only else 4 * D) if cfg.layer_norm else 0,  # norm "none": 0
    }
    parts = {"token embedding (tied head)": V * D}
    if cfg.pos_encoding == "learned":
        parts["positional table"] = cfg.max_len * D
    parts.update({name: L * n for name, n in per_block.items()})
    parts["final layer norm"] = 2 * D if cfg.layer_norm else 0
    parts["total"] = sum(parts.values())
    return parts


def attention_params(D: int) -> int:
    """Parameters of one attention layer: W_qkv (D, 3D), b_qkv (3D,), W_o (D, D), b_o (D,) = 4D^2 + 4D.

    The same for any number of heads: the heads are slices of these matrices, not extra ones.
    """
    return 4 * D * D + 4 * D


def check_length(T) -> int:
    if int(T) != T or T < 1:
        raise ValueError(f"The sequence length must be a whole number >= 1, got {T!r}.")
    return int(T)


def attention_memory(T: int, n_heads: int = 1, n_layers: int = 1, dtype: str = "float32") -> dict:
    """Bytes of the (T, T) attention weights if every one is kept in memory at once.

    One (T, T) matrix per head per layer; at T = 100,000 in float16 that is 2e10 bytes (~20 GB) for one.
    """
    T = check_length(T)
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"Unknown dtype {dtype!r}; choose one of {sorted(DTYPE_BYTES)}.")
    one = T * T * DTYPE_BYTES[dtype]
    return {"per_head": one, "per_layer": one * n_heads, "total": one * n_heads * n_layers}


def attention_flops(T: int, D: int, n_layers: int = 1) -> dict:
    """Multiply-adds x 2 of one self-attention layer over T tokens (a multiply-add counts as 2 FLOPs).

    The projections grow like T D^2; the scores Q K^T and the weighted sum A V grow like T^2 D, so past
    T ~ D the quadratic part dominates.
    """
    T = check_length(T)
    proj = 2 * T * D * 3 * D + 2 * T * D * D  # Q, K, V and the output projection
    quad = 2 * T * T * D + 2 * T * T * D  # scores for every (query, key), then weights @ V
    return {"projections": proj, "scores_and_mix": quad, "per_layer": proj + quad,
            "total": (proj + quad) * n_layers}


def kv_cache_bytes(T: int, D: int, n_layers: int, dtype: str = "float32") -> int:
    """Bytes of cached keys and values for T tokens: 2 (K and V) x T x D per layer."""
    return 2 * check_length(T) * D * n_layers * DTYPE_BYTES[dtype]


def attention_costs(T: int, cfg: ModelConfig, dtype: str = "float32") -> dict:
    """What attention costs a model at length T: bytes of one head's (T, T) weights ("per_head") and of
    all of them ("maps"), of the KV cache, FLOPs of attention over all layers and in one layer, and the
    share of a layer's FLOPs spent on the T x T scores and the weighted sum ("quadratic_share")."""
    memory = attention_memory(T, cfg.n_heads, cfg.n_layers, dtype)
    flops = attention_flops(T, cfg.d_model, cfg.n_layers)
    return {"per_head": memory["per_head"], "maps": memory["total"],
            "kv_cache": kv_cache_bytes(T, cfg.d_model, cfg.n_layers, dtype),
            "flops": flops["total"], "flops_per_layer": flops["per_layer"],
            "quadratic_share": flops["scores_and_mix"] / flops["per_layer"]}


def memory_curves(cfg: ModelConfig, dtype: str = "float32", lengths=None) -> tuple[np.ndarray, dict]:
    """Bytes against sequence length: (lengths, {"attention maps", "KV cache", "parameters": (n,) each}).

    All (T, T) weight matrices grow like T^2, the cached keys and values like T, the weights not at all.
    lengths defaults to 16, 32, ..., 2^20.
    """
    lengths = 2 ** np.arange(4, 21) if lengths is None else np.asarray(lengths)
    maps = [attention_memory(int(T), cfg.n_heads, cfg.n_layers, dtype)["total"] for T in lengths]
    cache = [kv_cache_bytes(int(T), cfg.d_model, cfg.n_layers, dtype) for T in lengths]
    weights = param_count(cfg)["total"] * DTYPE_BYTES[dtype]
    curves = {"attention maps": np.array(maps, dtype=np.int64), "KV cache": np.array(cache, dtype=np.int64),
              "parameters": np.full(len(lengths), weights, dtype=np.int64)}
    return lengths, curves


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"

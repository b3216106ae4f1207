"""The transformer-block lesson's set-ups: one block of a model taken apart on a prompt (layer norm on one
row, the feed-forward layer, the residual sums), the same block wired pre-norm and post-norm on the same
input, and how hard a deep stack of each wiring swings when every weight is nudged a little.

Shapes: T sequence length, D d_model, F feed-forward width (4 D), L blocks, B sequences.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.layers import gelu, layer_norm, relu
from core.model import ModelConfig, block, forward, init_params

FIRES_ABOVE = 0.0  # a hidden unit "fires" when its pre-activation is positive: where ReLU passes it on


def row_stats(row) -> dict:
    """Mean, variance (biased, as layer norm uses) and standard deviation of one row (D,)."""
    row = np.asarray(row, dtype=np.float64)
    return {"mean": float(row.mean()), "var": float(row.var()), "std": float(row.std())}


def layer_norm_steps(row, g, b, eps: float = 1e-5) -> dict:
    """One row through layer norm, step by step: x (D,) -> x̂ = (x - mean) / sqrt(var + eps) -> γ x̂ + β.

    x̂ is core.layers.layer_norm with γ = 1 and β = 0, so both steps are the model's own function.
    """
    row = np.asarray(row, dtype=np.float64)
    g, b = np.asarray(g, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if row.ndim != 1 or g.shape != row.shape or b.shape != row.shape:
        raise ValueError(f"Layer norm needs a row (D,) and γ, β of the same shape; got {row.shape}, {g.shape}, "
                         f"{b.shape}.")
    x_hat = layer_norm(row, np.ones_like(row), np.zeros_like(row), eps)  # (D,)
    out = layer_norm(row, g, b, eps)  # (D,) = γ x̂ + β
    return {"x": row, "x_hat": x_hat, "out": out, "g": g, "b": b, "eps": eps,
            "before": row_stats(row), "normalised": row_stats(x_hat), "after": row_stats(out)}


def _norms(a: np.ndarray) -> np.ndarray:
    """Length of every row: (T, D) -> (T,)."""
    return np.linalg.norm(np.asarray(a, dtype=np.float64), axis=-1)


def block_reading(params, cfg: ModelConfig, ids, layer: int, position: int) -> dict:
    """One block of the model on ids (T,), taken apart at one position, from forward's own trace.

    Returns the layer norm of that row (the block's first layer norm: on x pre-norm, on x + attention
    post-norm), the feed-forward arrays (T, D) -> (T, F) -> (T, D), how many hidden units fire and how long a
    vector each group writes through W_proj (written: "firing" and "silent", (T,) each; silent_most, the largest
    amount a silent unit passes on, in size), and the residual stream's rows with their lengths (T,).
    """
    if cfg.attention_only:
        raise ValueError("This model has no feed-forward sublayer (d_ff = 0): the block lesson needs one.")
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"There is no block {layer}: this model has {cfg.n_layers}, counted from 0.")
    ids = np.asarray(ids)
    _, trace = forward(params, cfg, ids)
    tr, T = trace.layers[layer], ids.shape[-1]
    if ids.ndim != 1 or not 0 <= position < T:
        raise ValueError(f"Position {position} is not in a prompt of {T} tokens (positions 0 to {T - 1}).")
    pre = cfg.norm == "pre"
    ln_in, ln_out = (tr.x, tr.attn_in) if pre else (tr.res_1, tr.ffn_in)  # what ln_1 read and wrote
    ln = layer_norm_steps(ln_in[position], **params["blocks"][layer]["ln_1"], eps=cfg.ln_eps)
    fires = tr.ffn_pre > FIRES_ABOVE  # (T, F)
    w_proj = params["blocks"][layer]["mlp"]["w_proj"]  # (F, D)
    # what the two groups of units write through W_proj, without the bias: (T, F) @ (F, D) -> (T, D), then lengths
    written = {"firing": _norms(np.where(fires, tr.ffn_act, 0.0) @ w_proj),
               "silent": _norms(np.where(fires, 0.0, tr.ffn_act) @ w_proj)}
    order = np.argsort(tr.ffn_pre[position], kind="stable")  # the row's hidden units, lowest first
    base_2 = tr.res_1 if pre else tr.ffn_in  # what the feed-forward's residual adds to
    sizes = {group: sum(a.size for a in part.values()) for group, part in params["blocks"][layer].items()}
    stream = {"x": tr.x, "attn_out": tr.attn_out, "res_1": tr.res_1, "ffn_out": tr.ffn_out, "res_2": tr.res_2}
    norms = {name: _norms(a) for name, a in stream.items()}  # each (T,)
    return {
        "T": T, "D": cfg.d_model, "F": cfg.ff_width, "layer": layer, "position": position, "norm": cfg.norm,
        "ln": ln, "ln_block_difference": float(np.abs(ln["out"] - ln_out[position]).max()),
        "ffn_in": tr.ffn_in, "ffn_pre": tr.ffn_pre, "ffn_act": tr.ffn_act, "ffn_out": tr.ffn_out,
        "ffn_param_share": sizes["mlp"] / sum(sizes.values()),
        "w_fc": params["blocks"][layer]["mlp"]["w_fc"], "w_proj": params["blocks"][layer]["mlp"]["w_proj"],
        "firing": fires.mean(axis=-1), "firing_mean": float(fires.mean()),
        "firing_row": int(fires[position].sum()),
        "written": written, "written_row": {name: float(n[position]) for name, n in written.items()},
        "written_mean": {name: float(n.mean()) for name, n in written.items()},
        "silent_most": float(-tr.ffn_act[~fires].min()) if (~fires).any() else 0.0,
        "row_pre_sorted": tr.ffn_pre[position][order], "row_act_sorted": tr.ffn_act[position][order],
        **stream, "norms": norms,
        "row_norms": {name: float(n[position]) for name, n in norms.items()},
        "attn_share": float((norms["attn_out"] / norms["x"]).mean()),  # how much attention adds, per row
        "ffn_share": float((norms["ffn_out"] / _norms(base_2)).mean()),
        "sum_errors": {"attn": float(np.abs(tr.x + tr.attn_out - tr.res_1).max()),
                       "ffn": float(np.abs(base_2 + tr.ffn_out - tr.res_2).max())},
    }


def activation_curves(lo: float = -4.0, hi: float = 4.0, n: int = 81) -> dict:
    """GELU and ReLU on a grid of n points in [lo, hi], and where GELU dips lowest (it is not monotone)."""
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi) or n < 2:
        raise ValueError(f"The curves need lo < hi, both finite, and at least 2 points; got {lo}, {hi}, {n}.")
    x = np.linspace(lo, hi, n)
    fine = np.linspace(-3.0, 0.0, 30001)  # the dip lies between -3 and 0
    g = gelu(fine)
    return {"x": x, "gelu": gelu(x), "relu": relu(x), "gelu_min_x": float(fine[g.argmin()]),
            "gelu_min": float(g.min())}


def wirings(block_params, cfg: ModelConfig, x) -> dict:
    """The same block's parameters wired pre-norm and post-norm, on the same input x (T, D).

    Pre: x + attn(ln_1(x)), then + mlp(ln_2(.)). Post: ln_1(x + attn(x)), then ln_2(. + mlp(.)). Returns
    both outputs (T, D), their row lengths (T,) and row statistics, and the input's row lengths.
    """
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[-1] != cfg.d_model:
        raise ValueError(f"The block's input must be (T, D) with D = {cfg.d_model}, got {x.shape}.")
    out = {norm: block(block_params, x[None], replace(cfg, norm=norm))[0][0] for norm in ("pre", "post")}
    return {"x": x, "pre": out["pre"], "post": out["post"],
            "norms": {"input": _norms(x), "pre": _norms(out["pre"]), "post": _norms(out["post"])},
            "stats": {norm: [row_stats(r) for r in a] for norm, a in out.items()},
            "max_difference": float(np.abs(out["pre"] - out["post"]).max())}


# ---- why deep post-norm stacks are harder to train ------------------------------------------------------

DEPTH_D, DEPTH_T, DEPTH_B = 16, 8, 4  # a small stack: the effect is there at any width
NUDGE = 0.01  # every weight matrix moved by 1% of its own spread: about what one training step does


def unit_scale_blocks(cfg: ModelConfig, rng: np.random.Generator) -> list[dict]:
    """Random blocks in float64 whose weight matrices have std 1/sqrt(fan_in) (LeCun's scale: each output of a
    matrix product about as large as an input), so that every sublayer's output is about as large as its input.
    GPT-2's init draws them far smaller (0.02), and the sublayers then start out almost silent. (The 2017 paper
    states no initialisation; PyTorch's nn.Linear draws uniformly with std 1/sqrt(3 fan_in).)"""
    blocks = init_params(cfg, rng, np.float64)["blocks"]
    for blk in blocks:
        for group in ("attn", "mlp"):
            for name, w in blk[group].items():
                if w.ndim == 2:  # (fan_in, fan_out)
                    blk[group][name] = rng.standard_normal(w.shape) / np.sqrt(w.shape[0])
    return blocks


def nudged(blocks: list[dict], size: float, rng: np.random.Generator) -> list[dict]:
    """A copy of blocks with every weight matrix moved by size x its own std x N(0, 1) noise."""
    return [{group: {name: w + size * w.std() * rng.standard_normal(w.shape) if w.ndim == 2 else w
                     for name, w in part.items()} for group, part in blk.items()} for blk in blocks]


def _layer_outputs(blocks: list[dict], cfg: ModelConfig, x: np.ndarray) -> list[np.ndarray]:
    """The stream after each block, layer-normed (with γ = 1, β = 0, as ln_f reads it): (B, T, D) each."""
    ones, zeros = np.ones(cfg.d_model), np.zeros(cfg.d_model)
    outs = []
    for blk in blocks:
        x = block(blk, x, cfg)[0]
        outs.append(layer_norm(x, ones, zeros, cfg.ln_eps))
    return outs


def amplification(n_layers: int, seed: int, size: float = NUDGE) -> dict:
    """How far the output moves when every weight is nudged by `size`, after 1, 2, ..., n_layers blocks.

    One random stack (unit_scale_blocks), one random input (B, T, D), one nudge: the same for both wirings.
    The change is |out(nudged) - out| / |out| of the layer-normed stream after each block. A training step
    nudges every weight; where the output swings harder the deeper the stack, a learning rate that suits a
    shallow stack throws a deep one off, and it must be smaller (and warmed up).
    Returns {"depth": (L,), "pre": (L,), "post": (L,), "ratio"}: ratio is post-norm's change over pre-norm's,
    each averaged over the depths (steadier from seed to seed than the deepest block's alone).
    """
    if isinstance(n_layers, bool) or int(n_layers) != n_layers or n_layers < 1:
        raise ValueError(f"The stack needs a whole number of blocks, at least 1; got {n_layers!r}.")
    if not 0 < size < 1:
        raise ValueError(f"The nudge is a fraction of each weight's spread, between 0 and 1; got {size!r}.")
    rng = np.random.default_rng(seed)
    cfg = ModelConfig(vocab_size=2, d_model=DEPTH_D, n_heads=2, n_layers=int(n_layers), max_len=DEPTH_T)
    blocks = unit_scale_blocks(cfg, rng)
    moved = nudged(blocks, size, rng)
    x = rng.standard_normal((DEPTH_B, DEPTH_T, DEPTH_D))
    change = {}
    for norm in ("pre", "post"):
        wired = replace(cfg, norm=norm)
        before, after = _layer_outputs(blocks, wired, x), _layer_outputs(moved, wired, x)
        change[norm] = np.array([np.linalg.norm(b - a) / np.linalg.norm(a) for a, b in zip(before, after)])
    return {"depth": np.arange(1, int(n_layers) + 1), **change, "size": size,
            "ratio": float(change["post"].mean() / change["pre"].mean())}


SPREAD_SEEDS = tuple(range(10))  # the random stacks the depth experiment's one stack is set beside


def ratio_spread(n_layers: int, seeds=SPREAD_SEEDS, size: float = NUDGE) -> dict:
    """amplification's ratio for each seed's stack of n_layers blocks: how much one random stack says, set beside
    others. Returns {"seeds": (S,), "ratios": (S,), "low", "median", "high"}."""
    ratios = np.array([amplification(n_layers, seed, size)["ratio"] for seed in seeds])  # (S,)
    return {"seeds": np.array(seeds), "ratios": ratios, "low": float(ratios.min()),
            "median": float(np.median(ratios)), "high": float(ratios.max())}

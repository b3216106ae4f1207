"""A small causal transformer (GPT-2 layout) in NumPy: config, parameters, forward with a trace, and knocking out
heads. The KV cache it fills is core/kv_cache.py; saving and loading a model is core/model_file.py.

Shapes: B batch, T sequence length, D d_model, H heads, d_k = D / H, V vocabulary, F feed-forward width.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from core.attention import causal_mask, merge_heads, qkv_heads, scaled_dot_product_attention
from core.kv_cache import KVCache
from core.layers import ACTIVATIONS, ffn_with_hidden, layer_norm, linear, positional_encoding


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int  # V: how many distinct tokens
    d_model: int  # D: width of every token's vector
    n_heads: int  # H: attention heads per layer; must divide d_model
    n_layers: int  # number of transformer blocks
    max_len: int  # longest sequence the model accepts
    d_ff: int | None = None  # F: feed-forward width; None means 4 * D (as GPT-2), 0 no feed-forward
    #   sublayer at all (an attention-only model: each block is attention and its residual, no ln_2, no mlp)
    pos_encoding: str = "sinusoidal"  # "sinusoidal" (computed) or "learned" (a table wpe)
    norm: str = "pre"  # "pre": x + f(ln(x)) as GPT-2; "post": ln(x + f(x)) as the 2017 paper; "none": no layer
    #   norm anywhere (no ln_1, ln_2 or ln_f), the wiring of the first rungs of the Ladder lesson
    residual: bool = True  # False: each sublayer's output replaces its input instead of being added to it
    activation: str = "gelu"  # "gelu" (tanh form) or "relu"
    ln_eps: float = 1e-5  # added to the variance inside layer norm

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "max_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model = {self.d_model} cannot be split into {self.n_heads} equal heads; "
                f"choose n_heads among the divisors of {self.d_model}: {divisors(self.d_model)}."
            )
        if self.d_ff is not None and (isinstance(self.d_ff, bool) or not isinstance(self.d_ff, (int, np.integer))
                                      or self.d_ff < 0):
            raise ValueError(f"d_ff must be a whole number >= 0 (0: attention only) or None, got {self.d_ff!r}.")
        if self.pos_encoding not in ("sinusoidal", "learned"):
            raise ValueError(f"pos_encoding must be 'sinusoidal' or 'learned', got {self.pos_encoding!r}.")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {', '.join(map(repr, NORMS))}, got {self.norm!r}.")
        if not isinstance(self.residual, bool):
            raise ValueError(f"residual must be True or False, got {self.residual!r}.")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}.")
        if not self.ln_eps > 0:
            raise ValueError(f"ln_eps must be positive, got {self.ln_eps!r}.")

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    @property
    def ff_width(self) -> int:
        return self.d_ff if self.d_ff is not None else 4 * self.d_model

    @property
    def layer_norm(self) -> bool:
        """Whether the model has layer norms at all (norm "pre" or "post"; "none" has none, not even ln_f)."""
        return self.norm != "none"

    @property
    def attention_only(self) -> bool:
        """No feed-forward sublayer (d_ff = 0): the blocks only attend."""
        return self.d_ff == 0

    def to_dict(self) -> dict:
        return asdict(self)


NORMS = ("pre", "post", "none")  # where the layer norms sit, or "none" for no layer norm at all


def divisors(n: int) -> list[int]:
    """The head counts that split n evenly."""
    return [h for h in range(1, n + 1) if n % h == 0]


# A few named sizes: the teaching default, and a tiny one for tests.
PRESETS = {
    "tiny": dict(d_model=16, n_heads=2, n_layers=1, max_len=32),
    "small": dict(d_model=64, n_heads=4, n_layers=2, max_len=64),
}


def init_params(cfg: ModelConfig, rng: np.random.Generator, dtype=np.float32) -> dict:
    """GPT-2's initialisation: N(0, 0.02) weights, zero biases, unit layer-norm gains.

    The projections that write into the residual stream are scaled by 1/sqrt(2 * n_layers) so the
    stream's variance does not grow with depth. Without layer norm (norm "none") there are no gains and
    shifts at all: no ln_1, ln_2 or ln_f.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("init_params needs an np.random.Generator, e.g. np.random.default_rng(0).")
    D, F, V = cfg.d_model, cfg.ff_width, cfg.vocab_size
    std, res_std = 0.02, 0.02 / np.sqrt(2 * cfg.n_layers)

    def normal(shape, s=std):
        return (rng.standard_normal(shape) * s).astype(dtype)

    def zeros(n):
        return np.zeros(n, dtype=dtype)

    def ln():
        return {"g": np.ones(D, dtype=dtype), "b": zeros(D)}

    params = {"wte": normal((V, D))}
    if cfg.pos_encoding == "learned":
        params["wpe"] = normal((cfg.max_len, D), 0.01)
    params["blocks"] = []
    for _ in range(cfg.n_layers):
        blk = {"ln_1": ln()} if cfg.layer_norm else {}
        blk["attn"] = {"w_qkv": normal((D, 3 * D)), "b_qkv": zeros(3 * D), "w_o": normal((D, D), res_std),
                       "b_o": zeros(D)}
        if not cfg.attention_only:
            if cfg.layer_norm:
                blk["ln_2"] = ln()
            blk["mlp"] = {"w_fc": normal((D, F)), "b_fc": zeros(F),
                          "w_proj": normal((F, D), res_std), "b_proj": zeros(D)}
        params["blocks"].append(blk)
    if cfg.layer_norm:
        params["ln_f"] = ln()
    return params


KNOCKOUT_MODES = ("zero", "mean")


@dataclass(frozen=True)
class Knockout:
    """Heads to switch off in a forward pass, to see what each one contributes.

    heads: (layer, head) pairs, counted from 0. mode "zero": the head's output (its slice of the
    concatenated heads, before W_O) becomes 0; "mean": it becomes that head's mean output over the batch
    and the positions, so only what depends on the input is removed, not the head's average push.
    """

    heads: tuple[tuple[int, int], ...] = ()
    mode: str = "zero"

    def __post_init__(self):
        if self.mode not in KNOCKOUT_MODES:
            raise ValueError(f"The knockout mode must be one of {KNOCKOUT_MODES}, got {self.mode!r}.")
        pairs = tuple(sorted({(int(layer), int(head)) for layer, head in self.heads}))
        object.__setattr__(self, "heads", pairs)  # one spelling per set of heads: usable as a cache key

    def check(self, cfg: ModelConfig) -> None:
        for layer, head in self.heads:
            if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
                raise ValueError(f"There is no head {head} in layer {layer}: this model has {cfg.n_layers} "
                                 f"layers of {cfg.n_heads} heads, counted from 0.")

    def in_layer(self, layer: int) -> tuple[int, ...]:
        """The heads switched off in this layer."""
        return tuple(head for at, head in self.heads if at == layer)


def switch_off(heads: np.ndarray, which: tuple[int, ...], mode: str = "zero") -> np.ndarray:
    """(B, H, T, d_k) -> a copy with the heads `which` set to 0 or to their mean over batch and positions."""
    heads = heads.copy()
    for h in which:
        heads[:, h] = 0.0 if mode == "zero" else heads[:, h].mean(axis=(0, 1))  # (d_k,) broadcast over B, T
    return heads


def check_ids(cfg: ModelConfig, ids, start: int = 0) -> np.ndarray:
    """Validate token ids: whole numbers in [0, V), at least one, and no longer than max_len in all."""
    ids = np.asarray(ids)
    if ids.ndim not in (1, 2):
        raise ValueError(f"Token ids must have shape (T,) or (B, T), got {ids.shape}.")
    if ids.shape[-1] == 0:
        raise ValueError("The input is empty: give the model at least one token.")
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("Token ids must be whole numbers (indices into the vocabulary).")
    if ids.min() < 0 or ids.max() >= cfg.vocab_size:
        raise ValueError(
            f"Token ids must lie in 0..{cfg.vocab_size - 1} (the vocabulary), got {ids.min()}..{ids.max()}."
        )
    if start + ids.shape[-1] > cfg.max_len:
        raise ValueError(
            f"The model reads at most {cfg.max_len} tokens; this input would make {start + ids.shape[-1]}."
        )
    return ids


def embed(params, cfg: ModelConfig, ids: np.ndarray, start: int = 0) -> np.ndarray:
    """wte[ids] + PE[start:start+T]: (..., T) -> (..., T, D). No sqrt(D) scaling, no dropout."""
    T = ids.shape[-1]
    pe = positional_encoding(T, cfg.d_model, cfg.pos_encoding, params.get("wpe"), start)  # only the new positions
    return params["wte"][ids] + pe.astype(params["wte"].dtype)


def attention_layer(p, x, n_heads, cache=None, layer=0, heads_off=(), off_mode="zero"):
    """Causal multi-head self-attention, optionally after the keys/values a KV cache holds for this layer.

    x (B, T, D); cache: a KVCache with T_past keys and values of layer `layer`, to which this call adds T. Returns
    out (B, T, D) and what the UI draws and the backward pass reads: q (B, H, T, d_k), k and v (B, H, Tk, d_k)
    with Tk = T_past + T, weights (B, H, T, Tk) and heads (B, H, T, d_k).
    heads_off: heads whose output is replaced (see switch_off) before W_O; their weights still show what
    they would have looked at.
    """
    q, k, v = qkv_heads(x, p["w_qkv"], p["b_qkv"], n_heads)  # (B, H, T, d_k)
    if cache is not None:
        k, v = cache.extend(layer, k, v)  # (B, H, T_past + T, d_k): the cached positions, then these
    T, Tk = q.shape[-2], k.shape[-2]
    # Query i sits at absolute position T_past + i and may see keys 0..T_past + i.
    mask = causal_mask(T, Tk - T)  # (T, Tk)
    heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_k), (B, H, T, Tk)
    if heads_off:
        heads = switch_off(heads, heads_off, off_mode)
    out = linear(merge_heads(heads), p["w_o"], p["b_o"])  # (B, H, T, d_k) -> concat (B, T, D) -> (B, T, D)
    return out, q, k, v, weights, heads


@dataclass(frozen=True, kw_only=True)
class BlockTrace:
    """What one block computed, in the order it computed it: what the UI draws and what the backward pass
    (core/backward.py) reads. Shapes of a batched forward; an unbatched one (ids (T,)) has no B axis.
    Tk = T, or T_past + T when a KV cache holds earlier keys. An attention-only block (d_ff = 0) has no
    feed-forward sublayer: its ffn_* and res_2 are None. Without residual connections (cfg.residual False)
    the "sums" are the sublayers' outputs alone: res_1 is attn_out, res_2 is ffn_out.
    """

    x: np.ndarray  # (B, T, D) the block's input: the residual stream
    attn_in: np.ndarray  # (B, T, D) ln_1(x) pre-norm; x itself post-norm and without layer norm
    q: np.ndarray  # (B, H, T, d_k) queries per head
    k: np.ndarray  # (B, H, Tk, d_k) keys per head, the cached ones first
    v: np.ndarray  # (B, H, Tk, d_k) values per head
    weights: np.ndarray  # (B, H, T, Tk) softmax(q k^T / sqrt(d_k)) under the causal mask; rows sum to 1
    heads: np.ndarray  # (B, H, T, d_k) weights @ v per head, after any knockout
    attn_out: np.ndarray  # (B, T, D) concat(heads) W_o + b_o
    res_1: np.ndarray  # (B, T, D) x + attn_out, the first residual sum (attn_out alone without residuals)
    ffn_in: np.ndarray | None = None  # (B, T, D) ln_2(res_1) pre-norm; ln_1(res_1) post-norm; res_1 without
    #   layer norm
    ffn_pre: np.ndarray | None = None  # (B, T, F) ffn_in W_fc + b_fc
    ffn_act: np.ndarray | None = None  # (B, T, F) GELU or ReLU of ffn_pre
    ffn_out: np.ndarray | None = None  # (B, T, D) ffn_act W_proj + b_proj
    res_2: np.ndarray | None = None  # (B, T, D) the second residual sum: res_1 + ffn_out pre-norm (and without
    #   layer norm), ffn_in + ffn_out post-norm; ffn_out alone without residuals
    out: np.ndarray  # (B, T, D) the block's output: res_2 pre-norm, ln_2(res_2) post-norm;
    #   attention only: res_1 pre-norm, ln_1(res_1) post-norm


@dataclass(frozen=True, kw_only=True)
class ForwardTrace:
    """Every array one forward pass computed: what the UI draws, and all that the backward pass needs
    besides the parameters and the ids. Shapes of a batched forward; an unbatched one has no B axis."""

    x: np.ndarray  # (B, T, D) wte[ids] + PE, the first block's input
    layers: list[BlockTrace]  # one per block, first to last
    h: np.ndarray  # (B, T, D) ln_f of the last block's out (that out itself without layer norm): the head reads it


def block(p, x, cfg: ModelConfig, cache=None, layer=0, heads_off=(), off_mode="zero"):
    """One transformer block: pre-norm, post-norm or without layer norm, with or without residual connections.
    x (B, T, D) -> out (B, T, D), BlockTrace. cache, layer: a KVCache and this block's index in it; heads_off,
    off_mode: heads of this layer to switch off (attention_layer).
    """
    eps, pre, post = cfg.ln_eps, cfg.norm == "pre", cfg.norm == "post"
    # pre (GPT-2): x + attn(ln_1(x)), then x + mlp(ln_2(x)); post (the 2017 paper): ln_1(x + attn(x)),
    # then ln_2(x + mlp(x)); "none": x + attn(x), then x + mlp(x). Without residuals each "x +" goes.
    attn_in = layer_norm(x, **p["ln_1"], eps=eps) if pre else x
    attn_out, q, k, v, weights, heads = attention_layer(p["attn"], attn_in, cfg.n_heads, cache, layer, heads_off,
                                                        off_mode)
    res_1 = x + attn_out if cfg.residual else attn_out
    attention = dict(x=x, attn_in=attn_in, q=q, k=k, v=v, weights=weights, heads=heads, attn_out=attn_out,
                     res_1=res_1)
    mid = layer_norm(res_1, **p["ln_1"], eps=eps) if post else res_1  # the stream between the two sublayers
    if cfg.attention_only:
        return mid, BlockTrace(**attention, out=mid)
    ffn_in = layer_norm(mid, **p["ln_2"], eps=eps) if pre else mid
    ffn_out, ffn_pre, ffn_act = ffn_with_hidden(ffn_in, **p["mlp"], activation=cfg.activation)
    res_2 = mid + ffn_out if cfg.residual else ffn_out
    out = layer_norm(res_2, **p["ln_2"], eps=eps) if post else res_2
    return out, BlockTrace(**attention, ffn_in=ffn_in, ffn_pre=ffn_pre, ffn_act=ffn_act, ffn_out=ffn_out,
                           res_2=res_2, out=out)


def forward(params, cfg: ModelConfig, ids, cache: KVCache | None = None,
            knockout: Knockout | None = None) -> tuple[np.ndarray, ForwardTrace]:
    """Run the model. ids (T,) or (B, T) ints -> logits (..., T, V), ForwardTrace.

    With a cache, the ids are the *new* tokens: only their positions are computed, attending to every
    cached key, and the cache is extended in place. With a knockout, its heads are switched off (a "mean"
    knockout averages over the positions computed in this call).
    """
    start = cache.length if cache is not None else 0
    ids = check_ids(cfg, ids, start)
    knockout = knockout or Knockout()
    knockout.check(cfg)
    batched = ids.ndim == 2
    ids2 = ids if batched else ids[None, :]  # (T,) -> (1, T)
    embedded = embed(params, cfg, ids2, start)  # (B, T, D)
    x, layers = embedded, []
    for layer, p in enumerate(params["blocks"]):
        x, tr = block(p, x, cfg, cache, layer, knockout.in_layer(layer), knockout.mode)  # extends the cache
        layers.append(tr)
    h = layer_norm(x, **params["ln_f"], eps=cfg.ln_eps) if cfg.layer_norm else x  # no ln_f without layer norm
    logits = linear(h, params["wte"].T)  # tied output head, h @ wte.T: (B, T, V)
    trace = ForwardTrace(x=embedded, layers=layers, h=h)
    if not batched:
        logits, trace = logits[0], _without_batch(trace)
    return logits, trace


def _without_batch(trace: ForwardTrace) -> ForwardTrace:
    """The trace of a batch of one sequence, its B axis dropped: (1, ...) -> (...)."""

    def first(tr: BlockTrace) -> BlockTrace:
        return replace(tr, **{f.name: a[0] for f in fields(tr) if (a := getattr(tr, f.name)) is not None})

    return ForwardTrace(x=trace.x[0], layers=[first(tr) for tr in trace.layers], h=trace.h[0])

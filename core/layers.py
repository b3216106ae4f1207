"""The pieces around attention: layer norm, activations, the feed-forward block, positional encodings.

Shapes: T sequence length, D d_model, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

# sqrt(2/pi) of GELU's tanh form, shared with its backward pass (core/backward.py).
# A Python float, not np.float64: a NumPy float64 scalar would promote float32 activations to float64.
_GELU_C = float(np.sqrt(2.0 / np.pi))


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x @ w + b: x (..., n), w (n, m), b (m,) or None -> (..., m).

    The leading axes are folded into one first: NumPy would run (B, T, n) @ (n, m) as B small products,
    and one (B*T, n) @ (n, m) product is faster.
    """
    y = x.reshape(-1, x.shape[-1]) @ w  # (B*T, n) @ (n, m) -> (B*T, m)
    if b is not None:
        y = y + b
    return y.reshape(*x.shape[:-1], w.shape[-1])


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * g + b over the last axis, with the biased variance (as PyTorch).

    x (..., D), g (D,), b (D,) -> (..., D).
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    # The biased variance (divides by D, not D - 1), as x.var computes it, from the centred x already at hand.
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * g + b


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation (as GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + gelu_tanh_term(x))


def gelu_tanh_term(x: np.ndarray) -> np.ndarray:
    """tanh(sqrt(2/pi) (x + 0.044715 x^3)), the inner term of GELU; its backward pass recomputes it."""
    # x * x * x, not x**3: NumPy's float32 pow is ~300x slower than two multiplies.
    return np.tanh(_GELU_C * (x + 0.044715 * (x * x * x)))


def relu(x: np.ndarray) -> np.ndarray:
    """max(0, x)."""
    return np.maximum(x, 0)


ACTIVATIONS = {"gelu": gelu, "relu": relu}


def ffn(x, w_fc, b_fc, w_proj, b_proj, activation: str = "gelu"):
    """Position-wise feed-forward: act(x W_fc + b_fc) W_proj + b_proj.

    x (..., T, D), w_fc (D, F), w_proj (F, D) -> (..., T, D). Each position is transformed alone.
    """
    return ffn_with_hidden(x, w_fc, b_fc, w_proj, b_proj, activation)[0]


def ffn_with_hidden(x, w_fc, b_fc, w_proj, b_proj, activation: str = "gelu"):
    """ffn, also returning its hidden layer: (out (..., T, D), pre-activation (..., T, F), activation (..., T, F)).

    The model keeps the hidden layer in its trace: the backward pass needs both of its arrays.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"Unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}.")
    pre = linear(x, w_fc, b_fc)  # (..., T, F)
    act = ACTIVATIONS[activation](pre)
    return linear(act, w_proj, b_proj), pre, act


def sinusoidal_encoding(T: int, D: int, start: int = 0) -> np.ndarray:
    """Vaswani et al.'s positional encoding of positions start..start + T - 1, (T, D).

    PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(p / 10000^(2i/D)).
    Low dimensions turn fast (short wavelengths), high dimensions slowly, so every position gets a
    distinct pattern and a fixed offset is a rotation, which attention can learn to read.
    """
    if T < 1 or D < 1:
        raise ValueError(f"Positional encodings need T >= 1 and D >= 1, got T={T}, D={D}.")
    pos = np.arange(start, start + T)[:, None]  # (T, 1)
    two_i = np.arange(0, D, 2)  # (ceil(D/2),)
    angle = pos / np.power(10000.0, two_i / D)  # (T, ceil(D/2))
    pe = np.zeros((T, D))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : D // 2])  # an odd D has one more sine column than cosine
    return pe


def positional_encoding(T: int, D: int, kind: str = "sinusoidal", wpe: np.ndarray | None = None, start: int = 0):
    """(T, D) encodings of positions start..start + T - 1, added to the token embeddings: computed sinusoids,
    or rows of a learned table."""
    if kind == "sinusoidal":
        return sinusoidal_encoding(T, D, start)
    if kind == "learned":
        if wpe is None:
            raise ValueError("Learned positional encodings need the table wpe (max_len, D).")
        if start + T > wpe.shape[0]:
            raise ValueError(f"The learned table has {wpe.shape[0]} positions; cannot encode {start + T}.")
        return wpe[start : start + T]
    raise ValueError(f"Unknown positional encoding {kind!r}; choose 'sinusoidal' or 'learned'.")

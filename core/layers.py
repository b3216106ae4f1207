"""The pieces around attention: layer norm, activations, the feed-forward block, positional encodings.

Shapes: T sequence length, D d_model, F feed-forward width.
"""

from __future__ import annotations

import numpy as np

# A Python float, not np.float64: a NumPy float64 scalar would promote float32 activations to float64.
_GELU_C = float(np.sqrt(2.0 / np.pi))


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * g + b over the last axis, with the biased variance (as PyTorch).

    x (..., D), g (D,), b (D,) -> (..., D).
    """
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)  # biased: divides by D, not D - 1
    return (x - mean) / np.sqrt(var + eps) * g + b


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation (as GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    # x * x * x, not x**3: NumPy's float32 pow is ~300x slower than two multiplies.
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * (x * x * x))))


def relu(x: np.ndarray) -> np.ndarray:
    """max(0, x)."""
    return np.maximum(x, 0)


ACTIVATIONS = {"gelu": gelu, "relu": relu}


def ffn(x, w_fc, b_fc, w_proj, b_proj, activation: str = "gelu"):
    """Position-wise feed-forward: act(x W_fc + b_fc) W_proj + b_proj.

    x (..., T, D), w_fc (D, F), w_proj (F, D) -> (..., T, D). Each position is transformed alone.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"Unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}.")
    return ACTIVATIONS[activation](x @ w_fc + b_fc) @ w_proj + b_proj


def sinusoidal_encoding(T: int, D: int) -> np.ndarray:
    """Vaswani et al.'s positional encoding, (T, D).

    PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(p / 10000^(2i/D)).
    Low dimensions turn fast (short wavelengths), high dimensions slowly, so every position gets a
    distinct pattern and a fixed offset is a rotation, which attention can learn to read.
    """
    if T < 1 or D < 1:
        raise ValueError(f"Positional encodings need T >= 1 and D >= 1, got T={T}, D={D}.")
    pos = np.arange(T)[:, None]  # (T, 1)
    two_i = np.arange(0, D, 2)  # (ceil(D/2),)
    angle = pos / np.power(10000.0, two_i / D)  # (T, ceil(D/2))
    pe = np.zeros((T, D))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : D // 2])  # an odd D has one more sine column than cosine
    return pe


def positional_encoding(T: int, D: int, kind: str = "sinusoidal", wpe: np.ndarray | None = None):
    """(T, D) positions added to the token embeddings: computed sinusoids, or rows of a learned table."""
    if kind == "sinusoidal":
        return sinusoidal_encoding(T, D)
    if kind == "learned":
        if wpe is None:
            raise ValueError("Learned positional encodings need the table wpe (max_len, D).")
        if T > wpe.shape[0]:
            raise ValueError(f"The learned table has {wpe.shape[0]} positions; cannot encode {T}.")
        return wpe[:T]
    raise ValueError(f"Unknown positional encoding {kind!r}; choose 'sinusoidal' or 'learned'.")

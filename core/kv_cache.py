"""The KV cache: the keys and values of every position a model has read, so that a new token's attention reads
them instead of recomputing the whole prompt (core.model.forward fills it; core.sampling.generate keeps one).

Shapes: B batch, H heads, T new positions, T_seen positions already cached, d_k per-head size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class KVCache:
    """Keys and values of every position seen so far, per layer: keys[layer], values[layer] each (B, H, T_seen, d_k).

    With it, a new token's attention costs O(T) instead of recomputing the whole prompt. Each layer's keys and values
    are the filled part of a buffer with room to spare, and a new position is written into the room: appending with
    np.concatenate would copy all T_seen earlier positions again at every step.
    """

    keys: list = field(default_factory=list)
    values: list = field(default_factory=list)
    buffers: list = field(default_factory=list, repr=False)  # per layer (keys, values), each (B, H, room, d_k)

    @property
    def length(self) -> int:
        return 0 if not self.keys else self.keys[0].shape[-2]

    def extend(self, layer: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add the new positions' k, v (B, H, T, d_k) after the layer's cached ones; return all the layer's keys and
        values, (B, H, T_seen + T, d_k). They are views of the buffers, whose filled part later steps never change."""
        if layer == len(self.keys):  # the layer's first keys
            self.keys.append(k[..., :0, :])
            self.values.append(v[..., :0, :])
        if layer == len(self.buffers):  # no room yet: the first extension below moves these keys into buffers
            self.buffers.append((self.keys[layer], self.values[layer]))
        seen = self.keys[layer].shape[-2]
        end = seen + k.shape[-2]
        k_room, v_room = self.buffers[layer]
        if end > k_room.shape[-2]:  # full: buffers twice the size needed, so a position is copied O(1) times on average
            k_room, v_room = self.buffers[layer] = (_moved(k_room, seen, 2 * end), _moved(v_room, seen, 2 * end))
        k_room[..., seen:end, :], v_room[..., seen:end, :] = k, v
        self.keys[layer], self.values[layer] = k_room[..., :end, :], v_room[..., :end, :]
        return self.keys[layer], self.values[layer]


def _moved(buffer: np.ndarray, seen: int, room: int) -> np.ndarray:
    """(B, H, n, d_k) -> a new (B, H, room, d_k) buffer holding its first `seen` positions."""
    moved = np.empty((*buffer.shape[:-2], room, buffer.shape[-1]), dtype=buffer.dtype)
    moved[..., :seen, :] = buffer[..., :seen, :]
    return moved

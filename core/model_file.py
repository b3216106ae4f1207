"""A model on disk: path.npz holds the arrays, path.json the config and where the model came from (no pickle).

The parameters' nested dict is written flat, one array per dotted name ("blocks.0.attn.w_qkv"): flatten and
unflatten turn one into the other, for the file and for anything else that wants the arrays by name (the
optimiser, a run kept in the database, a checkpoint).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from core.bigram import BigramConfig
from core.data import check_corpus
from core.model import ModelConfig


def flatten(params, prefix="") -> dict:
    """Nested dict/list of arrays -> {"blocks.0.attn.w_qkv": array, ...}."""
    flat = {}
    items = params.items() if isinstance(params, dict) else enumerate(params)
    for key, value in items:
        name = f"{prefix}{key}"
        if isinstance(value, (dict, list)):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def unflatten(flat: dict) -> dict:
    """Inverse of flatten: numeric path parts become list indices."""
    root: dict = {}
    for name, value in flat.items():
        parts = name.split(".")
        node = root
        for part in parts[:-1]:
            if part not in node:
                node[part] = {}
            node = node[part]
        node[parts[-1]] = value
    return _lists(root)


def _lists(node):
    if not isinstance(node, dict):
        return node
    node = {k: _lists(v) for k, v in node.items()}
    if node and all(k.isdigit() for k in node):
        return [node[str(i)] for i in range(len(node))]
    return node


def config_from_dict(config: dict) -> ModelConfig | BigramConfig:
    """The config a model file holds: a transformer's, or a learnt bigram table's (its "kind" says so)."""
    config = dict(config)
    if config.pop("kind", None) == "bigram":
        return BigramConfig(**config)
    return ModelConfig(**config)


def save(path, params, cfg: ModelConfig | BigramConfig, meta: dict | None = None) -> None:
    """Write path.npz (arrays) and path.json ({"config": ..., "meta": ...})."""
    path = Path(path).with_suffix("")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path.with_suffix(".npz"), **flatten(params))
    doc = {"config": cfg.to_dict(), "meta": meta or {}}
    path.with_suffix(".json").write_text(json.dumps(doc, indent=1))


def load(path):
    """Read what save wrote -> (params, cfg, meta). Arrays come back read-only: they may be shared.

    A model trained on the shipped documentation corpus records its digest (meta["corpus_digest"]); load raises
    core.data.CorpusMismatch (a ValueError) when the shipped file is another text, since the model's recorded
    losses, and every number a lesson computes from that text beside them, would then not belong together."""
    path = Path(path).with_suffix("")
    doc = json.loads(path.with_suffix(".json").read_text())
    cfg = config_from_dict(doc["config"])
    check_corpus(doc.get("meta", {}))
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as data:
        flat = {name: data[name] for name in data.files}
    for arr in flat.values():
        arr.setflags(write=False)
    return unflatten(flat), cfg, doc.get("meta", {})

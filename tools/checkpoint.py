"""Training checkpoints: one .npz holding the parameters, Adam's state and a JSON string of the rest.

    save_checkpoint(trainer, "run.npz")        # params + optimiser state + history
    trainer = load_checkpoint("run.npz", data) # resumes exactly where it stopped
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from core.model import ModelConfig
from core.model_file import flatten, unflatten
from core.train import TrainConfig, Trainer


def save_checkpoint(trainer: Trainer, path) -> Path:
    """Write the trainer's state to path (.npz, no pickle); return the path written."""
    path = Path(path).with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {"model": trainer.cfg.to_dict(), "train": asdict(trainer.train_cfg), "steps": trainer.steps,
             "adam_t": trainer.opt.t, "history": trainer.history, "val_history": trainer.val_history,
             "rng": trainer.rng.bit_generator.state, "data": trainer.data.name, "status": trainer.status,
             "seconds": trainer.seconds}
    arrays = flatten({"params": trainer.params, "adam_m": unflatten(trainer.opt.m),
                      "adam_v": unflatten(trainer.opt.v)})
    np.savez(path, state=np.array(json.dumps(state)), **arrays)
    return path


def load_checkpoint(path, data) -> Trainer:
    """Resume from save_checkpoint's file; data must be the same source (same name and vocabulary)."""
    with np.load(Path(path).with_suffix(".npz"), allow_pickle=False) as f:
        state = json.loads(str(f["state"]))
        tree = unflatten({k: f[k] for k in f.files if k != "state"})
    if state["data"] != data.name:
        raise ValueError(f"This checkpoint was trained on {state['data']!r}, not {data.name!r}.")
    trainer = Trainer(ModelConfig(**state["model"]), data, TrainConfig(**state["train"]), params=tree["params"])
    for target, saved in ((trainer.opt.m, tree["adam_m"]), (trainer.opt.v, tree["adam_v"])):
        for k, a in flatten(saved).items():
            target[k][...] = a
    trainer.opt.t, trainer.steps = state["adam_t"], state["steps"]
    trainer.history, trainer.status, trainer.seconds = state["history"], state["status"], state["seconds"]
    trainer.val_history = [tuple(x) for x in state["val_history"]]
    trainer.rng.bit_generator.state = state["rng"]
    return trainer

"""How the circuit model learned to copy: its training log (the loss on the repeat at every evaluation, kept in
the model's JSON by tools/train.py) as a curve, and where it fell (lessons.circuit.maths.phase_change). The same for
every reader: drawn outside the page's live part."""

from __future__ import annotations

import numpy as np

from lessons.circuit.maths import phase_change
from ui.compute.model_store import Model
from ui.drawing import plots, render
from ui.frame import prose


def section(model: Model) -> None:
    """The curve and what it shows; nothing when the model's JSON keeps no training log."""
    log = model.meta.get("log")
    if not log or len(log.get("step", ())) < 2:
        return
    uniform = float(np.log(len(model.meta["tokenizer"]["chars"])))
    p = phase_change(log, uniform)
    before, lost, after, reached = p["fall"]
    prose.section("How the circuit formed: a sudden fall", "circuit", "phase_change", every=log["step"][1] -
                  log["step"][0], last=p["last_step"], stuck=p["stuck_step"], stuck_loss=p["stuck_loss"],
                  uniform=uniform, gap=uniform - p["stuck_loss"], a=before, a_loss=lost, b=after, b_loss=reached,
                  done=p["done_step"], done_loss=p["done_loss"], share=p["share"])
    every = log["step"][1] - log["step"][0]
    frame = plots.line_frame(log["step"], {"validation loss (the repeat)": log["val_loss"],
                                           f"training loss (mean of the {every} steps before)": log["train_loss"],
                                           f"uniform guess ({uniform:.2f})": [uniform] * len(log["step"])})
    render.show(plots.line_chart, frame, width="stretch", x_title="training step", y_title="loss (nats)",
                title="The loss on the repeat while the model trained", whole_x=True)

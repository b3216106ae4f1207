"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

from functools import cache

import numpy as np

from core.demos.knockout import knockout_table
from lessons.circuit.maths import copy_halves, generated, phase_change
from ui.compute import model_store
from ui.frame.exercises import Exercise


@cache
def _circuit_costs() -> np.ndarray:
    """(L, H) rise of the repeat's loss when each head of the circuit model is off, on the page's default
    sequence (generated, stretch 8, seed 0)."""
    model = model_store.load_model("circuit")
    ids = generated(8, 0, model.cfg.max_len, len(model.meta["tokenizer"]["chars"]))
    return knockout_table(model.params, model.cfg, ids[:-1], ids[1:], copy_halves(ids)[1])


def questions() -> list[Exercise]:
    table = _circuit_costs()
    names = tuple(f"layer {layer + 1} · head {head + 1}" for layer in range(table.shape[0])
                  for head in range(table.shape[1]))
    most = int(np.argmax(table))
    n = len(model_store.load_model("circuit").meta["tokenizer"]["chars"])  # the letters it predicts among
    rises = ", ".join(f"{n} {r:+.1f}" for n, r in zip(names, table.ravel()))
    return [
        Exercise("most_needed", "At the page's defaults (generated, stretch 8, seed 0), switching off which one "
                 "head raises the loss on the repeat the most?", options=names, correct=most,
                 explanation=f"The rises in nats: {rises}. Without the previous-token head no key knows the "
                 "letter before it, so the induction head has nothing to match: copying is gone.", part="knockout"),
        Exercise("uniform", f"A model that spreads its guess evenly over the {n} letters: what is its loss on "
                 "any letter, in nats? (2 decimals)", answer=float(np.log(n)), tolerance=0.005, part="loss",
                 explanation=f"Its surprise at a letter it gave 1/{n} of the probability: the natural log of {n}, "
                 f"about {np.log(n):.2f}. The first copy's loss on the page lies far above it (the model is "
                 "confidently wrong on letters it cannot know); the repeat's far below."),
        flat_then_fall(),
    ]


def flat_then_fall() -> Exercise:
    """The circuit model's training log: how long the loss stayed near the uniform guess."""
    model = model_store.load_model("circuit")
    p = phase_change(model.meta["log"], float(np.log(len(model.meta["tokenizer"]["chars"]))))
    fell = p["done_step"] - p["stuck_step"]
    options = ("It fell steadily from the first steps on", f"It stayed near the uniform guess for about "
               f"{p['stuck_step']:,} steps, then fell within {fell:,} steps", "It never got far below the guess")
    return Exercise("flat_then_fall", f"While the circuit model trained ({p['last_step']:,} steps), how did its loss "
                    "on the repeat change?", options=options, correct=1, part="phase_change",
                    explanation=f"It stayed at {p['stuck_loss']:.2f} or above until step {p['stuck_step']:,}, then "
                    f"fell to {p['done_loss']:.2f} by step {p['done_step']:,}: a sudden fall after a long flat "
                    "stretch. Olsson et al. (2022) saw a change of the same kind in language models, in the short "
                    "stretch of training where their induction heads formed.")

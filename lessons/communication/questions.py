"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

import numpy as np

from lessons.communication.maths import bank_similarity, cross_attention, encoder_decoder, order_view, recurrence
from ui.frame.exercises import Exercise
from ui.sections import trained_views

# where the trained view is: the sidebar's switch (on a phone the sidebar is folded, its button at the top left)
SWITCH_HINT = (f"Set the sidebar's Weights switch to {trained_views.TRAINED} (on a phone, open the sidebar at the top "
               "left). ")

KEEP, STEPS = 0.9, 10  # the recurrence question's share kept per step, and its position


def questions() -> list[Exercise]:
    order = order_view(["dog", "bites", "man"], 16, 8, 0, [2, 1, 0], positions=False)
    changed = int((np.abs(order["difference"]).max(axis=1) > 1e-9).sum())
    signal = np.zeros((STEPS + 1, 1))
    signal[0] = 1.0  # token 0 says 1, every later token 0: what is left of it at position t is h_t
    kept = float(recurrence(signal, KEEP)[STEPS, 0])
    cross = cross_attention([f"q{i}" for i in range(5)], [f"k{j}" for j in range(8)], 16, 8, 0)
    talk = encoder_decoder([f"t{i}" for i in range(6)], 16, 8, 0)
    both = talk["weights_decoder"][2, 5] > 0
    return [
        Exercise("order_rows", "Without positional encodings and without a mask, “dog bites man” is shuffled into "
                 "“man bites dog”. How many of the three output vectors change (apart from moving to another row)?",
                 answer=float(changed), tolerance=0,
                 explanation="None: each word meets the same keys and values in any order, so its output is the "
                 "same and only its row moves. Positional encodings make order matter, and so does a causal mask: "
                 "it changes which words each token sees.", part="order"),
        Exercise("reach", f"A recurrence keeps {KEEP:.0%} of its state (its running note) at each step and takes "
                 f"in {1 - KEEP:.0%} of the new token; it starts from token 0 alone. What share of token 0 is left at "
                 f"position {STEPS}? (3 decimals)", answer=kept, tolerance=0.002, part="recurrence",
                 explanation=f"{STEPS} steps, each keeping {KEEP:g} of what was there: {STEPS} factors of {KEEP:g}, "
                 f"about {kept:.3f}. Attention reaches token 0 from position {STEPS} in one step, with "
                 "whatever weight it gives it."),
        Exercise("cross_count", "Queries come from a 5-token sentence, keys and values from an 8-token one. How "
                 "many numbers are in the cross-attention weight matrix?", answer=float(cross["weights"].size),
                 tolerance=0, explanation=f"One weight per (query, key) pair: shape {cross['weights'].shape}, "
                 f"{cross['weights'].size} numbers, each row summing to 1.", part="cross"),
        Exercise("who_hears", "In which block can token 2 hear token 5 of the same sentence?", options=(
            "The encoder (no mask)", "The decoder (causal mask)", "Both"), correct=2 if both else 0,
                 explanation="A decoder's token i hears only tokens 0 to i; an encoder has no mask, so every "
                 "token hears every other, later ones included.", part="encoder"),
        bank_vectors(),
    ]


def bank_vectors() -> Exercise:
    """The trained model's two vectors of "bank", after its last layer."""
    similar = bank_similarity()
    last = float(similar["cosine"][-1])
    options = ("Nearly the same direction (cosine above 0.9)", "About as alike as two unrelated vectors (cosine "
               "near 0)", "Opposite directions (cosine near −1)")
    correct = 0 if last > 0.9 else (2 if last < -0.5 else 1)
    return Exercise("bank_vectors", f"{SWITCH_HINT}“bank” is read in “she saw the river by the bank” and in "
                    "“she saw the money by the bank”. It enters both at the same place with the same vector "
                    f"(cosine {similar['cosine'][0]:.2f}). After the model's last layer, how alike are its two "
                    "vectors?",
                    options=options, correct=correct,
                    explanation=f"Cosine per stage ({', '.join(similar['stages'])}): "
                    f"{', '.join(f'{c:.2f}' for c in similar['cosine'])}. The model needs the sense to predict the "
                    "next word (a bank path or a bank loan), and after training its layers carry river or money into "
                    "“bank”; the same model before training keeps the two vectors almost alike.",
                    part="trained_contexts")

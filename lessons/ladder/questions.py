"""Check-yourself questions of the Ladder lesson. Every answer comes from the shipped results (lessons/ladder/weights/
ladder.json, checked against the weights by tests/lessons/test_ladder_results.py) or from the core, so it cannot
drift from what the page shows. The frame builds them once per process (ui.frame.page.built_questions)."""

from __future__ import annotations

import math

from lessons.ladder import maths
from ui.frame.exercises import Exercise


def questions() -> list[Exercise]:
    try:
        results = maths.read_results()
    except (OSError, ValueError):  # a copy of the app without its results: the page says so, and asks nothing
        return []
    recs = {rec["key"]: rec for rec in results["rungs"]}
    labels = [r.label for r in maths.RUNGS]
    falls = {f["key"]: f["fall"] for f in maths.steps_between(results)}
    largest = max(falls, key=falls.get)
    first = next(rec["key"] for rec in results["rungs"] if rec["train_loss"] < rec["val_loss"])
    last, V = recs["blocks"]["val_loss"], results["vocab_size"]
    extra = recs["heads"]["parameters"] - recs["one_head"]["parameters"]
    return [  # in the order of the sections they ask about
        Exercise("uniform", f"A model gives each of the {V} characters the same probability, whatever came before. "
                 "What is its loss, in nats per character?", answer=math.log(V), part="bars",
                 explanation=f"Each character gets probability 1/{V}, and the surprise at a probability of 1/{V} is "
                 f"the natural logarithm of {V}, about {math.log(V):.3f} nats: the uniform guess's line on the bars."),
        Exercise("bits", f"The last rung's validation loss is {last:.3f} nats per character. How many bits per "
                 "character is that?", answer=last / math.log(2), part="bars",
                 explanation=f"Divide by the natural logarithm of 2, about 0.693: {last:.3f} / 0.693 ≈ "
                 f"{last / math.log(2):.3f} bits."),
        Exercise("extra_heads", f"How many parameters does cutting the one head into {results['settings']['n_heads']} "
                 "heads add?", answer=float(extra), tolerance=0, part="step_heads",
                 explanation="None: the heads are slices of the same W_qkv and W_O, so the table shows the same "
                 f"count for both rungs ({recs['heads']['parameters']:,})."),
        Exercise("largest", "Which rung's validation loss fell the most from the rung before it?",
                 options=tuple(labels[1:]), correct=maths.KEYS[1:].index(largest), part="steps",
                 explanation=f"{maths.rung(largest).label}: it fell by {falls[largest]:.3f} nats, more than any other "
                 "step of the ladder (the table's differences, rung by rung)."),
        Exercise("gap", "Which is the first rung whose training loss is below its validation loss?",
                 options=tuple(labels), correct=maths.KEYS.index(first), part="gap",
                 explanation=f"{maths.rung(first).label}: training {recs[first]['train_loss']:.3f} against validation "
                 f"{recs[first]['val_loss']:.3f}. Every rung before it scores better on the validation split, which is "
                 "easier text for them."),
    ]

"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions)."""

from __future__ import annotations

from core.costs import param_count
from core.demos.word_heads import RULE_SENTENCES, word_model
from core.model import ModelConfig
from lessons.multi_head.maths import looked_at_or_used
from ui.frame.exercises import Exercise
from ui.sections import trained_views

# where the trained view is: the sidebar's switch (on a phone the sidebar is folded, its button at the top left)
SWITCH_HINT = (f"Set the sidebar's Weights switch to {trained_views.TRAINED} (on a phone, open the sidebar at the top "
               "left). ")


def questions() -> list[Exercise]:
    cfg = ModelConfig(vocab_size=2, d_model=64, n_heads=8, n_layers=1, max_len=8)
    attn, D = param_count(cfg)["attention (W_qkv, W_o)"], cfg.d_model
    return [
        Exercise("dk_per_head", f"d_model = {cfg.d_model} split over {cfg.n_heads} heads: how many dimensions "
                 "does each head's query have?", answer=float(cfg.d_k),
                 explanation=f"Heads split d_model evenly: {cfg.d_model} / {cfg.n_heads} = {cfg.d_k} numbers each.",
                 part="idea"),
        Exercise("attn_params", f"How many parameters does one attention layer with d_model = {D} have, "
                 f"counting W_qkv ({D} × {3 * D}, the matrix that makes the queries, keys and values), W_o "
                 f"({D} × {D}) and their biases (one number per column)?",
                 answer=float(attn), tolerance=0,
                 explanation=f"{D}·{3 * D} + {3 * D} + {D}·{D} + {D} = {attn:,}. The number of heads does not change "
                 "it: heads are slices of the same matrices.", part="idea"),
        head_off(),
        looked_at(),
    ]


def head_off() -> Exercise:
    """The trained model's agreement head switched off, as measured on its test sentences (saved with it)."""
    model = word_model()
    figures, others = model.meta["phenomena"]["agreement"], model.cfg.n_layers * model.cfg.n_heads - 1
    off = figures["off_accuracy"]
    options = ("Still right almost always: the other heads make up for it", "Right about half the time, a coin toss",
               "Wrong almost always: the verb flips")
    correct = 0 if off > 0.9 else (2 if off < 0.1 else 1)
    return Exercise("head_off", f"{SWITCH_HINT}There one head reads the subject for the verb "
                    f"({trained_views.head_name(*figures['head'])}). Switch that head off alone, keeping the other "
                    f"{others}: how often does the model still make the verb agree with the subject, singular or "
                    "plural?", options=options,
                    correct=correct, part="trained_jobs",
                    explanation=f"Measured on {RULE_SENTENCES} test sentences: right {figures['accuracy']:.0%} of the "
                    f"time with every head, {off:.0%} with that head off. No other head makes up for it: the model is "
                    "left guessing between singular and plural.")


def looked_at() -> Exercise:
    """The heads that look at the bank cue without being needed, switched off (lessons.multi_head.maths)."""
    f = looked_at_or_used("bank")
    a, b = f["also_looking"][:2]
    worst = min(f["off_accuracy"][a], f["off_accuracy"][b])
    options = ("Still right almost always", "Right about half the time, a coin toss", "Wrong almost always")
    correct = 0 if worst > 0.9 else (2 if worst < 0.1 else 1)
    return Exercise("looked_at", f"With trained weights, on bank sentences, {trained_views.head_name(*a)} puts "
                    f"{f['shares'][a]:.2f} of its weight from “bank” on the cue (river or money), and "
                    f"{trained_views.head_name(*b)} {f['shares'][b]:.2f}. Switch one of them off: how often does the "
                    "model still pick the right kind of word after “bank”?", options=options, correct=correct,
                    part="not_explanation",
                    explanation=f"Right {f['off_accuracy'][a]:.0%} and {f['off_accuracy'][b]:.0%} of the time, and "
                    f"{f['also_off_accuracy']:.0%} with both off: looking at the cue is not the same as being needed "
                    "to get the rule right (without them the model is only less sure, as the page's table shows). The "
                    "head the model cannot do without is "
                    f"{trained_views.head_name(*f['needed'])} (right {f['off_accuracy'][f['needed']]:.0%} with it "
                    "off).")

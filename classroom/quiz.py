"""A short quiz on the core ideas, taken at the start of a class and again at its end, and the class's normalised
gain between the two (R. R. Hake, Am. J. Phys. 66, 64–74, 1998).

Seven multiple-choice items, four options each, one right. Each wrong option is a misconception students of
attention really hold (the score taken for the weight, √d_k taken for a normalisation, the mask applied after the
softmax, a head taken for a layer, attention taken as picking one key, weights taken as an explanation), each
meant to make a right answer depend on the idea rather than on the wording (the items are not validated).
Each explanation opens with its idea in one bold line, for a phone at the end of a class.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from classroom.questions import ClassQuestion, grade
from lessons import COURSE

ROW = (0.7, 0.2, 0.1, 0.0)  # the softmax row of the "softmax_row" item
SUBJECT_WEIGHT = 0.9  # the weight in the "weights" item
SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _mix(vector: str) -> str:
    """'v' -> '0.7·v₀ + 0.2·v₁ + 0.1·v₂ + 0·v₃' from ROW."""
    return " + ".join(f"{w:g}·{vector}{str(j).translate(SUB)}" for j, w in enumerate(ROW))


# id -> (prompt, options, the right option's index, explanation)
ITEMS = {
    "score": (
        "In one attention head, what is the score of query position i for key position j, before the softmax?",
        ("A weight between 0 and 1 that says what share of v_j goes into the output at position i",
         "q_i · k_j (over √d_k when scaled): the dot product of the query at i and the key at j",
         "k_i · q_j (over √d_k when scaled): the dot product of the key at i and the query at j",
         "The probability that token j is the token that follows token i in the text"),
        1,
        "**A score is q_i · k_j: a dot product, any real number.** It is |q_i| |k_j| cos θ (divided by √d_k in "
        "scaled attention): negative too, large when the query and the key are long and point the same way. The "
        "order matters: k_i · q_j is the score of query j for key i. The softmax over a query's row turns its scores "
        "into weights between 0 and 1 that sum to 1; the values take no part in the scores, they are what the "
        "weights then mix. The probability of the next token comes only at the model's very end, from its output "
        "layer."),
    "scaling": (
        "Why does scaled dot-product attention divide the scores by √d_k before the softmax?",
        ("To make each row of attention weights add up to 1, as a probability distribution must",
         "To scale q and k to unit length, so that each score is the cosine of the angle between them",
         "To stop the scores spreading wider as d_k grows, which would saturate the softmax",
         "To keep the head's output from growing with d_v, the number of entries in each value vector"),
        2,
        "**q · k sums d_k products, so the scores spread like √d_k; dividing by √d_k undoes that.** With independent "
        "entries of mean 0 and variance 1, each product q_m k_m has variance 1, so their sum q · k has variance d_k "
        "and standard deviation √d_k. Dividing by √d_k brings the spread back to 1 whatever d_k is. Unscaled, the "
        "larger d_k, the closer the softmax rows tend to come to one-hot (a single row can go against it), and a "
        "saturated softmax passes back almost no gradient. The softmax already makes rows sum to 1; √d_k is one "
        "constant for every pair, not the vectors' lengths, so no cosine comes out; and the values, whatever their "
        "size d_v, play no part in the scores."),
    "mask": (
        "What does the causal mask do in a decoder's self-attention?",
        ("Before the softmax it sets later positions' scores to −∞, so their weights are exactly 0",
         "After the softmax it sets later positions' weights to 0, leaving the other weights as they were",
         "It blocks each query from its own key as well as later ones, so it sees only earlier positions",
         "It removes the padding tokens that make the sequences of a batch the same length"),
        0,
        "**The mask works on the scores, before the softmax: later keys get −∞, so their weights are exactly 0.** "
        "Position i may read positions 0 to i, itself included: the first position puts all its weight on itself. "
        "As exp(−∞) = 0, the softmax shares the whole weight among the keys allowed, each row still summing to 1. "
        "Zeroing weights after the softmax leaves every row but the last summing to less than 1. Hiding padding is "
        "the job of another mask, the padding mask."),
    "head": (
        "A multi-head attention layer has H heads. What is one head?",
        ("One of the model's layers: a model with 12 heads stacks 12 attention layers one on another",
         "One H-th of the tokens, attended with the same W_Q, W_K, W_V that the other heads use",
         "The part of the model that reads the last position and predicts the next token",
         "One attention with its own W_Q, W_K, W_V, run beside the others; W_O mixes their outputs"),
        3,
        "**A head is one attention with its own weights, side by side with the other heads in one layer.** Each head "
        "has its own W_Q, W_K and W_V (usually of width d_k = d_model / H), so it computes its own scores and weights "
        "and can attend to something other than the other heads do, in the same layer. Every head reads every "
        "position; what differs between heads is their weights. The H outputs are concatenated back to d_model and "
        "multiplied by W_O. Heads sit side by side within one layer; layers are stacked. The language-model head "
        "that predicts the next token is another use of the word."),
    "softmax_row": (
        f"Row i of a head's attention weights is [{', '.join(f'{w:g}' for w in ROW)}] over the keys at positions 0 "
        f"to {len(ROW) - 1}. What is the head's output at position i?",
        ("v₀ alone: attention takes the value of the key with the largest weight",
         f"{_mix('k')}, a weighted average of the keys",
         f"{_mix('v')}, a weighted average of the values",
         f"A prediction that the next token is token 0, with probability {ROW[0]:g}"),
        2,
        "**The output is the weighted average of the value vectors: every key with a weight above 0 counts.** The "
        f"softmax makes every weight at least 0 and each row sum to 1 (here {' + '.join(f'{w:g}' for w in ROW)} "
        f"= {math.fsum(ROW):g}), so the output is mostly v₀, some v₁ and v₂, nothing of v₃, not only the value of "
        "the largest weight. The keys decide the weights, through the scores; what is mixed is the values."),
    "residual": (
        "What does the residual stream of a transformer carry?",
        ("Each layer's attention weights, passed along the stack so that the next layer can reuse them",
         "One vector per position, as wide as the embeddings, that every sublayer reads and adds to",
         "Only the gradients on their way back to the embeddings; the forward pass skips it",
         "A copy of the input embeddings, kept apart from the layers and added back at the end"),
        1,
        "**The stream is one vector per position that every sublayer reads and adds its output to.** Every attention "
        "and feed-forward sublayer reads the stream (through a layer norm, in the pre-norm wiring this course's "
        "models use) and adds what it computes back: x + f(x). So each position's vector is its token embedding "
        "plus its position's encoding plus every sublayer's contribution so far; at the end a last layer norm and "
        "the output layer read it. The straight path also carries gradients back, but it is first of all the "
        "forward pass's data; attention weights are computed afresh in every layer from the stream."),
    "weights": (
        f"In a trained model, at the position where the model predicts the verb, one head gives weight "
        f"{SUBJECT_WEIGHT:g} to the subject's position. What does that weight show on its own?",
        ("That the model needs this head for the verb: switching it off would make the verb wrong",
         "That the head's output there is mostly the subject's word embedding, copied unchanged",
         f"That the subject counts for {SUBJECT_WEIGHT:g} of everything the model used to predict the verb",
         f"That, of the value vectors this head averages there, the subject's counts for {SUBJECT_WEIGHT:g}"),
        3,
        "**A weight shows how a head mixes values, not whether the model needs that head.** The weight says that, "
        f"of the values the head averages there, the one at the subject's position counts {SUBJECT_WEIGHT:g}. It "
        "does not say the model relies on it: that value may be small, a later layer may ignore the head's output, "
        "another head may carry the same thing, and after the first layer a position's vector already mixes in "
        "other tokens. The head mixes value vectors (each position's stream, layer-normed, times W_V), not word "
        "embeddings, and "
        "its weight says nothing about the other heads and layers. Switching the head off (a knockout) and "
        "measuring how the prediction changes shows how much this prediction depends on the head, though a head "
        "whose work another head duplicates can show no change; the "
        f"{COURSE.lesson('multi_head').title} and {COURSE.lesson('circuit').title} lessons measure exactly that."),
}


def quiz() -> list[ClassQuestion]:
    """The quiz's items as class questions (source "quiz/<id>"), in order."""
    return [ClassQuestion(kind="choice", prompt=prompt, options=options, answer=right, explanation=explanation,
                          source=f"quiz/{name}")
            for name, (prompt, options, right, explanation) in ITEMS.items()]


def _by_source(items: Sequence[ClassQuestion] | None) -> dict[str, ClassQuestion]:
    by_source = {q.source: q for q in (quiz() if items is None else items)}
    if not by_source:
        raise ValueError("A quiz needs one item or more.")
    return by_source


def score(values: Mapping[str, str], items: Sequence[ClassQuestion] | None = None) -> float:
    """One student's quiz score in percent: their answers by question source ("quiz/mask" -> "0") to the items
    (the quiz by default); an item left unanswered counts as wrong. ValueError for an answer to another question."""
    by_source = _by_source(items)
    strangers = set(values) - set(by_source)
    if strangers:
        raise ValueError(f"Not questions of the quiz: {sorted(strangers)}.")
    return 100.0 * sum(grade(q, values[source]) for source, q in by_source.items() if source in values) / len(by_source)


@dataclass(frozen=True)
class Gain:
    """A class's pre- and post-quiz averages (percent) and its normalised gains (None where undefined)."""

    pre: float | None  # the average score of everyone who took the pre-quiz
    post: float | None  # the average score of everyone who took the post-quiz
    gain: float | None  # Hake's ⟨g⟩ from those two averages
    matched: int  # students who took both
    matched_gain: float | None  # ⟨g⟩ from the matched students' own averages
    average_gain: float | None  # the mean of the matched students' own gains (those who were below 100% before)
    at_ceiling: int  # matched students who scored 100% before: their own gain is undefined and left out


def _mean(values) -> float | None:
    values = list(values)
    return math.fsum(values) / len(values) if values else None


def class_gain(pre: float | None, post: float | None) -> float | None:
    """Hake's ⟨g⟩ = (⟨post⟩ − ⟨pre⟩) / (100 − ⟨pre⟩): the share of the room left to gain that was gained.

    None when either average is missing, and when ⟨pre⟩ = 100: a class that already scored everything had nothing
    left to gain, so the gain is undefined (0 / 0 when it scored 100 again), neither 0 nor infinite.
    """
    if pre is None or post is None or pre >= 100.0:
        return None
    return (post - pre) / (100.0 - pre)


def _percentages(scores: Mapping, name: str) -> dict:
    for student, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 100.0:
            raise ValueError(f"A {name} score is a percentage from 0 to 100; student {student!r} has {value!r}.")
    return dict(scores)


def normalised_gain(pre: Mapping, post: Mapping) -> Gain:
    """The class's normalised gain from each student's pre- and post-quiz score in percent (student -> score).

    `gain` is Hake's class-average ⟨g⟩ over everyone who took each quiz. `matched_gain` is the same formula over
    the students present at both (so that students who left before the end, or came late, cannot move it), and
    `average_gain` the mean of those students' own gains g = (post − pre) / (100 − pre), leaving out anyone
    already at 100% before. The two matched figures differ in general (Hake's is not the mean of students' gains).
    """
    pre, post = _percentages(pre, "pre-quiz"), _percentages(post, "post-quiz")
    both = [s for s in pre if s in post]
    below = [s for s in both if pre[s] < 100.0]
    pre_mean, post_mean = _mean(pre.values()), _mean(post.values())
    return Gain(
        pre=pre_mean, post=post_mean, gain=class_gain(pre_mean, post_mean), matched=len(both),
        matched_gain=class_gain(_mean(pre[s] for s in both), _mean(post[s] for s in both)),
        average_gain=_mean((post[s] - pre[s]) / (100.0 - pre[s]) for s in below), at_ceiling=len(both) - len(below))


@dataclass(frozen=True)
class QuizGain:
    """The class's gain over complete attempts: a student who sent some of a round's items but not all is left
    out of that round, since an item not sent (a late arrival, an early departure) is not a wrong answer."""

    items: int  # k: the quiz's items (one item is 100 / k points)
    matched: int  # students who sent every item both times
    pre: float | None  # their average score before, in percent
    post: float | None  # their average score after
    gain: float | None  # Hake's ⟨g⟩ = (⟨post⟩ − ⟨pre⟩) / (100 − ⟨pre⟩) from those two averages
    average_gain: float | None  # the mean of their own gains, leaving out those at 100% before
    at_ceiling: int  # matched students at 100% before: their own gain is undefined
    partial_pre: int  # students who sent some items before, not all: left out
    partial_post: int  # students who sent some items after, not all: left out
    everyone: Gain  # every complete attempt of each round, matched or not (everyone.pre, .post, .gain)
    spread: float | None = None  # how far chance alone moves `gain` with this many students (gain_spread)


def quiz_gain(pre: Mapping[object, Mapping[str, str]], post: Mapping[object, Mapping[str, str]],
              items: Sequence[ClassQuestion] | None = None) -> QuizGain:
    """The class's normalised gain from each round's answers ({student: {item source: the answer sent}}), on the
    items (the quiz by default), counting complete attempts only: the matched students are those who sent every
    item in both rounds, and ⟨g⟩ is over them, so that nobody who came late or left early moves it."""
    by_source = _by_source(items)

    def complete(answers: Mapping) -> tuple[dict, int]:
        """{student: score} of those who sent every item, and how many sent some but not all."""
        whole = {student: score(values, list(by_source.values())) for student, values in answers.items()
                 if set(by_source) <= set(values)}
        return whole, sum(1 for values in answers.values() if values) - len(whole)

    (before, partial_pre), (after, partial_post) = complete(pre), complete(post)
    everyone = normalised_gain(before, after)
    both = [s for s in before if s in after]
    return QuizGain(items=len(by_source), matched=len(both), pre=_mean(before[s] for s in both),
                    post=_mean(after[s] for s in both), gain=everyone.matched_gain,
                    average_gain=everyone.average_gain, at_ceiling=everyone.at_ceiling, partial_pre=partial_pre,
                    partial_post=partial_post, everyone=everyone,
                    spread=gain_spread([before[s] for s in both], [after[s] for s in both]))


RESAMPLES = 2000


def gain_spread(pre: Sequence[float], post: Sequence[float], seed: int = 0) -> float | None:
    """The standard deviation of ⟨g⟩ over classes drawn from this one: RESAMPLES draws of as many students, with
    replacement, each keeping its own pair of scores (the bootstrap). It says how much ⟨g⟩ would move from the
    luck of who is in the room alone; None below 2 students, or when fewer than half the draws have a ⟨g⟩ (a draw
    of students all at 100% before has none)."""
    if len(pre) < 2:
        return None
    pairs = np.column_stack([pre, post]).astype(float)  # (n, 2)
    draws = np.random.default_rng(seed).integers(0, len(pairs), size=(RESAMPLES, len(pairs)))
    means = pairs[draws].mean(axis=1)  # (RESAMPLES, 2): each draw's ⟨pre⟩ and ⟨post⟩
    room = means[:, 0] < 100.0
    if room.sum() < RESAMPLES / 2:
        return None
    gains = (means[room, 1] - means[room, 0]) / (100.0 - means[room, 0])
    return float(gains.std())

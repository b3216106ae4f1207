"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions).

In class, the lesson's prediction: whether the largest weight of a row rises or falls as d_k grows when the scores
are not divided by √d_k (rise_or_fall), from the sentence the page last used in this tab (settings)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core.demos.heads import single_head
from lessons.scaling.maths import overflow
from ui.drawing.charts import unique_labels
from ui.frame.class_question import ClassQuestion, number_text
from ui.frame.exercises import Exercise
from ui.frame.predict import query_index, read_tokens, sentence_line, whole
from ui.sections.views import sentence_state
from ui.text import code_span

D_K, WIDE = 64, 256  # the d_k of the first question, and of the second
STAY = 0.05  # rise_or_fall: the largest weight "stays" when it changes by less than this


def questions() -> list[Exercise]:
    o = overflow()
    big = f"{o['scores'][0]:g}"
    return [
        Exercise("factor_64", f"By what number are the raw scores divided when d_k = {D_K}?",
                 answer=float(np.sqrt(D_K)), part="idea",
                 explanation=f"Scores are divided by the square root of d_k: √{D_K} is {np.sqrt(D_K):g} (the same as "
                 f"multiplying by 1/{np.sqrt(D_K):g} = {1 / np.sqrt(D_K):g})."),
        Exercise("variance", f"q and k each have d_k = {WIDE} independent entries with mean 0 and variance 1. "
                 "What is the variance of their dot product q·k?", answer=float(WIDE), part="idea",
                 explanation=f"q·k is a sum of {WIDE} products, each with variance 1·1 = 1; independent variances "
                 f"add, so the sum has variance d_k = {WIDE} (standard deviation {np.sqrt(WIDE):g}). Dividing by "
                 "√d_k brings it back to 1."),
        Exercise("bug_dv", "This function should compute scaled dot-product attention. Which line has the bug?",
                 code="def attention(Q, K, V):\n    d_k = Q.shape[-1]\n    d_v = V.shape[-1]\n"
                      "    scores = Q @ K.T / np.sqrt(d_v)\n    weights = softmax(scores)\n    return weights @ V",
                 options=("line 2", "line 3", "line 4", "line 6"), correct=2, part="d_v",
                 explanation="The scale belongs to the dot product of queries and keys, whose vectors have d_k "
                 "entries. Dividing by √d_v only works by accident when d_v = d_k."),
        Exercise("overflow", f"In float64, a softmax written as exp(s) / sum(exp(s)) reads a row of scores "
                 f"[{', '.join(f'{x:g}' for x in o['scores'])}]. What are its weights?", options=(
                     "Nearly one-hot: almost all on the first score", "NaN: exp overflows to inf, and inf / inf is "
                     "not a number", "All three equal, a third each"), correct=1 if np.isnan(o["naive"]).all() else 0,
                 part="overflow",
                 explanation=f"exp({big}) is beyond float64's largest number (its exponent can be at most "
                 f"{o['limits']['float64']:.2f}), so every exp is inf and every weight inf / inf, NaN. Subtracting "
                 f"the row's largest score first gives [{', '.join(f'{x:g}' for x in o['shifted'])}] and the weights "
                 f"[{', '.join(f'{x:.3f}' for x in o['weights'])}]."),
    ]


# ---- in class: the prediction on this lesson's head ------------------------------------------------------------


def settings(state: Mapping) -> dict:
    """The sentence settings and query row the page last used in this tab (views.sentence_state)."""
    return sentence_state(state)


def _lead(scores: np.ndarray, words: list[str]) -> tuple[int, float]:
    """The key with the row's largest score and how far it leads the best key of another word (copies of its word
    tie with it, so they are not the runner-up): (T,) -> (key, lead)."""
    top = int(np.argmax(scores))
    return top, float(scores[top] - max(s for s, w in zip(scores, words) if w != words[top]))


def _against(spread: list[float], lead_a: float, lead_b: float, grows: bool) -> str:
    """A sentence when this row's spread or lead moved against the average tendency its weight followed."""
    moved = [name for name, (x, y) in (("standard deviation", spread), ("lead", (lead_a, lead_b)))
             if (y > x) != grows]
    if not moved:
        return ""
    return (f" Its {' and its '.join(moved)} went the other way: the rest of the row moved too, and one row need "
            "not follow the average, which holds over many rows.")


def _rows_of_sentence(heads: list[dict], tendency: int, sizes: tuple[int, int]) -> str:
    """A sentence counting the rows of the whole sentence (every query) whose largest weight follows the tendency
    (a change of STAY or more its way), goes against it, or stays: heads at the two sizes, (T, T) weights each."""
    change = heads[1]["weights"].max(axis=1) - heads[0]["weights"].max(axis=1)  # (T,)
    way = 1 if tendency == 0 else -1  # a rise, or a fall
    follow, against = int((way * change >= STAY).sum()), int((way * change <= -STAY).sum())
    stay, T = len(change) - follow - against, len(change)
    verbs = ("rise", "fall") if tendency == 0 else ("fall", "rise")
    def agreeing(n: int, verb: str) -> str:  # 1 of the 7 rises, 2 of the 7 rise
        return verb + ("s" if n == 1 else "")
    return (f" Over every row of this sentence from d_k = {sizes[0]} to {sizes[1]}: {follow} of the {T} "
            f"{agreeing(follow, verbs[0])}, {against} {agreeing(against, verbs[1])} and {stay} "
            f"{agreeing(stay, 'stay')} within {STAY:g}.")


def rise_or_fall(sentence: str, D: int, seed: int, max_tokens: int, d_k_from: int = 4, d_k_to: int = 64,
                 query: int | None = None) -> ClassQuestion:
    """"Without dividing by √d_k, will the largest weight in the query's row rise, fall, or stay within STAY when d_k
    goes from d_k_from to d_k_to?", on the Scaling lesson's head with scale 1: the same sentence, seed and
    embeddings at both d_k, the projections drawn for each. The query is the last token unless given.

    The lesson teaches a tendency (wider scores, a larger largest weight), which one row of a few keys need not
    follow: at the lessons' sentence and d_model 16, over seeds 0 to 199, about 12% of the rows fall and 7% stay. The
    keyed answer is what this row does. A row against the tendency is asked too, so that the room sees the
    exception the tendency allows: its explanation says so and why (the row's weights, spread and the lead of its
    largest score), and every explanation counts the sentence's rows that follow the tendency and those that do
    not. Refused: a row whose largest weight changes by less than STAY (too near the line between "stay" and a
    move to ask about), one token, a sentence of one word, a query out of range, d_k_from equal to d_k_to.
    """
    tokens = read_tokens(sentence, max_tokens)
    i = len(tokens) - 1 if query is None else query_index(query, tokens)
    D, seed = whole("d_model", D, 1), whole("The seed", seed, 0)
    sizes = (whole("d_k_from", d_k_from, 1), whole("d_k_to", d_k_to, 1))
    if sizes[0] == sizes[1]:
        raise ValueError(f"d_k goes from {sizes[0]} to {sizes[1]}: give two different sizes to compare.")
    labels, (a, b) = unique_labels(tokens), sizes
    q, words = code_span(labels[i]), [t.lower() for t in tokens]  # words as the embedding reads them
    if len(set(words)) == 1:
        raise ValueError(f"Every key is the word {code_span(tokens[0])}, so each gets 1/{len(tokens)} of the weight "
                         "at every d_k: there is nothing to predict. Pick another sentence.")
    heads = [single_head(tokens, D, d_k, seed, scale=1.0) for d_k in sizes]  # scores not divided by √d_k
    rows = [head["weights"][i] for head in heads]  # 2 x (T,)
    largest = [float(row.max()) for row in rows]
    spread = [float(head["scores"][i].std()) for head in heads]
    (_, lead_a), (top, lead_b) = (_lead(head["scores"][i], words) for head in heads)
    change = largest[1] - largest[0]
    answer = 2 if abs(change) < STAY else (0 if change > 0 else 1)
    tendency = 0 if b > a else 1  # wider scores, larger largest weight
    copies = words.count(words[top])
    capped = (f" At d_k = {b} the largest weight goes to {code_span(labels[top])}, one of {copies} copies of a word "
              f"with one embedding: they tie, so none can pass {1 / copies:.2f}.") if copies > 1 else ""
    measured = (f"its scores' standard deviation is {spread[0]:.2f} at d_k = {a} and {spread[1]:.2f} at d_k = {b}, "
                f"and its largest score leads the best other word's by {lead_a:.2f} and {lead_b:.2f}")
    if answer == 2:
        raise ValueError(f"At these settings the largest weight in {q}'s row changes by only {change:+.3f} "
                         f"({largest[0]:.3f} at d_k = {a}, {largest[1]:.3f} at d_k = {b}), less than the {STAY:g} the "
                         "question calls \"stay\": too small to make a fair question: pick another seed or query.")
    moved = (f"a rise of {change:.3f}", f"a fall of {-change:.3f}")[answer]
    explanation = (f"The largest weight in {q}'s row is {largest[0]:.3f} at d_k = {a} and {largest[1]:.3f} at "
                   f"d_k = {b}: {moved}. Not divided by √d_k, a score q·k is a sum of d_k products, so on average "
                   "the scores spread more as d_k grows (like √d_k). The softmax turns a gap g between two scores "
                   "into a ratio e^g between their weights, and the wider the scores spread, the wider the gap "
                   "between the largest and the next usually is, so the largest weight tends towards 1 as d_k grows")
    if answer == tendency:
        explanation += f". In this row, {measured}.{_against(spread, lead_a, lead_b, b > a)}{capped}"
    else:
        why = "" if capped else (f" A lead of {lead_b:.2f} makes that key's weight e^{lead_b:.2f} ≈ "
                                 f"{number_text(float(np.exp(round(lead_b, 2))))} times the best other word's.")
        explanation += (f"; this row goes against that tendency, as one row of a few keys can: {measured}.{why}"
                        f"{capped} If you answered {('rise', 'fall')[tendency]}, you reasoned as the lesson does, "
                        "from what happens over many rows: this row is one of the exceptions.")
    explanation += _rows_of_sentence(heads, tendency, (a, b))
    return ClassQuestion(
        kind="choice", source="predict/rise-or-fall", answer=answer, explanation=explanation,
        options=("rise", "fall", f"stay: change by less than {STAY:g}"),
        prompt=f"On the tokens {sentence_line(tokens)} (d_model = {D}, seed {seed}, random weights: the same "
               f"embeddings, projections drawn afresh for each d_k), the scores are **not** divided by √d_k. When "
               f"d_k goes from {a} to {b}, will the largest weight in {q}'s row (whichever key has it) rise, fall, "
               f"or stay within {STAY:g}?",
        view={"tokens": labels, "query": i, "d_k": [a, b], "largest": largest,
              "rows": [[float(w) for w in row] for row in rows], "stay": STAY})

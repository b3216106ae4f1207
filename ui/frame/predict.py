"""Which key a query attends to most: a prediction on one random head (the QKV, Scaling and Masking lessons'), built
from a lesson's settings and answered by core before anyone votes; and what every lesson's predictions share (reading
a sentence's tokens, a query's position and a whole number, and refusing what cannot make a fair question). Each
lesson offers its predictions in its questions.py; the class mode asks them.

Each refuses a setting that cannot make a fair question (one token, a query that is not in the sentence, an empty
prompt, every key the same word, a difference too small to call) with a ValueError whose sentence a teacher can act
on. Every number a prompt or explanation states is computed here or by the lesson.

Shapes: T tokens.
"""

from __future__ import annotations

import numpy as np

from core.attention import causal_mask
from core.demos.heads import single_head
from core.tokenize import word_tokens
from ui.drawing.charts import unique_labels
from ui.frame.class_question import ClassQuestion, number_text
from ui.text import code_span, escape_md

TIE = 1e-9  # weights this close to the row's largest tie with it: equal keys give equal weights, up to rounding


def whole(name: str, value, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo:
        raise ValueError(f"{name} must be a whole number of at least {lo}, got {value!r}.")
    return int(value)


def read_tokens(sentence: str, max_tokens: int) -> list[str]:
    """The sentence's first max_tokens tokens, as the lessons read it; two or more, or nothing to predict."""
    tokens = word_tokens(sentence, whole("The number of tokens used", max_tokens, 1))
    if not tokens:
        raise ValueError("The sentence has no tokens: type a sentence of two words or more.")
    if len(tokens) == 1:
        more = " (or raise seq_len)" if len(word_tokens(sentence)) > 1 else ""
        raise ValueError(f"{code_span(tokens[0])} is a single token: a query with one key gives it all its weight, "
                         f"so there is nothing to predict. Use a sentence of two words or more{more}.")
    return tokens


def query_index(query, tokens: list[str]) -> int:
    T = len(tokens)
    if isinstance(query, bool) or not isinstance(query, int | np.integer) or not 0 <= query < T:
        raise ValueError(f"The query must be a token's position, 0 to {T - 1} in this sentence of {T} tokens, "
                         f"got {query!r}.")
    return int(query)


def listed(items: list[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def sentence_line(tokens: list[str]) -> str:
    return " · ".join(code_span(t) for t in tokens)


def told_apart(a: float, b: float, places: tuple[int, ...]) -> int | None:
    """The fewest decimals of `places` at which a and b print differently, or None."""
    return next((p for p in places if number_text(a, p) != number_text(b, p)), None)


def attend_most(sentence: str, D: int, d_k: int, seed: int, max_tokens: int, query: int,
                masked: bool = False) -> ClassQuestion:
    """"Which key will this query attend to most?", asked with the query's dot products q·k in front of the room,
    on one random head (core.demos.heads.single_head, the QKV, Scaling and Masking lessons' head; masked=True for
    Masking's causal mask).

    The weights are random, so nothing learned can be reasoned from; the steps after the dot products can:
    dividing by √d_k and the softmax keep their order (e^x grows with x), and the causal mask gives every later
    key 0, whatever its dot product. The prompt shows every key's q·k, later keys included; the answer is the
    argmax of the query's row of weights, the key it sees with the largest q·k. Keys tied with it (the same word
    again: one embedding, no positions, so the same q·k) are right too. Refused: one token, a query out of range,
    the first query under the mask (it sees only itself), a query whose visible keys are all one word, and a
    winner whose q·k cannot be told from the runner-up's at three decimals.
    """
    tokens = read_tokens(sentence, max_tokens)
    i, T = query_index(query, tokens), len(tokens)
    D, d_k, seed = whole("d_model", D, 1), whole("d_k", d_k, 1), whole("The seed", seed, 0)
    labels = unique_labels(tokens)
    if masked and i == 0:
        raise ValueError(f"Under the causal mask the first token, {code_span(labels[0])}, sees only itself and gives "
                         "itself all its weight: there is nothing to predict. Pick a later query.")
    head = single_head(tokens, D, d_k, seed, mask=causal_mask(T) if masked else None)
    row, dots = head["weights"][i], head["scores"][i]  # (T,) each: the weights, and q·k before √d_k and the mask
    seen = i + 1 if masked else T
    best = int(np.argmax(row))
    tied = tuple(j for j in range(T) if j != best and row[best] - row[j] <= TIE)
    if len(tied) + 1 == seen:
        raise ValueError(f"Every key that {code_span(labels[i])} can see is the word {code_span(tokens[best])}, so "
                         "all get the same weight: there is nothing to predict. Pick another query or sentence.")
    runner = max((j for j in range(seen) if j != best and j not in tied), key=lambda j: row[j])
    # the room reads the dot products: the winner's and the runner-up's must differ at the decimals shown (a room
    # is not marked wrong for a key it was shown as equal; equal at three decimals is too close to call)
    places = told_apart(float(dots[best]), float(dots[runner]), (2, 3))
    if places is None:
        raise ValueError(f"At these settings {code_span(labels[i])}'s dot products with {code_span(labels[best])} "
                         f"and {code_span(labels[runner])} are both {number_text(float(dots[best]), 3)}: too close "
                         "to call. Pick another query or seed.")
    dot = {j: number_text(float(dots[j]), places) for j in range(T)}
    weight_places = told_apart(float(row[best]), float(row[runner]), (2, 3, 4, 5, 6)) or 6
    setting = (f"d_model = {D}, d_k = {d_k}, seed {seed}, random untrained weights, scores divided by √d_k"
               + (", causal mask" if masked else ""))
    explanation = (f"{code_span(labels[i])} gives {code_span(labels[best])} {row[best]:.{weight_places}f} of its "
                   f"weight, the most in its row; next comes {code_span(labels[runner])} with "
                   f"{row[runner]:.{weight_places}f}. Dividing by √d_k and the softmax keep the order of the dot "
                   f"products (e^x grows with x), so the key{' it sees' if masked else ''} with the largest q·k gets "
                   f"the most weight: {code_span(labels[best])}'s {dot[best]}, against {code_span(labels[runner])}'s "
                   f"{dot[runner]}.")
    if tied:
        explanation += (f" {listed([code_span(labels[j]) for j in (best, *tied)])} are one word to the embedding "
                        "(it reads words in lower case and adds no position), so they have the same q·k and the same "
                        "weight: each counts as right.")
    if masked and i < T - 1:
        later = "the key after it gets" if i == T - 2 else f"the {T - 1 - i} keys after it get"
        explanation += (f" Under the causal mask it sees {code_span(labels[0])} to {code_span(labels[i])} only: "
                        f"{later} 0, whatever {'its dot product' if i == T - 2 else 'their dot products'}.")
        larger = [j for j in range(i + 1, T) if dots[j] > dots[best]]
        if larger:
            explanation += (f" {listed([code_span(labels[j]) for j in larger])} "
                            f"{'has a larger q·k' if len(larger) == 1 else 'have larger ones'} "
                            f"({listed([dot[j] for j in larger])}) but {'comes' if len(larger) == 1 else 'come'} "
                            "after it.")
    explanation += (f" The weights are random (seed {seed}), nothing learned: which key has the largest q·k says "
                    "nothing about what the words mean.")
    dots_shown = " · ".join(f"{code_span(labels[j])} {dot[j]}" for j in range(T))
    then = ", the causal mask is applied" if masked else ""
    return ClassQuestion(
        kind="key", source="predict/attend-most", options=tuple(escape_md(label) for label in labels), answer=best,
        also_right=tied, explanation=explanation,
        prompt=f"On the tokens {sentence_line(tokens)} ({setting}): the query {code_span(labels[i])}'s dot product q·k "
               f"with each key is {dots_shown}. Then each is divided by √d_k{then} and a softmax is taken. Which key "
               f"will {code_span(labels[i])} attend to most?",
        view={"tokens": labels, "weights": [float(w) for w in row], "query": i, "masked": bool(masked)})

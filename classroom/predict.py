"""Predict questions on a lesson's live view, built from its own settings and answered by core before anyone votes:
which key a query attends to most (QKV, Scaling, Masking), the character model's next character (Full model), and
whether the largest weight rises or falls with d_k when the scores are not scaled (Scaling).

Each refuses a setting that cannot make a fair question (one token, a query that is not in the sentence, an empty
prompt, every key the same word, a difference too small to call) with a ValueError whose sentence a teacher can act
on. Every number a prompt or explanation states is computed here.

Shapes: T tokens, V characters the model knows.
"""

from __future__ import annotations

import numpy as np

from classroom.questions import ClassQuestion
from classroom.typed import char_text, number_text
from core.attention import causal_mask
from core.demos.heads import single_head
from core.sampling import next_token_probs
from core.tokenize import word_tokens
from ui.compute import model_store
from ui.drawing.charts import unique_labels
from ui.sections.model_views import DATA_NAMES
from ui.text import code_span, escape_md

TIE = 1e-9  # weights this close to the row's largest tie with it: equal keys give equal weights, up to rounding
STAY = 0.05  # rise_or_fall: the largest weight "stays" when it changes by less than this
TOP_CHARS = 8  # characters the projector shows beside the class's answers
MAX_PROMPT_CHARS = 1000  # as the Full model page caps its prompt
UNTYPED = {"\n": "a line break"}  # characters the model knows that a phone's answer box cannot take
SHOWN_ZERO = 0.005  # a probability below this prints as "below 0.01", never as a "0.00" that reads as impossible


def _whole(name: str, value, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < lo:
        raise ValueError(f"{name} must be a whole number of at least {lo}, got {value!r}.")
    return int(value)


def _tokens(sentence: str, max_tokens: int) -> list[str]:
    """The sentence's first max_tokens tokens, as the lessons read it; two or more, or nothing to predict."""
    tokens = word_tokens(sentence, _whole("The number of tokens used", max_tokens, 1))
    if not tokens:
        raise ValueError("The sentence has no tokens: type a sentence of two words or more.")
    if len(tokens) == 1:
        more = " (or raise seq_len)" if len(word_tokens(sentence)) > 1 else ""
        raise ValueError(f"{code_span(tokens[0])} is a single token: a query with one key gives it all its weight, "
                         f"so there is nothing to predict. Use a sentence of two words or more{more}.")
    return tokens


def _query(query, tokens: list[str]) -> int:
    T = len(tokens)
    if isinstance(query, bool) or not isinstance(query, int | np.integer) or not 0 <= query < T:
        raise ValueError(f"The query must be a token's position, 0 to {T - 1} in this sentence of {T} tokens, "
                         f"got {query!r}.")
    return int(query)


def _listed(items: list[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _sentence(tokens: list[str]) -> str:
    return " · ".join(code_span(t) for t in tokens)


def _told_apart(a: float, b: float, places: tuple[int, ...]) -> int | None:
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
    tokens = _tokens(sentence, max_tokens)
    i, T = _query(query, tokens), len(tokens)
    D, d_k, seed = _whole("d_model", D, 1), _whole("d_k", d_k, 1), _whole("The seed", seed, 0)
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
    places = _told_apart(float(dots[best]), float(dots[runner]), (2, 3))
    if places is None:
        raise ValueError(f"At these settings {code_span(labels[i])}'s dot products with {code_span(labels[best])} "
                         f"and {code_span(labels[runner])} are both {number_text(float(dots[best]), 3)}: too close "
                         "to call. Pick another query or seed.")
    dot = {j: number_text(float(dots[j]), places) for j in range(T)}
    weight_places = _told_apart(float(row[best]), float(row[runner]), (2, 3, 4, 5, 6)) or 6
    setting = (f"d_model = {D}, d_k = {d_k}, seed {seed}, random untrained weights, scores divided by √d_k"
               + (", causal mask" if masked else ""))
    explanation = (f"{code_span(labels[i])} gives {code_span(labels[best])} {row[best]:.{weight_places}f} of its "
                   f"weight, the most in its row; next comes {code_span(labels[runner])} with "
                   f"{row[runner]:.{weight_places}f}. Dividing by √d_k and the softmax keep the order of the dot "
                   f"products (e^x grows with x), so the key{' it sees' if masked else ''} with the largest q·k gets "
                   f"the most weight: {code_span(labels[best])}'s {dot[best]}, against {code_span(labels[runner])}'s "
                   f"{dot[runner]}.")
    if tied:
        explanation += (f" {_listed([code_span(labels[j]) for j in (best, *tied)])} are one word to the embedding "
                        "(it reads words in lower case and adds no position), so they have the same q·k and the same "
                        "weight: each counts as right.")
    if masked and i < T - 1:
        later = "the key after it gets" if i == T - 2 else f"the {T - 1 - i} keys after it get"
        explanation += (f" Under the causal mask it sees {code_span(labels[0])} to {code_span(labels[i])} only: "
                        f"{later} 0, whatever {'its dot product' if i == T - 2 else 'their dot products'}.")
        larger = [j for j in range(i + 1, T) if dots[j] > dots[best]]
        if larger:
            explanation += (f" {_listed([code_span(labels[j]) for j in larger])} "
                            f"{'has a larger q·k' if len(larger) == 1 else 'have larger ones'} "
                            f"({_listed([dot[j] for j in larger])}) but {'comes' if len(larger) == 1 else 'come'} "
                            "after it.")
    explanation += (f" The weights are random (seed {seed}), nothing learned: which key has the largest q·k says "
                    "nothing about what the words mean.")
    dots_shown = " · ".join(f"{code_span(labels[j])} {dot[j]}" for j in range(T))
    then = ", the causal mask is applied" if masked else ""
    return ClassQuestion(
        kind="key", source="predict/attend-most", options=tuple(escape_md(label) for label in labels), answer=best,
        also_right=tied, explanation=explanation,
        prompt=f"On the tokens {_sentence(tokens)} ({setting}): the query {code_span(labels[i])}'s dot product q·k "
               f"with each key is {dots_shown}. Then each is divided by √d_k{then} and a softmax is taken. Which key "
               f"will {code_span(labels[i])} attend to most?",
        view={"tokens": labels, "weights": [float(w) for w in row], "query": i, "masked": bool(masked)})


def character_model(name: str | None = None) -> model_store.Model:
    """A trained character model of the Full model lesson by name (shipped, or trained in this session on the
    Training page); by default the one the lesson opens with."""
    name = model_store.default_model() if name is None else name
    if name is None:
        raise ValueError("This server has no trained character model to ask.")
    model = model_store.get_model(name)
    if "task" in model.meta:
        raise ValueError(f"The model {code_span(name)} was trained on a synthetic task, not on text: pick one of the "
                         "Full model lesson's character models.")
    return model


def trained_on(model: model_store.Model) -> str:
    """What the model was trained on, from its own record ("Python's own documentation"); "" when it says nothing."""
    data = model.meta.get("data")
    if not isinstance(data, str) or not data:
        return ""
    return DATA_NAMES.get(data, code_span(data[:60]))


def _probability(p: float) -> str:
    return "below 0.01" if p < SHOWN_ZERO else f"{p:.2f}"


def next_character(prompt: str, model_name: str | None = None) -> ClassQuestion:
    """"What will the character model say is the most likely next character after this prompt?" on a trained
    character model of the Full model lesson (by name; by default the one the lesson opens with): greedy, the
    argmax of its next-character probabilities at temperature 1. The prompt names the model and what it was
    trained on: its guesses follow that text.

    Refused: an empty prompt, one longer than the lesson takes, characters the model never saw, and a prompt whose
    most likely next character is one a phone cannot type (a line break); a model trained on a synthetic task.
    """
    model = character_model(model_name)
    if not isinstance(prompt, str) or not prompt:
        raise ValueError("The prompt is empty: type the text the model should continue.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(f"The prompt has {len(prompt)} characters; the lesson takes at most {MAX_PROMPT_CHARS}.")
    unknown = model.tokenizer.unknown(prompt)
    if unknown:
        raise ValueError(f"The model never saw {_listed([char_text(c) for c in unknown])}: it would read "
                         f"{'it' if len(unknown) == 1 else 'each'} as one unknown character. Leave "
                         f"{'it' if len(unknown) == 1 else 'them'} out of the prompt.")
    probs = next_token_probs(model.params, model.cfg, model.tokenizer.encode(prompt), temperature=1.0)  # (V,)
    order = np.argsort(-probs, kind="stable")[:TOP_CHARS]  # most likely first
    top = [(model.tokenizer.itos[int(j)], float(probs[j])) for j in order]
    best = top[0][0]
    if best in UNTYPED or int(order[0]) == 0:
        raise ValueError(f"The model's most likely next character here is {UNTYPED.get(best, 'one it does not know')},"
                         " which a phone cannot type. Add a character or two to the prompt.")
    ends = " (The prompt ends with a space.)" if prompt.endswith(" ") else ""
    about = f" (trained on {trained_on(model)})" if trained_on(model) else ""
    explanation = (f"The model gives {char_text(best)} a probability of {_probability(top[0][1])}, then "
                   f"{char_text(top[1][0])} {_probability(top[1][1])} and {char_text(top[2][0])} "
                   f"{_probability(top[2][1])} (temperature 1): greedy decoding writes {char_text(best)} next.")
    if len(prompt) > model.cfg.max_len:
        explanation += f" It reads only the prompt's last {model.cfg.max_len} characters."
    return ClassQuestion(
        kind="char", source="predict/next-character", answer=best, explanation=explanation,
        prompt=f"What will the character model {code_span(model.name)}{about} say is the most likely next character "
               f"after {code_span(prompt.replace(chr(10), '⏎'))}?{ends} Type one character. Capitals count: check "
               "that your phone did not make it a capital. A space is typed as a space.",
        view={"prompt": prompt, "model": model.name, "top": [[c, p] for c, p in top]})


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
    tokens = _tokens(sentence, max_tokens)
    i = len(tokens) - 1 if query is None else _query(query, tokens)
    D, seed = _whole("d_model", D, 1), _whole("The seed", seed, 0)
    sizes = (_whole("d_k_from", d_k_from, 1), _whole("d_k_to", d_k_to, 1))
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
        prompt=f"On the tokens {_sentence(tokens)} (d_model = {D}, seed {seed}, random weights: the same embeddings, "
               f"projections drawn afresh for each d_k), the scores are **not** divided by √d_k. When d_k goes from "
               f"{a} to {b}, will the largest weight in {q}'s row (whichever key has it) rise, fall, or stay within "
               f"{STAY:g}?",
        view={"tokens": labels, "query": i, "d_k": [a, b], "largest": largest,
              "rows": [[float(w) for w in row] for row in rows], "stay": STAY})

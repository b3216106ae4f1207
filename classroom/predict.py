"""Predict questions on a lesson's live view, built from its own settings and answered by core before anyone votes:
which key a query attends to most (QKV, Scaling, Masking), the character model's next character (Full model), and
whether the largest weight rises or falls with d_k when the scores are not scaled (Scaling).

Each refuses a setting that cannot make a fair question (one token, a query that is not in the sentence, an empty
prompt, every key the same word) with a ValueError whose sentence a teacher can act on. Every number a prompt or
explanation states is computed here.

Shapes: T tokens, V characters the model knows.
"""

from __future__ import annotations

import numpy as np

from classroom.questions import ClassQuestion
from core.attention import causal_mask
from core.demos.heads import single_head
from core.sampling import next_token_probs
from core.tokenize import word_tokens
from ui.compute import model_store
from ui.drawing.charts import unique_labels, visible
from ui.text import code_span, escape_md

TIE = 1e-9  # weights this close to the row's largest tie with it: equal keys give equal weights, up to rounding
STAY = 0.05  # rise_or_fall: the largest weight "stays" when it changes by less than this
TOP_CHARS = 8  # characters the projector shows beside the class's answers
MAX_PROMPT_CHARS = 1000  # as the Full model page caps its prompt
UNTYPED = {"\n": "a line break"}  # characters the model knows that a phone's answer box cannot take


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
        more = " (or use more of its tokens)" if len(word_tokens(sentence)) > 1 else ""
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


def attend_most(sentence: str, D: int, d_k: int, seed: int, max_tokens: int, query: int,
                masked: bool = False) -> ClassQuestion:
    """"Which key will this query attend to most?" on one random head (core.demos.heads.single_head, the QKV,
    Scaling and Masking lessons' head; masked=True for Masking's causal mask).

    The answer is the argmax of the query's row of weights; keys tied with it (the same word again: one embedding,
    no positions, so the same weight) are right too. Refused: one token, a query out of range, the first query
    under the mask (it sees only itself), a query whose visible keys are all one word.
    """
    tokens = _tokens(sentence, max_tokens)
    i, T = _query(query, tokens), len(tokens)
    D, d_k, seed = _whole("d_model", D, 1), _whole("d_k", d_k, 1), _whole("The seed", seed, 0)
    labels = unique_labels(tokens)
    if masked and i == 0:
        raise ValueError(f"Under the causal mask the first token, {code_span(labels[0])}, sees only itself and gives "
                         "itself all its weight: there is nothing to predict. Pick a later query.")
    row = single_head(tokens, D, d_k, seed, mask=causal_mask(T) if masked else None)["weights"][i]  # (T,)
    seen = i + 1 if masked else T
    best = int(np.argmax(row))
    tied = tuple(j for j in range(T) if j != best and row[best] - row[j] <= TIE)
    if len(tied) + 1 == seen:
        raise ValueError(f"Every key {code_span(labels[i])} can see is the word {code_span(tokens[best])}, so they all "
                         "get the same weight: there is nothing to predict. Pick another query or sentence.")
    runner = max((j for j in range(T) if j != best and j not in tied), key=lambda j: row[j])
    setting = f"d_model = {D}, d_k = {d_k}, seed {seed}, random weights" + (", causal mask" if masked else "")
    explanation = (f"{code_span(labels[i])} gives {code_span(labels[best])} {row[best]:.2f} of its weight, the most "
                   f"in its row; next comes {code_span(labels[runner])} with {row[runner]:.2f}.")
    if tied:
        explanation += (f" {_listed([code_span(labels[j]) for j in (best, *tied)])} are one word to the embedding "
                        "(it reads words in lower case and adds no position), so they get the same weight: each "
                        "counts as right.")
    if masked and i < T - 1:
        later = "the key after it gets" if i == T - 2 else f"the {T - 1 - i} keys after it get"
        explanation += f" Under the causal mask it sees keys 0 to {i} only: {later} 0."
    explanation += (f" The weights are softmax(q·k / √d_k) with random projections (seed {seed}): the winner is the "
                    "key whose projection happens to line up best with the query's, not the word that matters most to "
                    "it.")
    return ClassQuestion(
        kind="key", source="predict/attend-most", options=tuple(escape_md(label) for label in labels), answer=best,
        also_right=tied, explanation=explanation,
        prompt=f"On the tokens {_sentence(tokens)} ({setting}): which key will the query {code_span(labels[i])} "
               "attend to most?",
        view={"tokens": labels, "weights": [float(w) for w in row], "query": i, "masked": bool(masked)})


def _char_text(c: str) -> str:
    return f"{code_span(visible(c))} (a space)" if c == " " else code_span(visible(c))


def character_model() -> model_store.Model:
    """The trained character model the Full model lesson opens with."""
    name = model_store.default_model()
    if name is None:
        raise ValueError("This server has no trained character model to ask.")
    return model_store.load_model(name)


def next_character(prompt: str) -> ClassQuestion:
    """"What will the character model say is the most likely next character after this prompt?" on the Full model
    lesson's trained model: greedy, the argmax of its next-character probabilities at temperature 1.

    Refused: an empty prompt, one longer than the lesson takes, characters the model never saw, and a prompt whose
    most likely next character is one a phone cannot type (a line break).
    """
    model = character_model()
    if not isinstance(prompt, str) or not prompt:
        raise ValueError("The prompt is empty: type the text the model should continue.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(f"The prompt has {len(prompt)} characters; the lesson takes at most {MAX_PROMPT_CHARS}.")
    unknown = model.tokenizer.unknown(prompt)
    if unknown:
        raise ValueError(f"The model never saw {_listed([_char_text(c) for c in unknown])}: it would read "
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
    explanation = (f"The model gives {_char_text(best)} {top[0][1]:.2f}, then {_char_text(top[1][0])} {top[1][1]:.2f}"
                   f" and {_char_text(top[2][0])} {top[2][1]:.2f} (temperature 1): greedy decoding writes "
                   f"{_char_text(best)} next.")
    if len(prompt) > model.cfg.max_len:
        explanation += f" It reads only the prompt's last {model.cfg.max_len} characters."
    return ClassQuestion(
        kind="char", source="predict/next-character", answer=best, explanation=explanation,
        prompt=f"What will the character model say is the most likely next character after "
               f"{code_span(prompt.replace(chr(10), '⏎'))}?{ends} Type one character: capitals count, and a space "
               "is typed as a space.",
        view={"prompt": prompt, "model": model.name, "top": [[c, p] for c, p in top]})


def rise_or_fall(sentence: str, D: int, seed: int, max_tokens: int, d_k_from: int = 4, d_k_to: int = 64,
                 query: int | None = None) -> ClassQuestion:
    """"Without dividing by √d_k, will the largest weight of the query's row rise or fall when d_k goes from
    d_k_from to d_k_to?" (rise, fall, or stay within STAY), on the Scaling lesson's head with scale 1: the same
    sentence and seed at both d_k. The query is the last token unless given.

    The right option is "stay" when the two largest weights differ by less than STAY: a change too small to see on
    the projector is not a rise or a fall. Refused: one token, a query out of range, d_k_from equal to d_k_to.
    """
    tokens = _tokens(sentence, max_tokens)
    i = len(tokens) - 1 if query is None else _query(query, tokens)
    D, seed = _whole("d_model", D, 1), _whole("The seed", seed, 0)
    sizes = (_whole("d_k_from", d_k_from, 1), _whole("d_k_to", d_k_to, 1))
    if sizes[0] == sizes[1]:
        raise ValueError(f"d_k goes from {sizes[0]} to {sizes[1]}: give two different sizes to compare.")
    heads = [single_head(tokens, D, d_k, seed, scale=1.0) for d_k in sizes]  # scores not divided by √d_k
    rows = [head["weights"][i] for head in heads]  # 2 x (T,)
    largest = [float(row.max()) for row in rows]
    spread = [float(head["scores"][i].std()) for head in heads]
    change = largest[1] - largest[0]
    answer = 2 if abs(change) < STAY else (0 if change > 0 else 1)
    labels, (a, b) = unique_labels(tokens), sizes
    q = code_span(labels[i])
    moved = (f"a rise of {change:.3f}", f"a fall of {-change:.3f}", f"a change of {change:+.3f}, within {STAY:g}")
    explanation = (f"The largest weight of {q}'s row is {largest[0]:.3f} at d_k = {a} and {largest[1]:.3f} at "
                   f"d_k = {b}: {moved[answer]}. Not divided by √d_k, a score q·k is a sum of d_k products, so the "
                   f"scores spread more as d_k grows (on average like √d_k; this row's standard deviation: "
                   f"{spread[0]:.2f} at d_k = {a}, {spread[1]:.2f} at d_k = {b}), and a softmax of widely spread "
                   "scores puts nearly all the weight on the largest.")
    words = [t.lower() for t in tokens]  # as the embedding reads them
    top = int(np.argmax(rows[1]))
    if words.count(words[top]) > 1:
        explanation += (f" At d_k = {b} the largest weight goes to {code_span(labels[top])}, one of "
                        f"{words.count(words[top])} copies of a word with one embedding: they tie, so none can pass "
                        f"{1 / words.count(words[top]):.2f}.")
    if answer == 2 and min(largest) > 1 - STAY:
        explanation += " Here it is near 1 at both sizes: there is no room left to rise."
    elif answer != (0 if b > a else 1):
        explanation += (" This row does not follow that tendency: each d_k draws new random projections, and one row "
                        f"of {len(tokens)} keys can land either way.")
    return ClassQuestion(
        kind="choice", source="predict/rise-or-fall", answer=answer, explanation=explanation,
        options=("rise", "fall", f"stay: change by less than {STAY:g}"),
        prompt=f"On the tokens {_sentence(tokens)} (d_model = {D}, seed {seed}, random weights), the scores are "
               f"**not** divided by √d_k. Will the largest weight of {q}'s row rise or fall when d_k goes from {a} to "
               f"{b}?",
        view={"tokens": labels, "query": i, "d_k": [a, b], "largest": largest,
              "rows": [[float(w) for w in row] for row in rows], "stay": STAY})

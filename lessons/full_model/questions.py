"""Check-yourself questions of this lesson. Every answer is computed by the core, so it cannot drift
from what the page shows; each explanation says why in a sentence or two. The frame builds them once
per process, from the page's defaults (ui.frame.page.built_questions).

In class, the lesson's prediction: what the character model will say is the most likely next character after a
prompt (next_character), from the prompt and model the page last used in this tab (settings)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from core.attention import causal_mask
from core.costs import attention_memory, kv_cache_bytes
from core.model import ModelConfig, init_params
from core.sampling import next_token_probs, nucleus
from lessons.full_model import maths
from ui.compute import model_store
from ui.frame.class_question import ClassQuestion, char_text
from ui.frame.exercises import Exercise
from ui.frame.predict import listed
from ui.sections.model_views import DATA_NAMES, MODEL_KEY
from ui.text import code_span

CHARS, PROBS, TOP_P = "eaoiu", np.array([0.5, 0.3, 0.15, 0.03, 0.02]), 0.9  # the top-p question's distribution
SURE = 0.25  # the probability in the bits question
T_CACHE, D_CACHE, L_CACHE = 1000, 64, 2  # the KV-cache question's model and length
PROMPT_KEY = "fm_prompt"  # the page's prompt box
MAX_PROMPT_CHARS = 1000  # the longest prompt the page and its prediction take
TOP_CHARS = 8  # characters the projector shows beside the class's answers
UNTYPED = {"\n": "a line break"}  # characters the model knows that a phone's answer box cannot take
SHOWN_ZERO = 0.005  # a probability below this prints as "below 0.01", never as a "0.00" that reads as impossible


def questions() -> list[Exercise]:
    gb = attention_memory(100_000, dtype="float16")["per_head"] / 1e9
    kept = nucleus(PROBS, TOP_P) > 0
    options = ("only e", "e and a", "e, a and o", "all five")
    cache = kv_cache_bytes(T_CACHE, D_CACHE, L_CACHE)
    return [  # in the order of the sections they ask about
        Exercise("temp0", "At temperature 0, what probability does the most likely next character get?",
                 answer=1.0, part="bars", explanation="Temperature 0 is the limit of an ever colder softmax: all "
                 "the probability lands on the largest logit (greedy decoding)."),
        Exercise("top_p", "The next character's probabilities are "
                 + ", ".join(f"{c} {p:g}" for c, p in zip(CHARS, PROBS)) + f". With top-p = {TOP_P:g}, which "
                 "characters can be drawn?", options=options, part="nucleus",
                 correct={1: 0, 2: 1, 3: 2, len(CHARS): 3}[int(kept.sum())],
                 explanation=f"Ranked from the top, keep characters while the ones above hold less than {TOP_P:g}: "
                 f"{', '.join(CHARS[:int(kept.sum())])} (together {PROBS[kept].sum():g}). The rest, the tail, are "
                 "never drawn; the kept ones share the whole probability again."),
        greedy_twice(),
        Exercise("head_view", "In the head view, with one head switched on, how many lines can leave the prompt's "
                 "first character?", answer=float(causal_mask(5)[0].sum()), tolerance=0, part="head_view",
                 explanation="The first character may read only itself (the causal mask), so all its weight goes "
                 "to one key: one line, to itself."),
        Exercise("bits", f"The model gave the character that really came next a probability of {SURE:g}. How many "
                 "bits is its surprise?", answer=float(-np.log2(SURE)), part="guess_score",
                 explanation=f"Each halving of the probability adds one bit: 1 is 0 bits, 1/2 one bit, {SURE:g} "
                 f"{-np.log2(SURE):g} bits, as surprising as calling {-np.log2(SURE):g} coin flips right."),
        Exercise("kv_cache", f"While writing, a model with d_model = {D_CACHE} and {L_CACHE} layers keeps, in "
                 f"every layer, the key and the value ({D_CACHE} numbers each) of every earlier position: the KV "
                 f"cache. In float32 (4 bytes a number), how many bytes does that take at {T_CACHE:,} tokens?",
                 answer=float(cache), tolerance=0, part="long_context",
                 explanation=f"Keys and values, {D_CACHE} numbers each, per token and per layer: 2 × {T_CACHE:,} × "
                 f"{D_CACHE} × {L_CACHE} × 4 = {cache:,} bytes. It grows in step with the length; the attention "
                 "weights grow with its square."),
        Exercise("memory", "How many gigabytes (10⁹ bytes) does ONE head's attention weight matrix take at "
                 "T = 100,000 tokens in float16 (2 bytes a number)?", answer=gb, part="long_context",
                 explanation=f"T × T × 2 bytes = 10¹⁰ × 2 = {gb:.0f} GB, for one head of one layer: "
                 "why long-context attention is computed without storing the full matrix."),
    ]


def greedy_twice() -> Exercise:
    """Greedy decoding with two different seeds, on a small random model: the same text (no randomness)."""
    cfg = ModelConfig(vocab_size=8, d_model=16, n_heads=2, n_layers=1, max_len=16)
    params = init_params(cfg, np.random.default_rng(0))
    runs = [maths.decode(params, cfg, [1, 2, 3], 10, "greedy", 0.9, seed)[0] for seed in (0, 1)]
    same = bool(np.array_equal(*runs))
    return Exercise("greedy_twice", "Greedy decoding writes from the same prompt twice, with two different random "
                    "seeds. What do you get?", options=("The same text both times", "Two different texts"),
                    correct=0 if same else 1, part="why_top_p",
                    explanation="Greedy takes the most likely character every time: nothing random, so the seed "
                    "plays no part and the text is the same. That is also why it cannot climb out of a loop; "
                    "sampling, pure or top-p, can draw a different text for each seed.")


# ---- in class: the prediction on this lesson's model ---------------------------------------------------------


def settings(state: Mapping) -> dict:
    """The prompt and the model the page last used in this tab, read by the keys its controls bind (None where the
    page has not set one)."""
    return {"prompt": state.get(PROMPT_KEY), "model": state.get(MODEL_KEY)}


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
        raise ValueError(f"The model never saw {listed([char_text(c) for c in unknown])}: it would read "
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

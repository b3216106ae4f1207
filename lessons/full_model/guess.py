"""Guess the next character: a held-out stretch of the documentation the shipped model was trained on, the
student's guess, the bigram model's and the transformer's probabilities, and a running score for the session.

The puzzle number is bound to the link (a teacher shares the same puzzle); the guesses and the score live in
this browser session only. Picking and scoring are the lesson's maths (lessons/full_model/maths.py).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.bigram import bigram_counts, bigram_probs
from core.data import CorpusUnavailable, bigram_loss, pydoc_corpus
from core.tokenize import CharTokenizer
from lessons.full_model import maths
from ui.compute import model_store
from ui.compute.memo import shared
from ui.compute.model_store import Model
from ui.drawing import tables
from ui.frame import prose
from ui.sections import model_views as mv
from ui.sections import views
from ui.state import controls
from ui.text import code_span

PUZZLE = "fm_puzzle"  # the puzzle number, bound to the link
ROUNDS = "fm_guess_rounds"  # session state: {(model source, puzzle number): lessons.full_model.maths.score(...)}
GUESS, REFUSED = "fm_guess_text", "fm_guess_refused"  # the typed guess; why the last one was refused
MAX_PUZZLE = 9999
GAP = "▌"  # drawn where the next character goes
AFTER = 24  # characters of the text shown after the gap once it is revealed
SKIPPED = "\n"  # a box cannot take a line break, so no puzzle asks for one
MEASURED = 1000  # puzzles 0 to 999: the sample whose mean bits the score sets beside the held-out loss


def game_model() -> Model | None:
    """The shipped character model trained on Python's documentation (its held-out text is the puzzles'),
    or None when this server has none."""
    for name in model_store.char_models():
        try:
            model = model_store.load_model(name)
        except ValueError:
            continue
        if model.meta.get("data") == "pydoc":
            return model
    return None


@shared(4, spinner="Reading Python's documentation…")
def splits(chars: str) -> tuple[np.ndarray, np.ndarray]:
    """(train ids, held-out ids) of the documentation under the tokenizer of `chars`: the split the model
    was trained and validated on."""
    corpus = pydoc_corpus(tokenizer=CharTokenizer(chars))
    return np.array(corpus.train_ids), np.array(corpus.val_ids)


@shared(4)
def bigram_table(chars: str) -> np.ndarray:
    """(V, V) add-one bigram model fit on the training split: the baseline the model's file reports."""
    return bigram_probs(bigram_counts(splits(chars)[0], len(chars) + 1), alpha=1.0)


@shared(4, spinner="Scoring the held-out text…")
def measured(source: tuple) -> dict:
    """Each model's loss on the whole held-out text in nats, {model: loss} (the transformer's as training's
    validation measures it, the bigram's over every pair), and their mean bits over puzzles 0 to MEASURED - 1."""
    m = model_store.from_source(source)
    chars = "".join(m.tokenizer.itos[1:])
    held, table = splits(chars)[1], bigram_table(chars)
    skip = tuple(int(i) for i in m.tokenizer.encode(SKIPPED))
    return {"loss": {"bigram": bigram_loss(np.log(table), held[:-1], held[1:]),
                     "transformer": maths.held_out_loss(m.params, m.cfg, held)},
            "puzzles": maths.puzzle_bits(m.params, m.cfg, table, held, range(MEASURED), skip)}


@shared(256)
def puzzle(source: tuple, number: int) -> dict:
    """Puzzle `number` for the model of `source`: its position in the held-out text, the context the
    transformer reads (L,), the true next id, each model's probabilities (V,), and the text after it."""
    m = model_store.from_source(source)
    chars = "".join(m.tokenizer.itos[1:])
    held = splits(chars)[1]
    L = m.cfg.max_len
    t = maths.pick_position(held, number, L, skip=tuple(int(i) for i in m.tokenizer.encode(SKIPPED)))
    context = held[t - L:t]
    return {"position": t, "of": len(held), "context": context, "truth": int(held[t]),
            "after": held[t + 1:t + 1 + AFTER], "probs": maths.model_probs(m.params, m.cfg, bigram_table(chars),
                                                                           context)}


def rounds(source: tuple) -> dict:
    """This session's scored rounds for this model, by puzzle number."""
    return {n: r for (s, n), r in st.session_state.get(ROUNDS, {}).items() if s == source}


def next_puzzle() -> None:
    st.session_state[PUZZLE] = min(int(st.session_state.get(PUZZLE, 0)) + 1, MAX_PUZZLE)


def start_again(source: tuple) -> None:
    st.session_state[ROUNDS] = {k: r for k, r in st.session_state.get(ROUNDS, {}).items() if k[0] != source}


def check(model: Model, p: dict, number: int) -> None:
    """The Check button's callback, run before the page is drawn: a good guess is scored (once per puzzle), a
    bad one is kept to be said, never scored."""
    try:
        guess = maths.check_guess(st.session_state.get(GUESS), model.tokenizer)
    except ValueError as err:
        st.session_state[REFUSED] = str(err)
        return
    played = st.session_state.setdefault(ROUNDS, {})
    played.setdefault((model.source, number), maths.score(guess, p["truth"], p["probs"]))


def guess_box(model: Model, p: dict, number: int) -> None:
    """The box and its button, and what was wrong with the last guess typed, if anything."""
    with st.form("fm_guess_form", clear_on_submit=True, border=False):
        st.text_input("Your guess: the next character", key=GUESS,
                      help="Exactly one character. A space counts: type a single space.")
        st.form_submit_button("Check my guess", key="fm_guess_check", on_click=check, args=(model, p, number))
    if refused := st.session_state.pop(REFUSED, None):
        st.warning(refused)


def result(model: Model, p: dict, r: dict) -> None:
    """One scored round: right or not, the text revealed, each model's probabilities of the guess and truth."""
    itos = model.tokenizer.itos
    guess, truth = code_span(mv.shown(itos[r["guess"]])), code_span(mv.shown(itos[r["truth"]]))
    if r["hits"]["you"]:
        st.success(prose.text("full_model", "guess_right", truth=truth))
    else:
        st.info(prose.text("full_model", "guess_wrong", guess=guess, truth=truth))
    st.code(model.tokenizer.decode(p["context"][-40:]) + "[" + itos[r["truth"]] + "]"
            + model.tokenizer.decode(p["after"]), language=None, wrap_lines=True)
    table = {"model": ["bigram", "transformer"],
             f"P(your guess {mv.shown(itos[r['guess']])})": [r["p_guess"][m] for m in maths.MODELS],
             f"P(truth {mv.shown(itos[r['truth']])})": [r["p_truth"][m] for m in maths.MODELS],
             "bits on the truth": [r["bits"][m] for m in maths.MODELS],
             "its top choice": [mv.shown(itos[r["top"][m]]) for m in maths.MODELS]}
    tables.show(table, {c: "%.4f" for c in list(table)[1:4]})


def scoreboard(model: Model) -> None:
    played = rounds(model.source)
    s = maths.tally(played.values())
    n = s["rounds"]
    st.markdown(f"**Score this session** ({n} puzzle{'' if n == 1 else 's'})")
    if not n:
        st.caption(prose.text("full_model", "guess_no_score"))
        return
    cols = views.in_a_row(5)
    for col, (who, label) in zip(cols, (("you", "You"), ("bigram", "Bigram's top choice"),
                                        ("transformer", "Transformer's top choice"))):
        col.metric(label, f"{s['hits'][who]} of {n} right")
    for col, m in zip(cols[3:], maths.MODELS):
        col.metric(f"{m.capitalize()}, bits on the truth", f"{s['mean_bits'][m]:.2f}",
                   help="The mean surprise, in bits, at the true character over the puzzles played: lower is better.")
    st.caption(prose.text("full_model", "guess_score", V=model.cfg.vocab_size,
                          uniform=maths.bits(1 / model.cfg.vocab_size)))
    f = measured(model.source)
    loss, puzzles = f["loss"], f["puzzles"]
    if said := prose.text("full_model", "guess_loss", per_nat=maths.in_bits(1.0), L=model.cfg.max_len,
                          t_nats=loss["transformer"], t_bits=maths.in_bits(loss["transformer"]),
                          b_nats=loss["bigram"], b_bits=maths.in_bits(loss["bigram"]), last=MEASURED - 1,
                          t_puzzles=puzzles["transformer"], b_puzzles=puzzles["bigram"]):
        st.caption(said)
    st.button("Start the score again", key="fm_guess_reset", on_click=start_again, args=(model.source,))


def guess_section(model: Model | None) -> None:
    """The whole game: the puzzle number, the text, the guess, the result and the score."""
    st.header("Guess the next character")
    if model is None:
        st.info(prose.text("full_model", "guess_no_model"))
        return
    number = int(controls.number_box(PUZZLE, "Puzzle number", 0, MAX_PUZZLE, 0, step=1, container=st, width=220,
                                     help="Each number is one place in the held-out text; share the link to "
                                          "give a class the same puzzle."))
    controls.show_url_notes()
    try:
        p = puzzle(model.source, number)
    except CorpusUnavailable as err:
        st.warning(str(err))
        return
    prose.show("full_model", "guess_intro", L=len(p["context"]), gap=GAP, position=p["position"], of=p["of"],
               last=code_span(mv.shown(model.tokenizer.itos[int(p["context"][-1])])))
    st.code(model.tokenizer.decode(p["context"]) + GAP, language=None, wrap_lines=True)
    played = rounds(model.source)
    if number in played:
        result(model, p, played[number])
    else:
        guess_box(model, p, number)
    st.button("Next puzzle", key="fm_guess_next", on_click=next_puzzle)
    scoreboard(model)

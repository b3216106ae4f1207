"""Guess the next character: a held-out stretch of the documentation the shipped model was trained on, the
student's guess, the bigram model's and the transformer's probabilities, and a running score for the session.

The puzzle number is bound to the link (a teacher shares the same puzzle); the guesses and the score live in
this browser session only. Picking and scoring are the lesson's maths (lessons/full_model/maths.py).
"""

from __future__ import annotations

import streamlit as st

from core.data import CorpusUnavailable
from lessons.full_model import maths
from lessons.full_model.cached import MEASURED, measured, puzzle
from ui.compute import model_store
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

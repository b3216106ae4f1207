"""The Training page's controls: the sidebar settings (bound to the URL), the own-text box, and the
Train / Stop / Resume buttons with what their presses do. Widget keys are prefixed tr_."""

from __future__ import annotations

import streamlit as st

from core.model import divisors
from core.tasks import TASKS
from lessons.training import session as ts
from lessons.training.cached import bundled_length
from lessons.training.setup import CORPORA, LIMITS, MAX_LR, UPLOAD_CAP_BYTES, Settings
from store import runs
from ui.compute import training_share
from ui.state import controls, kept

LR_OPTIONS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
CORPUS_CAPTIONS = {
    "copy": "A C B D | A C B D: repeat the letters after the bar",
    "reverse": "A C B D | D B C A: repeat them backwards",
    "induction": "A C B D A C B D: after a letter, what followed it last time? (One fixed length: position "
                 "alone finds it.)",
    "pydoc": "Python's own documentation (the topics of help()), {n:,} characters",
    "text": "your own text: paste it or upload a .txt file",
}


def offered(problem: str | None) -> list[str]:
    """The corpora to offer: all of them, less the bundled one when it cannot be built (`problem` says why)."""
    return [c for c in CORPORA if not (c == "pydoc" and problem)]


def corpus_choice(options: list[str]) -> str:
    """Which data to train on, bound to the URL; a link naming an unavailable corpus falls back to copy."""
    captions = [CORPUS_CAPTIONS[o].format(n=bundled_length()) if o == "pydoc" else CORPUS_CAPTIONS[o]
                for o in options]
    return controls.option("tr_data", "Train on", options, captions=captions)


def learning_rate() -> float:
    """The slider's rate, unless the advanced override (reachable by link: tr_lr_override=1000) sets another."""
    lr = controls.choice("tr_lr", "Learning rate", LR_OPTIONS, 1e-2,
                         help="How far each Adam step moves the weights. Too small: slow. Too large: chaos.")
    with st.sidebar.expander("Advanced"):
        override = controls.number_box(
            "tr_lr_override", "Learning rate override (0 = use the slider)", 0.0, MAX_LR, 0.0, step=0.001,
            container=st, format="%g", help=f"Any rate up to {MAX_LR:g}. Try 1000 to see training diverge.")
    return float(override) if override else float(lr)


def read_settings(options: list[str]) -> Settings:
    """The sidebar's widgets, top to bottom, as the Settings of the next run."""
    corpus = corpus_choice(options)
    if corpus in TASKS:
        length = controls.number_slider("tr_length", "Letters before the bar (L)", 2, LIMITS["task_length"], 8,
                                        help="L letters, then the second half: the model reads 2L symbols (2L − 1 "
                                             "for induction, which has no bar).")
        context = 32
    else:
        length = 8
        context = controls.number_slider("tr_context", "Context (characters)", 8, LIMITS["context"], 32, step=8,
                                         help="How many characters the model reads at once.")
    d_model = controls.choice("tr_d_model", "d_model", (8, 16, 24, 32, 48, 64), 32,
                              help="The width of every character's vector.")
    heads = controls.choice("tr_heads", "Heads (divisors of d_model)",
                            [h for h in divisors(d_model) if h <= LIMITS["n_heads"]], 2,
                            help=f"Only head counts that split d_model = {d_model} evenly are offered.")
    layers = controls.choice("tr_layers", "Layers", (1, 2), 2)
    learned = controls.toggle("tr_learned_pos", "Learned positions", default=True,
                              help="A learned table of position vectors instead of fixed sinusoids.")
    steps = controls.number_slider("tr_steps", "Training steps", 50, LIMITS["steps"], 300, step=50)
    batch = controls.choice("tr_batch", "Batch size", (4, 8, 16, 32), 16,
                            help="Sequences per step: the loss is averaged over all of them.")
    lr = learning_rate()
    seed = controls.seed()
    return Settings(corpus=corpus, d_model=d_model, n_heads=heads, n_layers=layers, context=context,
                    task_length=length, pos_encoding="learned" if learned else "sinusoidal", steps=steps,
                    batch_size=batch, lr=lr, seed=seed)


def limits_caption() -> None:
    st.sidebar.caption(f"Limits on this shared server: at most {LIMITS['steps']} steps, d_model "
                       f"{LIMITS['d_model']}, {LIMITS['n_layers']} layers, context {LIMITS['context']}, "
                       f"batch {LIMITS['batch_size']}; between redraws, the page trains for at most "
                       f"{training_share.TICK_BUDGET_S} s.")


def own_text(session: ts.TrainingSession, settings: Settings) -> tuple[bytes | str | None, str, bool]:
    """The user's text: an uploaded file's bytes (kept in memory only) or else the pasted text, its name, and
    whether it can be trained on. Both outlive a visit to another page (ui.state.kept), and are checked as
    soon as they arrive (what is wrong is said at once, not at the Train press)."""
    cap = f"{UPLOAD_CAP_BYTES // 1000} KB"
    kept.restore("tr_text")
    pasted = st.text_area("Paste some text to train on", key="tr_text", height=140,
                          max_chars=UPLOAD_CAP_BYTES, placeholder="A few pages of any text you like…")
    kept.remember("tr_text")
    upload = kept.upload(f"…or upload a plain-text file (.txt, up to {cap})", key="tr_upload", type=["txt"])
    st.caption(f"Your text is held in the server's memory for this browser session only (it survives visits to "
               f"other pages) and is never written to disk or to the database. When a run stops, the model trained "
               f"on it is stored on the server for {runs.EXPIRE_DAYS} days so that a link can open it, and a "
               f"model can repeat phrases of what it learned: do not train on text you would not share. The limit "
               f"is {cap}; the last 10% is kept aside to measure the validation loss.")
    text, name = (upload[1], upload[0]) if upload is not None else ((pasted or None), "")
    usable = text is None or check_text(session, settings, text, name)
    return text, name, usable


def check_text(session: ts.TrainingSession, settings: Settings, text: bytes | str, name: str) -> bool:
    """Say at once what is wrong with the text (binary, too short for the context, over the cap), or how
    much of it there is. The corpus made here is the one Train uses (encoded once per text and context)."""
    try:
        corpus = session.own_text.corpus(text, settings.context, name)
    except ValueError as err:
        st.error(str(err), icon=":material/error:")
        return False
    chars = len(corpus.train_ids) + len(corpus.val_ids)
    st.caption(f"Ready: {chars:,} characters, {corpus.vocab_size - 1} different ones"
               + (" (cut to the limit)." if corpus.truncated else "."))
    return True


def take_train_press(session: ts.TrainingSession, settings: Settings, text, text_name: str,
                     usable: bool = True) -> None:
    """Start the run the Train button asked for (its callback only sets a flag: the text is read here). Text
    that cannot be trained on starts nothing: what is wrong with it is already on the page, above Train."""
    if session.train_requested:
        session.train_requested = False
        if not usable:
            return
        if not session.start(settings, text, text_name) and session.running:
            st.toast("Already training: press Stop first to start a new run.")


def _request_train() -> None:
    ts.get(st.session_state).train_requested = True


def _stop() -> None:
    ts.get(st.session_state).stop()


def _resume() -> None:
    ts.get(st.session_state).resume()


def buttons(session: ts.TrainingSession, settings: Settings) -> None:
    """Train, Stop and Resume in a row, each enabled only when it can act; a note when the settings changed."""
    cols = st.columns([1, 1, 1, 3])
    cols[0].button("Train", key="tr_train", on_click=_request_train, disabled=session.running,
                   help="Start a new run with the settings in the sidebar.")
    cols[1].button("Stop", key="tr_stop", on_click=_stop, disabled=not session.running,
                   help="Stop now; the model so far is kept.")
    cols[2].button("Resume", key="tr_resume", on_click=_resume, disabled=not session.resumable,
                   help="Go on with the stopped run.")
    run = session.run
    if run is not None and run.settings != settings and run.state != "running":
        cols[3].caption("The settings have changed since this run started: Train starts a new run with them.")

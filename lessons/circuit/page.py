"""Lesson: a real induction circuit in a small trained model: a previous-token head in layer 1, an
induction head in layer 2 that reads the letter after the earlier copy, their losses and knockouts."""

import numpy as np
import streamlit as st

from core.demos.knockout import knockout_table, mean_loss, position_losses
from core.tasks import induction_keys
from lessons import COURSE
from lessons.circuit import cached, maths, phase, sequence
from lessons.circuit.cached import INDUCTION, PREVIOUS, reach, training_lengths
from lessons.circuit.questions import questions
from ui.compute import model_store
from ui.drawing import plots, render
from ui.drawing.chart_data import ChartData, numbers
from ui.frame import page, prose
from ui.sections import views
from ui.sections.knockout_views import knockout_section
from ui.state import controls, phone

MODEL = "circuit"
SOURCES = ("generated", "typed")
DEFAULT_TEXT = "QFBPLANCKWORDPLANCKWORD"
MAX_CHARS = 200
SERIES = ("first copy", "repeat", "other letters")
NEAR = 0.1  # the repeat's mean loss (nats) under which the page calls it close to 0
FAINT = 0.75  # the induction share under which the page calls the induction head's line faint


def heads_section(a: dict, labels: list[str], repeats: bool, model) -> None:
    st.header("The two heads")
    prev, ind = a["previous"][PREVIOUS], a["induction"][INDUCTION]
    views.heatmaps(
        views.weights_map(a["weights"][PREVIOUS], labels, "layer 1 · head 2: previous token", "ci_prev",
                          "weights", "(T, T)", annotate=False, x_title="key", y_title="query",
                          note=f"Previous-token share: {prev:.2f}"),
        views.weights_map(a["weights"][INDUCTION], labels, "layer 2 · head 2: induction", "ci_ind",
                          "weights", "(T, T)", annotate=False, x_title="key", y_title="query",
                          note=f"Induction share: {ind:.2f}" if repeats else "Induction share: no repeat to read"))
    faint = repeats and ind < FAINT
    prose.show("circuit", "heads", line=prose.text("circuit", "heads_line_faint" if faint else "heads_line", ind=ind,
                                                   hi=training_lengths(model)[1]))
    L, H = a["previous"].shape
    table = {"head": views.layer_head_names(L, H), "previous-token share": a["previous"].ravel()}
    if repeats:
        table["induction share"] = a["induction"].ravel()
    views.number_table(table, "%.2f")
    st.caption(prose.text("circuit", "shares" if repeats else "shares_no_repeat"))


def loss_section(a: dict, repeats: bool, model) -> None:
    st.header("Loss at each position")
    kinds = np.where(a["first"] > 0, 0, np.where(a["repeat"] > 0, 1, 2))
    if len(kinds) > 1:  # a line through one point has no scale to read: its ticks ran 10.037000, 10.037000
        frame = ChartData({"x": list(range(len(kinds))), "y": numbers(a["losses"]),
                           "series": [SERIES[k] for k in kinds]})
        render.show(plots.line_chart, frame, width="stretch", x_title="position t (predicts letter t + 1)",
                    y_title="loss (nats)", title="Loss per position: first copy vs repeat", whole_x=True)
    cols = views.in_a_row(3 if repeats else 2)
    if repeats:
        cols[0].metric("Mean loss, first copy", views.number(a["first_loss"], ".3g"))
        cols[1].metric("Mean loss, repeat", views.number(a["repeat_loss"], ".3g"))
    else:
        cols[0].metric("Mean loss, every letter", f"{a['loss']:.3f}")
    V = len(model.meta["tokenizer"]["chars"])  # the letters the model can be asked to predict
    cols[-1].metric(f"Uniform guess over {V} letters", f"{np.log(V):.3f}")
    near = "loss_repeat_near" if a["repeat_loss"] < NEAR else "loss_repeat_far"
    said = prose.text("circuit", near, repeat=a["repeat_loss"], mean=views.number(a["repeat_loss"], ".3g"),
                      hi=training_lengths(model)[1]) if repeats else ""
    prose.show("circuit", "loss" if repeats else "loss_no_repeat", V=V, uniform=np.log(V), repeat=said)
    st.caption(prose.text("circuit", "reach", **reach(model.source)))


def knockouts(model, ids: tuple, repeat: tuple, repeats: bool) -> None:
    """Knocking a head out, and what it does to the loss on the repeat: a live part of its own (its two boxes
    reach nothing else)."""
    knockout_section(model, ids, "ci", unit="letter", counted=repeat if repeats else None,
                     counted_name="the repeat")
    if repeats:
        st.caption(prose.text("circuit", "knockout"))
    controls.show_url_notes()  # the knockout controls are drawn above: a bad value of theirs in a link is noted


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    model = model_store.load_model(MODEL)
    st.sidebar.markdown("**The sequence**")
    source = controls.option("ci_source", "Sequence", list(SOURCES), "generated", horizontal=True,
                             help="generated: drawn as in training from the seed and stretch length; typed: yours.")
    lo, hi = training_lengths(model)
    length = controls.number_slider("ci_length", "Stretch length (generated)", 2, 24, 8,
                                    help=f"How many letters occur twice in a row. Training used {lo} to {hi}.")
    seed = controls.seed()
    alphabet = model.meta["tokenizer"]["chars"]
    text = controls.text("ci_text", "Your letters (typed)", DEFAULT_TEXT, max_chars=MAX_CHARS,
                         help=f"Letters {alphabet[0]} to {alphabet[-1]}, up to {model.cfg.max_len} read; lowercase "
                              "counts as uppercase, spaces are dropped.")
    phone.in_reach("ci_length")  # on a phone, the stretch length stays beside the maps it changes
    controls.show_url_notes()

    if source == "generated":
        n_symbols = len(model.meta["tokenizer"]["chars"])
        ids = tuple(int(i) for i in maths.generated(length, seed, model.cfg.max_len, n_symbols))
    else:
        ids = sequence.typed_ids(model, text)
    if ids is not None:
        a = cached.circuit_reading(model.source, ids)
        letters, repeats = model.tokenizer.decode(ids), bool(a["repeat"].any())
        sequence.section(letters, a, model)
        heads_section(a, [f"{c}{i}" for i, c in enumerate(letters)], repeats, model)
        loss_section(a, repeats, model)
        page.live(knockouts, model, ids, tuple(a["repeat"].tolist()), repeats)


page.opening(COURSE, "circuit")

page.live(controls_and_sections)
phase.section(model_store.load_model(MODEL))  # its training log: the same for every link, outside the live part

page.closing(COURSE, "circuit", questions, code=(
    maths.generated, maths.copy_halves, maths.read_sequence, induction_keys, maths.previous_token_mass,
    maths.induction_mass, position_losses, mean_loss, knockout_table, maths.copying_by_length,
    maths.letter_dependence, maths.phase_change))

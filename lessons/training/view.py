"""What the Training page shows of a run: status and figures, the loss curve, the layers x heads attention
grid, the answer-key weights of a synthetic task, and the notes around them (errors, a pause, a saved model).

live_panel is the part that reruns on its own while training (an st.fragment with a timer): it trains one
tick, then draws. Shapes: L layers, H heads, T sequence length.
"""

from __future__ import annotations

import math
import string
import time

import streamlit as st

from core.tasks import SyntheticTask
from lessons import COURSE
from lessons.training import session as ts
from lessons.training.cached import untrained
from lessons.training.run import MASS_SEQUENCES, Run, uniform_guess_among
from lessons.training.setup import LIMITS, N_SYMBOLS, Settings, example_ids
from store import runs
from ui.compute import model_store, training_share
from ui.drawing import charts, heatmap, plots, render
from ui.frame import page, prose
from ui.sections import views
from ui.state import controls
from ui.text import code_span, counted, escape_md, shape_str

TICK_EVERY_S = ts.TICK_EVERY_S  # the live panel reruns this often while training (a fragment timer)
STATE_WORDS = {"running": "Training", "paused": "Stopped", "finished": "Finished", "diverged": "Diverged"}
# The attention panels share a row of about GRID_WIDTH_PX; each is at most GRID_PANEL_PX wide.
GRID_WIDTH_PX, GRID_PANEL_PX, GRID_CELL_PX, GRID_GAP_PX = 880, 200, 18, 80
ANSWER_CELL_PX = 46  # the answer-key map's cells: a row of up to LIMITS["n_heads"] of them, numbers printed


def shown(c: str) -> str:
    """A character as an axis label: whitespace as a symbol, one that draws nothing alone as its code."""
    return charts.visible(c)


def model_summary(settings: Settings) -> None:
    st.markdown(f"While it trains, the page runs training steps for up to {training_share.TICK_BUDGET_S} s, then "
                f"redraws the charts. The model is "
                f"{counted(settings.n_layers, 'layer')}, d_model {settings.d_model}, "
                f"{counted(settings.n_heads, 'head')} of d_k = {settings.d_model // settings.n_heads}.")


def messages(session: ts.TrainingSession) -> None:
    """The last problem (a bad input, a divergence), and why a run waits when the student left the page."""
    run = session.run
    if session.error:
        st.error(session.error, icon=":material/warning:")
    if run is not None and run.state == "paused" and run.reason == "left":
        st.info(f"Training paused at step {run.steps} while you were on another page. Press Resume to go on.")


def attention_maps(run: Run, before: bool = False) -> None:
    """Every layer x head map on the run's fixed example; for a synthetic task, each head's answer-key weight."""
    view = run.attention()
    w = view["weights"]  # (L, H, T, T)
    L, H, T = w.shape[0], w.shape[1], w.shape[-1]
    labels = [shown(c) for c in view["chars"]]
    maps, names = w.reshape(L * H, T, T), views.layer_head_names(L, H)
    views.attention_grid(charts.grid_frame(maps, names, labels, labels), T, panels=H,
                         title="Attention on a fixed example, layer × head", width_px=GRID_WIDTH_PX,
                         panel_px=GRID_PANEL_PX, cell_px=GRID_CELL_PX, gap_px=GRID_GAP_PX)
    views.record_maps(maps, labels, names, GRID_WIDTH_PX)
    when = "Before training: the random initial weights." if before else f"Drawn at step {run.steps}."
    st.caption(f"weights · shape {shape_str(w.shape)} = (layers, H, T, T); rows are queries, columns keys. {when}")
    if "mass" in view:
        answer_key_weights(view["mass"])


def answer_key_weights(mass) -> None:
    """(L, H) weight each head puts on the key that holds the answer, as a small annotated heatmap."""
    L, H = mass.shape
    heatmap.show(mass, [f"layer {i + 1}" for i in range(L)], [f"head {h + 1}" for h in range(H)],
                        title="Weight on the key that holds the answer", x_title="head", y_title="layer",
                        domain=views.PROBABILITY, annotate=True, cell_px=ANSWER_CELL_PX,
                        max_width=ANSWER_CELL_PX * LIMITS["n_heads"])
    st.caption(f"mass · shape {shape_str(mass.shape)} = (layers, H): at each query of the second half, the "
               f"attention weight on the key the answer sits at, averaged over {MASS_SEQUENCES} sequences. Near 1: "
               "that head has found the pattern.")


def status(run: Run, f: dict) -> None:
    """The progress bar and four figures: training and validation loss, the bigram baseline, the speed."""
    words = STATE_WORDS[run.state] + (" (you left the page)" if run.reason == "left" else "")
    st.progress(min(1.0, run.steps / run.settings.steps), text=f"{words} · step {run.steps} of {run.settings.steps}")
    cols = views.in_a_row(4)
    cols[0].metric("Training loss (last 20 steps)", "—" if f["train_loss"] is None else f"{f['train_loss']:.3f}")
    cols[1].metric(f"Validation loss (step {f['val_step']})", f"{f['val_loss']:.3f}")
    cols[2].metric("Bigram baseline", f"{f['bigram_val_loss']:.3f}")
    cols[3].metric("Speed", f"{f['steps_per_s']:.0f} steps/s" if f["steps_per_s"] else "—",
                   help="Optimiser steps per second of wall time, while the page is training.")


def loss_curve(run: Run) -> None:
    render.show(plots.line_chart, run.loss_frame(), width="stretch", x_title="step",
                y_title="cross-entropy (nats)", title="Loss while training", whole_x=True)
    st.caption("Training loss: the batches the model learns from (averaged over a few steps). Validation: text it "
               "never trains on. Below the bigram line, the model uses more than the previous character.")
    k = uniform_guess_among(run)
    if k is not None:
        st.caption(baseline_note(run, k))


def baseline_note(run: Run, k: int) -> str:
    """Why the bigram baseline is a uniform guess (ln k) on this data, and what that means for the lines."""
    V = run.trainer.cfg.vocab_size
    if not page.technical():  # the Simple level: the line and why, without the comparison of the two guesses
        return (f"The bigram baseline, {math.log(k):.3f}, is an even guess among the {k} letters, each drawn at "
                "random. Only attention, looking further back, goes below it.")
    same = (f"so it is the same line as the uniform guess over all {V} tokens" if k == V else
            f"a little below the uniform guess over all {V} tokens ({math.log(V):.3f}), which also spends "
            "probability on the separator and the unknown token")
    return (f"The bigram baseline, {math.log(k):.3f}, is a uniform guess among {k} symbols, {same}: "
            f"the {run.settings.label}'s symbols are drawn uniformly and independently, so the previous symbol "
            "says nothing about the next. Only attention, looking further back than one symbol, can take the "
            "loss below this line.")


def task_note(settings: Settings) -> None:
    """What a synthetic task's sequences are and where the answer sits (prose part "task"), with this run's L."""
    task = SyntheticTask(settings.corpus, settings.task_length, N_SYMBOLS)
    L, n = task.length, task.n_symbols
    prose.section("The three tasks", "training", "task", L=L, n=n, last=string.ascii_uppercase[n - 1],
                  V=task.vocab_size, back=L - 1)


def induction_note(settings: Settings) -> str:
    """The induction task's fixed length: position alone finds the answer (the shipped task model shows it)."""
    note = prose.text("training", "induction_note", back=settings.task_length - 1)
    try:
        pattern = model_store.load_model("induction").meta["pattern"]
    except (ValueError, KeyError):
        return note
    return note + " " + prose.text("training", "induction_shipped", mass=pattern["mass"],
                                   head=f"layer {pattern['layer'] + 1} · head {pattern['head'] + 1}")


def preview(settings: Settings) -> None:
    """Before the first run: the baselines and the untrained model's attention maps for these settings."""
    run = untrained(settings)
    if run is None:
        return
    cols = views.in_a_row(2)
    cols[0].metric("Bigram baseline", f"{run.bigram:.3f}",
                   help="The validation loss of a model that predicts each symbol from the one before it.")
    V = run.trainer.cfg.vocab_size
    cols[1].metric(f"Uniform guess over {V} tokens", f"{math.log(V):.3f}",
                   help="The loss of giving each of the V tokens the same probability, 1/V: that loss is the "
                        "natural log of V.")
    loss_curve(run)
    attention_maps(run, before=True)


def time_left(run: Run) -> None:
    left = run.seconds_left()
    eta = f"About {left / 60:.0f} minutes" if left > 90 else f"About {left:.0f} s"
    st.caption(f"{eta} of training left at this speed. The model so far is kept as “{escape_md(run.name)}”; "
               "Stop keeps it, and so does leaving the page.")


def draw_run(run: Run) -> None:
    status(run, run.figures())
    loss_curve(run)
    attention_maps(run)
    if run.state == "running":
        time_left(run)


def live_panel(settings: Settings | None = None) -> None:
    """The part of the page that reruns on its own while training (a live part with a timer, ui.frame.page.live,
    which records its maps for the export panel afresh on each tick): a chunk of steps, then the charts.
    Before the first run, what the settings would start from (see preview)."""
    start = time.perf_counter()
    session = ts.get(st.session_state)
    was_running = session.running
    done = session.tick()
    trained_s = time.perf_counter() - start
    if was_running and not session.running:
        st.rerun(scope="app")  # finished or diverged: redraw the buttons and stop the timer
    if session.run is None:
        st.info("Press **Train** to start. Below: the model before its first step; the loss curve and the "
                "attention maps change here as it learns.")
        if settings is not None:
            preview(settings)
        return
    draw_run(session.run)
    if done:
        st.caption(f"This update: {done} steps in {trained_s * 1000:.0f} ms of training, "
                   f"{(time.perf_counter() - start) * 1000:.0f} ms in all on the server.")


OWN_TEXT_PROMPT = "The "  # the prompt of a run on a student's own text, when its characters are all known
LINK_PROBLEMS = model_store.LINK_PROBLEMS  # run name -> (step, why the database could not keep that snapshot)


def for_link(session: ts.TrainingSession, kept: model_store.Model) -> tuple[model_store.Model, str | None]:
    """The stopped run's model stored in the app's database, once per snapshot, so that a link can carry it
    (ui.compute.model_store.keep_for_link); the session's copy then carries its id. (model, None), or (model,
    why a link cannot carry it). Either way the Full model page opens on it next, with a prompt it can read."""
    if kept.meta.get("run_id"):
        return kept, None
    problems = st.session_state.setdefault(LINK_PROBLEMS, {})
    step = kept.source[2]
    if kept.name in problems and problems[kept.name][0] == step:
        return kept, problems[kept.name][1]
    stored, problem = model_store.keep_for_link(kept)
    if problem:
        problems[kept.name] = (step, problem)
    else:
        model_store.add_session_model(session.models, stored)  # the same weights, now with their link id
    controls.hand_over(opening(stored, session))
    return stored, problem


def readable_prompt(session: ts.TrainingSession) -> str:
    """A prompt the run's model can read: the first half of a task's example up to its bar (copy, reverse), or
    the example the attention maps show (an induction sequence, a stretch of the text)."""
    data = session.run.data
    text = data.tokenizer.decode(example_ids(data))
    if session.run.settings.corpus == "text":  # a link carries its prompt: none of a student's own text goes in it
        known = set(data.tokenizer.itos)
        return OWN_TEXT_PROMPT if set(OWN_TEXT_PROMPT) <= known else " " if " " in known else data.tokenizer.itos[-1]
    if "|" in text:
        return text[: text.index("|") + 1]
    return text


def opening(model: model_store.Model, session: ts.TrainingSession) -> dict:
    """The Full model page's settings that show this run: the model, by the name a link carries, and a prompt."""
    return {"fm_model": model_store.link_name(model), "fm_prompt": readable_prompt(session)}


def saved_model(session: ts.TrainingSession) -> None:
    """Once a run stops, where its model went (this session, and the database a link reads), with a link to
    the page that uses it."""
    kept = session.kept
    if kept is None:
        return
    kept, problem = for_link(session, kept)
    st.success(f"Saved in this session as “{escape_md(kept.name)}” (step {kept.source[2]}): the Full model page "
               "can read it, generate text with it and draw its attention.", icon=":material/save:")
    if problem:
        st.warning(f"A link cannot carry this run: {escape_md(problem)} It stays in this browser tab; anyone else "
                   "who opens a Full model link sees the shipped model.", icon=":material/link_off:")
    else:
        until = time.strftime("%d %B %Y, %H:%M UTC", time.gmtime(kept.meta["expires_at"]))
        st.caption(f"Kept on this server for {runs.EXPIRE_DAYS} days (until {until}) as run "
                   f"{code_span(kept.meta['run_id'])}, so a Full model link shared from its page opens this model in "
                   f"any browser until then. {runs.KEPT_RULE}")
    page.link(COURSE.lesson("full_model"), "Open the Full model page", query=opening(kept, session))

"""Lesson 6: train a small transformer live, a few steps at a time: the loss falls, the attention maps form."""

import time

import streamlit as st
from streamlit.errors import StreamlitAPIException

from core.backward import loss_and_grads
from core.data import TASKS
from core.model import divisors
from core.train import AdamW, TrainConfig, Trainer, clip_grad_norm
from ui import charts, controls, nav, page, presenter, render
from ui import training_session as ts
from ui.text import escape_md, notice, shape_str, show_code

TICK_EVERY_S = 1.0  # the live panel reruns this often while training; each rerun trains for <= 0.3 s
LR_OPTIONS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
GRID_DROP = ["text", "dark_text", "dark_text_div"]
GRID_WIDTH_PX = 880  # the attention panels share a row of about this width
CORPUS_CAPTIONS = {
    "copy": "A C B D | A C B D: repeat the letters after the bar",
    "reverse": "A C B D | D B C A: repeat them backwards",
    "induction": "A C B D A C B D: after a letter, what followed it last time?",
    "pydoc": "Python's own documentation, ~370,000 characters",
    "text": "your own text: paste it or upload a .txt file",
}
SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥"}  # invisible characters, made visible on the axes
STATE_WORDS = {"running": "Training", "paused": "Stopped", "finished": "Finished", "diverged": "Diverged"}


def corpus_choice(options: list[str]) -> str:
    """Which data to train on, bound to the URL; a link naming an unavailable corpus falls back to copy."""
    return controls.option("tr_data", "Train on", options, captions=[CORPUS_CAPTIONS[o] for o in options])


def learning_rate() -> float:
    """The slider's rate, unless the advanced override (reachable by link: tr_lr_override=1000) sets another."""
    lr = controls.choice("tr_lr", "Learning rate", LR_OPTIONS, 1e-2,
                         help="How far each Adam step moves the weights. Too small: slow. Too large: chaos.")
    with st.sidebar.expander("Advanced"):
        override = controls.number_box(
            "tr_lr_override", "Learning rate override (0 = use the slider)", 0.0, ts.MAX_LR, 0.0, step=0.001,
            container=st, format="%g", help=f"Any rate up to {ts.MAX_LR:g}. Try 1000 to see training diverge.")
    return float(override) if override else float(lr)


def read_settings(options: list[str]) -> ts.Settings:
    corpus = corpus_choice(options)
    if corpus in TASKS:
        length = controls.number_slider("tr_length", "Letters before the bar (L)", 2, ts.LIMITS["task_length"], 8,
                                        help="Each sequence is 2L tokens long.")
        context = 32
    else:
        length = 8
        context = controls.number_slider("tr_context", "Context (characters)", 8, ts.LIMITS["context"], 32, step=8,
                                         help="How many characters the model reads at once.")
    d_model = controls.choice("tr_d_model", "d_model", (8, 16, 24, 32, 48, 64), 32,
                              help="The width of every character's vector.")
    heads = controls.choice("tr_heads", "Heads (divisors of d_model)",
                            [h for h in divisors(d_model) if h <= ts.LIMITS["n_heads"]], 2,
                            help=f"Only head counts that split d_model = {d_model} evenly are offered.")
    layers = controls.choice("tr_layers", "Layers", (1, 2), 2)
    learned = controls.toggle("tr_learned_pos", "Learned positions", default=True,
                              help="A learned table of position vectors instead of fixed sinusoids.")
    steps = controls.number_slider("tr_steps", "Training steps", 50, ts.LIMITS["steps"], 300, step=50)
    batch = controls.choice("tr_batch", "Batch size", (4, 8, 16, 32), 16,
                            help="Sequences per step: the loss is averaged over all of them.")
    lr = learning_rate()
    seed = controls.seed()
    return ts.Settings(corpus=corpus, d_model=d_model, n_heads=heads, n_layers=layers, context=context,
                       task_length=length, pos_encoding="learned" if learned else "sinusoidal", steps=steps,
                       batch_size=batch, lr=lr, seed=seed)


def own_text() -> tuple[bytes | str | None, str]:
    """The user's text: an uploaded file's bytes (kept in memory only) or else the pasted text."""
    cap = f"{ts.UPLOAD_CAP_BYTES // 1000} KB"
    pasted = st.text_area("Paste some text to train on", key="tr_text", height=140,
                          max_chars=ts.UPLOAD_CAP_BYTES, placeholder="A few pages of any text you like…")
    upload = st.file_uploader(f"…or upload a plain-text file (.txt, up to {cap})", type=["txt"], key="tr_upload")
    st.caption(f"Your text stays in this browser session's memory and is never saved. The limit is {cap}; "
               "the last 10% is kept aside to measure the validation loss.")
    if upload is not None:
        return upload.getvalue(), upload.name
    return (pasted or None), ""


def request_train() -> None:
    ts.get(st.session_state).train_requested = True


def stop() -> None:
    ts.get(st.session_state).stop()


def resume() -> None:
    ts.get(st.session_state).resume()


def link_to_full_model(label: str) -> None:
    """A link to the Full model page; a plain link when the page runs outside the app's navigation."""
    lesson = nav.by_path("lessons/full_model.py")
    try:
        st.page_link(lesson.path, label=label, icon=lesson.icon)
    except StreamlitAPIException:
        st.markdown(f"[{label}](/{lesson.url_path})")


def shown(c: str) -> str:
    return SHOWN.get(c, c if c.isprintable() else f"U+{ord(c):04X}")


def draw_attention(session: ts.TrainingSession) -> None:
    run = session.run
    view = session.attention()
    w = view["weights"]  # (L, H, T, T)
    L, H, T = w.shape[0], w.shape[1], w.shape[-1]
    labels = [shown(c) for c in view["chars"]]
    names = [f"layer {layer + 1} · head {h + 1}" for layer in range(L) for h in range(H)]
    frame = charts.grid_frame(w.reshape(L * H, T, T), names, labels, labels).drop(columns=GRID_DROP)
    scale = presenter.chart_scale()
    cell_px = charts.cell_size(T, int(18 * scale), max_width=int(200 * scale))
    columns = max(1, min(H, int(GRID_WIDTH_PX * scale) // (cell_px * T + 80)))  # as many panels as fit a row
    render.show(charts.grid_chart, frame, columns=columns, cell_px=cell_px,
                title="Attention on a fixed example, layer × head")
    st.caption(f"weights · shape {shape_str(w.shape)} = (layers, H, T, T); row = query, column = key. "
               f"Drawn at step {run.steps}.")
    if "mass" in view:
        mass = view["mass"]
        render.show(charts.heatmap_chart, charts.heatmap_frame(mass, [f"layer {i + 1}" for i in range(L)],
                                                               [f"head {h + 1}" for h in range(H)]),
                    width="content", title="Weight on the key that holds the answer", x_title="head",
                    y_title="layer", domain=(0.0, 1.0), annotate=True, cell_px=46)
        st.caption(f"mass · shape {shape_str(mass.shape)} = (layers, H): at each query of the second half, the "
                   "attention weight on the key the answer sits at, averaged over 32 sequences. Near 1: that "
                   "head has found the pattern.")


def draw_run(session: ts.TrainingSession) -> None:
    run = session.run
    f = session.figures()
    status = STATE_WORDS[run.state] + (" (you left the page)" if run.reason == "left" else "")
    st.progress(min(1.0, run.steps / run.settings.steps), text=f"{status} · step {run.steps} of {run.settings.steps}")
    cols = st.columns(4)
    cols[0].metric("Training loss (last 20 steps)", "—" if f["train_loss"] is None else f"{f['train_loss']:.3f}")
    cols[1].metric(f"Validation loss (step {f['val_step']})", f"{f['val_loss']:.3f}")
    cols[2].metric("Bigram baseline", f"{f['bigram_val_loss']:.3f}")
    cols[3].metric("Speed", f"{f['steps_per_s']:.0f} steps/s" if f["steps_per_s"] else "—",
                   help="Optimiser steps per second of wall time, while the page is training.")
    render.show(charts.line_chart, session.loss_frame(), width="stretch", x_title="step",
                y_title="cross-entropy (nats)", title="Loss while training")
    st.caption("Training loss: the batches the model learns from (averaged over a few steps). Validation: text it "
               "never trains on. Below the bigram line, the model uses more than the previous character.")
    draw_attention(session)
    if run.state == "running":
        left = (run.settings.steps - run.steps) / f["steps_per_s"] if f["steps_per_s"] else 0
        eta = f"About {left / 60:.0f} minutes" if left > 90 else f"About {left:.0f} s"
        st.caption(f"{eta} of training left at this speed. The model so far is kept as “{escape_md(run.name)}”; "
                   "Stop keeps it, and so does leaving the page.")


def live_panel() -> None:
    """The part of the page that reruns on its own while training: a chunk of steps, then the charts."""
    start = time.perf_counter()
    session = ts.get(st.session_state)
    was_running = session.running
    done = session.tick()
    trained_s = time.perf_counter() - start
    if was_running and not session.running:
        st.rerun(scope="app")  # finished or diverged: redraw the buttons and stop the timer
    if session.run is None:
        st.info("Press **Train** to start. The loss curve and the attention maps appear here and change as the "
                "model learns.")
        return
    draw_run(session)
    if done:
        st.caption(f"This update: {done} steps in {trained_s * 1000:.0f} ms of training, "
                   f"{(time.perf_counter() - start) * 1000:.0f} ms in all on the server.")


# ---- the page ------------------------------------------------------------------------------------------

page.header(__file__)
st.title("6 · Training")
st.markdown(
    "Every model on the earlier pages got its weights from **training**, and here you can watch it happen. "
    "One training step takes a batch of sequences and runs the model on them (the **forward** pass), "
    "compares its predicted probabilities with the characters that really come next (the **loss**: the "
    "average of −log p(correct), in nats), works out how the loss changes with every weight (the "
    "**backward** pass, the chain rule run from the loss back to the embeddings) and nudges every weight a "
    "little downhill (an **Adam step**, which scales each weight's move by a running average of its "
    "gradients). Repeat a few hundred times and the attention maps turn from noise into patterns."
)
st.latex(r"\text{loss} = -\frac{1}{N}\sum_{i} \log p_\theta(y_i \mid x_{\le i}) \qquad "
         r"\theta \leftarrow \theta - \text{lr}\cdot\frac{\hat m}{\sqrt{\hat v}+\epsilon}")

problem = ts.bundled_problem()
options = [c for c in ts.CORPORA if not (c == "pydoc" and problem)]
settings = read_settings(options)
controls.show_url_notes()
if problem:
    st.warning(f"The bundled text is not available on this server: {problem}", icon="📚")
st.sidebar.caption(f"Limits on this shared server: at most {ts.LIMITS['steps']} steps, d_model "
                   f"{ts.LIMITS['d_model']}, {ts.LIMITS['n_layers']} layers, context {ts.LIMITS['context']}, "
                   f"batch {ts.LIMITS['batch_size']}; each update trains for at most {ts.TICK_BUDGET_S} s.")

session = ts.get(st.session_state)
text, text_name = own_text() if settings.corpus == "text" else (None, "")
if session.train_requested:
    session.train_requested = False
    if not session.start(settings, text, text_name) and session.running:
        st.toast("Already training: press Stop first to start a new run.")
session.pause_if_left()

st.markdown(f"Each update trains for up to {ts.TICK_BUDGET_S} s, then redraws. The model is "
            f"{settings.n_layers} layer(s), d_model {settings.d_model}, {settings.n_heads} head(s) of "
            f"d_k = {settings.d_model // settings.n_heads}.")
cols = st.columns([1, 1, 1, 3])
cols[0].button("Train", key="tr_train", type="primary", on_click=request_train, disabled=session.running,
               help="Start a new run with the settings in the sidebar.")
cols[1].button("Stop", key="tr_stop", on_click=stop, disabled=not session.running,
               help="Stop now; the model so far is kept.")
cols[2].button("Resume", key="tr_resume", on_click=resume, disabled=not session.resumable,
               help="Go on with the stopped run.")
run = session.run
if run is not None and run.settings != settings and run.state != "running":
    cols[3].caption("The settings have changed since this run started: Train starts a new run with them.")

if session.error:
    st.error(session.error, icon="⚠️")
if run is not None and run.state == "paused" and run.reason == "left":
    st.info(f"Training paused at step {run.steps} while you were on another page. Press Resume to go on.")

st.fragment(live_panel, run_every=TICK_EVERY_S if session.running else None)()

if run is not None and run.state != "running" and run.name in session.models:
    kept = session.models[run.name]
    st.success(f"Saved in this session as “{escape_md(run.name)}” (step {kept.source[2]}): the Full model page "
               "can read it, generate text with it and draw its attention.", icon="💾")
    link_to_full_model("Open the Full model page")

notice([
    "The loss starts near log V (a uniform guess over V characters) and falls fast at first, then slowly.",
    "On the copy task the loss stays on the bigram line for a while, then drops to almost 0 when one head's "
    "map turns into a shifted diagonal: each query looks back L positions, at the letter to write next.",
    "Reverse makes an anti-diagonal; induction a diagonal one step right of the previous occurrence.",
    "Training and validation losses stay together while the model learns patterns that generalise; a gap "
    "means it is memorising its training text.",
    "A learning rate of 1000 (Advanced) makes the loss explode within a step or two: training stops and "
    "the weights go back to the last good step.",
])
if not presenter.presenting():
    show_code(loss_and_grads, Trainer.step, AdamW.update, clip_grad_norm, TrainConfig)
page.footer(__file__)

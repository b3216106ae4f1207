"""The character model's pieces that Full model, Bigram and the head knockout share: which model a page
reads, characters made visible, the cached forward pass and generation, the probability bars and the
generated text.

Cached functions take a model's small `source` tuple, never its arrays (see ui.compute.model_store).
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from core.model import forward
from core.sampling import generate
from store import runs
from ui.compute import model_store
from ui.compute.memo import shared
from ui.compute.model_store import LINK_PROBLEMS, Model
from ui.drawing import alt_text, charts, plots, render, tables
from ui.drawing.chart_data import ChartData
from ui.frame import prose, share
from ui.sections import views
from ui.state import controls
from ui.text import code_span, escape_md

TOP_BARS = 15  # bars drawn: the most likely characters
MAX_DRAWN = 64  # attention maps show at most the last 64 positions
GENERATED = "fm_generated"  # session state: the last generated texts and the settings they were made with
MODEL_KEY = "fm_model"  # the trained model picked, bound to the link


def shown(c: str) -> str:
    """A character as an axis or bar label: whitespace as a symbol ('␣'), one that draws nothing on its own
    as its code ('U+200D', the joiner inside 👩‍💻; 'U+FE0F', the variation selector of ❤️)."""
    return charts.visible(c)


# ---- which model ------------------------------------------------------------------------------------------


def chosen_model() -> tuple[Model | None, str | None]:
    """The trained model the page reads, and why a chosen one could not be loaded (None when it could).

    Shipped character models come first, then any model trained on the Training page in this session, then
    a trained run the link names (fm_model=run:AbC123xy, kept in the app's database: any browser opens it);
    a picker when there is more than one. A link naming an unknown or expired run says so and falls back to
    the first. (None, None) when there is none on this server: the page then reads seeded random weights.
    """
    models = {model_store.link_name(m): m for m in model_store.session_models().values()}
    names = model_store.char_models() + list(models)
    asked = controls.asked(MODEL_KEY)
    if asked and asked.startswith(model_store.RUN_PREFIX) and asked not in names:
        try:
            run = model_store.get_model(asked)
        except ValueError as err:
            st.warning(f"{escape_md(str(err))} Showing the shipped model instead.", icon=":material/history:")
        else:
            label = model_store.link_name(run)
            models[label] = run
            names.append(label)
            if asked != label:  # a link with the id alone: the picker shows the run's full label, and so does the link
                controls.link_means(MODEL_KEY, label)
    if not names:
        return None, None
    name = names[0]
    if len(names) > 1:
        name = controls.option(MODEL_KEY, "Trained model", names, kind="selectbox")
    try:
        model = models[name] if name in models else model_store.get_model(name)
    except ValueError as err:
        return None, str(err)
    if model.source[0] == "session" and not model.meta.get("run_id"):
        share.cannot_carry(cannot_carry_why(model))
    return model, None


def cannot_carry_why(model: Model) -> str:
    """Why a link cannot carry a model trained in this tab: the store refused it (lessons.training.view keeps
    its reason by run name), or it was never stored (it is still training, or was left mid-run)."""
    problem = st.session_state.get(LINK_PROBLEMS, {}).get(model.name)
    if problem is not None:
        return (f"This model was trained in this browser tab and the server could not keep it ({problem[1]}), so the "
                "link cannot carry it: anyone else who opens the link sees the shipped model.")
    return ("This run is still training, or was left mid-run: stop it on the Training page and its model is stored "
            "so that a link can carry it. Until then anyone else who opens this link sees the shipped model.")


def sides(model: Model | None, seed: int) -> dict[str, Model]:
    """The sides the page reads: {"trained": model} and, with the compare switch on, {"random": its twin}
    (the same shape with seeded untrained weights). Without a model, seeded random weights alone."""
    if model is None:
        return {"trained": model_store.random_model(seed)}
    compare = controls.toggle("fm_compare", "Compare with random weights",
                              help="The same model shape with untrained weights, side by side.")
    twin = {"random": model_store.random_model(seed, like=model_store.link_name(model))} if compare else {}
    return {"trained": model, **twin}


def task_note(model: Model) -> None:
    """A model trained on a synthetic task knows only a few characters: say which, and what to type."""
    task = model.meta.get("task")
    if not task:
        return
    kind = task.get("kind", "synthetic") if isinstance(task, dict) else str(task)
    st.info(f"This model was trained on the {escape_md(kind)} task and knows only the characters "
            f"{code_span(''.join(model.tokenizer.itos[1:]))}: try a prompt such as {code_span('ABCDEFGH|')}.")


def model_note(model: Model, error: str | None) -> None:
    """Which weights the page reads: trained (with their figures) or random (and what that means), its shape,
    and why a chosen model could not be loaded."""
    cfg = model.cfg
    if error:
        st.error(f"{error} Showing random weights instead.")
    if model.trained:
        st.success(f"Trained weights: {code_span(model.name)}. {training_summary(model.meta, cfg.vocab_size)}")
        if isinstance(model.meta.get("expires_at"), (int, float)):
            until = time.strftime("%d %B %Y, %H:%M UTC", time.gmtime(model.meta["expires_at"]))
            st.caption(f"Trained on the Training page and kept on this server as run "
                       f"{code_span(str(model.meta.get('run_id')))} until {until}: this page's link opens it in "
                       f"any browser until then. {runs.KEPT_RULE}")
    else:
        st.info(prose.text("full_model", "random_weights", V=cfg.vocab_size, p=1 / cfg.vocab_size))
    st.caption(f"Model: V = {cfg.vocab_size} characters, D = {cfg.d_model}, H = {cfg.n_heads} heads "
               f"(d_k = {cfg.d_k}), {cfg.n_layers} layers, reads at most {cfg.max_len} characters, "
               f"{cfg.pos_encoding} positions, {cfg.norm}-norm, {cfg.activation}.")


DATA_NAMES = {"pydoc": "Python's own documentation", "copy": "the copy task", "reverse": "the reverse task",
              "induction": "the induction task (one fixed length)", "repeat": "repeated stretches of letters",
              "toy_english": "a toy English grammar"}  # what a saved model's data id means, for a student


def training_summary(meta: dict, V: int) -> str:
    """The saved model's figures in a sentence: its validation loss against the uniform and bigram baselines."""
    def number(key):
        value = meta.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    parts = []
    if number("val_loss") is not None:
        parts.append(f"Validation loss {number('val_loss'):.3g} nats per character; guessing uniformly among the "
                     f"{V} characters gives {np.log(V):.3f}")
        if number("bigram_val_loss") is not None:
            parts[-1] += f", a bigram model {number('bigram_val_loss'):.3g}"
    if number("steps") is not None:
        parts.append(f"Trained for {int(number('steps')):,} steps")
    if isinstance(meta.get("data"), str):
        data = meta["data"]
        parts.append(f"Trained on {DATA_NAMES[data]}" if data in DATA_NAMES else f"Trained on {code_span(data[:60])}")
    return ". ".join(parts) + "." if parts else ""


def encode_prompt(model: Model, prompt: str) -> tuple[int, ...]:
    """The prompt's ids as the model reads them: the last max_len, saying so when it is longer, and
    warning of characters outside the vocabulary (they all read as the one unknown token)."""
    tok, max_len = model.tokenizer, model.cfg.max_len
    ids = tok.encode(prompt)
    if len(ids) > max_len:
        st.warning(f"The prompt has {len(ids)} characters; the model reads at most {max_len}, "
                   f"so it sees only the last {max_len}.")
        ids = ids[-max_len:]
    unknown = tok.unknown(prompt)
    if unknown:
        many = len(unknown) > 1
        st.warning(f"{len(unknown)} character{'s' if many else ''} of the prompt "
                   f"({' '.join(code_span(shown(c)) for c in unknown[:20])}) {'are' if many else 'is'} "
                   f"not in the model's vocabulary; each is read as the unknown token {code_span(tok.UNKNOWN)} "
                   "(id 0), so the model cannot tell them apart.")
    return tuple(int(i) for i in ids)


def parameter_table(parts: dict[str, int], total: int) -> None:
    """Parameters by part (core.costs.param_count without its total), with each part's share as a bar."""
    table = {"part": list(parts), "parameters": list(parts.values()), "share": [n / total for n in parts.values()]}
    tables.show(table, {"parameters": "localized", "share": "percent"}, column_config={
        "parameters": st.column_config.NumberColumn(format="localized"),
        "share": st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})


# ---- reading and writing ----------------------------------------------------------------------------------


@shared(256)
def read_prompt(source: tuple, ids: tuple[int, ...]) -> dict:
    """One forward pass over the prompt: the last position's logits (V,) and every attention map (L, H, T, T)."""
    m = model_store.from_source(source)
    logits, trace = forward(m.params, m.cfg, np.array(ids, dtype=np.int64))
    weights = np.stack([layer.weights for layer in trace.layers])  # L x (H, T, T) -> (L, H, T, T)
    return {"logits": logits[-1], "weights": weights}


def read_or_say(model: Model, ids: tuple[int, ...]) -> dict | None:
    """read_prompt for a non-empty prompt; None when it is empty or the model cannot read it (said why)."""
    if not ids:
        return None
    try:
        return read_prompt(model.source, ids)
    except ValueError as err:
        st.error(str(err))
        return None


@shared(128)
def attention_frame(source: tuple, ids: tuple[int, ...]) -> ChartData:
    """Every layer x head map of the last MAX_DRAWN positions, as one small-multiples frame."""
    m = model_store.from_source(source)
    w = read_prompt(source, ids)["weights"][..., -MAX_DRAWN:, -MAX_DRAWN:]  # (L, H, T', T')
    L, H, T = w.shape[0], w.shape[1], w.shape[-1]
    labels = [shown(c) for c in m.tokenizer.decode(ids[-T:])]
    return charts.grid_frame(w.reshape(L * H, T, T), views.layer_head_names(L, H), labels, labels)


@shared(64)
def generate_text(source: tuple, ids: tuple[int, ...], n: int, temperature: float, top_k: int | None,
                  seed: int, top_p: float | None = None) -> str:
    """n sampled characters after the prompt; the same arguments always give the same text."""
    m = model_store.from_source(source)
    out = generate(m.params, m.cfg, np.array(ids, dtype=np.int64), n, temperature, top_k,
                   rng=np.random.default_rng(seed), top_p=top_p)
    return m.tokenizer.decode(out[len(ids):])


def bars(probs: np.ndarray, tokenizer, title: str, said_title: str | None = None) -> ChartData:
    """The TOP_BARS most likely next characters, most likely first, drawn as bars. Characters with no
    probability at all (every one but the argmax at temperature 0, those cut by top-k) are left out. said_title:
    the title's words no control changes (render.show)."""
    order = np.argsort(-probs, kind="stable")[:TOP_BARS]
    order = order[probs[order] > 0]
    labels = [shown(tokenizer.itos[i]) + (" (unknown)" if i == 0 else "") for i in order]
    frame = plots.bar_frame(labels, probs[order])
    render.show(plots.bar_chart, frame, width="stretch", title=title, y_title="next character",
                description=alt_text.likeliest(frame, said_title or title, title_read=said_title is not None),
                said_title=said_title,
                record=render.Recorded(probs[order][:, None], labels, ["probability"]))
    return frame


def generate_all(sides: dict[str, Model], ids: tuple[int, ...], n: int, temperature: float, top_k: int,
                 seed: int, settings: tuple, top_p: float | None = None) -> None:
    """Sample n characters from each side's model and keep the texts with the settings they were made with."""
    try:
        texts = {which: generate_text(m.source, ids, n, temperature, top_k or None, seed, top_p)
                 for which, m in sides.items()}
    except ValueError as err:
        st.error(str(err))
        return
    st.session_state[GENERATED] = {"settings": settings, "texts": texts}


def show_generated(settings: tuple) -> None:
    """The last generated texts, one per side, saying when they were made with other settings."""
    result = st.session_state.get(GENERATED)
    if not result:
        st.caption("Press Generate. The same prompt, settings and seed always give the same text.")
        return
    for which, text in result["texts"].items():
        if len(result["texts"]) > 1:
            st.markdown(f"**{which.capitalize()} weights:**")
        st.code(text, language="text", wrap_lines=True)
    stale = result["settings"] != settings
    st.caption(f"{len(next(iter(result['texts'].values())))} characters after the prompt."
               + (" Made with earlier settings: press Generate for the current ones." if stale else ""))

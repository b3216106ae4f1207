"""Lesson: the transformer block on the trained character model's own activations: layer norm on one row, the
feed-forward layer, the residual stream, and pre-norm against post-norm (with why deep post-norm is harder)."""

import numpy as np
import streamlit as st

from core import layers
from core.model import block
from lessons import COURSE
from lessons.block import cached, depth, ffn, maths
from lessons.block import views as bv
from lessons.block.questions import questions
from lessons.block.views import DEFAULT_POSITION, DEFAULT_PROMPT, MAX_POSITION, MAX_PROMPT_CHARS
from ui.compute.model_store import Model
from ui.drawing import plots, render
from ui.frame import page, prose
from ui.sections import model_views as mv
from ui.sections.views import heatmaps, token_rows
from ui.state import controls, phone
from ui.text import code_span

ROW_PX = 900  # the room a (k, D) map of one row's steps may take
ROW_CELL_PX = 13  # its D = 64 columns in ROW_PX, a strip of thin cells rather than a map to read cell by cell


def model_note(model: Model, error: str | None) -> None:
    """Which weights the page reads: the trained model and what it was trained on, or random ones and why."""
    if error:
        st.error(error)
    if not model.trained:
        st.info(prose.text("block", "untrained"))
        return
    cfg = model.cfg
    st.success(prose.text("block", "trained", name=code_span(model.name), layers=cfg.n_layers, D=cfg.d_model,
                          H=cfg.n_heads, steps=f"{int(model.meta.get('steps', 0)):,}"))


def prompt_section(model: Model, prompt: str) -> tuple[int, ...]:
    """The prompt's ids as the model reads them (the last max_len); () when it is empty."""
    st.header("The prompt, as the model reads it")
    ids = mv.encode_prompt(model, prompt)  # warns of unknown characters and of a prompt past max_len
    if not ids:
        st.info(prose.text("block", "empty_prompt"))
        return ()
    st.markdown(f"The model reads {code_span(model.tokenizer.decode(ids))} ({len(ids)} characters).")
    return ids


def layer_norm_section(r: dict, label: str) -> None:
    ln, layer = r["ln"], r["layer"] + 1
    prose.section("Layer norm on one row", "block", "layer_norm", layer=layer)
    rows = ["x (the row)", "x̂ (normalised)", "γ·x̂ + β (output)"]
    wide = dict(cell_px=ROW_CELL_PX, max_width=ROW_PX, strip=True)  # D = 64 columns: each map takes the page's width
    heatmaps(token_rows(np.stack([ln["x"], ln["x_hat"], ln["out"]]), rows, f"row {r['position']} “{label}” "
                        "through layer norm", "block_ln", "row", "(3, D): x, then normalised, then scaled and shifted",
                        y_title="step", said_title="the row looked at, through layer norm", **wide))
    heatmaps(token_rows(np.stack([ln["g"], ln["b"]]), ["γ (gain)", "β (shift)"], f"block {layer}'s ln_1: γ and β",
                        "block_gamma_beta", "γ, β", "(2, D), learned in training", y_title="parameter",
                        said_title="the chosen block's ln_1: γ and β", **wide))
    b, n, a = ln["before"], ln["normalised"], ln["after"]
    prose.show("block", "ln_numbers", position=r["position"], char=code_span(label), mean=b["mean"], var=b["var"],
               hat_mean=n["mean"], hat_var=n["var"], eps=ln["eps"], out_mean=a["mean"], out_var=a["var"],
               diff=r["ln_block_difference"])


def residual_section(r: dict, label: str) -> None:
    prose.section("The residual stream", "block", "residual", layer=r["layer"] + 1)
    left, right = st.columns(2)
    with left:
        render.show(plots.bar_chart, bv.stream_bars(r), width="stretch", x_title="length ‖row‖",
                    title=f"row {r['position']} “{label}”, piece by piece", y_title="piece of the stream",
                    said_title="the row looked at, piece by piece")
    with right:
        render.show(plots.line_chart, bv.stream_lines(r), width="stretch", title="Row lengths along the prompt",
                    x_title="position", y_title="length ‖row‖", whole_x=True)
    n, e = r["row_norms"], r["sum_errors"]
    prose.show("block", "residual_numbers", x=n["x"], attn=n["attn_out"], res_1=n["res_1"], ffn=n["ffn_out"],
               res_2=n["res_2"], attn_share=r["attn_share"], ffn_share=r["ffn_share"], attn_error=e["attn"],
               ffn_error=e["ffn"])


def wirings_section(w: dict, r: dict, label: str) -> None:
    prose.section("Pre-norm against post-norm", "block", "wirings", layer=r["layer"] + 1)
    render.show(plots.line_chart, bv.wiring_lines(w), width="stretch", title="The same block, wired two ways",
                x_title="position", y_title="length ‖row‖", whole_x=True)
    p, q = w["stats"]["pre"][r["position"]], w["stats"]["post"][r["position"]]
    prose.show("block", "wirings_numbers", position=r["position"], char=code_span(label), pre_mean=p["mean"],
               pre_std=p["std"], post_mean=q["mean"], post_std=q["std"], diff=w["max_difference"],
               own=float(abs(w["pre"] - r["res_2"]).max()))
    st.caption(prose.text("block", "trained_pre"))


def controls_and_sections() -> None:
    """The prompt's controls and the sections that read it: a move of a control reruns this alone."""
    prompt = controls.text("block_prompt", "Prompt", DEFAULT_PROMPT, max_chars=MAX_PROMPT_CHARS,
                           help="Any text. The model reads it one character at a time (the last 64 at most).")
    model, error = bv.the_model()
    n_layers = model.cfg.n_layers
    layer = controls.number_slider("block_layer", "Block", 1, n_layers, 1,
                                   help="Which of the model's blocks is taken apart.") if n_layers > 1 else 1
    asked = controls.number_slider("block_pos", "Position (the row looked at)", 0, MAX_POSITION - 1,
                                   DEFAULT_POSITION, help="The character whose row goes through layer norm and "
                                   "the feed-forward layer. Past the end of the prompt, the last one is used.")
    phone.in_reach("block_pos")  # on a phone, the row followed through the block stays beside its charts
    controls.show_url_notes()

    model_note(model, error)
    ids = prompt_section(model, prompt)
    if ids:
        position = min(asked, len(ids) - 1)
        if position < asked:
            st.caption(f"Position {asked} is past the end of the prompt, so its last character, {position}, "
                       "is used.")
        r = cached.reading(model.source, ids, layer - 1, position)
        label = mv.shown(model.tokenizer.decode(ids[position : position + 1]))  # a space drawn as "␣"
        layer_norm_section(r, label)
        ffn.section(r, label)
        residual_section(r, label)
        wirings_section(cached.wired(model.source, ids, layer - 1), r, label)


page.opening(COURSE, "block")

page.live(controls_and_sections)
page.live(depth.section)

page.closing(COURSE, "block", questions, code=(
    layers.layer_norm, layers.gelu, layers.relu, layers.ffn_with_hidden, block, maths.layer_norm_steps,
    maths.block_reading, maths.wirings, maths.unit_scale_blocks, maths.nudged, maths.amplification))

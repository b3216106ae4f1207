"""Lesson: the whole model end to end on characters: next-character probabilities, generation and why top-p,
every attention map, the head view and knocking out a head, a guessing game, positions, parameters, and what
attention costs at long lengths."""

from typing import NamedTuple

import numpy as np
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import costs
from core.layers import sinusoidal_encoding
from core.model import attention_layer, block, embed, forward
from core.sampling import generate, next_token_probs, probs_from_logits
from core.sampling import nucleus as nucleus_of
from lessons import COURSE
from lessons.full_model import maths, next_character, structure, why_top_p
from lessons.full_model.guess import game_model, guess_section
from lessons.full_model.head_view import head_view_section
from lessons.full_model.questions import MAX_PROMPT_CHARS, PROMPT_KEY, questions
from ui.compute.model_store import Model
from ui.drawing import heatmap
from ui.frame import page, prose
from ui.sections import model_views as mv
from ui.sections import views
from ui.sections.knockout_views import knockout_section
from ui.state import controls
from ui.text import code_span, shape_caption

DEFAULT_PROMPT = "The attention "
GRID_PANEL_PX = 180  # a model has up to L x H maps of the prompt: smaller panels than a lesson's few heads


class Screen(NamedTuple):
    """The page's places, top to bottom in the order a student reads them. They are made before anything is drawn
    and each is filled by the part of the page that draws it, so where a section sits on screen does not depend
    on which live part its controls put it in."""

    reading: DeltaGenerator  # the prompt, the next character, generating text
    why_top_p: DeltaGenerator  # why top-p: fixed settings, outside every live part
    inside: DeltaGenerator  # every attention map, the head view, knocking out a head
    guess: DeltaGenerator  # the guessing game, a live part of its own
    model: DeltaGenerator  # positions, parameters, costs: of the seed's random weights (drawn by the reading
    #   part) or of the trained model (drawn outside it)


def prompt_section(model: Model, prompt: str) -> tuple[int, ...]:
    """The prompt's ids as the model reads them (the last max_len); () when it is empty."""
    st.header("The prompt, as the model reads it")
    ids = mv.encode_prompt(model, prompt)  # warns of unknown characters and of a prompt longer than max_len
    if not ids:
        st.info(prose.text("full_model", "empty_prompt"))
        return ()
    st.markdown(f"The model reads {code_span(model.tokenizer.decode(ids))}")
    st.caption(f"ids · shape ({len(ids)},) = (T,): {', '.join(str(i) for i in ids[:24])}"
               f"{', …' if len(ids) > 24 else ''}")
    return ids


def attention_section(model: Model, ids: tuple, weights: np.ndarray) -> None:
    st.header("Every attention map, layer by layer")
    L, H, T = weights.shape[0], weights.shape[1], weights.shape[-1]
    drawn = min(T, mv.MAX_DRAWN)
    views.layers_heads_grid(mv.attention_frame(model.source, ids), L, H, drawn, width_px=heatmap.WIDE_ROOM_PX,
                            panel_px=GRID_PANEL_PX, cell_px=heatmap.MEDIUM_CELL_PX, min_cell_px=4)
    labels = [mv.shown(c) for c in model.tokenizer.decode(ids[-drawn:])]
    views.record_maps(weights[..., -drawn:, -drawn:].reshape(L * H, drawn, drawn), labels,
                      views.layer_head_names(L, H), width_px=heatmap.WIDE_ROOM_PX)
    shape_caption("weights", weights, "(layers, H, T, T)")
    if drawn < T:
        st.caption(f"Showing the last {drawn} of {T} positions: the earlier keys hold the rest of each row.")
    st.caption(prose.text("full_model", "causal_maps"))


def reading_and_generating(chosen: Model | None, model_error: str | None, screen: Screen) -> None:
    """The controls that read and sample the model, and the sections they drive: a move reruns this alone.
    Without a trained model the weights follow the seed, and so do the sections about the model itself."""
    prompt = controls.text(PROMPT_KEY, "Prompt", DEFAULT_PROMPT, max_chars=MAX_PROMPT_CHARS,
                           help="Any text. The model reads it one character at a time.")
    seed = controls.seed(help="Fixes the random draws of Generate (and the random weights, when they are shown): "
                              "the same seed, prompt and settings always give the same text.")
    sides = mv.sides(chosen, seed)
    model = sides["trained"]
    mv.task_note(model)
    controls.show_url_notes()

    mv.model_note(model, model_error)
    ids = prompt_section(model, prompt)
    seen = mv.read_or_say(model, ids)
    # Written on every run, empty or not: a live part rerunning alone may fill only a place outside it that it
    # wrote in on the page's last full run (an empty prompt there, then a typed one).
    inside = screen.inside.container()
    if seen is not None:
        # the sections with controls of their own are live parts of their own: a move of one reruns that alone
        page.live(next_character.sampling_sections, sides, ids, seed)
        with inside:
            attention_section(model, ids, seen["weights"])
            page.live(head_view_section, model, ids, seen["weights"])
            page.live(knockout_section, model, ids, "fm")
    if chosen is None:
        with screen.model:
            structure.model_sections(model)


page.opening(COURSE, "full_model")

chosen, model_error = mv.chosen_model()  # a new choice runs the whole page
screen = Screen(*(st.container() for _ in Screen._fields))
with screen.reading:
    page.live(reading_and_generating, chosen, model_error, screen)
with screen.why_top_p:
    why_top_p.section(game_model())  # the shipped model, fixed settings: outside the live parts
with screen.guess:
    page.live(lambda: guess_section(game_model()))  # a guess, or the next puzzle, reruns the game alone
if chosen is not None:
    with screen.model:
        structure.model_sections(chosen)

page.closing(COURSE, "full_model", questions, code=(
    forward, embed, block, attention_layer, next_token_probs, probs_from_logits, nucleus_of, generate,
    maths.decode, maths.tail_draws, maths.loop, maths.compare, maths.pick_position, maths.score, maths.tally,
    sinusoidal_encoding, costs.param_count, costs.attention_costs, costs.attention_memory, costs.attention_flops,
    costs.kv_cache_bytes, costs.memory_curves))

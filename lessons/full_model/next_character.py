"""The next character and generated text: the bars of each side (the trained model and, beside it, random weights
when asked) under the temperature, top-k and top-p that sample them, the nucleus marked when top-p is below 1, and
text generated with the same settings. A live part of its own: those controls and the length reach nothing else."""

from __future__ import annotations

import streamlit as st

from core.sampling import probs_from_logits
from lessons.full_model import nucleus
from ui.frame import prose
from ui.sections import model_views as mv
from ui.sections import views
from ui.state import controls

# What the bars' title says whatever the sampling controls set: the text a screen reader reads names them by it
# (the whole title, with the temperature and the limits, is read from the chart's table: render.show).
SAID_TITLE = ("P(next | prompt), the chance of each next character given the prompt, at the temperature, top-k and "
              "top-p set above")


def next_character_section(sides: dict, ids: tuple) -> tuple[float, int, float]:
    """The next-character bars of each side under the sampling controls drawn above them; with top-p below 1,
    the nucleus marked on them and described. Returns (temperature, top_k, top_p)."""
    st.header("Next character")
    vocab = sides["trained"].cfg.vocab_size
    temperature_place, k_place, p_place = views.in_a_row(3)
    temperature = controls.sampling_temperature(container=temperature_place)
    top_k = controls.number_slider("fm_top_k", "Top-k (0 = no limit)", 0, vocab, 0, container=k_place,
                                   help="Keep only the k most likely characters before sampling; 0 keeps them all.")
    top_p = controls.number_slider("fm_top_p", "Top-p (1 = no limit)", 0.05, 1.0, 1.0, step=0.05, container=p_place,
                                   help="Keep only the most likely characters, from the top down, until their "
                                        "probabilities add up to at least p (the nucleus); 1 keeps them all.")
    controls.show_url_notes()
    title = (f"P(next | prompt), temperature {temperature:g}" + (f", top-{top_k}" if top_k else "")
             + (f", top-p {top_p:g}" if top_p < 1 else ""))
    frames = []
    for column, (which, m) in zip(st.columns(len(sides)), sides.items()):
        with column:
            side_title = f"{which.capitalize()} · {title}" if len(sides) > 1 else title
            said = f"{which.capitalize()} · {SAID_TITLE}" if len(sides) > 1 else SAID_TITLE
            if top_p < 1:
                seen = nucleus.read(m, ids, temperature, top_k, top_p)
                frames.append(nucleus.bars(seen, m.tokenizer, side_title, said))
                st.caption(nucleus.caption(seen, m.tokenizer, top_p, len(frames[-1])))
            else:
                probs = probs_from_logits(mv.read_prompt(m.source, ids)["logits"], temperature, top_k or None)  # (V,)
                frames.append(mv.bars(probs, m.tokenizer, side_title, said))
    V = sides["trained"].cfg.vocab_size
    st.caption(prose.text("full_model", "bars", V=V, bars=len(frames[0]), mass=sum(frames[0].columns["value"])))
    return temperature, top_k, top_p


def generate_section(sides: dict, ids: tuple, sampling: tuple, seed: int) -> None:
    """sampling: (temperature, top_k, top_p), as the bars above use them; the length to generate is set here."""
    title = st.container()  # the heading's text names the length: written once the slider is read
    n_chars = controls.number_slider("fm_n_chars", "Characters to generate", 1, 300, 80, container=st,
                                     width=controls.IN_PAGE_PX)
    controls.show_url_notes()
    with title:
        prose.section("Generate", "full_model", "generate", n=n_chars, seed=seed)
    temperature, top_k, top_p = sampling
    settings = (sides["trained"].source, ids, n_chars, temperature, top_k, top_p, seed, len(sides) > 1)
    if st.button("Generate", key="fm_generate"):
        mv.generate_all(sides, ids, n_chars, temperature, top_k, seed, settings, top_p=top_p if top_p < 1 else None)
    mv.show_generated(settings)


def sampling_sections(sides: dict, ids: tuple, seed: int) -> None:
    """The next character and generated text, with the sampling controls beside them: a live part of its own
    (the temperature, top-k, top-p and the length to generate reach nothing else)."""
    sampling = next_character_section(sides, ids)
    generate_section(sides, ids, sampling, seed)

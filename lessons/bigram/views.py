"""The bigram lesson's own pieces: which text and tokenizer it reads, and its table of (context -> target)
pairs with the section that draws it. Its results, shared by every session, are made in cached.py."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.data import CorpusUnavailable, pydoc_text
from core.tokenize import CharTokenizer
from lessons.bigram import maths
from lessons.bigram.cached import SOURCES, split_text
from ui.compute import model_store
from ui.compute.model_store import Model
from ui.frame import prose
from ui.sections.model_views import shown
from ui.sections.views import number_table
from ui.state import controls
from ui.text import code_span

OWN_TEXT = ("the cat sat on the mat. the dog sat on the log. the cat saw the dog, and the dog saw the cat. "
            "then the cat ran to the mat and the dog ran to the log.")
MAX_OWN_CHARS = 3000


def shipped_model() -> Model | None:
    """The shipped character transformer (its tokenizer is the page's), or None when there is none."""
    name = model_store.default_model()
    try:
        return model_store.load_model(name) if name else None
    except ValueError as err:
        st.error(str(err))
        return None


def choose_text(source: str, own: str, model: Model | None) -> tuple[str, CharTokenizer]:
    """The text source actually used and its tokenizer: the model's, else one fit on the text. Falls back to
    the user's text when the documentation is missing; stops the page when the text is too short."""
    for used in dict.fromkeys((source, SOURCES[1])):
        try:
            text = own if used == SOURCES[1] else (pydoc_text() if model is None else "")
            tok = model.tokenizer if model else CharTokenizer.fit(text or " ")
            split_text(used, own, "".join(tok.itos[1:]))
            return used, tok
        except CorpusUnavailable as err:
            st.warning(prose.text("bigram", "unavailable", why=str(err)))
        except ValueError as err:
            st.warning(str(err))
    st.stop()


def pairs_table(pairs: dict, tok: CharTokenizer) -> dict:
    """core's (context -> target) pairs as a table: the position, the context read so far, the one character a
    bigram model reads, and the target, each character drawn visibly (a space as '␣', a new line as '⏎')."""
    def text(ids) -> str:
        return "".join(shown(tok.itos[i]) for i in np.asarray(ids).tolist())

    return {"t": list(range(len(pairs["x"]))), "context x[0..t]": [text(c) for c in pairs["contexts"]],
            "bigram reads x[t]": [text([i]) for i in pairs["x"]], "target y[t]": [text([i]) for i in pairs["y"]]}


def pairs_section(fit: np.ndarray, tok: CharTokenizer, model: Model | None) -> None:
    """The task as (context -> target) pairs for the first positions of the fitted text: a live part of its own,
    its slider beside the table (it reaches nothing else)."""
    title = st.container()  # the heading says how many pairs: written once the slider is read
    n = controls.number_slider("bigram_pairs", "(context → target) pairs shown", 1, 32, 12,
                               container=st, width=controls.IN_PAGE_PX,
                               help="How many positions of the text the table of pairs lists, from the start.")
    controls.show_url_notes()
    pairs = maths.context_target_pairs(fit, n)
    with title:
        prose.section("The task: (context → target) pairs", "bigram", "pairs", n=len(pairs["x"]))
    number_table(pairs_table(pairs, tok), columns=[])
    window = f"up to {model.cfg.max_len} characters" if model else "as many characters as its window holds"
    clash = pairs["clash"]
    if clash is None:
        st.caption(prose.text("bigram", "pairs_bigram", window=window))
        return
    i, j = clash
    char = {name: code_span(shown(tok.itos[int(pairs[key][t])])) for name, key, t in
            (("last", "x", i), ("first", "y", i), ("second", "y", j))}
    st.caption(prose.text("bigram", "pairs_clash", window=window, i=i, j=j, **char))

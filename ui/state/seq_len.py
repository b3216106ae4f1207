"""The shared seq_len slider: how many tokens of the input text a sentence lesson reads, its range following the
text so that every move of it changes what is drawn."""

from __future__ import annotations

import streamlit as st

from ui.state import controls

SEQ_LEN = "seq_len"
_SEQ_TOP = "_seq_len_top"  # the slider's top when it was last drawn


def seq_len(n_tokens: int, hi: int = 32, default: int = 16) -> int:
    """How many of the input text's n_tokens the page reads, from the first.

    The slider runs from 1 to the text's length (at most hi), so every move of it changes what is drawn: with a
    range fixed at 1 to 32, the 7-token default sentence left 25 of its 32 places doing nothing. A text of one
    token has nothing to choose (a slider from 1 to 1 cannot be drawn): 1."""
    top = min(hi, n_tokens)
    if top < 2:
        return 1
    default = min(default, top)
    _seq_len_follows_the_text(top, hi, default)
    value = controls.number_slider(SEQ_LEN, "Tokens used (seq_len)", 1, top, default,
                          help=f"How many tokens of the input text the page reads, from the first: the slider runs "
                               f"to the text's length (at most {hi}).")
    st.session_state[_SEQ_TOP] = top
    return value


def _seq_len_follows_the_text(top: int, hi: int, default: int) -> None:
    """A slider left at the end of a text stays at the end of the next one (a student who types a longer
    sentence sees it, up to the default); a link's seq_len above its text's length meant all of the text, and
    still does, with no note (the link then reads as what is drawn)."""
    state = st.session_state
    if SEQ_LEN in state:
        if state[SEQ_LEN] == state.get(_SEQ_TOP) != top:  # it stood at the end of another text
            state[SEQ_LEN] = default
    elif SEQ_LEN not in state.get(controls.PENDING, {}) and (raw := st.query_params.get(SEQ_LEN)) is not None:
        try:
            asked = float(raw)
        except ValueError:
            return  # the slider's own check says why
        if top < asked <= hi:
            state[SEQ_LEN] = top
            state.setdefault(controls.FROM_LINK, set()).add(SEQ_LEN)

"""The sequence the circuit model reads: typed letters as its ids (or a message saying why they cannot be read), and
the sequence drawn with its first copy and its repeat marked."""

from __future__ import annotations

import numpy as np
import streamlit as st

from lessons.circuit.cached import training_lengths
from ui.frame import prose
from ui.text import code_span


def typed_ids(model, text: str) -> tuple[int, ...] | None:
    """The typed letters as ids; None (and a message) when they cannot be read."""
    letters, alphabet, most = "".join(text.split()).upper(), model.meta["tokenizer"]["chars"], model.cfg.max_len
    bad = list(dict.fromkeys(c for c in letters if c not in alphabet))
    if bad:
        st.warning(f"The model knows only the {len(alphabet)} letters {alphabet[0]} to {alphabet[-1]}; "
                   f"it cannot read {', '.join(code_span(c) for c in bad[:10])}{' …' * (len(bad) > 10)}. "
                   "Remove them to see the circuit.")
        return None
    if len(letters) < 2:
        st.info("Type at least two letters A to X: a repeat needs something to repeat.")
        return None
    if len(letters) > most:
        st.warning(f"The model reads at most {most} letters: the first {most} of your {len(letters)} are used.")
    return tuple(int(i) for i in model.tokenizer.encode(letters[:most]))


def section(letters: str, a: dict, model) -> None:
    lo, hi = training_lengths(model)
    alphabet = model.meta["tokenizer"]["chars"]
    prose.section("The sequence", "circuit", "sequence", lo=lo, hi=hi, first=alphabet[0], last=alphabet[-1])
    firsts = {t + 1 for t in np.flatnonzero(a["first"])}
    repeats = {t + 1 for t in np.flatnonzero(a["repeat"])}
    marked = [f":blue-background[**{c}**]" if i in firsts else f":orange-background[**{c}**]" if i in repeats
              else c for i, c in enumerate(letters)]
    st.markdown(" ".join(marked))
    st.caption(f"{len(letters)} letters. " + prose.text("circuit", "marks", n_first=len(firsts),
                                                         n_repeat=len(repeats)))
    if not repeats:  # said before any figure: the repeat's own figures are left out below
        st.info(prose.text("circuit", "no_repeat"))

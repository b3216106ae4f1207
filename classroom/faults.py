"""A fault in one part of a class's page, said in a sentence there while the rest of the page keeps working: a
database that fails (the store's StoreError, already a sentence), or a bug met while drawing a question (logged
with its traceback for whoever runs the server, never shown: a projector in front of a class least of all).

    with caught(PROJECTOR):
        one_question(...)
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from store import classes
from ui.text import escape_md

log = logging.getLogger(__name__)

PROJECTOR = "This part cannot be drawn: something went wrong on the server. It tries again in a moment."
PHONE = "This question cannot be shown here: something went wrong on the server. Tell your teacher."
TEACHER = ("This part cannot be shown: something went wrong on the server (its log has the details). The rest of "
           "the page works.")


@contextmanager
def caught(sentence: str) -> Iterator[None]:
    """Run the block; a StoreError is shown as its own sentence, any other fault as `sentence` (and logged).
    Streamlit's rerun and stop pass through: they derive from BaseException, not Exception."""
    try:
        yield
    except classes.StoreError as error:
        st.warning(escape_md(str(error)))
    except Exception:  # a bug in one question must not take the page, or the class, down with it
        log.exception("A part of the Class page failed")
        st.warning(sentence)


def failed(error: classes.StoreError) -> str:
    """A database failure as the page says it (the store's own sentence, its Markdown escaped)."""
    return escape_md(str(error))

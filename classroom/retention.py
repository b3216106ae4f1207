"""How long a class is kept, as the class pages say it and the teacher acts on it: the sentence the join form and
the teacher's page show (kept_sentence, worked out from the setting, never typed), and the teacher's control that
deletes a class's data now (delete_control). The deleting is the store's (store.classes.purge, delete_session).
"""

from __future__ import annotations

import streamlit as st

from store import classes
from store.engine import Engine

SURE_KEY, DELETE_KEY = "class_delete_sure", "class_delete"
DELETED = ("Deleted: this class's questions, its students' nicknames and their answers are removed from the app's "
           "database, and its code opens nothing now. Files you exported are not affected.")


def kept_for(days: int) -> str:
    """Until when a class's data stays, in words: "28 days after the class ends", or "the class ends"."""
    return ("" if days == 0 else f"{days} day{'' if days == 1 else 's'} after ") + "the class ends"


def kept_sentence() -> str:
    """What a student joining and the teacher read about keeping: from store.classes.keep_days() (the setting).
    Raises StoreError, with a sentence to show, when the setting is not a number of days."""
    return (f"Nicknames, answers and a code for each browser are kept in the app's database until "
            f"{kept_for(classes.keep_days())} or its code expires, whichever comes first, then deleted the next time "
            "the Class page is used; the teacher can delete them sooner.")


def delete_control(engine: Engine, code: str, key: str) -> bool:
    """The teacher's "Delete this class's data": a tick that what is needed was exported, then the button. It
    says what happened; True once the class is deleted (the page then has no class to show)."""
    st.caption("Deleting removes this class's questions, nicknames and answers from the app's database now; phones "
               "and the projector then find no class under this code. Files you exported are not affected.")
    sure = st.checkbox("I have exported what I need", key=SURE_KEY)
    pressed = st.button("Delete this class's data", key=DELETE_KEY, disabled=not sure)
    if not (pressed and sure):  # both: a disabled button is only drawn so, a crafted message could still press it
        return False
    try:
        refused = classes.delete_session(engine, code, key)
    except classes.StoreError as error:
        st.error(str(error))
        return False
    if refused is not None:
        st.error(refused.message)
        return False
    st.success(DELETED)
    return True

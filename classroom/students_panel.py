"""The teacher's "Students" panel: who is in the class (number, nickname, answers given), how many students the
class takes, and removing a student (their answers leave every count; their browser cannot join again). The
store checks the teacher's key on each (store.classes.roster)."""

from __future__ import annotations

import time

import streamlit as st

from classroom import faults
from store import classes
from store.engine import Engine

ONE_BALLOT = ("One browser is one student, in all its tabs. A student who joins again from another browser or a "
              "private window counts twice: remove the extra one here. Numbers follow the order of joining and "
              "stay with each student.")


SAID = "_class_students_said"  # (done?, sentence) of the last change, for the run after it


def _name(student: classes.Student) -> str:
    return f"student {student.number}" + (f" ({student.nickname})" if student.nickname else "")


def panel(engine: Engine, code: str, key: str, seats: int) -> None:
    with faults.caught(faults.TEACHER):
        found = classes.roster(engine, code, key)
        if isinstance(found, classes.Refusal):
            st.error(found.message)
            return
        st.caption(ONE_BALLOT)
        if SAID in st.session_state:  # what the last change did, said after the rerun that shows it
            good, text = st.session_state.pop(SAID)
            (st.success if good else st.error)(text)
        if found:  # a table shows nicknames as text: nothing in one is read as Markdown or HTML
            st.dataframe([{"student": s.number, "nickname": s.nickname or "", "answers": s.answers} for s in found],
                         hide_index=True, width="stretch")
            with st.form("class_remove"):
                by_number = {s.number: s for s in found}
                who = st.selectbox("Remove a student", list(by_number), index=None, placeholder="Choose a student",
                                   format_func=lambda n: _name(by_number[n]))
                if st.form_submit_button("Remove from the class"):
                    if who is None:
                        st.warning("Choose a student first: nobody was removed.")
                    else:
                        _done(classes.remove_student(engine, code, key, who, time.time()),
                              f"Removed {_name(by_number[who])}: their answers are deleted and leave every count, and "
                              "their browser cannot join again. The nickname stays, hidden, until the class's data "
                              "is deleted. Their phone says so within seconds.")
        with st.form("class_seats"):
            wanted = st.number_input("Students the class takes", 1, classes.SEATS_MAX, seats, step=1,
                                     help="Joins stop at this number. Fewer than have joined removes nobody.")
            if st.form_submit_button("Set"):
                _done(classes.set_seats(engine, code, key, int(wanted)), f"The class now takes {int(wanted)} students.")


def _done(result: classes.Refusal | None, done: str) -> None:
    """Say what a change did on the next run, which draws the list and the counts as they now are."""
    st.session_state[SAID] = (result is None, done if result is None else result.message)
    st.rerun()

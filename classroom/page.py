"""The Class page: a teacher starts a class, students join it on their phones, the projector shows it.

Who sees what: no code in the address, the start page (start a class, or type a code to join); a code alone, a
student's page; `view=projector`, the projector's; `teacher=1` and the class's teacher key, the teacher's page. The
key is never in an address the app makes: the browser that started the class finds it again from its device
number (classroom.device), another browser is given it by the teacher pasting it. An old link's `key=` is read
once and taken out of the address bar.
"""

from __future__ import annotations

import time

import streamlit as st

from classroom import connection, device, projector, student, teacher
from store import classes, codes
from ui.frame import page as frame
from ui.text import escape_md


def start_page(engine) -> None:
    st.title("Class")
    st.markdown("Ask the room a question, let everyone answer on their phones, and show the room's answers beside "
                "the right one (computed by the lessons' code wherever there is something to compute).")
    teach, join = st.columns(2)
    with teach, st.form("class_start"):
        st.header("Teach")
        title = st.text_input("Title (optional)", max_chars=codes.TITLE_MAX, placeholder="e.g. Tuesday, group B")
        seats = st.number_input("Students in the room", 1, classes.SEATS_MAX, classes.SEATS, step=1,
                                help="Joins stop at this number (one browser is one student); you can change it "
                                     "on the teacher's page.")
        if st.form_submit_button("Start a class"):
            code, key = classes.start_session(engine, time.time(), title=title, seats=int(seats),
                                            key_for=lambda code: device.teacher_key(code)[0])
            teacher.remember(code, key)
            st.query_params.from_dict({"code": code, "teacher": "1"})
            st.rerun()
    with join, st.form("class_join_code"):
        st.header("Join")
        typed = st.text_input("Class code", max_chars=12, placeholder="K7M-4QX")
        if st.form_submit_button("Join"):
            code = codes.normal_code(typed)
            if code is None:
                st.error(f"That is not a class code: {codes.CODE_RULE}, as the projector shows it.")
            else:
                st.query_params.from_dict({"code": code})
                st.rerun()


def _teaching(engine, code: str, asks_to_teach: bool) -> tuple[classes.Session, str] | None:
    """The class and its teacher key when this tab teaches it: the key it was given (pasted, or an old link's),
    else, on the teacher's page, the key this browser derives for the class's current key generation (the
    browser that started the class, or made its latest key). None when neither opens the class."""
    kept = teacher.key_for(code)
    tries = [kept] if kept else []
    if asks_to_teach or kept:
        tries.append(device.teacher_key(code, classes.key_generation(engine, code))[0])
    for key in tries:
        if isinstance(found := classes.teacher(engine, code, key), classes.Session):
            teacher.remember(code, key)
            return found, key
    if kept:
        teacher.forget(code)  # a key made anew since: this tab is given the new one, or pastes it
    return None


def main() -> None:
    if st.query_params.get("view") == "projector":
        projector.presenting()
    frame.switches()
    device.number()  # a browser's first visit: it makes its device number, then the page reloads with it
    try:
        engine = connection.engine()
    except classes.StoreError as error:
        st.error(str(error))
        return
    code = codes.normal_code(st.query_params.get("code") or "")
    if not st.query_params.get("code"):
        start_page(engine)
        return
    if code is None:
        st.error(f"The link's code is not a class code: {codes.CODE_RULE}, as the projector shows it. Check the "
                 "link, or type the code in the Join box.")
        start_page(engine)
        return
    given, refused = st.query_params.get("key"), False
    if given:  # an old teacher link: keep the key in this tab, take it out of the address bar
        if isinstance(classes.teacher(engine, code, given), classes.Session):
            teacher.remember(code, given)
        else:
            refused = True
            st.error("This teacher link does not open this class: its key is not the class's (or the class's data "
                     "has been deleted). Check that you "
                     "copied the whole link.")
        del st.query_params["key"]
        st.query_params["teacher"] = "1"
    asks_to_teach = bool(st.query_params.get("teacher"))
    if (found := _teaching(engine, code, asks_to_teach)) is not None:
        teacher.page(engine, *found)
        return
    if asks_to_teach:
        if classes.find_session(engine, code, time.time()) == classes.Refusal("unknown"):
            st.error(classes.Refusal("unknown").message)  # deleted: no key opens it, and no form should ask for one
        elif not refused:
            teacher.key_form(engine, code)
        return
    session = classes.look_up(engine, code, time.time(), device.address())
    if isinstance(session, classes.Refusal):
        if session.reason in ("ended", "expired"):  # a student of that class: no start page to confuse them
            st.info(session.message)
        else:
            st.error(session.message)
            start_page(engine)
    elif st.query_params.get("view") == "projector":
        projector.page(engine, session)
    else:
        student.page(engine, session)


try:
    main()
except classes.StoreError as error:  # the database failed mid-way: say so; the lessons do not need it
    st.error(escape_md(str(error)))

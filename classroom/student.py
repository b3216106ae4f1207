"""A student's phone in a class: join with a nickname (or none), then answer what the teacher asks.

The join link names the class (`?code=K7M4QX`). Joining gives the student a random token, kept in the page's
address (`&me=...`), so a reload or a dropped connection keeps the same student and the same answers; the store
keeps only its hash. The question part refreshes itself every POLL_S seconds (a new question appears without a
tap), and an answer can be changed while its question is open. After the reveal, each student sees their own
answer and whether it was right; nobody else's.
"""

from __future__ import annotations

import time

import streamlit as st
from sqlalchemy import Engine

from classroom import asked, codes, store
from classroom.questions import ClassQuestion, answer_text, grade, read_character, read_number
from ui.text import code_span, escape_md

POLL_S = 2.0  # how often a student's page asks whether the teacher put a new question
TOKEN = "me"  # the student's token in the address
CLOSED_QUIZ = {"pre": "The quiz is closed: no more answers. Its answers wait until after the lesson.",
               None: "The quiz is closed: no more answers."}
FLASH = "_class_student_flash"  # a sentence for the next run of the page (after a rerun that drops the token)


def join_form(engine: Engine, session: store.Session) -> None:
    """The nickname box and the Join button; on success the address carries the student's token."""
    if FLASH in st.session_state:
        st.warning(st.session_state.pop(FLASH))
    title = f" “{escape_md(session.title)}”" if session.title else ""
    st.subheader(f"Join the class{title} ({codes.shown_code(session.code)})")
    with st.form("class_join"):
        nickname = st.text_input("Nickname (optional)", max_chars=codes.NICKNAME_MAX,
                                 help="Your teacher's page shows it, and your teacher may export it with your "
                                      "answers; the projector never shows it. Leave it empty to be a number "
                                      "instead.")
        joined = st.form_submit_button("Join")
    st.caption("Keep this tab (or its address): joining again, from the code or a new tab, makes you a new student.")
    if joined:
        token = codes.new_token()
        result = store.join(engine, session.code, token, codes.clean_nickname(nickname), time.time())
        if isinstance(result, store.Refusal):
            st.error(result.message)
            return
        st.query_params[TOKEN] = token
        st.rerun()


def answer_box(engine: Engine, code: str, token: str, row: store.Question, q: ClassQuestion) -> None:
    """The widget for q's kind and a Send button, in a form (one message to the server per answer)."""
    with st.form(f"class_answer_{row.id}"):
        if q.kind in ("choice", "key"):
            picked = st.radio("Your answer", range(len(q.options)), index=None, key=f"class_pick_{row.id}",
                              format_func=lambda i: (f"{chr(65 + i)}. " if q.kind == "choice" else "") + q.options[i])
            value = "" if picked is None else str(picked)
        elif q.kind == "number":
            value = st.text_input("Your answer (a number)", max_chars=40, key=f"class_number_{row.id}",
                                  placeholder="e.g. 0.25 or 1/4")
        else:
            value = st.text_input("Your answer (one character)", max_chars=4, key=f"class_char_{row.id}")
        sent = st.form_submit_button("Send")
    if sent:
        problem = unreadable(q, value)
        if problem:  # said on the phone, nothing written: the room's count holds answers only
            st.warning(problem)
            return
        result = store.answer(engine, code, token, row.id, value, time.time())
        if isinstance(result, store.Refusal) and result.reason in ("not joined", "no token"):  # an edited link
            st.session_state[FLASH] = ("This link's student is not in this class (was the address edited?): join "
                                       "again, then answer.")
            del st.query_params[TOKEN]
            st.rerun(scope="app")
        if isinstance(result, store.Refusal):
            st.warning(result.message)
        else:
            st.toast("Answer sent.", icon=":material/check:")


def unreadable(q: ClassQuestion, value: str) -> str | None:
    """Why `value` cannot be an answer to q, in a sentence for the phone; None when it can."""
    if q.kind in ("choice", "key"):
        return None if value else "Pick an answer first, then press Send."
    if q.kind == "number":
        return None if read_number(value) is not None else (
            "That is not a number: type one such as 0.25, 1/4 or 3e-2, then press Send.")
    return None if read_character(value) is not None else (
        "Type exactly one character (a space counts as one), then press Send.")


def mine(engine: Engine, row: store.Question, token: str, q: ClassQuestion) -> None:
    """This student's own answer to a question, and after the reveal whether it was right."""
    value = store.my_answer(engine, row.id, token)
    if value is None:
        st.caption("You did not answer this one." if row.state != "open" else "No answer sent yet.")
    elif row.state == "revealed":
        right = grade(q, value)
        (st.success if right else st.info)(f"Your answer: {_as_text(q, value)}. " +
                                           ("Right!" if right else "Not this time."))
    if row.state == "revealed":  # the answer and why, for everyone: those who did not answer learn from it too
        st.markdown(f"**Answer:** {answer_text(q)}\n\n{q.explanation}")
    elif value is not None:
        shown = _as_text(q, value)
        st.caption(f"Your answer: {shown}" + (" (you can change it while the question is open)"
                                               if row.state == "open" else ""))


def _as_text(q: ClassQuestion, value: str) -> str:
    if q.kind in ("choice", "key") and value.isdigit() and int(value) < len(q.options):
        i = int(value)
        return (f"{chr(65 + i)}. " if q.kind == "choice" else "") + q.options[i]
    return code_span(value) if value.strip() else "(a space)"


def questions_part(engine: Engine, code: str, token: str) -> None:
    """What the room is asked now; refreshed every POLL_S seconds."""
    try:
        rows = asked.shown(engine, code)
        session = store.find_session(engine, code, time.time())
    except store.StoreError as error:
        st.warning(str(error))
        return
    if isinstance(session, store.Refusal):
        st.info(session.message)
        return
    if not rows:
        st.info("Joined. The first question will appear here when your teacher asks it.",
                icon=":material/hourglass_top:")
        return
    together = len(rows) > 1  # a quiz: its items open, close and are revealed together
    if together and rows[0].state == "open":
        st.caption("Answer every question, and guess if you are not sure: a quiz with a question left out is not "
                   "counted. Each question has its own Send button: send each one.")
    elif together and rows[0].state == "closed":
        st.info(CLOSED_QUIZ.get(asked.round_of(rows[0]), CLOSED_QUIZ[None]))
    for row in rows:
        q = asked.question(row)
        st.markdown(f"#### Question {row.position}\n\n{q.prompt}")
        if row.state == "open":
            answer_box(engine, code, token, row, q)
        elif row.state == "closed" and not together:
            st.caption("This question is closed: no more answers.")
        mine(engine, row, token, q)


def page(engine: Engine, session: store.Session) -> None:
    token = st.query_params.get(TOKEN)
    if not token:
        join_form(engine, session)
        return
    st.fragment(questions_part, run_every=POLL_S)(engine, session.code, token)

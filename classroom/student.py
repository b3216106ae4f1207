"""A student's phone in a class: join with a nickname (or none), then answer what the teacher asks.

The join link names the class (`?code=K7M4QX`). A student is this browser (classroom.device): every tab of it, a
reload, a dropped connection, or leaving by the sidebar and coming back is the same student with the same
answers, and nothing of it is in the address; the store keeps only a hash of the student's token. The question
part refreshes itself every POLL_S seconds (a new question appears without a tap), and an answer can be changed
while its question is open. After the reveal, each student sees their own answer and whether it was right;
nobody else's.
"""

from __future__ import annotations

import time

import streamlit as st

from classroom import asked, device, faults, retention
from classroom.questions import ClassQuestion, answer_text, grade
from classroom.typed import read_character, read_index, read_number
from store import classes, codes
from store.engine import Engine
from ui.frame.class_question import char_text
from ui.text import code_span, escape_md

POLL_S = 2.0  # how often a student's page asks whether the teacher put a new question
CLOSED_QUIZ = {"pre": "The quiz is closed: no more answers. Its answers wait until after the lesson.",
               None: "The quiz is closed: no more answers."}
FLASH = "_class_student_flash"  # a sentence for the next run of the page (after a rerun that drops the token)
# What the join form says a student is: honest about what counts as one (classroom.device)
ONE_BROWSER = ("This browser is one student (the app keeps a random number for it in a cookie): its other tabs, "
               "a reload, or leaving and coming back are still you. Another browser or a private window would be "
               "a new student.")
ONE_TAB = ("If this note stays, this browser keeps no cookie for this app, so this tab alone is you: keep it open, "
           "as a reload or another tab would be a new student.")
REMOVED = "Your teacher removed this browser from the class: your answers were deleted, and it cannot answer any more."


def join_form(engine: Engine, session: classes.Session, token: str, shared: bool) -> None:
    """The nickname box and the Join button; once joined, this browser (or this tab: `shared` False) is the
    student `token` names."""
    if FLASH in st.session_state:
        st.warning(st.session_state.pop(FLASH))
    title = f" “{escape_md(session.title)}”" if session.title else ""
    st.subheader(f"Join the class{title} ({codes.shown_code(session.code)})")
    with st.form("class_join"):
        # no max_chars: a browser drops a longer paste without a word; the store refuses it with a sentence
        nickname = st.text_input("Nickname (optional)",
                                 help="Your teacher's page shows it, and your teacher may export it with your "
                                      "answers; the projector never shows it. Leave it empty to be a number "
                                      "instead.")
        joined = st.form_submit_button("Join")
    st.caption(f"{ONE_BROWSER if shared else ONE_TAB} {retention.kept_sentence()}")
    if joined:
        result = classes.join(engine, session.code, token, nickname, time.time(), address=device.address())
        if isinstance(result, classes.Refusal):
            st.error(result.message)
            return
        st.rerun()


SAID = "_class_student_said"  # {question id: what its last Send got}: said until the student sends it again


def answer_box(engine: Engine, code: str, token: str, row: classes.Question, q: ClassQuestion,
               saved: str | None) -> None:
    """The widget for q's kind, holding the answer saved (after a reload too), and a Send button, in a form (one
    message to the server per answer). What a Send was refused for stays under it until the next Send: the part
    refreshes every POLL_S seconds, and a refusal gone by then leaves a student thinking the answer went in."""
    with st.form(f"class_answer_{row.id}"):
        value = _widget(q, row, saved)
        sent = st.form_submit_button("Send")
    said = st.session_state.setdefault(SAID, {})
    if sent:
        said.pop(row.id, None)
        refused = _send(engine, code, token, row, q, value)
        if refused:
            said[row.id] = refused
        else:
            st.toast("Answer sent.", icon=":material/check:")
    if row.id in said:
        st.warning(said[row.id])


def _widget(q: ClassQuestion, row: classes.Question, saved: str | None) -> str:
    """The answer's widget, its value as text. A typed answer's box has no max_chars: a browser drops a paste
    over it without a word, so a long one reaches unreadable, which says why it is not sent."""
    if q.kind in ("choice", "key"):
        picked = st.radio("Your answer", range(len(q.options)), index=read_index(saved or "", len(q.options)),
                          key=f"class_pick_{row.id}",
                          format_func=lambda i: (f"{chr(65 + i)}. " if q.kind == "choice" else "") + q.options[i])
        return "" if picked is None else str(picked)
    if q.kind == "number":
        return st.text_input("Your answer (a number)", saved or "", key=f"class_number_{row.id}",
                             placeholder="e.g. 0.25 or 1/4")
    return st.text_input("Your answer (one character)", saved or "", key=f"class_char_{row.id}")


def _send(engine: Engine, code: str, token: str, row: classes.Question, q: ClassQuestion, value: str) -> str | None:
    """Send the answer: None once the store has it, else the sentence that says why not (nothing was written)."""
    problem = unreadable(q, value)
    if problem:  # said on the phone, nothing written: the room's count holds answers only
        return problem
    try:
        result = classes.answer(engine, code, token, row.id, value, time.time())
    except classes.StoreError as error:
        return faults.failed(error)
    if isinstance(result, classes.Refusal) and result.reason in ("not joined", "no token"):  # no longer a student
        st.session_state[FLASH] = REMOVED
        st.rerun(scope="app")
    return result.message if isinstance(result, classes.Refusal) else None


def unreadable(q: ClassQuestion, value: str) -> str | None:
    """Why `value` cannot be an answer to q, in a sentence for the phone; None when it can."""
    if len(value) > codes.ANSWER_MAX:
        return f"That is {len(value):,} characters: an answer is at most {codes.ANSWER_MAX}. Nothing was sent."
    if q.kind in ("choice", "key"):
        return None if value else "Pick an answer first, then press Send."
    if q.kind == "number":
        return None if read_number(value) is not None else (
            "That is not a number: type one such as 0.25, 1/4 or 3e-2, then press Send.")
    return None if read_character(value) is not None else (
        "Type exactly one character (a space counts as one), then press Send.")


def mine(row: classes.Question, q: ClassQuestion, value: str | None) -> None:
    """This student's own answer to a question (`value`, None for none), and after the reveal whether it was
    right."""
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
    if q.kind == "char":
        return char_text(read_character(value) or value)
    return code_span(value) if value.strip() else "(a space)"


def questions_part(engine: Engine, code: str, token: str) -> None:
    """What the room is asked now; refreshed every POLL_S seconds. A fault is said where it happened (a database
    error in its own words), and the other questions are still shown."""
    with faults.caught(faults.PHONE):
        rows = asked.shown(engine, code)
        session = classes.find_session(engine, code, time.time())
        if isinstance(session, classes.Refusal):
            st.info(session.message)
            return
        if not classes.enrolled(engine, code, token):  # removed by the teacher since the page was opened
            st.warning(REMOVED)
            return
        if not rows:
            st.info("Joined. The first question will appear here when your teacher asks it.",
                    icon=":material/hourglass_top:")
            return
        together = len(rows) > 1  # a quiz: its items open, close and are revealed together
        if together and rows[0].state == "open":
            st.caption("Answer every question, and guess if you are not sure: a quiz with a question left out is "
                       "left out of the class's before-and-after comparison. Each question has its own Send button: "
                       "send each one.")
        elif together and rows[0].state == "closed":
            st.info(CLOSED_QUIZ.get(asked.round_of(rows[0]), CLOSED_QUIZ[None]))
        for row in rows:
            with faults.caught(faults.PHONE):
                _question(engine, code, token, row, together)


def _question(engine: Engine, code: str, token: str, row: classes.Question, together: bool) -> None:
    q = asked.question(row)
    st.markdown(f"#### Question {asked.number(row)}\n\n{q.prompt}")
    saved = classes.my_answer(engine, row.id, token)
    if row.state == "open":
        answer_box(engine, code, token, row, q, saved)
        saved = classes.my_answer(engine, row.id, token)  # what this run's Send changed
    elif row.state == "closed" and not together:
        st.caption("This question is closed: no more answers.")
    mine(row, q, saved)


def page(engine: Engine, session: classes.Session) -> None:
    token, shared = device.student_token(session.code)
    standing = classes.standing(engine, session.code, token)
    if standing == "removed":
        st.warning(REMOVED)
        return
    if standing == "new":
        join_form(engine, session, token, shared)
        return
    st.fragment(questions_part, run_every=POLL_S)(engine, session.code, token)

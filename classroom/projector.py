"""The projector's view of a class (`?code=K7M4QX&view=projector`): how to join, the question, the count of
answers rising, and on Reveal the room's answers beside the answer the core computed.

It refreshes itself every POLL_S seconds (a timer part of the page), so the teacher drives it from another
device: open, close and reveal on the teacher's page, and the projector follows within that time. It shows no
nickname and no control, ever: anyone who knows the code may open it, as anyone in the room can see it.
"""

from __future__ import annotations

import time

import streamlit as st

from classroom import asked, faults, links, reveal
from store import classes, codes
from store.engine import Engine
from ui.state import presenter
from ui.text import counted, escape_md

# The count on the projector is at most this old: below a second from Send to the projector for 60 phones on one
# process (bench/class_bench.py), at about 12 ms of server CPU a refresh: 1.5% of a core for the one projector.
POLL_S = 0.8


def how_to_join(code: str, size: str) -> None:
    """The join code, the link and its QR code: "big" while the room is joining; "side" beside a question (a QR
    code a latecomer at the back can still scan); "line" on a reveal, which needs the screen (the code alone)."""
    if size == "line":
        st.markdown(f"Join at {links.join_link(code)} · code **{codes.shown_code(code)}**")
        return
    big = size == "big"
    left, right = st.columns((3, 2) if big else (4, 1), vertical_alignment="center")
    with left:
        st.markdown(f"{'## ' if big else '**'}Join at {links.join_link(code)}{'' if big else '**'}")
        st.markdown(f"{'## ' if big else ''}Code **{codes.shown_code(code)}**")
    with right:
        # PNG as made: a JPEG's blur at the modules' edges makes a QR code harder to scan from the back of a room
        st.image(links.qr_png(links.join_link(code)), width=360 if big else 200, output_format="PNG",
                 alt=f"QR code of the join link, {links.join_link(code)}",
                 caption="Scan to join" if big else None)


def live(engine: Engine, code: str) -> None:
    """The part that refreshes: the current question (or quiz), its count, and the reveal. A fault says a
    sentence and the rest keeps drawing: the join block stays, and the next refresh tries again."""
    with faults.caught(faults.PROJECTOR):
        session = classes.find_session(engine, code, time.time())
        if isinstance(session, classes.Refusal):
            st.info(session.message)
            return
        rows = asked.shown(engine, code)
        joined = classes.joined(engine, code)
        how_to_join(code, "big" if not rows else "line" if all(r.state == "revealed" for r in rows) else "side")
        if not rows:
            st.markdown(f"## {counted(joined, 'student')} joined so far. The first question comes next.")
            return
        with faults.caught(faults.PROJECTOR):
            if len(rows) > 1:
                quiz(engine, rows, joined)
            else:
                one_question(engine, rows[0], joined)


def one_question(engine: Engine, row: classes.Question, joined: int) -> None:
    q = asked.question(row)
    st.markdown(f"## Question {asked.number(row)}\n\n{q.prompt}")
    tally = classes.counts(engine, row.id)
    if row.state == "revealed":
        values = [value for value, n in tally.counts.items() for _ in range(n)]
        if q.kind == "key":  # the room's row above the computed one, key under key
            reveal.room(q, values)
            reveal.computed(q)
            return
        left, right = st.columns(2)
        with left:
            reveal.room(q, values)
        with right:
            reveal.computed(q)
        return
    reveal.pictures(q)  # a question about pictures shows them while the room answers
    st.metric("Answers so far" if row.state == "open" else "Answers (closed)", f"{tally.total} of {joined}")


def quiz(engine: Engine, rows: list[classes.Question], joined: int) -> None:
    """A quiz's items, put together: how many answered while it is open, then how the room did on each."""
    label = asked.ROUNDS.get(asked.round_of(rows[0]), "the quiz").capitalize()
    answered = classes.answered_by(engine, [row.id for row in rows])
    states = {row.state for row in rows}
    if "open" in states:
        st.markdown(f"## {label}: {len(rows)} questions on your phone")
        st.metric("Students who answered at least one so far", f"{answered} of {joined}")
    elif states == {"revealed"}:
        st.markdown(f"## {label}: how the room did")
        reveal.quiz_room([(asked.question(row), classes.counts(engine, row.id)) for row in rows],
                         [asked.number(row) for row in rows])
    else:
        st.markdown(f"## {label} is closed: {answered} of {joined} answered")


def presenting() -> None:
    """Before the page's switches are drawn: the projector's view is in presenter mode (large type and cells: it
    is read from the back of the room)."""
    st.session_state[presenter.KEY] = True


def page(engine: Engine, session: classes.Session) -> None:
    if session.title:
        st.title(escape_md(session.title))
    st.fragment(live, run_every=POLL_S)(engine, session.code)

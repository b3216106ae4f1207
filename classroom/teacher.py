"""The teacher's page of a class: the links to share, the question to ask, the controls (close, reopen, reveal,
end), and what only the teacher sees: who answered, the share of right answers per question, the class's
normalised gain between the two quizzes, and the export.

The teacher's key is never in an address: the browser that started the class finds it again from its device
number (classroom.device) after a reload, in a new tab or after a server restart; on another browser the teacher
pastes it (key_form), and that tab keeps it. Every change goes to the store with the key, which checks it: a page
without it changes nothing and says so.
"""

from __future__ import annotations

import time

import streamlit as st

from classroom import ask, asked, device, export, faults, links, retention, students_panel
from classroom.questions import answer_text, grade, read_index
from classroom.quiz import QuizGain, quiz_gain
from classroom.reveal import short
from store import classes, codes
from store.classes import asking
from store.engine import Engine
from ui.text import counted, escape_md

POLL_S = 2.0  # the teacher's count and list of who answered are at most this old
# The results, the gain and the export are at most this old. A run of them reads every question's answers: 37 ms
# (median; 116 ms at most) for 60 students and two 7-item quizzes on SQLite, under 1% of a core every 5 s.
RESULTS_S = 5.0
KEEP = "_class_teacher"  # {code: key} of the classes this tab teaches
SHARED_COMPUTER = ("This browser stays this class's teacher for as long as the class is kept: anyone using it can "
                   "open this page. On a shared computer, delete the class's data when you are done, or clear this "
                   "site's cookies.")
LOCAL_ONLY = ("Phones cannot open these links: this page's address names this computer (localhost), and on a "
              "phone it names the phone. Open the app at the Network URL that `streamlit run` printed (such as "
              "`http://192.168.1.20:8501`), on a network the phones share, and start the class there (or, to keep "
              "this one, add `/{page}?code={code}&teacher=1` to that address and paste your teacher key).")


def remember(code: str, key: str) -> None:
    st.session_state.setdefault(KEEP, {})[code] = key


def forget(code: str) -> None:
    st.session_state.get(KEEP, {}).pop(code, None)


def key_for(code: str) -> str | None:
    return st.session_state.get(KEEP, {}).get(code)


NEW_KEY_HELP = ("Every copy of the current key stops working at once, in every browser it was pasted into: use it "
                "if the key was seen or shared by mistake. This browser keeps control and finds the new key again "
                "after a reload; any other browser you teach from needs the new key pasted.")
NEW_KEY_DONE = "_class_new_key_done"


def share_panel(engine: Engine, code: str, key: str) -> None:
    with st.expander("Links and QR code", expanded=True):
        left, right = st.columns((3, 1))
        with left:
            if links.only_this_computer(links.browser_address() or ""):
                st.warning(LOCAL_ONLY.format(page=links.PAGE, code=code))
            st.markdown(f"**Students join at** {links.join_link(code)} (code **{codes.shown_code(code)}**)")
            st.markdown(f"**For the projector:** [{links.projector_link(code)}]({links.projector_link(code)}) "
                        "(no nicknames, no controls)")
            st.markdown(f"**Your page:** {links.teacher_page_link(code)} (it opens this page on this browser only)")
            with st.popover("Your teacher key (keep it private)"):
                st.caption("To teach this class from another browser, open "
                           f"{links.teacher_page_link(code)} there and paste this key; that tab keeps it until it "
                           "is reloaded or closed. Do not project it.")
                st.code(key, language=None, wrap_lines=True)
                if st.button("Make a new teacher key", key="class_new_key", help=NEW_KEY_HELP):
                    fresh = classes.new_teacher_key(engine, code, key,
                                                  key_for=lambda code, generation: device.teacher_key(
                                                      code, generation)[0])
                    if isinstance(fresh, classes.Refusal):
                        st.error(fresh.message)
                    else:
                        remember(code, fresh)
                        st.session_state[NEW_KEY_DONE] = True
                        st.rerun()
                if st.session_state.pop(NEW_KEY_DONE, False):
                    st.success("A new teacher key is made: the one above. Every earlier copy no longer works.")
        with right:
            st.image(links.qr_png(links.join_link(code)), width=160, output_format="PNG",
                     alt=f"QR code of the join link, {links.join_link(code)}")


def key_form(engine: Engine, code: str) -> None:
    """A browser that does not hold this class's teacher key: a box to paste it in (never an address)."""
    st.subheader(f"Teach class {codes.shown_code(code)} from this browser")
    st.caption("This browser does not hold this class's teacher key (the browser that started the class does). "
               "Paste the key here: it is on that browser's teacher's page, under Links and QR code, then Your "
               "teacher key.")
    with st.form("class_teacher_key"):
        pasted = st.text_input("Teacher key", type="password", max_chars=200)
        if st.form_submit_button("Open the teacher's page"):
            pasted = pasted.strip()
            if isinstance(classes.teacher(engine, code, pasted), classes.Session):
                remember(code, pasted)
                st.rerun()
            st.error("That is not this class's teacher key: nothing was opened. Check that you copied all of it.")


def controls_part(engine: Engine, code: str, key: str) -> None:
    """The current question's count, its controls, and who answered it; refreshed every POLL_S seconds. A fault
    (a database that fails on Reveal, say) is said in a sentence; the page and its controls stay."""
    with faults.caught(faults.TEACHER):
        rows = asked.shown(engine, code)
        seats = classes.teacher(engine, code, key)
        seats = f" (the class takes {seats.seats})" if isinstance(seats, classes.Session) else ""
        st.markdown(f"**{counted(classes.joined(engine, code), 'student')} joined**{seats}.")
        if not rows:
            st.caption("No question yet: ask one below.")
            return
        _buttons(engine, code, key, rows)
        if asked.round_of(rows[0]) == "pre" and "revealed" not in {row.state for row in rows}:
            st.caption(":material/warning: This is the quiz before the lesson: revealing it shows every phone the "
                       "answers to the quiz after the lesson, which asks the same questions.")
        for row in rows:
            with faults.caught(faults.TEACHER):
                _who_answered(engine, code, key, row)


def _buttons(engine: Engine, code: str, key: str, rows: list[classes.Question]) -> None:
    """Close, Reopen, Reveal: each moves every question shown (a quiz's items) in one transaction, all or none."""
    buttons = st.container(horizontal=True)
    states = [row.state for row in rows]
    # (label, the state it sets, the states it applies to): a revealed question stays revealed
    for label, state, applies in (("Close", "closed", ("open",)), ("Reopen", "open", ("closed",)),
                                  ("Reveal", "revealed", ("open", "closed"))):
        if buttons.button(label, key=f"class_{state}", disabled=not any(s in applies for s in states)):
            ids = [row.id for row in rows if row.state in applies]
            result = asking.set_states(engine, code, key, ids, state, time.time())
            if isinstance(result, classes.Refusal):
                st.error(result.message)
                return
            st.rerun(scope="fragment")


def _who_answered(engine: Engine, code: str, key: str, row: classes.Question) -> None:
    q = asked.question(row)
    answers = classes.answers_of(engine, code, key, row.id)
    if isinstance(answers, classes.Refusal):
        st.error(answers.message)
        return
    right = sum(grade(q, a.value) for a in answers)
    share = f", {100 * right / len(answers):.0f}% of them right" if answers else ""
    # the item named: in a quiz of seven, "Question 5" alone does not say which one it is
    st.markdown(f"**{asked.title(row)}**, {escape_md(short(q.prompt, 60))} ({row.state}): {len(answers)} "
                f"answered{share}")
    if answers:
        st.caption("Answered: " + ", ".join(
            f"{escape_md(a.nickname) if a.nickname else f'student {a.student}'} "
            f"({'right' if grade(q, a.value) else 'wrong'})" for a in answers))


def gain_panel(g: QuizGain) -> None:
    """The class's normalised gain between the two quizzes, over the students who sent every item both times."""
    if not g.matched:
        st.markdown("**The quiz:** no student sent every item both before and after the lesson: there is no gain "
                    "to compute.")
    else:
        said = "undefined (they scored 100% before)" if g.gain is None else f"**{g.gain:.2f}**"
        if g.gain is not None and g.spread is not None:  # the luck of who is in the room, measured on this class
            said += f" (± {g.spread:.2f} from who happens to be in the room alone: resampling these students)"
        # one decimal: a teacher who checks the formula with the figures shown gets the ⟨g⟩ shown
        st.markdown(f"**The quiz, {counted(g.matched, 'student')} who sent every item both times:** {g.pre:.1f}% "
                    f"right before, {g.post:.1f}% after; the class's normalised gain ⟨g⟩ = (⟨after⟩ − ⟨before⟩) / "
                    f"(100% − ⟨before⟩) = {said}.")
        details = []
        if g.everyone.gain is not None:
            details.append(f"Every complete attempt, matched or not: {g.everyone.pre:.1f}% before, "
                           f"{g.everyone.post:.1f}% after, ⟨g⟩ = {g.everyone.gain:.2f} (it differs from the "
                           "figure above when different students took each quiz).")
        if g.average_gain is not None:
            details.append(f"The mean of the students' own gains: {g.average_gain:.2f}"
                           + (f" ({counted(g.at_ceiling, 'student')} at 100% before left out)." if g.at_ceiling
                              else "."))
        if g.partial_pre or g.partial_post:
            details.append(f"Left out: {g.partial_pre} before and {g.partial_post} after who skipped an item, and "
                           "anyone who joined again between the quizzes (another browser or a private window is a "
                           "new student). If many are left out, ⟨g⟩ describes only those who answered everything.")
        st.caption(" ".join(details))
    st.caption(f"⟨g⟩ as Hake defined it (Am. J. Phys. 66, 64–74, 1998). Over 62 introductory physics courses "
               "(6,542 students) tested on mechanics with validated tests of 29 or 36 items taken a term apart, "
               "interactive-engagement courses averaged 0.48 and traditional ones 0.23 (the spread across courses, "
               f"one standard deviation: 0.14 and 0.04). This quiz has {g.items} items that are not validated (one "
               f"item is {100 / g.items:.0f} percentage points), taken the same day, by a class whose ⟨g⟩ moves "
               "with who happens to be in it (the ± above): compare it with your own classes, and only differences "
               "larger than that.")


def results(engine: Engine, code: str, key: str) -> None:
    """Every question so far with its share of right answers, the quiz's gain, and the export; a part that
    refreshes every RESULTS_S seconds, so a reveal or an answer is in the table, the gain and the file without a
    click (the Reveal button reruns its own part alone)."""
    with faults.caught(faults.TEACHER):
        rows = classes.all_questions(engine, code)
        if not rows:
            st.caption("No question yet.")
            return
        table, by_round = [], {"pre": {}, "post": {}}
        for row in rows:
            q = asked.question(row)
            answers = classes.answers_of(engine, code, key, row.id)
            answers = [] if isinstance(answers, classes.Refusal) else answers
            right = sum(grade(q, a.value) for a in answers)
            table.append({"question": row.position, "as the room saw it": asked.title(row),
                          "asked": short(q.prompt, 80), "state": row.state,
                          "answered": len(answers),
                          "% of answers right": round(100 * right / len(answers)) if answers else None})
            if asked.round_of(row) in by_round:
                for a in answers:
                    by_round[asked.round_of(row)].setdefault(a.student, {})[q.source] = a.value
        st.dataframe(table, hide_index=True, width="stretch")
        if by_round["pre"] and by_round["post"]:
            gain_panel(quiz_gain(by_round["pre"], by_round["post"]))
        _export(engine, code, key)


def _export(engine: Engine, code: str, key: str) -> None:
    names = st.checkbox("Put nicknames in the file", key="class_export_names",
                        help="Without nicknames, each student is a number, the same one on all of that student's "
                             "rows.")
    rows_out = classes.export_rows(engine, code, key, with_names=names)
    if isinstance(rows_out, classes.Refusal) or not rows_out:
        st.caption("No answers yet: the export comes with the first one.")
        return
    rows_out = graded(rows_out, classes.all_questions(engine, code))
    st.download_button("Export the answers (CSV)", export.csv_text(rows_out), file_name=f"class-{code}.csv",
                       mime="text/csv", on_click="ignore", key="class_export",
                       help="One row per answer, enough to grade from: the question's number, its quiz round "
                            "(pre, post or none), kind and text; the student's number; the answer as sent (for a "
                            "choice or a key, the option's number counted from 0) and as the page reads it (B. the "
                            "option); the right answer; whether it is right; when it was sent and last changed "
                            "(UTC), and how often it changed. A text that a spreadsheet would run as a formula "
                            "starts with an apostrophe.")


def graded(rows: list[dict], questions: list[classes.Question]) -> list[dict]:
    """The export's rows with what a teacher grades from: the question's round and text, the answer as read, the
    right answer, and whether it is right (the pages' own grading)."""
    by_position = {row.position: (asked.question(row), asked.round_of(row) or "") for row in questions}
    out = []
    for row in rows:
        q, round_ = by_position[row["question"]]
        read = {"round": round_, "asked": short(q.prompt, 500)}
        out.append({"question": row["question"], **read, **{k: v for k, v in row.items() if k != "question"},
                    "answer read as": short(_as_read(q, row["answer"]), 500),
                    "right answer": short(answer_text(q), 500), "right": "yes" if grade(q, row["answer"]) else "no"})
    return out


def _as_read(q, value: str) -> str:
    """A stored answer as the page reads it: "B. the option" for a choice, the key for a key, else as sent."""
    if q.kind == "char":
        return {" ": "␣ (a space)", "\n": "⏎ (a line break)"}.get(value, value)
    index = read_index(value, len(q.options)) if q.kind == "key" or q.kind == "choice" else None
    if index is None:
        return value
    return (f"{chr(65 + index)}. " if q.kind == "choice" else "") + q.options[index]


def page(engine: Engine, session: classes.Session, key: str) -> None:
    code = session.code
    title = f" · {escape_md(session.title)}" if session.title else ""
    st.title(f"Class {codes.shown_code(code)}{title}")
    now = time.time()
    status = session.status(now)
    minutes = max(0, int((session.expires_at - now) // 60))
    if status == "live":
        st.caption(f"Teacher's page. The class's code works for {minutes // 60} h {minutes % 60} min more. This "
                   "page shows nicknames and who was right: put the projector link on the projector, not this page.")
        if not device.from_cookie():
            st.info("This browser keeps no cookie for this app, so only this tab holds the teacher key: copy it now "
                    "(Links and QR code, then Your teacher key). If you do not, a reload loses it: nobody can then "
                    "reveal, end, export or delete this class, and its data stays until the keeping time is over.")
        else:
            st.caption(SHARED_COMPUTER)
    else:
        st.warning(f"This class has {status}: students and the projector now show only that, with no question "
                   "and no answer, even one you reveal now. The results stay here until the class's data is deleted "
                   f"(it is kept until {retention.kept_for(classes.keep_days())}): export what you need.")
    share_panel(engine, code, key)
    st.fragment(controls_part, run_every=POLL_S)(engine, code, key)
    if status == "live":  # an ended class takes no question: nobody could answer it
        with st.expander("Ask the room", expanded=True):
            ask.panel(engine, code, key)
    with st.expander("Students"):
        students_panel.panel(engine, code, key, session.seats)
    with st.expander("Results and export"):
        st.fragment(results, run_every=RESULTS_S)(engine, code, key)
    with st.expander("Delete this class's data"):
        st.caption(retention.kept_sentence())
        if retention.delete_control(engine, code, key):
            forget(code)
            st.query_params.clear()
            st.rerun()
    if status == "live" and st.button(
            "End the class", key="class_end",
            help="Students can no longer join, answer or see anything, reveals included: reveal first. The results "
                 "stay on this page until the class's data is deleted."):
        result = classes.end_session(engine, code, key, time.time())
        if isinstance(result, classes.Refusal):
            st.error(result.message)
        st.rerun()

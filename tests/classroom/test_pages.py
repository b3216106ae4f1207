"""The Class page through Streamlit's AppTest, on a real SQLite file: a teacher starts a class and asks, students
join and answer, the projector counts and reveals; and everything a student, a stranger or a broken database can
do wrong, each with its message and nothing written.

Each test has its own database file (ATTENTION_LAB_DATABASE_URL); the store itself, on SQLite and PostgreSQL, is
tested in test_store.py, and the whole flow in Chromium in tests/browser/test_browser_class_mode.py.
"""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from classroom import asked, connection, device
from classroom.questions import bank
from store import classes
from store.classes.answers import BURST
from store.schema import students
from tests.apptest_helpers import ROOT, chart_data, chart_spec

PAGE = str(ROOT / "classroom" / "page.py")


def visit(query: dict | None = None, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def texts(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.title, *at.header, *at.subheader, *at.caption)]
    parts += [e.value for e in (*at.error, *at.warning, *at.info, *at.success)]
    return "\n".join(str(p) for p in parts)


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def token_of(at: AppTest, code: str) -> str:
    """The token the store knows this tab's student by (AppTest sends no cookie: the tab's own device number)."""
    return device.derived(at.session_state[device.TAB_TOKEN], "student", code)


def started(db) -> tuple[str, str]:
    return classes.start_session(db, time.time(), title="Tuesday")


def test_a_teacher_starts_a_class_and_the_key_leaves_the_address_bar(db):
    at = ok(visit())
    at.button[0].click().run()  # "Start a class" (the first form's submit button)
    ok(at)
    code = at.query_params["code"]
    assert at.query_params.get("teacher") == "1" and "key" not in at.query_params
    assert classes.find_session(db, code, time.time()).code == code
    assert "Teacher's page" in texts(at) and "Students join at" in texts(at)


def test_the_teacher_link_opens_the_teachers_page_and_hides_its_key(db):
    code, key = started(db)
    at = ok(visit({"code": code, "key": key}))
    assert "Teacher's page" in texts(at)
    assert "key" not in at.query_params and at.query_params["teacher"] == "1"
    assert key not in texts(at)  # only inside the closed "teacher link" popover


def test_a_wrong_key_opens_nothing_and_changes_nothing(db):
    code, _ = started(db)
    at = ok(visit({"code": code, "key": "not-the-key"}))
    said = texts(at)
    assert "does not open this class" in said and "Teacher's page" not in said
    assert not [b for b in at.button if b.label in ("Close", "Reveal", "End the class", "Put to the room")]
    assert classes.all_questions(db, code) == []


def test_a_student_who_edits_the_link_to_teacher_gets_no_controls(db):
    code, _ = started(db)
    at = ok(visit({"code": code, "teacher": "1"}))
    assert "This browser does not hold this class's teacher key" in texts(at)  # asked for the key, never given it
    assert not [b for b in at.button if b.label in ("Close", "Reveal", "End the class", "Put to the room")]


@pytest.mark.parametrize("typed, said", [("not a code!", "not a class code"), ("ZZZZZZ", "No class has this code")])
def test_a_wrong_code_says_so(db, typed, said):
    at = ok(visit({"code": typed}))
    assert said.lower() in texts(at).lower()


def test_an_ended_or_expired_class_says_so(db):
    code, key = started(db)
    classes.end_session(db, code, key, time.time())
    assert "ended" in texts(ok(visit({"code": code})))
    old, _ = classes.start_session(db, time.time() - 5 * 3600, ttl_s=3600)
    assert "expired" in texts(ok(visit({"code": old})))


@pytest.mark.parametrize("how", ["ended", "expired"])
def test_the_teacher_of_an_ended_class_is_told_what_the_room_sees(db, how):
    """Not a countdown that still runs: the room sees only that the class is over, so a reveal now reaches nobody."""
    if how == "ended":
        code, key = started(db)
        classes.end_session(db, code, key, time.time())
    else:
        code, key = classes.start_session(db, time.time() - 5 * 3600, ttl_s=3600)
    at = ok(visit({"code": code, "key": key}))
    said = texts(at)
    assert f"This class has {how}: students and the projector now show only that" in said
    assert "works for" not in said and not [b for b in at.button if b.label == "End the class"]


def test_a_student_joins_answers_changes_and_sees_the_reveal(db):
    code, key = started(db)
    q = next(q for q in bank() if q.kind == "choice")
    at = ok(visit({"code": code}))
    at.text_input[0].input("<b>Ada</b> **x**")
    at.button[0].click().run()  # Join
    ok(at)
    token = token_of(at, code)
    assert "first question will appear" in texts(at) and set(at.query_params) == {"code"}
    qid = asked.put(db, code, key, q)
    at.run()
    at.radio[0].set_value(1 - q.answer if q.answer in (0, 1) else 0)
    at.button[0].click().run()  # Send
    ok(at)
    assert classes.my_answer(db, qid, token) is not None
    at.radio[0].set_value(q.answer)
    at.button[0].click().run()  # changed while open
    assert classes.my_answer(db, qid, token) == str(q.answer)
    rows = classes.answers_of(db, code, key, qid)
    assert len(rows) == 1 and rows[0].changes == 1 and rows[0].nickname == "<b>Ada</b> **x**"
    classes.set_state(db, code, key, qid, "revealed", time.time())
    at.run()
    assert "Right!" in texts(ok(at))
    # the teacher's page names the student, as text (markup escaped), never the projector
    teacher = ok(visit({"code": code, "key": key}))
    assert "\\<b\\>Ada\\</b\\> \\*\\*x\\*\\*" in texts(teacher)  # Markdown escaped: shown as typed
    projector = ok(visit({"code": code, "view": "projector"}))
    assert "Ada" not in texts(projector)


def test_a_closed_question_takes_no_answer(db):
    code, key = started(db)
    q = next(q for q in bank() if q.kind == "number")
    at = ok(visit({"code": code}))
    at.button[0].click().run()
    qid = asked.put(db, code, key, q)
    at.run()
    classes.set_state(db, code, key, qid, "closed", time.time())
    at.run()
    assert "closed" in texts(ok(at)) and not at.text_input
    assert classes.counts(db, qid).total == 0


def test_the_projector_counts_then_reveals_the_rooms_answers(db):
    code, key = started(db)
    q = next(q for q in bank() if q.kind == "choice")
    qid = asked.put(db, code, key, q)
    for i in range(3):
        token = f"student-token-{i:04d}-abcdefgh"
        classes.join(db, code, token, None, time.time())
        classes.answer(db, code, token, qid, str(q.answer if i < 2 else (q.answer + 1) % len(q.options)), time.time())
    at = ok(visit({"code": code, "view": "projector"}))
    assert [m.value for m in at.metric] == ["3 of 3"]
    classes.set_state(db, code, key, qid, "revealed", time.time())
    at.run()
    drawn = " ".join(json.dumps(chart_spec(c), ensure_ascii=False) for c in at.get("vega_lite_chart"))
    assert "3 answers, 2 right" in drawn
    assert "Answer:" in texts(ok(at))


def test_a_database_that_cannot_be_opened_says_so_and_nothing_breaks(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be")
    monkeypatch.setenv(connection.ENVIRONMENT, f"sqlite:///{blocked / 'class.sqlite3'}")
    at = ok(visit())
    assert "class database" in texts(at) and "lessons work as usual" in texts(at)


def joined_student(db, code: str, nickname: str = "") -> AppTest:
    at = ok(visit({"code": code}))
    at.text_input[0].input(nickname)
    at.button[0].click().run()  # Join
    return ok(at)


@pytest.mark.parametrize(("kind", "typed", "said"), [
    ("number", "about a half", "That is not a number"),
    ("number", "", "That is not a number"),
    ("number", "1e999", "That is not a number"),
    ("char", "ab", "Type exactly one character"),
    ("char", "", "Type exactly one character"),
])
def test_a_typed_answer_that_is_not_one_is_said_and_not_written(db, kind, typed, said):
    code, key = started(db)
    q = _a_question(kind)
    at = joined_student(db, code)
    token = token_of(at, code)
    qid = asked.put(db, code, key, q)
    at.run()
    at.text_input[0].input(typed)
    at.button[0].click().run()  # Send
    assert said in texts(ok(at))
    assert classes.my_answer(db, qid, token) is None and classes.counts(db, qid).total == 0


def test_send_without_a_pick_is_said_and_not_written(db):
    code, key = started(db)
    at = joined_student(db, code)
    qid = asked.put(db, code, key, next(q for q in bank() if q.kind == "choice"))
    at.run()
    at.button[0].click().run()  # Send, nothing picked
    assert "Pick an answer first" in texts(ok(at))
    assert classes.counts(db, qid).total == 0


def test_a_burst_of_answers_is_limited_and_the_last_accepted_one_kept(db):
    code, key = started(db)
    at = joined_student(db, code)
    token = token_of(at, code)
    q = next(q for q in bank() if q.kind == "choice" and len(q.options) >= 2)
    qid = asked.put(db, code, key, q)
    at.run()
    for i in range(BURST + 1):
        at.radio[0].set_value(i % 2)
        at.button[0].click().run()
    assert classes.Refusal("too many").message in texts(ok(at))
    assert classes.my_answer(db, qid, token) == str((BURST - 1) % 2)  # the refused one wrote nothing
    (row,) = classes.answers_of(db, code, key, qid)
    assert row.changes == BURST - 1


def test_a_token_in_the_address_is_nobody(db):
    """An old join link's `me=` (or one a student made up) makes no one a student: the page asks to join."""
    code, key = started(db)
    qid = asked.put(db, code, key, next(q for q in bank() if q.kind == "choice"))
    other = joined_student(db, code)
    at = ok(visit({"code": code, "me": token_of(other, code)}))
    assert at.button[0].label == "Join" and not [r for r in at.radio if r.label == "Your answer"]
    assert classes.counts(db, qid).total == 0


def test_a_student_of_another_class_is_asked_to_join_this_one(db):
    first, _ = started(db)
    second, key = started(db)
    phone = joined_student(db, first)
    qid = asked.put(db, second, key, next(q for q in bank() if q.kind == "choice"))
    phone.query_params["code"] = second
    phone.run()
    assert phone.button[0].label == "Join" and not [r for r in phone.radio if r.label == "Your answer"]
    assert classes.counts(db, qid).total == 0 and classes.joined(db, second) == 0


def test_a_student_the_class_no_longer_has_is_sent_back_to_join_and_writes_nothing(db):
    """The class no longer has this student (its row is gone): the page offers Join again, and a Send made
    from the old form writes nothing."""
    code, key = started(db)
    qid = asked.put(db, code, key, next(q for q in bank() if q.kind == "choice"))
    at = joined_student(db, code)
    at.run()
    with db.begin() as conn:
        conn.execute(students.delete())
    at.radio[0].set_value(0)
    at.button[0].click().run()
    assert ok(at).button[0].label == "Join"
    assert classes.counts(db, qid).total == 0


@pytest.mark.parametrize("query", [
    {"code": "<script>alert(1)</script>"},
    {"code": "K7M4QX" * 300},
    {"code": "", "view": "projector"},
    {"code": "ABCDEF", "key": "x" * 5000},
    {"code": "ABCDEF", "teacher": "1", "view": "projector", "me": "\u0000"},
])
def test_a_hand_edited_address_gets_a_message_not_a_trace(db, query):
    at = ok(visit(query))
    assert texts(at)  # something said: a message or the start page
    assert not classes.all_questions(db, "ABCDEF")


def _a_question(kind: str):
    from classroom.questions import ClassQuestion

    if kind == "number":
        return next(q for q in bank() if q.kind == "number")
    return ClassQuestion(kind="char", source="predict/next-character", prompt="Next character?", options=(),
                         answer="e", explanation="The model's most likely next character.")


def test_a_quiz_is_asked_closed_and_revealed_together(db):
    from classroom.quiz import quiz

    code, key = started(db)
    items = quiz()
    ids = [asked.put(db, code, key, q, "pre", close_others=i == 0, batch="b1") for i, q in enumerate(items)]
    phone = joined_student(db, code)
    phone.run()
    assert "its own Send button" in texts(ok(phone))
    assert sum(r.label == "Your answer" for r in phone.radio) == len(items)
    phone.radio(key=f"class_pick_{ids[0]}").set_value(items[0].answer)
    phone.button[0].click().run()  # the first item's Send
    projector = ok(visit({"code": code, "view": "projector"}))
    assert "1 of 1" in str([m.value for m in projector.metric])
    for qid in ids:
        classes.set_state(db, code, key, qid, "closed", time.time())
    phone.run()
    assert "Its answers wait until after the lesson" in texts(ok(phone))
    assert texts(phone).count("#### Question") == len(items)  # every item still there, not the last alone
    assert "is closed: 1 of 1 answered" in texts(ok(projector.run()))
    teacher = ok(visit({"code": code, "key": key}))
    assert "revealing it shows every phone the answers" in texts(teacher)
    for qid in ids:
        classes.set_state(db, code, key, qid, "revealed", time.time())
    projector.run()
    assert "how the room did" in texts(ok(projector))
    chart = next(c for c in projector.get("vega_lite_chart") if "% of its answers right" in c.proto.spec)
    labels = " ".join(map(str, chart_data(chart)["label"]))
    assert labels.count("(no answers)") == len(items) - 1  # an item nobody answered is not "0% right"


def test_a_question_about_pictures_shows_them_while_the_room_answers(db):
    code, key = started(db)
    q = next(q for q in bank() if "heatmaps" in q.view)
    asked.put(db, code, key, q)
    projector = ok(visit({"code": code, "view": "projector"}))
    assert len(projector.get("vega_lite_chart")) == len(q.view["heatmaps"])


def test_the_teachers_page_gives_the_gain_over_students_who_sent_every_item_both_times(db):
    from classroom.quiz import quiz, quiz_gain

    code, key = started(db)
    items = quiz()
    tokens = {name: f"token-{name}-0123456789" for name in ("a", "b")}
    for token in tokens.values():
        classes.join(db, code, token, None, time.time())
    sent = {"pre": {}, "post": {}}
    for round_ in ("pre", "post"):
        ids = [asked.put(db, code, key, q, round_, close_others=i == 0, batch=round_) for i, q in enumerate(items)]
        for i, (qid, q) in enumerate(zip(ids, items)):
            right, wrong = str(q.answer), str((q.answer + 1) % len(q.options))
            a_value = right if round_ == "post" or i < 2 else wrong  # a: 2 of 7 right before, all after
            now = time.time() + (100 if round_ == "post" else 0) + 2 * i  # one answer in 2 s: under the burst limit
            assert classes.answer(db, code, tokens["a"], qid, a_value, now) is None
            sent[round_].setdefault(tokens["a"], {})[q.source] = a_value
            if i < 3:  # b sends three items of each round only: a partial attempt, left out
                assert classes.answer(db, code, tokens["b"], qid, right, now) is None
    expected = quiz_gain({1: sent["pre"][tokens["a"]]}, {1: sent["post"][tokens["a"]]})
    teacher = ok(visit({"code": code, "key": key}))
    said = texts(teacher)
    assert "1 student who sent every item both times" in said
    assert f"= **{expected.gain:.2f}**" in said and expected.gain == 1.0
    assert "Left out: 1 before and 1 after who skipped an item" in said
    assert f"{expected.pre:.1f}% right before, {expected.post:.1f}% after" in said  # the figures the gain is from
    assert "Hake" in said


def test_at_the_simple_level_the_picker_leaves_out_technical_questions(db):
    code, key = started(db)
    lesson = next(q.source.split("/")[0] for q in bank() if q.technical)
    at = ok(visit({"code": code, "key": key, "level": "simple"}))
    at.radio(key="ask_source").set_value(at.radio(key="ask_source").options[0]).run()
    at.selectbox(key="ask_lesson").set_value(lesson).run()
    assert "Technical sections left out at the Simple level" in texts(ok(at))
    assert not any("(Technical)" in o for o in at.selectbox(key="ask_question").options)


@pytest.mark.parametrize(("address", "warned"), [("http://localhost:8501", True), ("http://127.0.0.1:8501", True),
                                                 ("http://[::1]:8501", True), ("http://192.168.1.20:8501", False),
                                                 ("https://lab.example.org/attention", False)])
def test_a_teacher_on_an_address_phones_cannot_open_is_told(db, monkeypatch, address, warned):
    from classroom import links, teacher

    monkeypatch.setattr(links, "browser_address", lambda: address)
    code, key = started(db)
    at = ok(visit({"code": code, "key": key}))
    assert (teacher.LOCAL_ONLY.format(page="class", code=code) in [w.value for w in at.warning]) is warned
    assert f"{address}/class?code={code}" in texts(at)


def test_an_ended_class_offers_no_question_to_put(db):
    code, key = started(db)
    classes.end_session(db, code, key, time.time())
    at = ok(visit({"code": code, "key": key}))
    assert "Put to the room" not in [b.label for b in at.button]

"""What the class mode exists for, guarded where a break would show: nothing of the answer reaches a phone or the
projector before the reveal, and nobody's nickname reaches another phone or the projector, ever.

Every test here reads everything the page sent (the whole element tree: text, headings, captions, alerts,
metrics, widget labels, options and help, and the charts' specs with the numbers sent beside them), not only the
text a reader would look at first. The questions are made for the search: their answer and explanation are
strings no page can show by chance, the other students' answers and nicknames too. Two kinds of check:

- a search: before the reveal, no right answer, no explanation, no other student's answer or nickname is sent,
  and a choice question's right option is sent exactly as often as each wrong one (nothing marks it);
- a comparison: a phone's page is the same whatever the room answered and whether its own answer is right, and
  the projector's is the same whatever the room answered as long as as many answered (it may show the count).

After the reveal the same search finds the answer and the explanation: the search sees what a page shows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from classroom import asked
from classroom.questions import ClassQuestion, answer_text
from store import classes, codes
from tests.apptest_helpers import ROOT, chart_spec

PAGE = str(ROOT / "classroom" / "page.py")
EXPLAINED = "zqexplained"  # every question's explanation carries it, and nothing else on any page does
NUMBER = ClassQuestion(kind="number", prompt="How many grains of sand are in the jar?", answer=8675309.0,
                       tolerance=0.0, source="test/jar",
                       explanation=f"{EXPLAINED}-jar: the core counted 8675309 grains one by one.")
OPTIONS = ("zqoption-amber", "zqoption-birch", "zqoption-cedar")
CHOICE = ClassQuestion(kind="choice", prompt="Which tree grows in the quad?", options=OPTIONS, answer=1,
                       source="test/quad", explanation=f"{EXPLAINED}-quad: the core planted it there.")
NUMBER_SAID = ("8675309", answer_text(NUMBER))  # "8,675,309" as the pages write it
# The rest of the room: their nicknames and number answers are strings no page writes by chance
OTHERS = {f"other-student-token-{i:04d}-zq": (f"zqnick-{name}", value)
          for i, (name, value) in enumerate([("Ottoline", "31337.25"), ("Barnaby", "27182.75"),
                                             ("Wilhelmina", "16180.5")])}
MY_WRONG = "4321.5"  # this phone's own answer to NUMBER (wrong); to CHOICE it picks option 0 (wrong)


# ---- everything a page sent ------------------------------------------------------------------------------------


def walk(node) -> Iterator:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from walk(child)


def proto_strings(message) -> Iterator[str]:
    """Every string field of a protobuf message, nested messages and repeated fields included."""
    for _, value in message.ListFields():
        for item in _items(value):
            if isinstance(item, str):
                yield item
            elif hasattr(item, "ListFields"):
                yield from proto_strings(item)


def _items(value) -> list:
    """A field's values: one value, a repeated field's (its container iterates without __iter__), a map's."""
    if isinstance(value, str | bytes) or hasattr(value, "ListFields"):
        return [value]
    if hasattr(value, "keys"):
        return [value[k] for k in value.keys()]
    try:
        return list(value)
    except TypeError:  # a number, a flag
        return [value]


def sent(at: AppTest) -> list[str]:
    """Every string of every element in the tree (main, sidebar, toasts), a chart as its spec with its data
    inside (the numbers travel beside the spec, as Arrow), a table as CSV."""
    found = []
    for node in walk(at._tree):  # the whole tree: AppTest's public lists cover one element type each
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            found += proto_strings(proto)
        kind = getattr(node, "type", "")
        if kind == "vega_lite_chart":
            found.append(json.dumps(chart_spec(node), ensure_ascii=False))
        elif kind == "arrow_data_frame":
            found.append(node.value.to_csv())
    return found


def leaked(at: AppTest, q: ClassQuestion | None = None, picked: int | None = None) -> list[str]:
    """What a page before the reveal must not send: the explanation, the answer, another's answer or nickname;
    and for a choice, a right option sent more or less often than a wrong one (but the one this phone `picked`,
    which its page names as its answer)."""
    assert not at.exception, [e.message for e in at.exception]
    everything = "\n".join(sent(at))
    problems = [f"the explanation ({EXPLAINED})"] if EXPLAINED in everything else []
    problems += [f"the answer {said!r}" for said in NUMBER_SAID if said in everything]
    for nickname, value in OTHERS.values():
        problems += [f"another's {what} {s!r}" for what, s in (("nickname", nickname), ("answer", value))
                     if s in everything]
    if q is not None and q.options:  # the right option no more often than a wrong one: nothing marks it
        seen = {option: everything.count(option) for i, option in enumerate(q.options) if i != picked}
        if len(set(seen.values())) > 1:
            problems.append(f"options sent unevenly: {seen}")
    return problems


# ---- a class, its room, and the pages ------------------------------------------------------------------------


def visit(query: dict) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def phone(code: str, joined: bool = True) -> AppTest:
    """A phone on the join link; joined as a student would (the page's own form), however the page then knows
    it (its browser, its tab): run it again to see it again."""
    at = ok(visit({"code": code}))
    if joined:
        at.text_input[0].input("zqnick-Me")  # the nickname box
        next(b for b in at.button if b.label == "Join").click().run()
        ok(at)
        assert not [b for b in at.button if b.label == "Join"], "the phone did not join"
    return at


def send(at: AppTest, number: str, pick: int) -> AppTest:
    """This phone answers every open item: `number` to a number question, option `pick` to a choice."""
    forms = [b.proto.form_id for b in at.button if b.proto.is_form_submitter and b.label == "Send"]
    for form in forms:
        for box in at.text_input:
            if box.proto.form_id == form:
                box.input(number)
        for radio in at.radio:
            if radio.proto.form_id == form:
                radio.set_value(pick)
        next(b for b in at.button if b.proto.form_id == form and b.label == "Send").click().run()
        ok(at)
    return at


def projector(code: str) -> AppTest:
    return visit({"code": code, "view": "projector"})


def put(db, shape: str) -> tuple[str, str, list[int]]:
    """A class with one question (NUMBER or CHOICE) or a quiz of both, open. (code, key, question ids)"""
    code, key = classes.start_session(db, time.time(), title="Tuesday")
    items = {"number": [NUMBER], "choice": [CHOICE], "quiz": [NUMBER, CHOICE]}[shape]
    batch = "b1" if len(items) > 1 else None
    ids = [asked.put(db, code, key, q, "pre" if batch else None, close_others=i == 0, batch=batch)
           for i, q in enumerate(items)]
    return code, key, ids


def room_answers(db, code: str, ids: list[int], change: bool = False, now: float | None = None) -> None:
    """The other students join (nicknamed) and answer every open item: their own values, or others (`change`)."""
    now = time.time() if now is None else now
    for n, (token, (nickname, value)) in enumerate(OTHERS.items()):
        classes.join(db, code, token, nickname, now)
        for qid in ids:
            q = asked.question(next(r for r in classes.all_questions(db, code) if r.id == qid))
            if q.kind == "number":
                given = str(float(value) + 1) if change else value
            else:
                given = "0" if change else str(n % len(q.options))  # one of each, then all on a wrong one
            assert classes.answer(db, code, token, qid, given, now) is None


def set_all(db, code: str, key: str, ids: list[int], state: str) -> None:
    for qid in ids:
        assert classes.set_state(db, code, key, qid, state, time.time()) is None


SHAPES = ["number", "choice", "quiz"]


# ---- the search ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("state", ["open", "closed"])
@pytest.mark.parametrize("who", ["joined", "answered", "not joined"])
def test_a_phone_before_the_reveal_is_sent_nothing_of_the_answer(db, shape, state, who):
    code, key, ids = put(db, shape)
    at = phone(code, joined=who != "not joined")
    if who == "answered":
        send(at, MY_WRONG, 0)
        assert sum(classes.counts(db, qid).total for qid in ids) == len(ids)
    room_answers(db, code, ids)
    set_all(db, code, key, ids, state)
    at.run()
    shown = "\n".join(sent(at))
    if who != "not joined":
        assert NUMBER.prompt in shown or CHOICE.prompt in shown  # the question is there: the search reads a page
    assert leaked(at, CHOICE if shape != "number" else None, picked=0 if who == "answered" else None) == []


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("state", ["open", "closed"])
def test_the_projector_before_the_reveal_is_sent_the_count_alone(db, shape, state):
    code, key, ids = put(db, shape)
    room_answers(db, code, ids)
    set_all(db, code, key, ids, state)
    at = projector(code)
    assert leaked(at, CHOICE if shape != "number" else None) == []
    count = f"{len(OTHERS)} of {classes.joined(db, code)}"  # the count, which the projector may show
    assert any(count in str(m.value) for m in at.metric) or f"{count} answered" in "\n".join(sent(at))


def test_the_projector_before_any_question_shows_no_nickname(db):
    code, _ = classes.start_session(db, time.time())
    for token, (nickname, _) in OTHERS.items():
        classes.join(db, code, token, nickname, time.time())
    assert leaked(projector(code)) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_after_the_reveal_the_same_search_finds_the_answer_and_still_no_nickname(db, shape):
    """The check's own check: what the search looks for is there once it may be, so a page that showed it early
    would be seen; and nicknames stay off the phones and the projector even then."""
    code, key, ids = put(db, shape)
    room_answers(db, code, ids)
    set_all(db, code, key, ids, "revealed")
    revealed = phone(code)
    for at in (revealed, projector(code)):
        problems = leaked(at, CHOICE if shape != "number" else None)
        assert not [p for p in problems if "nickname" in p], problems
    on_phone = "\n".join(sent(revealed))
    assert EXPLAINED in on_phone
    if shape != "choice":
        assert NUMBER_SAID[1] in on_phone
    if shape != "quiz":  # a revealed quiz's projector shows the share right per item, its answers on the phones
        on_projector = "\n".join(sent(projector(code)))
        assert EXPLAINED in on_projector and (shape == "choice" or NUMBER_SAID[1] in on_projector)


# ---- the comparison ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("state", ["open", "closed"])
@pytest.mark.parametrize("joined", [True, False], ids=["joined", "not joined"])
def test_a_phone_before_the_reveal_is_the_same_whatever_the_room_answered(db, shape, state, joined):
    code, key, ids = put(db, shape)
    at = phone(code, joined)
    set_all(db, code, key, ids, state)
    alone = sent(ok(at.run()))
    set_all(db, code, key, ids, "open")
    room_answers(db, code, ids)
    set_all(db, code, key, ids, state)
    assert sent(ok(at.run())) == alone


@pytest.mark.parametrize("state", ["open", "closed"])
def test_a_phone_before_the_reveal_cannot_tell_whether_its_answer_is_right(db, state):
    """The phone shows its own answer, and nothing that differs between a right one and a wrong one."""
    code, key, (qid,) = put(db, "number")
    room_answers(db, code, [qid])
    at = phone(code)
    pages = []
    for mine in (MY_WRONG, "8675309"):
        set_all(db, code, key, [qid], "open")
        send(ok(at.run()), mine, 0)
        set_all(db, code, key, [qid], state)
        pages.append([s.replace(mine, "<mine>") for s in sent(ok(at.run()))])
    assert any("<mine>" in s for s in pages[0])  # its own answer is shown
    assert pages[0] == pages[1]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("state", ["open", "closed"])
def test_the_projector_before_the_reveal_is_the_same_whatever_the_room_answered(db, shape, state):
    """As many answers, other values: the count may show, the values and how many are right may not."""
    code, key, ids = put(db, shape)
    now = time.time()
    room_answers(db, code, ids, now=now)
    set_all(db, code, key, ids, state)
    before = sent(projector(code))
    set_all(db, code, key, ids, "open")
    room_answers(db, code, ids, change=True, now=now + 1)
    set_all(db, code, key, ids, state)
    assert sent(projector(code)) == before


def test_the_searched_strings_are_made_by_the_pages_helpers():
    """The strings searched for are the ones the pages would write, and nothing a page writes anyway."""
    assert NUMBER_SAID[1] == "8,675,309"
    assert all(codes.clean_nickname(nick) == nick for nick, _ in OTHERS.values())
    assert CHOICE.options[CHOICE.answer] in answer_text(CHOICE)

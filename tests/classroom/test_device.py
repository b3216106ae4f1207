"""One browser, one student; the browser that started a class stays its teacher (classroom.device).

The Class page runs under AppTest, one AppTest a tab; a browser's device cookie is what `device.from_cookie` reads
(AppTest cannot send cookies, so the test sets what the request carried). The real cookie, made by the browser and
sent by every tab, is tested in Chromium (tests/browser/test_browser_class_mode.py).
"""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from classroom import device, student
from store import classes
from store.codes import new_token
from tests.apptest_helpers import ROOT

PAGE = str(ROOT / "classroom" / "page.py")
CONTROLS = ("Close", "Reveal", "End the class", "Put to the room")


@pytest.fixture
def browser(monkeypatch):
    """Which browser's tab the next visit is: set `.number` to a device number, or None for no cookie."""

    class Browser:
        number: str | None = None

    held = Browser()
    monkeypatch.setattr(device, "from_cookie", lambda: held.number)
    return held


def visit(query: dict) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def said(at: AppTest) -> str:
    parts = [e.value for e in (*at.markdown, *at.title, *at.subheader, *at.caption, *at.error, *at.warning,
                               *at.info, *at.success)]
    return "\n".join(str(p) for p in parts)


def has_controls(at: AppTest) -> bool:
    return any(b.label in CONTROLS for b in at.button)


def join(at: AppTest, nickname: str = "") -> AppTest:
    at.text_input[0].input(nickname)
    at.button[0].click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def device_number() -> str:
    return new_token()  # 22 URL-safe characters: the shape the browser's script makes


def test_derived_secrets_differ_by_role_and_class_and_device():
    one, other = device_number(), device_number()
    made = {device.derived(d, role, code) for d in (one, other) for role in ("student", "teacher")
            for code in ("K7M4QX", "K7M4QY")}
    assert len(made) == 8
    assert device.derived(one, "student", "K7M4QX") == device.derived(one, "student", "K7M4QX")
    assert all(len(s) == 43 for s in made)


def test_two_tabs_of_one_browser_are_one_student(db, browser):
    code, _ = classes.start_session(db, time.time())
    browser.number = device_number()
    first = join(visit({"code": code}), "Ada")
    assert "Joined." in said(first)
    second = visit({"code": code})  # a new tab, or a reload: no join form, the same student
    assert "Joined." in said(second) and not second.text_input
    assert classes.joined(db, code) == 1
    assert set(second.query_params) == {"code"}  # nothing of the student is in the address


def test_another_browser_is_another_student(db, browser):
    code, _ = classes.start_session(db, time.time())
    browser.number = device_number()
    join(visit({"code": code}))
    browser.number = device_number()
    other = visit({"code": code})
    assert other.text_input and student.ONE_BROWSER in said(other)
    join(other)
    assert classes.joined(db, code) == 2


def test_without_the_cookie_a_tab_is_a_student_and_the_page_says_so(db, browser):
    code, _ = classes.start_session(db, time.time())
    browser.number = None
    first = visit({"code": code})
    assert student.ONE_TAB in said(first)
    join(first)
    assert "Joined." in said(first)
    second = visit({"code": code})
    assert second.text_input, "a tab without the cookie cannot be the other tab's student"


def test_the_browser_that_started_a_class_keeps_control_after_a_reload(db, browser):
    browser.number = device_number()
    at = visit({})
    at.button[0].click().run()  # Start a class
    code = at.query_params["code"]
    assert has_controls(at) and set(at.query_params) == {"code", "teacher"}
    reloaded = visit({"code": code, "teacher": "1"})  # a reload: the tab's session is new
    assert "Teacher's page" in said(reloaded) and has_controls(reloaded)


def test_another_browser_gets_control_only_by_pasting_the_key(db, browser):
    browser.number = device_number()
    code, key = classes.start_session(db, time.time(), key_for=lambda code: device.teacher_key(code)[0])
    browser.number = device_number()  # the projector's PC, say
    at = visit({"code": code, "teacher": "1"})
    assert not has_controls(at) and "Teacher key" in [t.label for t in at.text_input]
    at.text_input[0].input("not the key")
    at.button[0].click().run()
    assert "not this class's teacher key" in said(at) and not has_controls(at)
    at.text_input[0].input(key)
    at.button[0].click().run()
    assert has_controls(at) and "key" not in at.query_params
    assert key not in said(at)  # the key is shown only inside the closed popover


def test_a_student_who_asks_for_the_teachers_page_gets_no_controls(db, browser):
    browser.number = device_number()
    code, _ = classes.start_session(db, time.time())
    browser.number = device_number()
    join(visit({"code": code}))
    at = visit({"code": code, "teacher": "1"})
    assert not has_controls(at) and "Teacher's page" not in said(at)


def test_a_new_teacher_key_stops_every_copy_of_the_old_and_this_browser_keeps_control(db, browser):
    teacher_device = device_number()
    browser.number = teacher_device
    at = visit({})
    at.button[0].click().run()  # Start a class
    code = at.query_params["code"]
    old = classes.teacher  # the key this browser derived, as a pasted copy would hold it
    key = device.teacher_key(code)[0]
    assert isinstance(old(db, code, key), classes.Session)
    browser.number = device_number()  # a second computer the teacher pasted the key into
    other = visit({"code": code, "teacher": "1"})
    other.text_input[0].input(key)
    other.button[0].click().run()
    assert has_controls(other)
    browser.number = teacher_device
    at = visit({"code": code, "teacher": "1"})
    next(b for b in at.button if b.label == "Make a new teacher key").click().run()
    assert not at.exception and "A new teacher key is made" in said(at) and has_controls(at)
    assert classes.teacher(db, code, key) == classes.Refusal("wrong key")
    assert isinstance(classes.teacher(db, code, device.teacher_key(code, 1)[0]), classes.Session)
    assert has_controls(visit({"code": code, "teacher": "1"}))  # a reload of this browser finds the new key
    browser.number = other_device = device_number()
    assert not has_controls(visit({"code": code, "teacher": "1"})), other_device
    other.run()  # the second computer's tab, which held the old key
    assert not has_controls(other) and "Teacher key" in [t.label for t in other.text_input]

"""A class survives a restart of one of the two processes behind HAProxy, on PostgreSQL, in Chromium.

The production shape: `deploy/serve.py 2` (HAProxy, two Streamlit processes, a crashed one started again) on one
PostgreSQL database. The teacher and two phones are on process 1 (its sticky cookie), the projector and two phones
on process 2. Mid-question, with two answers in, process 1 is killed (SIGKILL, as a crash or an out-of-memory kill
would). Its tabs reconnect by themselves (to process 2, or to process 1 started again) and find who they were from
their device cookies: the teacher still holds the class's controls without pasting anything, each phone is still
the student it was (its answer kept), and the phones that had not answered answer; the projector counts every
answer once, and the Reveal reaches every phone. No tab shows a traceback.

Needs haproxy, PostgreSQL (ATTENTION_LAB_TEST_POSTGRES_URL, which .ci/run sets) and Chromium; skipped without
them, unless REQUIRE_PROXY=1 / REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from bench.load_test import serve
from bench.postgres import own_schema
from classroom import connection
from deploy.serve import find_haproxy
from tests.browser.harness import EXCEPTION, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, expect
from tests.browser.test_browser_class_mode import PHONE, PROJECTOR, arrive, the_question

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.timeout(600)]

POSTGRES_URL = "ATTENTION_LAB_TEST_POSTGRES_URL"
COOKIE = "attention-lab-server"  # deploy/haproxy/haproxy.cfg.template: s1, s2 in the order of the ports
BACK_MS = 90_000  # a killed process's tab is drawn again within this (reconnect, restart, two busy cores)

if find_haproxy() is None:
    if os.environ.get("REQUIRE_PROXY") == "1":
        pytest.fail("REQUIRE_PROXY=1 but haproxy is not installed", pytrace=False)
    pytest.skip("needs haproxy (apt-get install haproxy)", allow_module_level=True)


@pytest.fixture(scope="module")
def served():
    server = os.environ.get(POSTGRES_URL)
    if not server:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail(f"REQUIRE_POSTGRES=1 but {POSTGRES_URL} is not set", pytrace=False)
        pytest.skip(f"set {POSTGRES_URL} to run the class on PostgreSQL")
    with own_schema(server, "r") as url, pytest.MonkeyPatch.context() as env:
        env.setenv(connection.ENVIRONMENT, url)
        env.setenv("ATTENTION_LAB_WARM_UP", "0")
        with serve(2, post_script_gc=False, server_args=(), max_restarts=2) as (state, proc):
            yield state, proc


def tab_on(browser, url: str, process: str, errors: list[str], viewport: dict, phone: bool = False):
    """A new browser (its own cookies) whose first request goes to process `process` ("s1" or "s2")."""
    context = browser.new_context(viewport=viewport, has_touch=phone, is_mobile=phone, reduced_motion="reduce")
    context.add_cookies([{"name": COOKIE, "value": process, "url": url}])
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    tab.on("pageerror", lambda error: errors.append(f"{process}: {error}"))
    tab.sockets = []  # every websocket the page opened, and whether a server spoke on it
    tab.on("websocket", lambda socket: opened(tab, socket))
    return tab


def opened(tab, socket) -> None:
    entry = {"spoke": False}
    tab.sockets.append(entry)
    socket.on("framereceived", lambda _: entry.update(spoke=True))


def reconnected(tab, before: int) -> None:
    """Wait until a websocket the tab opened after its first `before` has heard from a server: the page talks to
    a live process again (an attempt the dead process refused does not count)."""
    for _ in range(BACK_MS // 250):
        if any(entry["spoke"] for entry in tab.sockets[before:]):
            return
        tab.wait_for_timeout(250)
    raise AssertionError(f"the tab did not reconnect within {BACK_MS / 1000:.0f} s")


def answer(phone, option: str, tries: int = 1) -> None:
    """Pick the option and press Send until the page says the answer went in. Right after a reconnection the
    page is drawn again from a new session, and a press that lands on the old drawing is lost (the student sees
    nothing happen and presses again: `tries`); an answer is never counted twice (the projector's count)."""
    expect(phone.get_by_text("Question 1")).to_be_visible(timeout=BACK_MS)
    for attempt in range(1, tries + 1):
        phone.locator('[data-testid="stRadio"]').get_by_text(option, exact=True).click()
        phone.get_by_role("button", name="Send").click()
        try:
            expect(phone.get_by_text("Your answer:")).to_be_visible(
                timeout=RERUN_TIMEOUT_MS if attempt == tries else 15_000)
            return
        except AssertionError:
            if attempt == tries:
                raise


def test_a_class_survives_a_restart_of_one_of_two_processes_teacher_included(served, browser):
    state, proc = served
    url = state["url"]
    first_pid = state["streamlit"][min(state["streamlit"], key=int)]  # s1: the first port
    errors: list[str] = []

    teacher = tab_on(browser, url, "s1", errors, PROJECTOR)
    arrive(teacher, f"{url}/class")
    teacher.get_by_role("button", name="Start a class").click()
    expect(teacher.get_by_text("Teacher's page")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    code = re.search(r"code=(\w{6})", teacher.url).group(1)
    projector = tab_on(browser, url, "s2", errors, PROJECTOR)
    arrive(projector, f"{url}/class?code={code}&view=projector")

    phones = []
    for i in range(4):
        phone = tab_on(browser, url, "s1" if i < 2 else "s2", errors, PHONE, phone=True)
        arrive(phone, f"{url}/class?code={code}")
        phone.get_by_role("button", name="Join").click()
        expect(phone.get_by_text("The first question will appear")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
        phones.append(phone)
    expect(projector.get_by_text("4 students joined so far")).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    teacher.get_by_text("Predict: the key a query attends to most").click()
    expect(teacher.get_by_text("Sentence")).to_be_visible(timeout=RERUN_TIMEOUT_MS)  # the prediction's settings
    teacher.get_by_role("button", name="Put to the room").click()
    expect(projector.get_by_text("0 of 4")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    q = the_question()
    pick = q.options[q.answer]
    answer(phones[0], pick)  # process 1
    answer(phones[2], pick)  # process 2
    expect(projector.get_by_text("2 of 4")).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    killed = (teacher, phones[0], phones[1])
    before = [len(tab.sockets) for tab in killed]
    os.killpg(first_pid, signal.SIGKILL)  # the teacher's process, and two phones'
    for tab, count in zip(killed, before):
        reconnected(tab, count)

    # the killed process's tabs know who they were: the teacher's controls, the phone's answer
    expect(teacher.get_by_role("button", name="Reveal")).to_be_visible(timeout=BACK_MS)
    expect(teacher.get_by_role("textbox", name="Teacher key")).to_have_count(0)
    expect(phones[0].get_by_text("Your answer:")).to_be_visible(timeout=BACK_MS)
    answer(phones[1], pick, tries=3)  # a phone of the killed process, after it
    answer(phones[3], pick, tries=3)
    expect(projector.get_by_text("4 of 4")).to_be_visible(timeout=RERUN_TIMEOUT_MS)  # each once: no second ballot

    expect(teacher.get_by_text("4 answered")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    teacher.get_by_role("button", name="Reveal").click()
    expect(projector.get_by_text("Answer:")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    for phone in phones:
        expect(phone.get_by_text("Right!")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    for tab in (teacher, projector, *phones):
        expect(tab.locator(EXCEPTION)).to_have_count(0)
    assert proc.poll() is None, "deploy/serve.py stopped during the class"
    assert not [e for e in errors if "WebSocket" not in e], errors

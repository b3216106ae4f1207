"""The class mode in Chromium, the whole flow as a class lives it: a teacher starts a class on a 1280×720 screen,
three phones (390×844, touch) open the join link the teacher's page shows and join (two with nicknames, one
anonymous), the teacher puts a prediction to the room, the phones answer, the projector's count rises to 3, and
Reveal shows the room's answers beside the answer the core computed and the computed attention row. The teacher's
page alone shows the share of right answers and who answered; no nickname ever reaches the projector. One phone
is in the dark theme; the projector, the phones and the teacher's page pass axe (WCAG 2.1 AA).

The server has a database of its own (a SQLite file in the test's temporary folder), as a teacher's laptop would.
What it needs and how it skips without it: tests/browser/harness.py and tests/browser/axe_check.py.
"""

from __future__ import annotations

import re

import pytest

from classroom import device
from core.tokenize import word_tokens
from store import codes
from tests.browser import harness
from tests.browser.axe_check import STILL, report, serious_violations
from tests.browser.harness import CHART, EXCEPTION, PAGE_TIMEOUT_MS, RERUN_TIMEOUT_MS, chart, expect
from ui.frame.predict import attend_most
from ui.state import controls

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
# Names no page text could hold by chance: if one shows on the projector, it came from a student.
NICKNAMES = ("Zephyrine", "Quillon", "")
TITLE = "Tuesday afternoon, group B, room 12"  # long enough to wrap the phone's join heading
# The teacher's panel starts a prediction from these (ask.py: the QKV lesson's defaults, the last word's row).
SETTINGS = {"D": 16, "d_k": 8, "seed": 0, "seq_len": 16}


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('class') / 'class.sqlite3'}"


@pytest.fixture(scope="module")
def server(database):
    yield from harness.one_server(lambda port: harness.Server(port, env={"ATTENTION_LAB_DATABASE_URL": database}))


def the_question():
    """The question the teacher's panel puts with its defaults, computed here by the core as the app does."""
    tokens = word_tokens(controls.DEFAULT_TEXT, SETTINGS["seq_len"])
    return attend_most(controls.DEFAULT_TEXT, SETTINGS["D"], SETTINGS["d_k"], SETTINGS["seed"],
                               SETTINGS["seq_len"], len(tokens) - 1)


def open_tab(browser, errors: list[str], viewport: dict, theme: str = "light", phone: bool = False):
    context = browser.new_context(viewport=viewport, color_scheme=theme, reduced_motion="reduce",
                                  has_touch=phone, is_mobile=phone)
    context.add_init_script(STILL)
    tab = context.new_page()
    tab.set_default_timeout(PAGE_TIMEOUT_MS)
    tab.on("pageerror", lambda error: errors.append(f"{viewport['width']}px: {error}"))
    return tab


def arrive(tab, url: str) -> None:
    """Open `url` as a student or teacher does. A browser's first visit makes its device number and reloads the
    page once (classroom.device): wait for that reload, as a person's first tap comes after it."""
    first_visit = not any(c["name"] == device.DEVICE for c in tab.context.cookies())
    tab.goto(url)
    if first_visit:
        tab.wait_for_function("performance.getEntriesByType('navigation')[0]?.type === 'reload'",
                              timeout=PAGE_TIMEOUT_MS)


def lines_of(tab, text: str) -> int:
    """On how many lines the first place the page shows `text` is drawn."""
    return tab.evaluate("""text => {
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        const node = walk.currentNode, at = node.data.indexOf(text);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + text.length);
        return new Set([...range.getClientRects()].map(box => Math.round(box.top))).size;
      }
      return 0;
    }""", text)


def teacher_key_shown(teacher) -> str:
    """The key in the teacher's popover (opened if shut), as the teacher would copy it."""
    block = teacher.locator('[data-testid="stPopoverBody"] code')
    if not block.is_visible():
        teacher.get_by_role("button", name="Your teacher key (keep it private)").click()
    expect(block).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    return block.inner_text().strip()


def charts_drawn(tab) -> None:
    """Every chart on the tab holds Vega's svg or canvas."""
    charts = tab.locator(CHART)
    expect(charts.first).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    for i in range(charts.count()):
        expect(charts.nth(i).locator("svg.marks, canvas.marks")).to_be_attached(timeout=RERUN_TIMEOUT_MS)


def no_serious_violation(tab, where: str) -> None:
    serious = serious_violations(tab)
    assert not serious, f"{where}:\n{report(serious)}"


def test_a_class_from_start_to_reveal(server, browser):
    q = the_question()
    right = q.options[q.answer]
    wrong = next(o for i, o in enumerate(q.options) if i != q.answer and i not in q.also_right)
    picks = (right, right, wrong)  # two right, one wrong: the teacher's page says 67% right
    errors: list[str] = []

    teacher = open_tab(browser, errors, PROJECTOR)
    arrive(teacher, f"{server.url}/class")
    teacher.get_by_role("textbox", name="Title (optional)").fill(TITLE)
    teacher.get_by_role("button", name="Start a class").click()
    expect(teacher.get_by_text("Teacher's page")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(teacher).to_have_url(re.compile(r"code=\w{6}"))
    assert "key=" not in teacher.url, "the teacher's key stays out of the address bar"
    code = re.search(r"code=(\w{6})", teacher.url).group(1)
    join_link = re.search(r"Students join at (\S+)",
                          teacher.locator("p", has_text="Students join at").inner_text()).group(1)
    assert code in join_link
    qr_code = teacher.get_by_role("img", name=re.compile("QR code of the join link"))
    expect(qr_code).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    projector = open_tab(browser, errors, PROJECTOR)
    arrive(projector, f"{server.url}/class?code={code}&view=projector")
    expect(projector.get_by_text("0 students joined so far")).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    phones = []
    for i, name in enumerate(NICKNAMES):
        phone = open_tab(browser, errors, PHONE, theme="dark" if i == 1 else "light", phone=True)
        arrive(phone, join_link)
        expect(phone.get_by_text(codes.shown_code(code))).to_be_visible(timeout=PAGE_TIMEOUT_MS)
        assert lines_of(phone, codes.shown_code(code)) == 1, "the join code is broken across lines on a phone"
        phone.get_by_role("textbox", name="Nickname (optional)").fill(name)
        phone.get_by_role("button", name="Join").click()
        expect(phone.get_by_text("The first question will appear")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
        assert phone.url.endswith(f"/class?code={code}"), "the student is the browser, not a token in the address"
        phones.append(phone)
    expect(projector.get_by_text("3 students joined so far")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    no_serious_violation(phones[1], "a phone waiting for the question (dark)")
    no_serious_violation(projector, "the projector while the room joins")

    teacher.get_by_text("Predict: the key a query attends to most").click()
    expect(teacher.get_by_text("attend to most?")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    teacher.get_by_role("button", name="Put to the room").click()
    expect(projector.get_by_text("Question 1")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(projector.get_by_text("0 of 3")).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    for n, (phone, pick) in enumerate(zip(phones, picks), 1):
        expect(phone.get_by_text("Question 1")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
        phone.locator('[data-testid="stRadio"]').get_by_text(pick, exact=True).click()
        phone.get_by_role("button", name="Send").click()
        expect(phone.get_by_text("Your answer:")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
        expect(projector.get_by_text(f"{n} of 3")).to_be_visible(timeout=RERUN_TIMEOUT_MS)  # the count rises
    no_serious_violation(phones[1], "a phone that answered (dark)")

    expect(teacher.get_by_text("3 answered, 67% of them right")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    for name in NICKNAMES[:2]:  # who answered: on the teacher's page only
        expect(teacher.get_by_text(re.compile(name))).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    teacher.get_by_role("button", name="Reveal").click()
    expect(projector.get_by_text("Answer:")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(chart(projector, "The room: 3 answers, 2 right")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(chart(projector, "The computed attention row")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    charts_drawn(projector)
    no_serious_violation(projector, "the projector after the reveal")
    shown = projector.locator("body").inner_text()
    for name in NICKNAMES[:2]:
        assert name not in shown, f"the nickname {name} is on the projector"

    expect(phones[0].get_by_text("Right!")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(phones[2].get_by_text("Not this time.")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    no_serious_violation(teacher, "the teacher's page")

    for tab in (teacher, projector, *phones):
        assert tab.locator(EXCEPTION).count() == 0
    assert not errors, errors


def test_two_tabs_of_one_phone_are_one_student_and_a_reload_keeps_the_teacher(server, browser):
    """The phone's second tab finds the student it already is (its answer too) and sends no second ballot; the
    teacher reloads mid-question and still reveals; another browser gets control only with the pasted key."""
    errors: list[str] = []
    laptop = browser.new_context(viewport=PROJECTOR)
    teacher = laptop.new_page()
    teacher.set_default_timeout(PAGE_TIMEOUT_MS)
    teacher.on("pageerror", lambda error: errors.append(f"teacher: {error}"))
    arrive(teacher, f"{server.url}/class")
    teacher.get_by_role("button", name="Start a class").click()
    expect(teacher.get_by_text("Teacher's page")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    code = re.search(r"code=(\w{6})", teacher.url).group(1)

    phone = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    first = phone.new_page()
    first.set_default_timeout(PAGE_TIMEOUT_MS)
    arrive(first, f"{server.url}/class?code={code}")
    first.get_by_role("button", name="Join").click()
    expect(first.get_by_text("The first question will appear")).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    teacher.get_by_text("Predict: the key a query attends to most").click()
    expect(teacher.get_by_text("attend to most?")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    teacher.get_by_role("button", name="Put to the room").click()
    expect(first.get_by_text("Question 1")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    options = the_question().options
    first.locator('[data-testid="stRadio"]').get_by_text(options[0], exact=True).click()
    first.get_by_role("button", name="Send").click()
    expect(first.get_by_text("Your answer:")).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    second = phone.new_page()  # the same phone, a new tab on the join link
    second.set_default_timeout(PAGE_TIMEOUT_MS)
    arrive(second, f"{server.url}/class?code={code}")
    expect(second.get_by_text("Your answer:")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    expect(second.get_by_role("button", name="Join")).to_have_count(0)
    second.locator('[data-testid="stRadio"]').get_by_text(options[-1], exact=True).click()
    second.get_by_role("button", name="Send").click()
    expect(teacher.get_by_text("1 student joined (the class takes 40).")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    expect(teacher.get_by_text(re.compile(r"Question 1.*\(open\): 1 answered"))).to_be_visible(
        timeout=RERUN_TIMEOUT_MS)

    teacher.reload()  # a new session on the server: the browser, not the tab, holds the class
    expect(teacher.get_by_text("Teacher's page")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    teacher.get_by_role("button", name="Reveal").click()
    expect(first.get_by_text("Answer:", exact=False).first).to_be_visible(timeout=RERUN_TIMEOUT_MS)

    other = browser.new_context(viewport=PROJECTOR).new_page()  # another browser on the teacher's page
    other.set_default_timeout(PAGE_TIMEOUT_MS)
    arrive(other, f"{server.url}/class?code={code}&teacher=1")
    expect(other.get_by_text("This browser does not hold this class's teacher key")).to_be_visible(
        timeout=PAGE_TIMEOUT_MS)
    expect(other.get_by_role("button", name="Reveal")).to_have_count(0)

    # a key seen by mistake: the teacher makes a new one; a tab given the old key loses control, the teacher keeps it
    key = teacher_key_shown(teacher)
    other.get_by_role("textbox", name="Teacher key").fill(key)
    other.get_by_role("button", name="Open the teacher's page").click()
    expect(other.get_by_role("button", name="Reveal")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    teacher.get_by_role("button", name="Make a new teacher key").click()
    expect(teacher.get_by_text("A new teacher key is made")).to_be_visible(timeout=RERUN_TIMEOUT_MS)
    assert teacher_key_shown(teacher) != key
    other.reload()
    expect(other.get_by_role("textbox", name="Teacher key")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    teacher.reload()
    expect(teacher.get_by_role("button", name="Reveal")).to_be_visible(timeout=PAGE_TIMEOUT_MS)

    for tab in (teacher, first, second, other):
        expect(tab.locator(EXCEPTION)).to_have_count(0)
    assert not errors, errors


def test_the_projector_draws_a_reveal_whatever_numbers_the_room_typed(server, database, browser):
    """1e308 and -1e308 typed into a number question (their difference overflows a float) and a 5,000-character
    paste (refused on the phone, so never counted): the projector still draws the reveal, at 1280x720."""
    import time

    from classroom import asked
    from classroom.questions import bank
    from store import classes

    engine = classes.engine_for(database)
    code, key = classes.start_session(engine, time.time())
    q = next(q for q in bank() if q.kind == "number")
    qid = asked.put(engine, code, key, q)
    for i, typed in enumerate(["1e308", "-1e308", repr(q.answer), "x" * 5000]):
        token = f"student-token-{i:04d}-abcdefgh"
        classes.join(engine, code, token, None, time.time())
        said = classes.answer(engine, code, token, qid, typed, time.time())
        assert (said is None) == (len(typed) < 5000), said  # the paste is refused with a sentence, not cut
    classes.set_state(engine, code, key, qid, "revealed", time.time())
    errors: list[str] = []
    projector = open_tab(browser, errors, PROJECTOR)
    arrive(projector, f"{server.url}/class?code={code}&view=projector&present=true")
    expect(chart(projector, "The room: 3 answers, 1 right")).to_be_visible(timeout=PAGE_TIMEOUT_MS)
    charts_drawn(projector)
    expect(projector.get_by_text("Far from the rest, not in a bar: 1 below and 1 above.")).to_be_attached()
    expect(projector.locator(EXCEPTION)).to_have_count(0)
    assert not errors, errors

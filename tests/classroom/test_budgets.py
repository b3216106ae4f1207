"""Limits per network address (store.classes.budgets): new students and wrong join codes. Generous for a school whose
phones all come from one address, a wall for one script; the address itself is never stored; two processes cannot
both take the last of a budget; on SQLite and PostgreSQL, and on the Class page."""

from __future__ import annotations

import threading
import time

import pytest

from classroom import device
from store import classes
from store.classes import budgets
from store.codes import new_code, new_token
from tests.classroom.conftest import snapshot
from tests.classroom.test_device import join, said, visit

NOW = 1_800_000_000.0
SCHOOL = "198.51.100.7"  # one address for a whole school's phones (a NAT), as a test address


def test_a_school_behind_one_address_joins_and_a_script_is_stopped(engine):
    rooms = [classes.start_session(engine, NOW, seats=classes.SEATS_MAX)[0] for _ in range(2)]
    joins = [classes.join(engine, rooms[i % 2], new_token(), None, NOW, address=SCHOOL)
             for i in range(budgets.JOIN_BURST)]
    assert all(isinstance(j, int) for j in joins), "a school's worth of students at once"
    assert classes.join(engine, rooms[0], new_token(), None, NOW, address=SCHOOL) == classes.Refusal("busy address")
    assert isinstance(classes.join(engine, rooms[0], new_token(), None, NOW, address="203.0.113.5"), int)
    later = NOW + budgets.JOIN_S
    assert isinstance(classes.join(engine, rooms[0], new_token(), None, later, address=SCHOOL), int)
    assert classes.join(engine, rooms[0], new_token(), None, later, address=SCHOOL) == classes.Refusal("busy address")
    assert classes.joined(engine, rooms[0]) + classes.joined(engine, rooms[1]) == budgets.JOIN_BURST + 2


def test_a_student_coming_back_is_not_a_new_join(engine, monkeypatch):
    monkeypatch.setitem(budgets.RULES, "join", (2, 60.0))
    code, _ = classes.start_session(engine, NOW)
    first, second = new_token(), new_token()
    assert isinstance(classes.join(engine, code, first, None, NOW, address=SCHOOL), int)
    assert isinstance(classes.join(engine, code, second, None, NOW, address=SCHOOL), int)
    assert isinstance(classes.join(engine, code, first, "Ada", NOW + 1, address=SCHOOL), int)  # spent, but known
    assert classes.join(engine, code, new_token(), None, NOW + 1, address=SCHOOL) == classes.Refusal("busy address")


def test_the_last_join_of_a_budget_goes_to_one_of_two_processes(make_engine, monkeypatch):
    monkeypatch.setitem(budgets.RULES, "join", (1, 600.0))
    engine = make_engine()
    code, _ = classes.start_session(engine, NOW)
    results: list[object] = []
    engines = [make_engine() for _ in range(4)]  # four processes' engines
    threads = [threading.Thread(target=lambda e=e: results.append(
        classes.join(e, code, new_token(), None, NOW, address=SCHOOL))) for e in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(isinstance(r, int) for r in results) == 1, results
    assert all(r == classes.Refusal("busy address") for r in results if not isinstance(r, int))


def test_wrong_codes_are_slowed_and_then_no_code_is_read(engine):
    code, _ = classes.start_session(engine, NOW)
    wrong = [c for c in (new_code() for _ in range(budgets.GUESS_BURST + 5)) if c != code][:budgets.GUESS_BURST]
    assert [classes.look_up(engine, c, NOW, SCHOOL) for c in wrong] == [classes.Refusal("unknown")] * len(wrong)
    # past the budget even the right code is refused: the refusal says nothing about a code
    assert classes.look_up(engine, code, NOW, SCHOOL) == classes.Refusal("guesses")
    assert classes.look_up(engine, wrong[0], NOW, SCHOOL) == classes.Refusal("guesses")
    assert isinstance(classes.look_up(engine, code, NOW, "203.0.113.5"), classes.Session)  # another address
    assert isinstance(classes.look_up(engine, code, NOW + budgets.GUESS_S, SCHOOL), classes.Session)
    assert isinstance(classes.look_up(engine, code, NOW + budgets.GUESS_S, SCHOOL), classes.Session)  # right: free


def test_the_address_is_never_stored_and_a_whole_budget_is_forgotten(engine):
    code, _ = classes.start_session(engine, NOW)
    classes.join(engine, code, new_token(), None, NOW, address=SCHOOL)
    classes.look_up(engine, new_code(), NOW, SCHOOL)
    rows = snapshot(engine)
    assert SCHOOL not in repr(rows) and len(rows["address_budgets"]) == 2
    classes.purge(engine, NOW + budgets.LONGEST_S)
    assert snapshot(engine)["address_budgets"] == []


def test_the_class_page_limits_joins_and_wrong_codes_from_an_address(db, monkeypatch):
    """The page passes the browser's address (here "local": AppTest's is this machine) to both limits."""
    monkeypatch.setitem(budgets.RULES, "join", (1, 600.0))
    monkeypatch.setitem(budgets.RULES, "guess", (1, 600.0))
    monkeypatch.setattr(device, "from_cookie", lambda: None)
    code, _ = classes.start_session(db, time.time())
    join(visit({"code": code}))
    second = join(visit({"code": code}))  # a tab without a cookie is a new student
    assert classes.Refusal("busy address").message in said(second) and classes.joined(db, code) == 1
    wrong = next(c for c in iter(new_code, None) if c != code)
    assert classes.Refusal("unknown").message in said(visit({"code": wrong}))
    assert classes.Refusal("guesses").message in said(visit({"code": code}))


@pytest.mark.parametrize(("peer", "forwarded", "seen"), [
    ("203.0.113.5", ["10.0.0.1"], "203.0.113.5"),  # a proxy elsewhere, or a client's own header: not trusted
    (None, ["10.0.0.1, 198.51.100.7"], "198.51.100.7"),  # the proxy on this machine appended the last hop
    (None, ["1.2.3.4", "198.51.100.7"], "198.51.100.7"),
    (None, [], "local"),
])
def test_the_address_is_the_connections_or_the_local_proxys(monkeypatch, peer, forwarded, seen):
    class Headers:
        @staticmethod
        def get_all(name):
            return forwarded if name == "X-Forwarded-For" else []

    class Context:
        ip_address = peer
        headers = Headers()

    monkeypatch.setattr(device.st, "context", Context())
    assert device.address() == seen

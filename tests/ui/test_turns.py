"""Script runs take turns (ui.compute.turns): first come, first served, at most N at once, a visit (a page its
session has not shown yet) before every move, a run inside a run is the same turn, a turn is given back however the
run ends, and a run that waits too long goes anyway."""

import threading
import time

import pytest

from ui.compute import turns as turns_module
from ui.compute.turns import Turns

WAIT_S = 10.0  # generous: a test that waits this long has failed


def until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


def run_in_turn(t: Turns, name: str, order: list, hold: threading.Event | None = None,
                visit: bool = False) -> threading.Thread:
    def body():
        with t.turn(visit):
            order.append(name)
            if hold is not None:
                hold.wait(WAIT_S)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_runs_that_wait_go_in_the_order_they_came():
    t, order, release = Turns(1), [], threading.Event()
    first = run_in_turn(t, "first", order, hold=release)
    until(lambda: order == ["first"], "the first run to hold the turn")
    waiting = []
    for i, name in enumerate(["b", "c", "d", "e"]):
        waiting.append(run_in_turn(t, name, order))
        until(lambda i=i: t.waiting() == i + 1, f"{name} to queue")
    assert order == ["first"]  # the others wait while the one turn is held
    release.set()
    for thread in [first, *waiting]:
        thread.join(WAIT_S)
    assert order == ["first", "b", "c", "d", "e"]
    assert t.waiting() == 0


def test_a_visit_goes_before_the_moves_waiting_and_after_the_visits_before_it():
    t, order, release = Turns(1), [], threading.Event()
    first = run_in_turn(t, "first", order, hold=release)
    until(lambda: order == ["first"], "the first run to hold the turn")
    waiting = []
    for i, (name, visit) in enumerate([("move a", False), ("visit b", True), ("move c", False), ("visit d", True)]):
        waiting.append(run_in_turn(t, name, order, visit=visit))
        until(lambda i=i: t.waiting() == i + 1, f"{name} to queue")
    release.set()
    for thread in [first, *waiting]:
        thread.join(WAIT_S)
    assert order == ["first", "visit b", "visit d", "move a", "move c"]
    assert t.waiting() == 0 and t._running == 0


def test_a_visit_takes_a_free_turn_while_moves_wait_for_none():
    """A free turn with nobody waiting goes to a move and to a visit alike; a move never overtakes a waiting visit."""
    t, order, release = Turns(2), [], threading.Event()
    holder = run_in_turn(t, "move", order, hold=release)
    until(lambda: order == ["move"], "a move to hold one turn")
    run_in_turn(t, "visit", order, visit=True).join(WAIT_S)  # the second turn is free: no wait
    assert order == ["move", "visit"]
    release.set()
    holder.join(WAIT_S)
    assert t.waiting() == 0 and t._running == 0


def test_no_more_runs_at_once_than_there_are_turns():
    t, lock, now, most = Turns(2), threading.Lock(), [0], [0]

    def body():
        with t.turn():
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            time.sleep(0.01)
            with lock:
                now[0] -= 1

    threads = [threading.Thread(target=body, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    assert most[0] == 2


def test_a_run_inside_a_run_on_the_same_thread_is_the_same_turn():
    t = Turns(1)
    with t.turn(), t.turn():  # a live part drawn by its page's run: would wait for itself if it took another
        with t.turn():
            pass
    order = []
    run_in_turn(t, "next", order).join(WAIT_S)
    assert order == ["next"]  # the turn was given back once, at the outer end


def test_a_turn_is_given_back_when_the_run_raises():
    t = Turns(1)
    with pytest.raises(RuntimeError), t.turn():
        raise RuntimeError("a rerun or stop request raises through the run")
    order = []
    run_in_turn(t, "next", order).join(WAIT_S)
    assert order == ["next"]


def test_a_run_that_waits_too_long_goes_out_of_turn(monkeypatch):
    monkeypatch.setattr(turns_module, "WAIT_LIMIT_S", 0.05)
    t, order, release = Turns(1), [], threading.Event()
    stuck = run_in_turn(t, "stuck", order, hold=release)
    until(lambda: order == ["stuck"], "the stuck run to hold the turn")
    late = run_in_turn(t, "late", order)
    late.join(WAIT_S)
    assert order == ["stuck", "late"]  # went while the stuck run still held its turn
    release.set()
    stuck.join(WAIT_S)
    after = []
    run_in_turn(t, "after", after).join(WAIT_S)  # both turns given back: the count is whole again
    assert after == ["after"] and t.waiting() == 0


def test_the_app_s_runs_and_their_live_parts_take_turns(monkeypatch):
    """The entry point's run takes a turn, and a lesson's live parts run inside it (the same turn); no run of the
    app goes without one."""
    from tests.apptest_helpers import ok, run_app

    class Recording(Turns):
        def __init__(self):
            super().__init__(2)
            self.depths: list[int] = []

            self.visits: list[bool] = []

        def turn(self, visit=False):
            depth = getattr(self._depth, "n", 0)
            self.depths.append(depth)
            if depth == 0:
                self.visits.append(visit)
            return super().turn(visit)

    recording = Recording()
    monkeypatch.setattr(turns_module, "_TURNS", recording)
    at = ok(run_app("lessons/qkv/page.py"))
    assert recording.depths.count(0) == 2  # the first run (home) and the switch to the lesson: a turn each
    assert recording.visits == [True, True]  # each a page the session had not shown: both go before moves
    at.sidebar.slider(key="d_k").set_value(8).run()  # a move on the lesson shown: a live part's turn, not a visit
    ok(at)
    assert recording.visits[2:] and not any(recording.visits[2:])
    assert any(depth >= 1 for depth in recording.depths)  # the lesson's live parts, inside its run's turn
    assert recording.waiting() == 0 and recording._running == 0  # every turn given back


@pytest.mark.parametrize("raw, turns", [("", 2), ("1", 1), ("16", 16), ("0", 2), ("-3", 2), ("two", 2), (" 4 ", 4)])
def test_the_number_of_turns_from_the_environment(monkeypatch, raw, turns):
    monkeypatch.setenv("ATTENTION_LAB_TURNS", raw)
    assert turns_module.turns_from_environment() == turns

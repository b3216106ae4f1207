"""A trained run shared behind the proxy: `deploy/serve.py 2` (two Streamlit processes behind HAProxy, one
database), a browser on process A trains a short run, and a browser that never trained, held on process B by
HAProxy's sticky cookie, opens the run's link and reads the run (process B has never seen it: it reads it from
the database). The database and the servers are the class mode's system test's (one SQLite file, or a schema on
PostgreSQL)."""

from __future__ import annotations

import re

import pytest

from lessons import COURSE
from tests.system import test_class_mode as class_mode

harness = pytest.importorskip("tests.browser.harness")  # skips this module without Chromium or Playwright

COOKIE = class_mode.COOKIE
database, served = class_mode.database, class_mode.served  # the fixtures: one database, two processes behind it
FULL, TRAINING = COURSE.lesson("full_model").url_path, COURSE.lesson("training").url_path
SAVED_MS = 180_000  # a fresh process imports, builds the task and trains 50 steps: seconds, more on a busy machine


def on_process(browser, url: str, process: str):
    """A browser context that HAProxy keeps on `process` (its sticky cookie set before the first request)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    host = re.match(r"https?://([^/:]+)", url).group(1)
    context.add_cookies([{"name": COOKIE, "value": process, "domain": host, "path": "/"}])
    page = context.new_page()
    page.set_default_timeout(harness.PAGE_TIMEOUT_MS)
    return context, page


@pytest.fixture(scope="module")
def browser():
    yield from harness.chromium()


def test_a_run_trained_on_one_process_opens_from_its_link_on_the_other(served, browser):
    trainer, tab = on_process(browser, served, "s1")
    classmate, other = on_process(browser, served, "s2")
    try:
        tab.goto(f"{served}/{TRAINING}?tr_data=copy&tr_layers=1&tr_steps=50")
        harness.wait_until_drawn(tab)
        tab.get_by_role("button", name="Train", exact=True).click()
        kept = tab.get_by_text(re.compile(r"Kept on this server for 7 days .* as run [A-Za-z0-9]{8}"))
        harness.expect(kept).to_be_visible(timeout=SAVED_MS)
        run_id = re.search(r"as run ([A-Za-z0-9]{8})", kept.inner_text()).group(1)

        other.goto(f"{served}/{FULL}?fm_model=run:{run_id}&fm_prompt=ABCDEFGH%7C")
        harness.wait_until_drawn(other)
        harness.expect(other.get_by_text(re.compile("This model was trained on the copy task"))).to_be_visible()
        harness.expect(other.get_by_text(re.compile(rf"kept on this server as run {run_id}"))).to_be_visible()
        # the address keeps naming the run (with its label now), so a reload or a copied address opens it again
        harness.expect(other).to_have_url(re.compile(rf"fm_model=run%3A{run_id}\+%C2%B7"))
        other.wait_for_timeout(3000)  # the binding's later rewrites of the address bar included
        harness.expect(other).to_have_url(re.compile(rf"fm_model=run%3A{run_id}"))
        other.reload()
        harness.wait_until_drawn(other)
        harness.expect(other.get_by_text(re.compile(rf"kept on this server as run {run_id}"))).to_be_visible()
        assert {c["name"]: c["value"] for c in classmate.cookies()}[COOKIE] == "s2"  # it stayed on process B
        assert {c["name"]: c["value"] for c in trainer.cookies()}[COOKIE] == "s1"
    finally:
        trainer.close()
        classmate.close()

"""bench/machine.py: the benchmarks' account of what else the machine did while they measured."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads Linux's /proc")
TICKS = os.sysconf("SC_CLK_TCK")
SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"  # {s} s of CPU


def test_a_child_and_a_grandchild_count_as_the_runs_own_work_living_or_ended():
    before = machine.snapshot()
    # a child that starts a grandchild: 0.4 s of CPU each, like serve.py starting the Streamlit servers
    grandchild = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {SPIN.format(s=0.4)!r}])\n"
    nested = SPIN.format(s=0.4) + grandchild
    subprocess.run([sys.executable, "-c", nested], check=True)
    living = subprocess.Popen([sys.executable, "-c", SPIN.format(s=0.4) + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while machine.snapshot().own - before.own < 1.1 * TICKS and time.monotonic() < deadline:
            time.sleep(0.05)
        after = machine.snapshot()
    finally:
        living.kill()
        living.wait()
    # 1.2 s of CPU in three processes (two ended, one alive); /proc counts in ticks, so allow a little less
    assert after.own - before.own >= 1.1 * TICKS
    assert after.busy - before.busy >= after.own - before.own - 0.1 * TICKS  # the machine saw that work too
    assert after.total > before.total


def test_the_line_splits_the_machines_work_into_this_run_and_the_rest():
    watch = machine.Watch()
    subprocess.run([sys.executable, "-c", SPIN.format(s=0.3)], check=True)
    shares = watch.shares()
    assert shares["cores"] == os.cpu_count()
    assert shares["own"] > 0.05  # 0.3 s of CPU in a run of well under 6 s of wall time
    assert shares["other"] >= 0 and shares["steal"] >= 0
    assert shares["busy"] == pytest.approx(shares["own"] + shares["other"], abs=0.2)
    line = watch.line()
    assert line.startswith("machine during this run:") and "other work" in line and "stolen by the host" in line


def test_without_proc_the_line_says_it_does_not_know(monkeypatch, tmp_path):
    monkeypatch.setattr(machine, "PROC", tmp_path)
    watch = machine.Watch()
    assert watch.shares() is None
    assert "unknown" in watch.line()


def test_the_event_loop_named_is_the_one_streamlit_would_take():
    try:
        import uvloop  # noqa: F401
        expected = "uvloop"
    except ImportError:
        expected = "asyncio"
    assert machine.event_loop() == expected

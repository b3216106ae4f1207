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

SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"  # {s} s of CPU


@pytest.mark.skipif(sys.platform == "win32", reason="Windows keeps no account of a reaped child's CPU time")
def test_a_child_and_a_grandchild_count_as_the_runs_own_work_living_or_ended():
    before = machine.snapshot()
    # a child that starts a grandchild: 0.4 s of CPU each, like serve.py starting the Streamlit servers
    grandchild = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {SPIN.format(s=0.4)!r}])\n"
    nested = SPIN.format(s=0.4) + grandchild
    subprocess.run([sys.executable, "-c", nested], check=True)
    living = subprocess.Popen([sys.executable, "-c", SPIN.format(s=0.4) + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while machine.snapshot().own - before.own < 1.1 and time.monotonic() < deadline:
            time.sleep(0.05)
        after = machine.snapshot()
    finally:
        living.kill()
        living.wait()
    # 1.2 s of CPU in three processes (two ended, one alive); the kernel counts in ticks, so allow a little less
    assert after.own - before.own >= 1.1
    assert after.busy - before.busy >= after.own - before.own - 0.1  # the machine saw that work too
    assert after.total > before.total


def test_the_line_splits_the_machines_work_into_this_run_and_the_rest():
    watch = machine.Watch()
    subprocess.run([sys.executable, "-c", SPIN.format(s=0.3)], check=True)
    shares = watch.shares()
    assert shares["cores"] == os.cpu_count()
    assert shares["own"] > 0.05  # 0.3 s of CPU in a run of well under 6 s of wall time
    assert shares["other"] >= 0
    assert shares["steal"] >= 0 if sys.platform == "linux" else shares["steal"] is None  # only Linux counts it
    assert shares["busy"] == pytest.approx(shares["own"] + shares["other"], abs=0.2)
    line = watch.line()
    assert line.startswith("machine during this run:") and "other work" in line and "stolen by the host" in line


def test_without_the_systems_cpu_times_the_line_says_it_does_not_know(monkeypatch):
    def unreadable():
        raise PermissionError("the CPU times are not readable here")

    monkeypatch.setattr(machine.psutil, "cpu_times", unreadable)
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

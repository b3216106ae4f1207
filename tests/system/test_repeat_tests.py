"""tools/repeat_tests.py, the suite repeated under load: it counts the passes, stops at the first failure, keeps
that pass's output, and leaves no busy process behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]


def _repeat(tmp_path: Path, test_body: str, passes: int) -> subprocess.CompletedProcess:
    test = tmp_path / "test_one.py"
    test.write_text(f"def test_one():\n    {test_body}\n", encoding="utf-8")
    command = [sys.executable, "-m", "tools.repeat_tests", "--passes", str(passes), "--busy", "1",
               "--logs", str(tmp_path / "logs"), "--", "-q", "-p", "no:cacheprovider", str(test)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def _left_behind(tmp_path: Path) -> list[int]:
    """Busy processes are forks of the tool, so they carry its command line, which names tmp_path."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        if any(str(tmp_path) in part for part in process.info["cmdline"] or []):
            found.append(process.info["pid"])
    return found


def test_every_pass_passes(tmp_path):
    done = _repeat(tmp_path, "assert 1 + 1 == 2", passes=2)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "busy processes: 1, on" in done.stdout
    assert "pass 1: 1 passed" in done.stdout and "pass 2: 1 passed" in done.stdout
    assert "2 of 2 passes passed" in done.stdout
    assert (tmp_path / "logs" / "pass2.log").is_file()
    assert _left_behind(tmp_path) == []


def test_it_stops_at_the_first_failure_and_keeps_its_output(tmp_path):
    done = _repeat(tmp_path, "assert 'row sums' == 'one'", passes=3)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pass 1: 1 failed" in done.stdout and "pass 1 failed (exit status 1)" in done.stdout
    assert "pass 2:" not in done.stdout
    assert "0 of 3 passes passed" in done.stdout
    assert "row sums" in (tmp_path / "logs" / "pass1.log").read_text(encoding="utf-8")
    assert _left_behind(tmp_path) == []

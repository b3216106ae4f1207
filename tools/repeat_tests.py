"""Run the test suite again and again while busy processes keep every core loaded, and stop at the first failure.

A test that waits too little for the browser or a server passes on an idle laptop and fails on a loaded CI
machine one time in ten; repeating the suite under load is how such a race shows itself before it blocks a
submission. No pytest plugin does this: pytest-repeat repeats tests inside one session (one server, one
browser, warm caches), and none of them loads the cores. So each pass is a fresh `python -m pytest` process,
as CI starts it.

    python -m tools.repeat_tests                      # 10 passes of the browser suite, both cores busy
    python -m tools.repeat_tests --passes 3 -- -q -m "browser" -k masking

It prints one line a pass (pytest's summary, the wall time, how busy the cores were), keeps each pass's whole
output in --logs, and ends with the passes that passed and the median wall time. Exit status 0 when every
pass passed, else pytest's status for the pass that failed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil

BROWSER_SUITE = ["-q", "-m", "browser", "-p", "no:cacheprovider", "-n", "2", "--dist", "load"]


def _spin() -> None:
    """A busy process: one core's worth of work that never ends (the loader stops it)."""
    while True:
        pass


def _summary(output: str) -> str:
    """pytest's last line, e.g. '183 passed in 915.28s (0:15:15)'."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1].strip("= ") if lines else "(no output)"


def run(passes: int, busy: int, pytest_args: list[str], logs: Path) -> int:
    logs.mkdir(parents=True, exist_ok=True)
    loaders = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(busy)]
    for loader in loaders:
        loader.start()
    print(f"busy processes: {busy}, on {os.cpu_count()} cores; each pass: python -m pytest {' '.join(pytest_args)}",
          flush=True)
    # A browser suite that skips for want of Chromium would pass every time and prove nothing.
    env = {**os.environ, "REQUIRE_BROWSER": os.environ.get("REQUIRE_BROWSER", "1")}
    walls, status = [], 0
    try:
        for n in range(1, passes + 1):
            psutil.cpu_percent()  # starts the count of how busy the cores were over this pass
            start = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], capture_output=True, text=True,
                                  env=env)
            wall = time.monotonic() - start
            busy_pct = psutil.cpu_percent()
            log = logs / f"pass{n}.log"
            log.write_text(done.stdout + done.stderr, encoding="utf-8")
            walls.append(wall)
            print(f"pass {n}: {_summary(done.stdout)}; wall {wall:.0f} s; cores {busy_pct:.0f}% busy; "
                  f"{time.strftime('%H:%M')}", flush=True)
            if done.returncode != 0:
                status = done.returncode
                print(f"pass {n} failed (exit status {status}); its output: {log}", flush=True)
                break
    finally:
        for loader in loaders:
            loader.kill()
            loader.join()
    good = len(walls) - (status != 0)
    print(f"{good} of {passes} passes passed; median wall {statistics.median(walls):.0f} s", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=10, help="how many passes at most (default 10)")
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 1,
                        help="busy processes beside the tests (default: one per core)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp/repeat_tests"),
                        help="where each pass's output is kept (default /tmp/repeat_tests)")
    parser.add_argument("pytest_args", nargs="*", help="pytest's arguments, after -- (default: the browser suite)")
    args = parser.parse_args(argv)
    if args.passes < 1 or args.busy < 0:
        parser.error("--passes must be at least 1 and --busy at least 0")
    return run(args.passes, args.busy, args.pytest_args or BROWSER_SUITE, args.logs)


if __name__ == "__main__":
    sys.exit(main())

"""The class store alone under a class's answers, with no Streamlit: N students spread over P processes (threads
in each, as a server's sessions are) join, then answer Q questions open together, each at its own random
moments within a window of W seconds (10 s: a class answering a question; 0: every answer at once). It prints
answers a second, the time one `answer` call takes (p50, p95, max), the projector's count query, and whether
every answer was counted exactly once.

    python bench/class_store.py                                  # a SQLite file in a temporary folder
    python bench/class_store.py --url postgresql://user:pw@host/db --url sqlite:///class.db
    python bench/class_store.py --students 120 --processes 2 --questions 3 --window 0

A PostgreSQL database is used as it is: the store makes its tables there if missing, and each run adds a
session of its own. The figures are wall-clock time: they move with whatever else the machine is doing (the
last line says how busy it was).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import Watch  # noqa: E402
from store import classes  # noqa: E402

VALUES = "ABCD"


def one_process(url: str, code: str, questions: list[int], students: range, window: float, start, out) -> None:
    """One server process: its own engine, a thread per student, each answering every question at its own
    random moments within `window` seconds (0: all at once); sends back (latencies, refusals, errors)."""
    engine = classes.engine_for(url)
    tokens = {i: f"bench-student-{i:06d}-token" for i in students}
    for token in tokens.values():
        classes.join(engine, code, token, None, time.time())
    latencies: list[float] = []
    refusals: list[str] = []
    errors: list[str] = []

    def student(i: int) -> None:
        moments = sorted(random.Random(i).uniform(0, window) for _ in questions)
        zero = time.perf_counter()
        for k, q in enumerate(questions):
            time.sleep(max(0.0, zero + moments[k] - time.perf_counter()))
            began = time.perf_counter()
            try:
                result = classes.answer(engine, code, tokens[i], q, VALUES[(i + k) % 4], time.time())
            except classes.StoreError as error:
                errors.append(str(error))
                continue
            latencies.append(time.perf_counter() - began)
            if result is not None:
                refusals.append(result.reason)

    threads = [threading.Thread(target=student, args=(i,)) for i in students]
    start.wait()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    engine.dispose()
    out.put((latencies, refusals, errors))


def run(url: str, n_students: int, n_processes: int, n_questions: int, window: float) -> dict:
    engine = classes.engine_for(url)
    code, key = classes.start_session(engine, time.time(), title="bench", seats=classes.SEATS_MAX)
    questions = [classes.put_question(engine, code, key, "choice", {"k": k}, time.time(), close_others=False)
                 for k in range(n_questions)]
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(n_processes + 1), context.Queue()
    shares = [range(p, n_students, n_processes) for p in range(n_processes)]
    processes = [context.Process(target=one_process, args=(url, code, questions, share, window, start, out))
                 for share in shares]
    for p in processes:
        p.start()
    start.wait()  # every process has joined its students
    began = time.perf_counter()
    parts = [out.get() for _ in processes]
    wall = time.perf_counter() - began
    for p in processes:
        p.join()
    latencies = sorted(x for part in parts for x in part[0])
    counted = sum(classes.counts(engine, q).total for q in questions)
    polls = []
    for _ in range(200):
        t = time.perf_counter()
        classes.counts(engine, questions[0])
        polls.append(time.perf_counter() - t)
    engine.dispose()
    return dict(
        backend=engine.dialect.name, processes=n_processes, students=n_students, answers=len(latencies),
        wall=wall, rate=len(latencies) / wall, p50=statistics.median(latencies),
        p95=latencies[int(0.95 * (len(latencies) - 1))], max=latencies[-1],
        poll=statistics.median(polls), counted=counted, refused=sum(len(p[1]) for p in parts),
        errors=sum(len(p[2]) for p in parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", action="append", help="a database URL (repeatable); default a SQLite file")
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--window", type=float, default=10.0,
                        help="seconds within which each student gives all its answers (0: all at once)")
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    urls = args.url or [f"sqlite:///{Path(folder.name) / 'class.db'}"]
    watch = Watch()
    print(f"{'backend':<10} {'window':>6} {'proc':>4} {'students':>8} {'answers':>7} {'wall s':>7} {'answers/s':>9} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'count ms':>8} {'counted':>7} {'refused':>7} {'errors':>6}")
    for url in urls:
        r = run(url, args.students, args.processes, args.questions, args.window)
        print(f"{r['backend']:<10} {args.window:>6g} {r['processes']:>4} {r['students']:>8} {r['answers']:>7} "
              f"{r['wall']:>7.2f} {r['rate']:>9.0f} {r['p50'] * 1e3:>7.1f} {r['p95'] * 1e3:>7.1f} "
              f"{r['max'] * 1e3:>7.1f} {r['poll'] * 1e3:>8.2f} {r['counted']:>7} {r['refused']:>7} {r['errors']:>6}")
    print(watch.line())
    folder.cleanup()


if __name__ == "__main__":
    main()

"""A writer for tests/classroom/test_concurrency.py, run as its own process so that the test can kill it with
SIGKILL: students join one by one and answer, and each answer's number is printed once `answer` has returned
(the store has committed it). It stops by itself after N answers.

    python -m tests.classroom.writer URL CODE QUESTION_ID N
"""

from __future__ import annotations

import sys

from store import classes

NOW = 1_800_000_000.0


def token(i: int) -> str:
    return f"killed-writer-{i:06d}"


def value(i: int) -> str:
    return str(i % 7)


def main(url: str, code: str, question: int, n: int) -> None:
    engine = classes.engine_for(url)
    for i in range(n):
        classes.join(engine, code, token(i), None, NOW)
        if classes.answer(engine, code, token(i), question, value(i), NOW) is None:
            print(i, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

"""How far a slider move travels to reach one heatmap: the project's functions and files on its path.

A reader who wants to know how a number on screen was made follows one slider move to one heatmap: the page,
the maths that made the matrix, and the drawing that turned it into a chart. This script runs a lesson page
in Streamlit's AppTest, moves one slider to a value it has not had (so nothing cached hides the work), and
records every call into the project's own code (core, ui, lessons, classroom) during that move. It prints:

- the stack: the project's functions between the page's script and the send of the chosen heatmap;
- the drawing: the functions called beneath the function of ui that the lesson calls last on that stack,
  from the arrays to the chart's JSON, and beneath the calls of that lesson function that made the record of
  what to draw (a function returning a Heatmap);
- the maths: the functions of core and of the lesson's maths module that the move ran (the page computes
  every matrix of its view at once, so these are the maths of the heatmap too);

each with its distinct functions (a function called ten times counts once; comprehensions and lambdas do not
count) and the files they sit in, and the whole path's totals. Run from the repository root:

    .venv/bin/python bench/move_path.py                       # Scaling: d_k 64 -> 32, the weights map
    .venv/bin/python bench/move_path.py --page lessons/masking/page.py --slider d_k --value 16 --chart "weights"
    .venv/bin/python bench/move_path.py --list                # every function on the path, by file

It measures structure, not time: the counts do not move with the machine.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

PROJECT = tuple(str(ROOT / name) + "/" for name in ("core", "ui", "lessons", "classroom"))
SENDS = {("ui/drawing/send.py", "chart"), ("ui/drawing/render.py", "_draw"), ("ui/drawing/render.py", "draw_spec")}


@dataclass
class Call:
    where: tuple[str, str]  # (file relative to the root, function name)
    parent: Call | None
    children: list[Call] = field(default_factory=list)
    sent: str = ""  # for a send: the chart's JSON text (to find its title)
    made_record: bool = False  # it returned a Heatmap, the record a lesson gives to say what to draw


class Recorder:
    """Every call into the project's code, as a tree; each thread's calls hang from their nearest project caller."""

    def __init__(self) -> None:
        self.roots: list[Call] = []
        self.sends: list[Call] = []
        self._open: dict[int, Call] = {}  # id(frame) -> its call, while the frame runs
        self._lock = threading.Lock()

    def profile(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        path = frame.f_code.co_filename
        if not path.startswith(PROJECT):
            return
        if event == "return":
            call = self._open.pop(id(frame), None)
            if call is not None and type(arg).__name__ == "Heatmap":
                call.made_record = True
            return
        where = (str(Path(path).relative_to(ROOT)), frame.f_code.co_name)
        caller = frame.f_back
        while caller is not None and id(caller) not in self._open:
            caller = caller.f_back
        parent = self._open.get(id(caller)) if caller is not None else None
        call = Call(where, parent)
        with self._lock:
            (parent.children if parent else self.roots).append(call)
            self._open[id(frame)] = call
            if where in SENDS:
                call.sent = _sent_text(frame)
                self.sends.append(call)


def _sent_text(frame) -> str:
    local = frame.f_locals
    if "text" in local and isinstance(local["text"], str):
        return local["text"]
    spec = local.get("spec")
    return str(spec) if spec is not None else ""


def counted(where: tuple[str, str]) -> bool:
    return not where[1].startswith("<")  # <listcomp>, <genexpr>, <lambda>, <module>


def subtree(call: Call) -> set[tuple[str, str]]:
    found, todo = set(), [call]
    while todo:
        c = todo.pop()
        found.add(c.where)
        todo.extend(c.children)
    return {w for w in found if counted(w)}


def stack(call: Call) -> list[tuple[str, str]]:
    out = []
    while call is not None:
        out.append(call.where)
        call = call.parent
    return out[::-1]


def every_call(roots: list[Call]):
    todo = list(roots)
    while todo:
        c = todo.pop()
        yield c
        todo.extend(c.children)


def is_maths(where: tuple[str, str]) -> bool:
    return where[0].startswith("core/") or where[0].endswith("/maths.py")


def measure(page: str, slider: str, value, chart: str) -> dict:
    at = AppTest.from_file(str(ROOT / page), default_timeout=120).run()
    if at.exception:
        raise SystemExit(f"{page} did not run: {at.exception[0].message}")
    widget = next((w for kind in ("slider", "select_slider") for w in at.get(kind) if w.key == slider), None)
    if widget is None:
        raise SystemExit(f"{page} has no slider with key {slider!r}")
    recorder = Recorder()
    threading.setprofile(recorder.profile)
    sys.setprofile(recorder.profile)
    try:
        widget.set_value(value).run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    if at.exception:
        raise SystemExit(f"the move failed: {at.exception[0].message}")
    send = next((s for s in recorder.sends if chart in s.sent), None)
    if send is None:
        raise SystemExit(f"no chart whose JSON holds {chart!r} was sent by the move")
    path = stack(send)
    # the lesson hands its arrays to ui at the last lesson frame on the stack
    last_lesson = max(i for i, w in enumerate(path) if w[0].startswith("lessons/"))
    first_ui = last_lesson + 1
    node = send
    for _ in range(len(path) - 1 - first_ui):
        node = node.parent
    drawing = subtree(node)
    for record in (c for c in node.parent.children if c.made_record):  # e.g. views.weights_map(...)
        drawing |= subtree(record)
    maths = {c.where for c in every_call(recorder.roots) if is_maths(c.where) and counted(c.where)}
    return {"stack": [w for w in path[:first_ui] if counted(w)], "drawing": drawing, "maths": maths}


def files(functions) -> set[str]:
    return {w[0] for w in functions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default="lessons/scaling/page.py")
    parser.add_argument("--slider", default="d_k")
    parser.add_argument("--value", default="32", help="a value the slider has not had")
    parser.add_argument("--chart", default="weights: click", help="a piece of the heatmap's title")
    parser.add_argument("--list", action="store_true", help="print every function on the path, by file")
    args = parser.parse_args()
    value = float(args.value) if "." in args.value else int(args.value)
    parts = measure(args.page, args.slider, value, args.chart)
    whole = set(parts["stack"]) | parts["drawing"] | parts["maths"]
    print(f"{args.page}: {args.slider} -> {value}, the heatmap titled ...{args.chart}...")
    print(f"{'part':<10}{'functions':>10}{'files':>7}")
    for name in ("stack", "drawing", "maths"):
        print(f"{name:<10}{len(set(parts[name])):>10}{len(files(parts[name])):>7}")
    print(f"{'path':<10}{len(whole):>10}{len(files(whole)):>7}")
    if args.list:
        by_file = defaultdict(list)
        for f, name in sorted(whole):
            by_file[f].append(name)
        for f, names in sorted(by_file.items()):
            print(f"  {f}: {', '.join(names)}")


if __name__ == "__main__":
    main()

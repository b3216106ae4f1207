"""Every page of the app as first opened, written down element by element, to compare two versions of the tree.

Each lesson of the course, the home page and the glossary is rendered through Streamlit's AppTest (default
controls, panels closed) at the Simple and the Technical level, each also in presenter mode, and every element on
it is recorded in order with where it sits: its kind and what a reader meets in it (a Markdown body, a caption, a
heading, a widget's label, value and options, a chart's title and how many rows each of its datasets holds, an
exception's message). A table, drawn by st.dataframe, st.table or as Markdown, is recorded as kind "table" with its
column names and row count alone, so a table drawn another way, or its cells formatted otherwise, reads the same.

    python -m tools.dump_pages --out after.json                    # this checkout
    python -m tools.dump_pages --out before.json --root /tmp/base  # another (a `git worktree add` of a commit)
    python -m tools.dump_pages --diff before.json after.json       # what differs; exit status 1 if anything does
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
from streamlit.testing.v1 import AppTest

import lessons
from lessons import COURSE, glossary
from ui.compute import database
from ui.drawing import tables

ROOT = Path(lessons.__file__).resolve().parent.parent  # the checkout whose pages these are
TIMEOUT = 300
MODES = {"simple": {"level": "simple"}, "technical": {"level": "technical"},
         "simple presenter": {"level": "simple", "present": "true"},
         "technical presenter": {"level": "technical", "present": "true"}}
HOME = "streamlit_app.py"  # the entry script, whose default page is the home page
PAGES = (HOME, *(lesson.path for lesson in COURSE), glossary.PAGE)
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation shows the punctuation


def rows(arrow: bytes) -> int:
    """The rows of a table sent as an Arrow stream."""
    return pa.ipc.open_stream(io.BytesIO(arrow)).read_all().num_rows if arrow else 0


def chart(proto) -> dict:
    """A Vega-Lite chart: its title (and subtitle) and the rows each of its datasets holds."""
    title = json.loads(proto.spec).get("title", "")
    return {"title": title, "data": {d.name: rows(d.data.data) for d in proto.datasets}}


def table(frame, markdown: bool) -> dict:
    """A table by its shape alone: its column names as a reader sees them and its row count. markdown: its headings
    are Markdown (st.table's and a Markdown table's are, st.dataframe's are plain text), where a backslash before a
    mark shows the mark."""
    names = [MARKDOWN_ESCAPE.sub(r"\1", str(c)) if markdown else str(c) for c in frame.columns]
    return {"kind": "table", "columns": names, "rows": len(frame)}


def element(node) -> dict:
    """What a reader meets in one element, by its kind."""
    kind = node.type
    if kind in ("dataframe", "table"):
        return table(node.value, markdown=kind == "table")
    # a checkout from before the tables were Markdown has no reader for them, and no such tables
    if kind == "markdown" and (frame := getattr(tables, "read", lambda _: None)(str(node.value))) is not None:
        return table(frame, markdown=True)
    if kind == "vega_lite_chart":
        return {"kind": "chart", **chart(node.proto)}
    if kind == "exception":
        return {"kind": kind, "message": node.message}
    if kind == "html":
        return {"kind": kind, "body": node.proto.body}
    if kind == "page_link":
        return {"kind": kind, "label": node.proto.label, "page": node.proto.page}
    record = {"kind": kind}
    for field in ("label", "value", "options"):
        try:
            found = getattr(node, field)
        except (AttributeError, ValueError, KeyError):
            continue
        if found not in ([], None) or field == "value":
            record[field] = plain(found)
    return record


def plain(value):
    """A value as JSON holds it: a list of its items' texts, a number or text as it is, anything else its repr."""
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return value if isinstance(value, str | int | float | bool | type(None)) else repr(value)


def walk(block, where: str = "") -> list[dict]:
    """Every element under a block, in the order drawn, each with the blocks it sits in."""
    found = []
    for child in block.children.values():
        if hasattr(child, "children"):  # a block: a column, an expander, a tab, a form, a container
            label = getattr(child, "label", "") or getattr(getattr(child, "proto", None), "label", "")
            inner = f"{where}/{child.type}" + (f" {label!r}" if label else "")
            found += walk(child, inner)
        else:
            found.append({"at": where, **element(child)})
    return found


def render(page: str, query: dict) -> list[dict]:
    at = AppTest.from_file(str(ROOT / page), default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    # the whole tree: the main area, the sidebar and the event container (where the pages' style sheets go)
    return walk(at.run()._tree)


def dump() -> dict:
    """Every page in every mode: {"<page> (<mode>)": [element, ...]}."""
    # a page that keeps something in the app's database keeps it in a file of this dump's own
    os.environ[database.ENVIRONMENT] = f"sqlite:///{Path(tempfile.mkdtemp(prefix='dump-pages-')) / 'app.sqlite3'}"
    pages = {}
    for page in PAGES:
        for mode, query in MODES.items():
            print(f"{page} ({mode})", file=sys.stderr)
            pages[f"{page} ({mode})"] = render(page, query)
    return pages


def dump_elsewhere(root: Path, out: Path) -> int:
    """Dump another checkout: this file run by a Python whose first import path is that checkout, so every page,
    lesson and ui module is that checkout's own (the checkout need not hold this tool)."""
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')"
    return subprocess.run([sys.executable, "-c", code, "--out", str(out.resolve())], cwd=root).returncode


def lines(elements: list[dict]) -> list[str]:
    return [json.dumps(e, ensure_ascii=False, sort_keys=True) for e in elements]


def diff(before: dict, after: dict) -> list[str]:
    """What differs between two dumps, page by page, as unified diffs of their elements (one line each)."""
    found = []
    for page in sorted(before.keys() | after.keys()):
        found += difflib.unified_diff(lines(before.get(page, [])), lines(after.get(page, [])),
                                      f"before: {page}", f"after: {page}", lineterm="", n=1)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the JSON file to write")
    parser.add_argument("--root", type=Path, help="the checkout to dump (default: this one)")
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="print what two dumps differ in")
    args = parser.parse_args(argv)
    if args.diff:
        found = diff(*(json.loads(p.read_text(encoding="utf-8")) for p in args.diff))
        print("\n".join(found) or "no differences")
        return 1 if found else 0
    if not args.out:
        parser.error("--out or --diff is needed")
    if args.root and args.root.resolve() != ROOT:
        return dump_elsewhere(args.root, args.out)
    args.out.write_text(json.dumps(dump(), ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

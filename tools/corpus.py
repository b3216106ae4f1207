"""Write the documentation corpus the character models train on, from the running Python's pydoc_data.

    python -m tools.corpus                 # core/weights/pydoc_corpus.txt.gz from this Python's topics
    python -m tools.corpus --check         # only say whether this Python's topics give the shipped text

The corpus ships with the app (core.data.PYDOC_FILE) because the topics differ between Python releases;
the models trained on it record its digest (meta["corpus_digest"]) and refuse to load beside another text. So a
new corpus means new models: write it, then train again (`python -m tools.train --data pydoc ...`).
The file is gzip at level 9 with no name and no time in its header: the same text gives the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import sys
from pathlib import Path

from core.data import PYDOC_FILE, CorpusUnavailable, build_pydoc_text, pydoc_text, text_digest


def this_pythons_text() -> str:
    """The corpus built from the running Python's pydoc_data (left out of some builds)."""
    try:
        from pydoc_data.topics import topics
    except ImportError:
        raise SystemExit("This Python was built without pydoc_data: build the corpus on one that has it.") from None
    return build_pydoc_text(topics)


def write(text: str, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    tmp.replace(path)  # a reader never sees half a file


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.corpus", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=PYDOC_FILE, help=f"where to write it (default {PYDOC_FILE})")
    ap.add_argument("--check", action="store_true", help="compare with the shipped corpus; write nothing")
    args = ap.parse_args(argv)
    text = this_pythons_text()
    built = {"python": platform.python_version(), "digest": text_digest(text), "characters": len(text)}
    if args.check:
        try:
            shipped = text_digest(pydoc_text())
        except CorpusUnavailable as err:
            shipped = str(err)
        print(json.dumps({**built, "shipped": shipped, "same": shipped == built["digest"]}))
        return 0 if shipped == built["digest"] else 1
    write(text, args.out)
    print(json.dumps({**built, "file": str(args.out), "bytes": args.out.stat().st_size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

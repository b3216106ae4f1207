"""The tool that breaks the class mode's guards one line at a time (tools/break_class_guards.py) stays usable: every
line it breaks is still in its file exactly where it says, and every test it names exists. A guard rewritten
without its break moved along would leave the tool silently breaking nothing. (The breaks themselves take about
a minute and a half: `python -m tools.break_class_guards`.)"""

from __future__ import annotations

import subprocess
import sys

from tools.break_class_guards import BREAKS, ROOT, broken, find


def test_every_line_the_tool_breaks_is_still_there_once():
    missing = {b.what: why for b in BREAKS if isinstance(why := find((ROOT / b.path).read_text(), b), str)}
    assert missing == {}
    assert len(BREAKS) >= 20


def test_each_break_changes_its_line_and_compiles():
    for b in BREAKS:
        text = (ROOT / b.path).read_text()
        changed = broken(text, b)
        assert changed != text, b.what
        compile(changed, b.path, "exec")


def test_every_test_the_tool_names_exists():
    named = sorted({b.test for b in BREAKS})
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             *named], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]

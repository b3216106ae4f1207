"""The class's answers as a CSV file for the teacher, safe to open in a spreadsheet.

A spreadsheet reads a cell that starts with = + - @ (or a tab or carriage return before one) as a formula: a
nickname like `=HYPERLINK(...)` or `=cmd|' /C calc'!A0` would run as the teacher opens the file. Such a text cell
gets a leading apostrophe (the common rule against formulas injected into a CSV), which spreadsheets read as
"this is text". A cell that is a plain number (-0.5, +3, -1e-3) is left as it is: a spreadsheet reads it as that
number and nothing runs, and the teacher can sort and average a number question's answers. No Streamlit here.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: object) -> object:
    """A value as it is safe to write into a CSV cell: text that a spreadsheet would run as a formula gets a
    leading apostrophe; numbers, and text that is a plain number, are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(rows: Sequence[Mapping[str, object]]) -> str:
    """Rows of the same keys (store.classes.export_rows) as CSV text, its header from the first row's keys, every cell
    made safe by `cell`. An empty string for no rows."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows({name: cell(value) for name, value in row.items()} for row in rows)
    return buffer.getvalue()

"""The CSV a teacher downloads: a nickname or an answer a spreadsheet would run as a formula is written as text."""

from __future__ import annotations

import csv
import io

import pytest

from classroom import export


@pytest.mark.parametrize("typed", [
    "=cmd|' /C calc'!A0", "=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "-", "--5",
    "-0.5x", "=1",
])
def test_a_text_a_spreadsheet_would_run_starts_with_an_apostrophe(typed):
    assert export.cell(typed) == "'" + typed


@pytest.mark.parametrize("typed", ["-0.5", "+3", "-1e-3", "-.5", "-12", "0.25", "1/8", "Ann", "", "a=b", " =1"])
def test_a_plain_number_or_a_harmless_text_is_left_as_it_is(typed):
    """-0.5 stays a number a spreadsheet can average; nothing in it can run."""
    assert export.cell(typed) == typed


def test_the_file_holds_every_cell_made_safe():
    rows = [{"question": 1, "nickname": "=cmd|' /C calc'!A0", "answer": "-0.5", "changes": 0},
            {"question": 2, "nickname": "Ann, \"the\" first", "answer": "@x", "changes": 3}]
    read = list(csv.DictReader(io.StringIO(export.csv_text(rows))))
    assert read == [{"question": "1", "nickname": "'=cmd|' /C calc'!A0", "answer": "-0.5", "changes": "0"},
                    {"question": "2", "nickname": "Ann, \"the\" first", "answer": "'@x", "changes": "3"}]
    assert export.csv_text([]) == ""

"""Break the class mode's guards one line at a time, in a copy of the tree, and see whether the test named for each
break catches it: a guard no test would miss is a promise the tests keep.

Each break is one line of the app (found by its text, whatever its line number or indentation) and what it
becomes: the answer shown on a phone before the reveal, a key stored as it is, a comparison that is not
constant-time, a wrong key accepted, a closed question that takes answers. The tree (every file git knows, the
new ones too) is copied to a temporary folder once; each break is made there alone, its test run as CI runs
one (`python -m pytest -q -x -p no:cacheprovider <test>`), and the line put back.

    python -m tools.break_class_guards                 # every break
    python -m tools.break_class_guards --only 1,5,7    # some of them (their numbers in the table)
    python -m tools.break_class_guards --list          # the breaks, and whether each line is still there

First the named tests run once on the unbroken copy (a test that already fails would catch everything). Then
one row a break: its number, what it breaks, the test, caught yes/no, seconds. A line no longer in its file
(someone changed it since) is said plainly and counted apart. Exit status 0 when every break was caught; 1 when
one survived; 2 when a line was not found or a test failed unbroken.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
PROMISES = "tests/classroom/test_promises.py"
SECRETS = "tests/classroom/test_secrets.py"
PAGES = "tests/classroom/test_pages.py"
REFUSALS = "tests/classroom/test_refusals.py"
SECURITY = "tests/system/test_security.py"
DEVICE = "tests/classroom/test_device.py"
RETENTION = "tests/classroom/test_retention.py"
ROSTER = "tests/classroom/test_roster.py"
BUDGETS = "tests/classroom/test_budgets.py"


@dataclass(frozen=True)
class Break:
    what: str  # the guard broken, in a few words
    path: str  # the file, from the tree's root
    line: str  # the line as it is now (compared without its indentation)
    becomes: str  # what it becomes (given the found line's indentation)
    test: str  # the pytest node id expected to catch it
    after: str = ""  # when the line is in the file more than once: the one after the first line holding this


BREAKS = (
    Break("answer and explanation on a phone while open", "classroom/student.py",
          'if row.state == "revealed":  # the answer and why, for everyone: those who did not answer learn from it too',
          "if True:", f"{PROMISES}::test_a_phone_before_the_reveal_is_sent_nothing_of_the_answer[joined-open-number]"),
    Break("the room's running answers on a phone", "classroom/student.py", "mine(row, q, saved)",
          'mine(row, q, saved) or st.caption(f"The room so far: {classes.counts(engine, row.id).counts}")',
          f"{PROMISES}::test_a_phone_before_the_reveal_is_sent_nothing_of_the_answer[joined-open-number]"),
    Break("the room's running count on a phone", "classroom/student.py",
          'st.markdown(f"#### Question {asked.number(row)}\\n\\n{q.prompt}")',
          'st.markdown(f"#### Question {asked.number(row)} ({classes.counts(engine, row.id).total})\\n\\n{q.prompt}")',
          f"{PROMISES}::test_a_phone_before_the_reveal_is_the_same_whatever_the_room_answered[joined-open-number]"),
    Break("right or wrong on a phone before the reveal", "classroom/student.py",
          'elif row.state == "revealed":', 'elif row.state != "revealed":',
          f"{PROMISES}::test_a_phone_before_the_reveal_cannot_tell_whether_its_answer_is_right[open]"),
    Break("the right answer on the projector while open", "classroom/projector.py",
          "reveal.pictures(q)  # a question about pictures shows them while the room answers",
          "reveal.computed(q)",
          f"{PROMISES}::test_the_projector_before_the_reveal_is_sent_the_count_alone[open-number]"),
    Break("the room's answers on the projector while open", "classroom/projector.py",
          'if row.state == "revealed":', 'if row.state in ("revealed", "open"):',
          f"{PROMISES}::test_the_projector_before_the_reveal_is_the_same_whatever_the_room_answered[open-choice]"),
    Break("nicknames on the projector", "classroom/projector.py",
          "st.markdown(f\"## {counted(joined, 'student')} joined so far. The first question comes next.\")",
          "st.markdown(f\"## {engine.connect().exec_driver_sql('SELECT nickname FROM students').all()} joined\")",
          f"{PROMISES}::test_the_projector_before_any_question_shows_no_nickname"),
    Break("a class title as raw HTML on the phone", "classroom/student.py",
          'st.subheader(f"Join the class{title} ({codes.shown_code(session.code)})")',
          'st.markdown(f"### Join the class {session.title} ({session.code})", unsafe_allow_html=True)',
          f"{SECURITY}::test_a_class_title_and_nicknames_are_shown_escaped[html]"),
    Break("a class title as Markdown on the phone", "classroom/student.py",
          'title = f" “{escape_md(session.title)}”" if session.title else ""',
          'title = f" “{session.title}”" if session.title else ""',
          f"{SECURITY}::test_a_class_title_and_nicknames_are_shown_escaped[link]"),
    Break("a class title as raw HTML on the projector", "classroom/projector.py",
          "st.title(escape_md(session.title))", "st.markdown(f'# {session.title}', unsafe_allow_html=True)",
          f"{SECURITY}::test_a_class_title_and_nicknames_are_shown_escaped[html]"),
    Break("a nickname as Markdown on the teacher's page", "classroom/teacher.py",
          "f\"{escape_md(a.nickname) if a.nickname else f'student {a.student}'} \"",
          "f\"{a.nickname if a.nickname else f'student {a.student}'} \"",
          f"{SECURITY}::test_a_class_title_and_nicknames_are_shown_escaped[emphasis]"),
    Break("the teacher's key stored unhashed", "store/classes/sessions.py",
          'code=code, key_hash=hash_secret(key), title=clean_text(title, TITLE_MAX) or "",',
          'code=code, key_hash=key, title=clean_text(title, TITLE_MAX) or "",',
          f"{SECRETS}::test_no_row_of_any_table_holds_a_key_or_a_token"),
    Break("a student's token stored unhashed", "store/classes/answers.py",
          "session_id=row.id, token_hash=hash_secret(token), nickname=clean_nickname(nickname), joined_at=now,",
          "session_id=row.id, token_hash=token, nickname=clean_nickname(nickname), joined_at=now,",
          f"{SECRETS}::test_no_row_of_any_table_holds_a_key_or_a_token"),
    Break("a key from a weak random source", "store/codes.py", "return secrets.token_urlsafe(KEY_BYTES)",
          'return __import__("random").randbytes(KEY_BYTES).hex()',
          f"{SECRETS}::test_keys_and_tokens_come_from_the_secure_source"),
    Break("a token from a weak random source", "store/codes.py", "return secrets.token_urlsafe(TOKEN_BYTES)",
          'return __import__("random").randbytes(TOKEN_BYTES).hex()',
          f"{SECRETS}::test_keys_and_tokens_come_from_the_secure_source"),
    Break("a join code from a weak random source", "store/codes.py",
          'return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))',
          'return "".join(__import__("random").choice(ALPHABET) for _ in range(CODE_LENGTH))',
          f"{SECRETS}::test_codes_are_drawn_with_the_secure_source"),
    Break("a comparison that is not constant-time", "store/codes.py",
          'return hmac.compare_digest(hash_secret(given), stored_hash.encode("ascii", "replace").decode())',
          "return hash_secret(given) == stored_hash", f"{SECRETS}::test_a_secret_is_compared_in_constant_time"),
    Break("a wrong teacher key accepted", "store/classes/records.py",
          'return row if same_secret(key, row.key_hash) else Refusal("wrong key")', "return row",
          f"{REFUSALS}::test_a_wrong_teacher_key_opens_nothing_and_changes_nothing[sqlite-another's]"),
    Break("the export without the key", "store/classes/answers.py", "row = teacher_row(conn, code, key)",
          "row = session_row(conn, code)",
          f"{REFUSALS}::test_a_wrong_teacher_key_opens_nothing_and_changes_nothing[sqlite-another's]",
          after="def export_rows("),
    Break("who answered what without the key", "store/classes/answers.py", "row = teacher_row(conn, code, key)",
          "row = session_row(conn, code)",
          f"{REFUSALS}::test_a_wrong_teacher_key_opens_nothing_and_changes_nothing[sqlite-another's]",
          after="def answers_of("),
    Break("a question moved without the key", "store/classes/asking.py", "row = teacher_row(conn, code, key)",
          'row = __import__("store.classes.records", fromlist=["records"]).session_row(conn, code)',
          f"{REFUSALS}::test_a_wrong_teacher_key_opens_nothing_and_changes_nothing[sqlite-another's]",
          after="def set_states("),
    Break("an answer to a closed question accepted", "store/classes/answers.py",
          'if question.state != "open":', "if False:", f"{REFUSALS}::test_answers_that_are_refused[sqlite]"),
    Break("the burst limit off", "store/classes/answers.py", 'return Refusal("too many")', "pass",
          f"{REFUSALS}::test_too_many_answers_at_once[sqlite]"),
    Break("an answer to another class's question", "store/classes/answers.py",
          "questions.c.id == question_id, questions.c.session_id == row.id).with_for_update(read=True)).first()",
          "questions.c.id == question_id).with_for_update(read=True)).first()",
          "tests/classroom/test_store.py::test_two_sessions_do_not_mix[sqlite]"),
    Break("an ended class still takes answers", "store/classes/records.py",
          'return row if status == "live" else Refusal(status)', "return row",
          f"{REFUSALS}::test_an_ended_class_takes_no_one_and_nothing[sqlite]"),
    Break("the teacher's key left in the address bar", "classroom/page.py", 'del st.query_params["key"]', "pass",
          f"{PAGES}::test_the_teacher_link_opens_the_teachers_page_and_hides_its_key"),
    Break("two tabs of one browser are two students", "classroom/device.py",
          'return derived(device, "student", code), shared',
          'return derived(codes.new_token(), "student", code), shared',
          f"{DEVICE}::test_two_tabs_of_one_browser_are_one_student"),
    Break("a pasted wrong key opens the teacher's page", "classroom/teacher.py",
          "if isinstance(classes.teacher(engine, code, pasted), classes.Session):", "if True:",
          f"{DEVICE}::test_another_browser_gets_control_only_by_pasting_the_key"),
    Break("any browser that asks is the teacher", "classroom/page.py",
          "if isinstance(found := classes.teacher(engine, code, key), classes.Session):",
          "if not isinstance(found := classes.find_session(engine, code, 0.0), classes.Refusal):",
          f"{DEVICE}::test_a_student_who_asks_for_the_teachers_page_gets_no_controls"),
    Break("a class deleted without the key", "store/classes/sessions.py",
          "row = teacher_row(conn, code, key, lock=True)",
          "row = session_row(conn, code, lock=True)",
          f"{RETENTION}::test_only_the_teacher_deletes_a_class_and_then_everything_of_it_goes[sqlite]",
          after="def delete_session("),
    Break("a class kept past its keeping time", "store/classes/sessions.py",
          "return conn.execute(class_sessions.delete().where(over < now - keep_days() * DAY_S)).rowcount",
          "return 0", f"{RETENTION}::test_starting_a_class_deletes_the_classes_past_their_time[sqlite]"),
    Break("joins past the class's seats accepted", "store/classes/answers.py", 'return Refusal("full")', "pass",
          f"{ROSTER}::test_joins_stop_at_the_seats_and_a_returning_student_keeps_theirs[sqlite]"),
    Break("a removed student joins again", "store/classes/answers.py", 'return Refusal("removed")', "pass",
          f"{ROSTER}::test_a_removed_student_leaves_every_count_and_cannot_join_again[sqlite]"),
    Break("a removed student's answers still counted", "store/classes/roster.py",
          "conn.execute(delete(answers).where(answers.c.student_id == student_id))", "pass",
          f"{ROSTER}::test_a_removed_student_leaves_every_count_and_cannot_join_again[sqlite]"),
    Break("the database's folder readable by others", "store/engine.py",
          "folder.mkdir(mode=0o700, parents=True, exist_ok=True)",
          "folder.mkdir(mode=0o755, parents=True, exist_ok=True)",
          "tests/ui/test_database_file.py::test_the_default_database_is_private_to_its_user"),
    Break("new students from one address without limit", "store/classes/answers.py", 'return Refusal("busy address")',
          "pass", f"{BUDGETS}::test_a_school_behind_one_address_joins_and_a_script_is_stopped[sqlite]"),
    Break("join codes tried without limit", "store/classes/sessions.py", 'return Refusal("guesses")', "pass",
          f"{BUDGETS}::test_wrong_codes_are_slowed_and_then_no_code_is_read[sqlite]"),
    Break("a network address stored as it is", "store/classes/budgets.py",
          'return hmac.new(key, address.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()',
          "return address", f"{BUDGETS}::test_the_address_is_never_stored_and_a_whole_budget_is_forgotten[sqlite]"),
    Break("the join page passes no address", "classroom/student.py",
          "result = classes.join(engine, session.code, token, nickname, time.time(), address=device.address())",
          "result = classes.join(engine, session.code, token, nickname, time.time())",
          f"{BUDGETS}::test_the_class_page_limits_joins_and_wrong_codes_from_an_address"),
    Break("an old teacher key works after a new one is made", "store/classes/sessions.py",
          "key_hash=hash_secret(fresh), key_generation=generation))", "key_generation=generation))",
          f"{DEVICE}::test_a_new_teacher_key_stops_every_copy_of_the_old_and_this_browser_keeps_control"),
)


def find(text: str, b: Break) -> int | str:
    """The index of b's line in `text`'s lines, or why it cannot be broken (not found, or found more than once)."""
    lines = text.splitlines()
    start = 0
    if b.after:
        start = next((i for i, line in enumerate(lines) if b.after in line), -1)
        if start < 0:
            return f"no line holds {b.after!r}"
    found = [i for i in range(start, len(lines)) if lines[i].strip() == b.line.strip()]
    if not found:
        return "line not found" + (f" after {b.after!r}" if b.after else "")
    if len(found) > 1 and not b.after:
        return f"line found {len(found)} times: name the one meant with `after`"
    return found[0]


def broken(text: str, b: Break) -> str:
    """`text` with b's line replaced, its indentation kept."""
    lines = text.splitlines(keepends=True)
    i = find(text, b)
    assert isinstance(i, int), i
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + b.becomes + "\n"
    return "".join(lines)


def copy_tree(to: Path) -> int:
    """Every file git knows in the tree (tracked, and new ones not ignored), as they are now; how many."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    copied = 0
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
            copied += 1
    return copied


def run_tests(tree: Path, tests: list[str]) -> tuple[bool, float, str]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, *PYTEST, *tests], cwd=tree, capture_output=True, text=True, timeout=900)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode == 0, time.monotonic() - start, lines[-1] if lines else done.stderr[-300:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="the breaks to make, by number: 1,5,7")
    parser.add_argument("--list", action="store_true", help="list the breaks and whether each line is there")
    args = parser.parse_args(argv)
    numbered = list(enumerate(BREAKS, 1))
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        numbered = [(n, b) for n, b in numbered if n in wanted]
    missing = [(n, b, why) for n, b in numbered if isinstance(why := find((ROOT / b.path).read_text(), b), str)]
    for n, b, why in missing:
        print(f"break {n} ({b.what}): {b.path}: {why}: {b.line!r}", flush=True)
    if args.list:
        for n, b in numbered:
            print(f"{n:>2}  {b.what:<48} {b.path:<24} {b.test}")
        return 2 if missing else 0
    if missing:
        return 2
    with tempfile.TemporaryDirectory(prefix="class-guards-") as folder:
        tree = Path(folder)
        print(f"copied {copy_tree(tree)} files to {tree}", flush=True)
        passed, seconds, said = run_tests(tree, sorted({b.test for _, b in numbered}))
        print(f"unbroken: the {len({b.test for _, b in numbered})} named tests {said} ({seconds:.0f} s)", flush=True)
        if not passed:
            print("a named test fails on the unbroken tree: fix that first", flush=True)
            return 2
        print(f"\n{'':>2}  {'break':<48} {'caught by':<100} caught  seconds", flush=True)
        survived = []
        for n, b in numbered:
            path = tree / b.path
            original = path.read_text()
            path.write_text(broken(original, b))
            try:
                passed, seconds, _ = run_tests(tree, [b.test])
            finally:
                path.write_text(original)
            if passed:
                survived.append(n)
            print(f"{n:>2}  {b.what:<48} {b.test:<100} {'no' if passed else 'yes':<7} {seconds:>6.1f}", flush=True)
    print(f"\n{len(numbered) - len(survived)} of {len(numbered)} breaks caught"
          + (f"; survived: {', '.join(map(str, survived))}" if survived else ""), flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())

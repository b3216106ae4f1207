"""The induction circuit page through AppTest: at the defaults the previous-token head and the induction
head stand out, the repeat is predicted and the first copy is not, every letter labels the maps; each
control moves the page, a link draws what the same settings by hand draw, bad input gets a message, and
switching off either head of the circuit breaks copying while the other two barely matter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.model_file import load
from core.tasks import RepeatTask
from lessons.circuit.maths import generated, letter_dependence, read_sequence
from tests.apptest_helpers import (
    ROOT,
    SENT_ATOL,
    SENT_RTOL,
    captions,
    chart_by_title,
    chart_data,
    chart_title,
    charts,
    matrix,
    numbered_title,
    ok,
    run_page,
    shown_table,
    shown_tables,
    texts,
)

PAGE = "lessons/circuit/page.py"
PREV_MAP, IND_MAP, LOSS = "layer 1 · head 2", "layer 2 · head 2", "Loss per position"
HEADS = ["layer 1 · head 1", "layer 1 · head 2", "layer 2 · head 1", "layer 2 · head 2"]
PARAMS, CFG, META = load(ROOT / "core" / "weights" / "circuit")
ALPHABET = META["tokenizer"]["chars"]



def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def number(text: str) -> float:
    return float(text.replace("NaN", "nan"))


def shares(at) -> tuple[float, float]:
    lines = [line.strip() for c in at.caption for line in str(c.value).splitlines()]  # a note is a caption's line
    prev = next(c for c in lines if c.startswith("Previous-token share: ") and len(c) < 40)
    ind = next(c for c in lines if c.startswith("Induction share: "))
    return number(prev.split(": ")[1]), number(ind.split(": ")[1])


def letters_of(at) -> str:
    rows = chart_data(chart_by_title(at, PREV_MAP)).drop_duplicates("row_i").sort_values("row_i")["row"]
    return "".join(label[0] for label in rows)


def view(at) -> dict:
    return {"charts": [chart_data(c).to_dict("list") for c in charts(at)], "metrics": metrics(at),
            "shares": shares(at) if at.metric else None}



def test_defaults(default_page):
    at = default_page
    assert [t.value for t in at.title] == [numbered_title("circuit")]
    assert at.radio(key="ci_source").value == "generated" and at.sidebar.slider(key="ci_length").value == 8
    assert at.sidebar.slider(key="seed").value == 0 and at.text_input(key="ci_text").value == "QFBPLANCKWORDPLANCKWORD"
    prev, ind = shares(at)
    assert prev > 0.55 and ind > 0.85, (prev, ind)
    shown = metrics(at)
    first, repeat = number(shown["Mean loss, first copy"]), number(shown["Mean loss, repeat"])
    assert repeat < 0.02 and first > math.log(24) and first > 100 * repeat, shown
    for part in ("What to notice", "copy_halves", "Blue: the first copy", "Knock out a head"):
        assert part in texts(at), part


def test_every_letter_labels_both_maps_and_the_numbers_are_the_cores(default_page):
    ids = generated(8, 0, CFG.max_len, len(ALPHABET))
    letters = "".join(ALPHABET[i - 1] for i in ids)
    want = read_sequence(PARAMS, CFG, ids)
    for title, head in ((PREV_MAP, (0, 1)), (IND_MAP, (1, 1))):
        df = chart_data(chart_by_title(default_page, title))
        labels = [f"{c}{i}" for i, c in enumerate(letters)]
        for field in ("row", "col"):
            assert list(df.drop_duplicates(f"{field}_i").sort_values(f"{field}_i")[field]) == labels
        np.testing.assert_allclose(matrix(chart_by_title(default_page, title)).to_numpy(), want["weights"][head],
                                   atol=SENT_ATOL)
    loss = chart_data(chart_by_title(default_page, LOSS)).sort_values("x")
    np.testing.assert_allclose(loss["y"], want["losses"], rtol=SENT_RTOL)  # as sent: 4 decimals
    assert set(loss["series"]) == {"first copy", "repeat", "other letters"}


def test_the_marked_halves_are_the_tasks_own():
    """Where no chance letter blurs the stretch's edge, the marks are RepeatTask's halves of the same draw."""
    ids = generated(8, 1, CFG.max_len, len(ALPHABET))
    task = RepeatTask(CFG.max_len - 1, 8, 8, len(ALPHABET))
    seq, start, length = task.sequences(np.random.default_rng(1), 1)
    first, repeat = task.halves(start, length, CFG.max_len - 1)
    got = read_sequence(PARAMS, CFG, ids)
    assert (seq[0] == ids).all()
    np.testing.assert_array_equal(got["first"], first[0])
    np.testing.assert_array_equal(got["repeat"], repeat[0])


@pytest.mark.parametrize(("key", "value"), [("ci_length", 12), ("seed", 5), ("ci_source", "typed")])
def test_each_control_moves_the_page(default_page, key, value):
    at = ok(run_page(PAGE, timeout=120))
    before = letters_of(at)
    widget = at.radio(key=key) if key == "ci_source" else at.sidebar.slider(key=key)
    widget.set_value(value)
    ok(at.run())
    after = letters_of(at)
    assert after != before
    if key == "ci_source":
        assert after == "QFBPLANCKWORDPLANCKWORD"
    prev, ind = shares(at)
    assert prev > 0.5 and ind > 0.7 and number(metrics(at)["Mean loss, repeat"]) < 0.3


def test_typed_letters_lowercase_and_spaces_are_read():
    at = ok(run_page(PAGE, {"ci_source": "typed"}, timeout=120))
    at.text_input(key="ci_text").set_value("bq mnopw bq mnopw")
    ok(at.run())
    assert letters_of(at) == "BQMNOPWBQMNOPW"
    assert number(metrics(at)["Mean loss, repeat"]) < 0.3
    assert "6 orange" in texts(at)  # Q M N O P W after the second B are given away


def test_a_link_draws_what_the_same_settings_by_hand_draw():
    link = {"ci_length": "11", "seed": "42", "ci_off": "layer 2 · head 2", "ci_off_mode": "mean"}
    linked = ok(run_page(PAGE, link, timeout=120))
    by_hand = ok(run_page(PAGE, timeout=120))
    by_hand.sidebar.slider(key="ci_length").set_value(11)
    by_hand.sidebar.slider(key="seed").set_value(42)
    by_hand.selectbox(key="ci_off").set_value("layer 2 · head 2")
    by_hand.radio(key="ci_off_mode").set_value("mean")
    ok(by_hand.run())
    assert view(linked) == view(by_hand)
    typed = {"ci_source": "typed", "ci_text": "ABCDEFABCDEF"}
    linked = ok(run_page(PAGE, typed, timeout=120))
    by_hand = ok(run_page(PAGE, timeout=120))
    by_hand.radio(key="ci_source").set_value("typed")
    by_hand.text_input(key="ci_text").set_value("ABCDEFABCDEF")
    ok(by_hand.run())
    assert view(linked) == view(by_hand) and letters_of(linked) == "ABCDEFABCDEF"


@pytest.mark.parametrize(("typed", "says"), [
    ("ABCYZABC", "cannot read `Y`, `Z`"), ("AB1C-D", "cannot read `1`, `-`"), ("AB😀AB", "cannot read `😀`"),
    ("", "Type at least two letters"), ("   ", "Type at least two letters"), ("A", "Type at least two letters"),
])
def test_bad_typed_input_gets_a_message(typed, says):
    at = ok(run_page(PAGE, {"ci_source": "typed"}, timeout=120))
    at.text_input(key="ci_text").set_value(typed)
    ok(at.run())
    assert says in texts(at), texts(at)
    assert not [c for c in charts(at) if PREV_MAP in str(c.proto.spec)]  # no maps of letters it cannot read


def test_too_long_input_uses_the_first_48_letters():
    text = ALPHABET[:12] * 6  # 72 letters
    at = ok(run_page(PAGE, {"ci_source": "typed", "ci_text": text}, timeout=120))
    assert "the first 48 of your 72 are used" in texts(at)
    assert letters_of(at) == text[:48]
    assert number(metrics(at)["Mean loss, repeat"]) < 0.3


def in_order(node):
    """Every element under node, in the order the page shows them."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from in_order(child)


@pytest.mark.parametrize("typed", ["AB", "ABCDEFGH"])
def test_a_sequence_without_a_repeat_says_so_up_front(typed):
    """Nothing to measure the repeat on: the page says so before any figure, and shows no NaN, no column of
    them and no line through one point (its axis ticked 10.037000, 10.037000); the rest keeps working."""
    at = ok(run_page(PAGE, {"ci_source": "typed", "ci_text": typed}, timeout=120))
    note = next(i for i in at.info if "No repeat to measure" in i.value)
    assert "Nothing in this sequence repeats" in note.value
    shown = list(in_order(at.main))
    first_figure = min(i for i, e in enumerate(shown)
                       if type(e).__name__ in ("Metric", "Subheader", "Table", "Dataframe"))
    assert shown.index(note) < first_figure
    words = [texts(at), *(f"{m.label} {m.value}" for m in at.metric), *(c.value for c in at.caption)]
    assert not [w for w in words if "NaN" in w or "nan" in w.split()], words
    for table in shown_tables(at):  # a printed "nan" reads back as NaN
        assert "induction share" not in table.columns
        assert not table.select_dtypes("number").isna().any().any(), table
    assert set(metrics(at)) >= {"Mean loss, every letter", "Uniform guess over 24 letters", "Loss, all heads on"}
    assert not {"Mean loss, repeat", "Mean loss, first copy"} & set(metrics(at))
    assert "Induction share: no repeat to read" in captions(at)
    assert any(chart_title(c).startswith(LOSS) for c in charts(at)) == (len(typed) > 2)
    assert chart_by_title(at, PREV_MAP) and chart_by_title(at, IND_MAP)  # the maps are still drawn
    predictions = len(typed) - 1
    assert f"over its {predictions} prediction{'s' if predictions > 1 else ''}." in captions(at)


@pytest.mark.parametrize("query", [
    {"ci_length": "abc"}, {"ci_length": "1e9"}, {"ci_length": "-5"}, {"ci_length": "nan"}, {"seed": "inf"},
    {"ci_source": "<script>alert(1)</script>"}, {"ci_off": "layer 9 · head 9"}, {"ci_off_mode": "DROP"},
    {"ci_source": "typed", "ci_text": "x" * 5000}, {"ci_source": "typed", "ci_text": "**`<b>`**"},
])
def test_hostile_link_values_get_a_note_not_a_traceback(query):
    at = ok(run_page(PAGE, query, timeout=120))
    assert at.warning or at.info or "link" in texts(at).lower(), texts(at)


def test_knocking_out_either_head_of_the_circuit_breaks_copying():
    at = ok(run_page(PAGE, timeout=120))
    rises = {}
    for head in HEADS:
        at.selectbox(key="ci_off").set_value(head)
        ok(at.run())
        shown = metrics(at)
        rises[head] = number(shown[f"Loss, {head} off"]) - number(shown["Loss, all heads on"])
    assert rises["layer 1 · head 2"] > 5 and rises["layer 2 · head 2"] > 3, rises
    assert abs(rises["layer 1 · head 1"]) < 0.35 and abs(rises["layer 2 · head 1"]) < 0.1, rises
    assert "over the 8 predictions of the repeat" in texts(at)
    table = shown_table(at, "layer")  # the layers x heads cost table, repeat only
    assert table.iloc[0, 2] > 5 and table.iloc[1, 2] > 3 and abs(table.iloc[1, 1]) < 0.1


def test_how_far_copying_reaches_is_measured_not_typed():
    """Under the loss chart: the repeat's loss at the trained lengths, below and past them, and without the
    positional head, all from lessons.circuit.maths.copying_by_length on fresh sequences."""
    at = ok(run_page(PAGE, timeout=120))
    line = next(str(c.value) for c in at.caption if str(c.value).startswith("Beyond this sequence"))
    assert "at 4 letters" in line and "at 16, the shortest and longest stretches training used" in line
    moved = letter_dependence(PARAMS, CFG, len(ALPHABET), 128)
    assert f"its rows differ by only {moved[0, 0]:.2f} on average" in line and f"against {moved[1, 1]:.2f}" in line
    assert moved[0, 0] < 0.1 < 0.5 < moved[1, 1]  # the positional head barely follows the letters, induction does
    assert "Training used 4 to 16." == at.sidebar.slider(key="ci_length").help.split(" occur twice in a row. ")[1]


def test_full_model_page_still_measures_every_position():
    """The optional repeat-only loss of the knockout section leaves the Full model page as it was."""
    at = ok(run_page("lessons/full_model/page.py", timeout=120))
    assert any("over its" in str(c.value) and "predictions" in str(c.value) for c in at.caption)


def test_a_stretch_too_long_for_training_fails_until_the_positional_head_is_off():
    """What to notice says so: 22 letters twice are not copied; without layer 1 · head 1 they are."""
    at = ok(run_page(PAGE, {"ci_source": "typed", "ci_text": ALPHABET[:22] * 2, "ci_off": "layer 1 · head 1"},
                     timeout=120))
    shown = metrics(at)
    assert number(shown["Mean loss, repeat"]) > 3 and number(shown["Loss, layer 1 · head 1 off"]) < 0.5, shown


@pytest.mark.parametrize(("length", "seed", "near", "faint"), [(8, 0, True, False), (24, 0, False, True),
                                                                (8, 2, False, False)])
def test_the_loss_and_the_line_are_said_as_they_were_measured(length, seed, near, faint):
    """"Close to 0" only where the repeat's mean loss is under the page's NEAR, and the induction head's line
    called faint only where its share is under FAINT: at the default stretch, at a stretch past training (24
    letters) and at a trained length where one letter is given away only by chance and missed (8, seed 2)."""
    from lessons.circuit.page import FAINT, NEAR
    at = ok(run_page(PAGE, {"ci_length": str(length), "seed": str(seed)}))
    a = read_sequence(PARAMS, CFG, generated(length, seed, CFG.max_len, len(ALPHABET)))
    shown = texts(at)
    assert (a["repeat_loss"] < NEAR) == near and (a["induction"][1, 1] < FAINT) == faint
    if near:
        assert f"On the repeat it is close to 0, {a['repeat_loss']:.3g} on average" in shown
    else:
        assert f"On the repeat it averages {a['repeat_loss']:.2f}, not close to 0" in shown
        assert "close to 0, " not in shown
    assert (f"Here only {a['induction'][1, 1]:.2f} of it does" in shown) == faint
    assert ("weight sits on a line parallel" in shown) != faint


def test_most_sequences_of_the_trained_lengths_copy_and_the_line_fades_past_them():
    """What to notice: the repeat's loss is near 0 on most sequences whose stretch has a length training used; the
    faint line's sentence: the induction share falls as stretches grow past the longest trained one."""
    from lessons.circuit.page import NEAR
    lengths = range(META["task"]["min_length"], META["task"]["max_length"] + 1)  # the lengths training used
    n_symbols = len(ALPHABET)
    near = [read_sequence(PARAMS, CFG, generated(L, s, CFG.max_len, n_symbols))["repeat_loss"] < NEAR
            for L in lengths for s in range(10)]
    assert np.mean(near) > 0.8
    for seed in range(3):
        share = [read_sequence(PARAMS, CFG, generated(L, seed, CFG.max_len, n_symbols))["induction"][1, 1]
                 for L in (16, 20, 24)]
        assert share[0] > share[1] > share[2]

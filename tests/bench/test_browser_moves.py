"""bench/browser_moves.py without a browser: which slider it moves and which way, and what its check calls wrong.

The measurement itself needs Chromium and servers; `python bench/browser_moves.py --check` runs it.
"""

from __future__ import annotations

import math

from bench.browser_moves import BUDGETS, Moves, Slider, candidates, load_budgets, ratio, table, verdicts
from lessons import COURSE


def moves(seconds: list[float], mutations: list[int], problems: tuple[str, ...] = ()) -> Moves:
    m = Moves(slider="Random seed", problems=list(problems))
    for s, n in zip(seconds, mutations):
        m.add({"ms": 1000 * s, "mutations": n, "replaced": 1})
    return m


BARE = moves([0.1, 0.2, 0.12, 0.5, 0.11], [700, 715, 715, 711, 715])  # medians 0.12 s, 715


def test_a_slider_moves_toward_the_far_end_of_its_range():
    assert Slider("Random seed", 0, 0, 999, 1).key() == "ArrowRight"
    assert Slider("Tokens used (seq_len)", 7, 1, 7, 1).key() == "ArrowLeft"  # at its top: down is the only way
    assert Slider("Smoothing alpha", 1.5, 0, 2, 0.05).key() == "ArrowLeft"
    assert Slider("Smoothing alpha", 1.5, 0, 2, 0.05).room() == (30, 10)


def test_candidates_need_room_for_every_move_and_come_preferred_first():
    sliders = [Slider("Tokens used (seq_len)", 3, 1, 4, 1),  # 2 steps down, 1 up: too few for 5 moves
               Slider("d_model (embedding width)", 3, 0, 9, 1),
               Slider("Sampling temperature", 1, 0, 3, 0.05),
               Slider("d_k (query/key size)", 8, 1, 64, 1),
               Slider("Shuffle seed", 1, 0, 999, 1),
               Slider("Random seed", 0, 0, 999, 1)]
    assert [s.label for s in candidates(sliders, 5)] == [
        "Random seed", "d_k (query/key size)", "Sampling temperature", "d_model (embedding width)", "Shuffle seed"]


def test_medians_and_ratios():
    assert BARE.median_s == 0.12 and BARE.median_mutations == 715
    assert math.isnan(Moves().median_s)
    assert math.isnan(ratio(1.0, 0.0))


def test_a_lesson_within_its_budget_passes_and_one_past_it_fails():
    lesson = moves([0.6, 0.7, 0.5], [1430, 1430, 1400])  # 5.0x the time, 2.0x the mutations
    assert verdicts("qkv", lesson, BARE, {"time": 7.5, "mutations": 3}) == []
    found = verdicts("qkv", lesson, BARE, {"time": 4, "mutations": 1.5})
    assert found == ["qkv: time 5.0x a bare move, past its budget of 4x",
                     "qkv: mutations 2.0x a bare move, past its budget of 1.5x"]


def test_no_budget_no_moves_an_exception_or_a_javascript_error_fail():
    assert verdicts("new", moves([0.6], [100]), BARE, None) == [
        "new: no budget in browser_budgets.toml (a new lesson gets one when it lands)"]
    assert verdicts("qkv", moves([0.6], [100]), BARE, {"time": 9}) == [
        "qkv: no mutations budget in browser_budgets.toml"]
    nothing = verdicts("qkv", Moves(problems=["no slider with room for every move redraws a chart"]), BARE,
                       {"time": 9, "mutations": 9})
    assert nothing[0] == "qkv: no slider with room for every move redraws a chart"
    assert len(nothing) == 3  # and neither figure is within a budget: there is none
    broken = moves([0.2], [100], problems=("JavaScript error: boom",))
    assert verdicts("qkv", broken, BARE, {"time": 9, "mutations": 9}) == ["qkv: JavaScript error: boom"]


def test_every_lesson_has_a_budget_of_time_and_mutations():
    limits = load_budgets(BUDGETS)
    for lesson in COURSE:
        assert set(limits[lesson.url_path]) == {"time", "mutations"}, lesson.url_path
        assert all(v > 0 for v in limits[lesson.url_path].values())


def test_the_table_has_a_row_per_app_and_the_bare_page():
    this, base = moves([0.6], [1430]), moves([1.2], [2860])
    text = table({"qkv": {"this": this, "base": base}}, BARE, {"qkv": {"time": 7.5, "mutations": 3}})
    rows = text.splitlines()
    assert rows[2].startswith("| qkv | this | Random seed | 0.60 | **5.0** | 1430 | 2.0 |")
    assert rows[2].endswith("| 7.5 / 3 |")
    assert rows[3].startswith("| qkv | base |")
    assert rows[4].startswith("| qkv | this / base | | 0.50 |")
    assert rows[5].startswith("| bare page |")

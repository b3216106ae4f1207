"""bench/load_test.py's account of where the server's CPU went: each sampled stack to one row of WHERE."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import load_test  # noqa: E402

RUN = "Thread.run (threading.py:982);ScriptRunner._run_script (streamlit/runtime/scriptrunner/script_runner.py:754)"
APP = RUN + ";main (streamlit_app.py:80);live (ui/frame/page.py:115)"
LOOP = "Runner.run (asyncio/runners.py:118);AppSession._create_new_session_message (streamlit/runtime/app_session.py:9)"


@pytest.mark.parametrize("stack, where", [
    (LOOP, "Streamlit outside the runs"),
    (APP + ";heatmaps (ui/sections/views.py:99);gather_metrics.<locals>.wrapped_func "
     "(streamlit/runtime/metrics_util.py:732);LayoutsMixin.columns (streamlit/elements/layouts.py:500)",
     "Streamlit's st.* calls"),
    (APP + ";softmax (core/attention.py:40)", "the core's maths"),
    (APP + ";softmax (core/attention.py:40);exp (numpy/core/fromnumeric.py:10)", "the core's maths"),
    (APP + ";_spec.<locals>.build (ui/drawing/render.py:39);to_dict (altair/vegalite/v6/api.py:2099)",
     "chart designs built"),
    (APP + ";arrow (ui/drawing/chart_data.py:150);write_table (pyarrow/ipc.py:80)", "Arrow tables written"),
    (APP + ";heatmaps (ui/sections/views.py:99)", "the app's Python"),
    (APP + ";_fragment.<locals>.wrap (streamlit/runtime/fragment.py:685)", "Streamlit in the runs"),
    (APP + ";deque (collections/__init__.py:10)", "other"),
])
def test_each_stack_goes_to_the_first_row_that_takes_it(stack, where):
    assert load_test.where_it_went(stack).startswith(where)


def test_the_shares_are_printed_before_the_functions_and_add_up_to_every_sample(tmp_path, capsys):
    profile = tmp_path / "profile.txt"
    profile.write_text(f"{LOOP} 3\n{APP};softmax (core/attention.py:40) 1\n")
    load_test.print_profile(profile)
    out = capsys.readouterr().out
    assert out.index("where they went") < out.index("inclusive share")
    assert "75.0%  Streamlit outside the runs" in out and "25.0%  the core's maths" in out

"""A model trained on the Training page is usable on the Full model page in the same session."""

from __future__ import annotations

from lessons.training import session as ts
from tests.apptest_helpers import run_app, texts


def test_a_model_trained_here_shows_up_on_the_full_model_page():
    at = run_app("lessons/training/page.py", {"tr_layers": "1", "tr_steps": "50", "tr_data": "copy"})
    assert not at.exception
    at.button(key="tr_train").click().run()
    for _ in range(60):
        if not at.session_state[ts.SESSION_KEY].running:
            break
        at.run()
    assert not at.exception
    trained = at.session_state["session_models"]
    assert len(trained) == 1
    name = next(iter(trained))

    at.switch_page("lessons/full_model/page.py").run()
    assert not at.exception
    picker = at.sidebar.selectbox(key="fm_model")
    # once kept for a link, the picker names it by its run id and its name (a link carries both)
    label = next(option for option in picker.options if option.endswith(name))
    assert label == name or label.startswith("run:")
    picker.set_value(label).run()
    assert not at.exception
    shown = texts(at)
    assert "trained on the copy task" in shown
    assert "Trained weights" in shown
    # the next-character bars come from the session model: its vocabulary is the task's symbols
    at.text_input(key="fm_prompt").set_value("ABCDEFGH|").run()
    assert not at.exception

    # and its random twin for comparison builds from the same shape
    at.toggle(key="fm_compare").set_value(True).run()
    assert not at.exception

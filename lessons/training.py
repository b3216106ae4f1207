"""Lesson 6: train a small transformer live, a few steps at a time: the loss falls, the attention maps form."""

import streamlit as st

from core.train import AdamW, TrainConfig, Trainer, clip_grad_norm, loss_and_grads
from ui import controls, export, page, presenter, prose
from ui import training_controls as tc
from ui import training_session as ts
from ui import training_view as view
from ui.text import show_code
from ui.training_setup import Settings, bundled_problem


def intro() -> None:
    st.title("6 · Training")
    prose.show("training", "idea")
    st.latex(prose.text("training", "update_rule"))


def sidebar() -> Settings:
    """The run's settings (bound to the URL), and what this server cannot offer or allows."""
    problem = bundled_problem()
    settings = tc.read_settings(tc.offered(problem))
    controls.show_url_notes()
    if problem:
        st.warning(f"The bundled text is not available on this server: {problem}", icon=":material/menu_book:")
    tc.limits_caption()
    return settings


def start_and_stop(session: ts.TrainingSession, settings: Settings) -> None:
    """The own-text box, a Train press taken, a left run paused; the model's size and the buttons."""
    text, text_name = tc.own_text() if settings.corpus == "text" else (None, "")
    tc.take_train_press(session, settings, text, text_name)
    session.pause_if_left()
    view.model_summary(settings)
    tc.buttons(session, settings)
    view.messages(session)


def live(session: ts.TrainingSession, settings: Settings) -> None:
    """Progress, loss curve and attention maps; while training, this part reruns on its own timer (and
    records its maps for the export panel afresh each time)."""
    st.fragment(view.live_panel, run_every=view.TICK_EVERY_S if session.running else None)(settings, export.drawn())
    view.saved_model(session)


def closing() -> None:
    prose.show("training", "notice")
    if not presenter.presenting():
        show_code(loss_and_grads, Trainer.step, AdamW.update, clip_grad_norm, TrainConfig)


def controls_and_sections() -> None:
    """The run's settings, its buttons and the live panel: a move of a setting reruns this alone."""
    settings = sidebar()
    session = ts.get(st.session_state)
    start_and_stop(session, settings)
    live(session, settings)


page.header(__file__)
intro()
page.live(controls_and_sections)
closing()
page.footer(__file__)

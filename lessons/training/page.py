"""Lesson: train a small transformer live, a few steps at a time: the loss falls, the attention maps form."""

import streamlit as st

from core.train import AdamW, TrainConfig, Trainer, clip_grad_norm, loss_and_grads
from lessons import COURSE
from lessons.training import controls as tc
from lessons.training import session as ts
from lessons.training import view as view
from lessons.training.cached import bundled_problem
from lessons.training.questions import questions
from lessons.training.setup import Settings
from ui.drawing import export
from ui.frame import page
from ui.state import controls, phone


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
    text, text_name, usable = tc.own_text(session, settings) if settings.corpus == "text" else (None, "", True)
    tc.take_train_press(session, settings, text, text_name, usable)
    session.pause_if_left()
    view.model_summary(settings)
    tc.buttons(session, settings)
    view.messages(session)


def live(session: ts.TrainingSession, settings: Settings) -> None:
    """Progress, loss curve and attention maps; while training, this part reruns on its own timer (and
    records its maps for the export panel afresh each time, so the panel offers no file until a Stop)."""
    export.hold(f"Training is running, so its maps are redrawn every {view.TICK_EVERY_S:g} s. Press **Stop** to "
                "export them as they stand; **Resume** then goes on with the run." if session.running else None)
    page.live(view.live_panel, settings, name="training_panel",
              run_every=view.TICK_EVERY_S if session.running else None)
    view.saved_model(session)


def controls_and_sections() -> None:
    """The run's settings, its buttons and the live panel: a move of a setting reruns this alone."""
    settings = sidebar()
    phone.in_reach("tr_steps")  # on a phone, the number of steps stays beside the run it sets
    if settings.synthetic:  # what the sequences are, where the task is chosen
        view.task_note(settings)
    if settings.corpus == "induction":  # one fixed length: position solves it
        st.info(view.induction_note(settings), icon=":material/straighten:")
    session = ts.get(st.session_state)
    start_and_stop(session, settings)
    live(session, settings)


page.opening(COURSE, "training", formula="update_rule")
page.live(controls_and_sections)
page.closing(COURSE, "training", questions,
              code=(loss_and_grads, Trainer.step, AdamW.update, clip_grad_norm, TrainConfig))

"""Train a rung yourself: the Ladder page retrains one rung live, from scratch, with the shipped run's settings and
seed, a few steps at a time (the Training lesson's way: ticks of the process's training share,
ui.compute.training_share), and draws its curve on the shipped one: the same code, text and seed land on the same
numbers. One LiveRun per browser session, in st.session_state; nothing here draws but the panel.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import streamlit as st

from core.train import Trainer
from lessons.ladder import cached, maths
from ui.compute.training_share import TICK_EVERY_S, fair_budget
from ui.drawing import plots, render
from ui.drawing.chart_data import ChartData
from ui.frame import page, prose
from ui.state import controls

LIVE_KEY = "ld_live"
PAUSE_AFTER_S = 10.0  # a running run not ticked for this long was left (another page, a closed tab)
STEP_CHOICES = (100, 2000)  # the steps a student may ask for: from one curve point to the shipped run's whole budget
DEFAULT_STEPS = 300
DEFAULT_RUNG = "one_head"


@dataclass
class LiveRun:
    key: str
    target: int  # steps asked for
    seed: int  # the shipped run's (maths.SETTINGS.seed) lands on its numbers; another starts elsewhere
    trainer: Trainer
    curve: dict = field(default_factory=lambda: {"step": [], "train": [], "val": []})
    state: str = "running"  # running, stopped, finished
    last_active: float = field(default_factory=time.monotonic)

    @property
    def steps(self) -> int:
        return self.trainer.steps

    def measure(self) -> None:
        """A curve point now, measured as the shipped curve's are (maths.curve_point)."""
        train, val = maths.curve_point(self.trainer, maths.SETTINGS)
        for name, value in (("step", self.steps), ("train", round(train, 6)), ("val", round(val, 6))):
            self.curve[name].append(value)

    def tick(self, budget_s: float) -> int:
        """Train for about budget_s (at least one step), measuring at every curve point; return the steps taken."""
        start, done = time.perf_counter(), 0
        while self.steps < self.target:
            self.trainer.step(1)
            done += 1
            if self.steps % maths.SETTINGS.eval_every == 0 or self.steps == self.target:
                self.measure()
            if time.perf_counter() - start > budget_s:
                break
        self.state = "finished" if self.steps >= self.target else self.state
        self.last_active = time.monotonic()
        return done


def start(key: str, target: int, seed: int) -> LiveRun:
    """A new run of the rung `key` up to `target` steps, on the shipped settings but the seed (the whole run's
    schedule: with the shipped seed, its first steps are the shipped run's first steps)."""
    settings = replace(maths.SETTINGS, seed=seed)
    run = LiveRun(key, target, seed, maths.trainer_for(maths.rung(key), cached.corpus(), settings))
    run.measure()
    return run


def current(state) -> LiveRun | None:
    """This session's run (by class name: a server that reloads this module keeps the run made before)."""
    run = state.get(LIVE_KEY)
    return run if type(run).__name__ == LiveRun.__name__ else None


def pause_if_left(state, now: float | None = None) -> None:
    """A running run whose panel has not ticked for PAUSE_AFTER_S was left: it waits for Train again."""
    run = current(state)
    now = time.monotonic() if now is None else now
    if run is not None and run.state == "running" and now - run.last_active > PAUSE_AFTER_S:
        run.state = "stopped"


def _train(key: str, target: int, seed: int) -> None:
    st.session_state[LIVE_KEY] = start(key, target, seed)


def _stop() -> None:
    run = current(st.session_state)
    if run is not None and run.state == "running":
        run.state = "stopped"


@dataclass
class Comparison:
    frame: ChartData  # the shipped run's validation curve up to the run's target, and the run's own
    step: int  # the run's last curve point
    yours: float  # its validation loss there
    shipped: float | None  # the shipped run's at the same step (None: the shipped curve has no point there)


def shipped_curve(key: str, target: int, results: dict) -> dict:
    """The shipped run's curve of the rung, up to step `target`."""
    curve = {rec["key"]: rec for rec in results["rungs"]}[key]["curve"]
    upto = [i for i, s in enumerate(curve["step"]) if s <= target]
    return {name: [values[i] for i in upto] for name, values in curve.items()}


def comparison(run: LiveRun, results: dict) -> Comparison:
    """The run's validation curve on the shipped one, and where both stand at the run's last curve point."""
    shipped = shipped_curve(run.key, run.target, results)
    frame = ChartData.concat([plots.line_frame(shipped["step"], {"shipped run": shipped["val"]}),
                              plots.line_frame(run.curve["step"], {"your run": run.curve["val"]})])
    last = run.curve["step"][-1]
    there = shipped["val"][shipped["step"].index(last)] if last in shipped["step"] else None
    return Comparison(frame, last, run.curve["val"][-1], there)


def title(key: str) -> str:
    return f"{maths.rung(key).label}: your run on the shipped one"


def panel(key: str, target: int, seed: int) -> None:
    """The live panel: the shipped curve before a run; while one goes on, a tick of training; then its curve on
    the shipped one, and where the two stand."""
    run, results = current(st.session_state), cached.results()
    if run is None or (run.key, run.target, run.seed) != (key, target, seed):
        shipped = shipped_curve(key, target, results)
        render.show(plots.line_chart, plots.line_frame(shipped["step"], {"shipped run": shipped["val"]}),
                    width="stretch", x_title="step", y_title="validation loss (nats)", title=title(key), whole_x=True)
        st.info(prose.text("ladder", "live_ready", label=maths.rung(key).label, steps=target, seed=seed))
        return
    if run.state == "running":
        run.tick(fair_budget(id(run)))
        if run.state == "finished":
            st.rerun(scope="app")  # redraw the buttons and stop the timer
    seen = comparison(run, results)
    render.show(plots.line_chart, seen.frame, width="stretch", x_title="step", y_title="validation loss (nats)",
                title=title(key), whole_x=True)
    words = {"running": "Training", "stopped": "Stopped", "finished": "Finished"}[run.state]
    st.progress(min(1.0, run.steps / run.target), text=f"{words} · step {run.steps} of {run.target}")
    if seen.shipped is None:
        return
    same_seed = run.seed == results["settings"]["seed"]
    part = ("live_same" if abs(seen.yours - seen.shipped) < 5e-4 else "live_differs") if same_seed else "live_seed"
    prose.show("ladder", part, step=seen.step, yours=seen.yours, shipped=seen.shipped,
               diff=abs(seen.yours - seen.shipped), seed=run.seed, shipped_seed=results["settings"]["seed"])


def section() -> None:
    """Train a rung yourself: its controls and buttons, and the live panel (a timer of its own while training)."""
    pause_if_left(st.session_state)
    prose.section("Train a rung yourself", "ladder", "live")
    left, right = st.columns(2)
    key = maths.key_of(controls.option("ld_train_rung", "Rung to train", maths.labels(maths.KEYS[1:]),
                                       maths.rung(DEFAULT_RUNG).label, kind="selectbox", container=left))
    target = controls.number_slider("ld_train_steps", "Steps", STEP_CHOICES[0], STEP_CHOICES[1], DEFAULT_STEPS,
                                    step=maths.SETTINGS.eval_every, container=right,
                                    help=f"The shipped run took {maths.SETTINGS.steps:,} steps; yours follows the same "
                                         "schedule.")
    seed = controls.seed(help=f"The initial weights and the order of the batches of your run. The shipped runs "
                              f"used seed {maths.SETTINGS.seed}: another seed starts elsewhere.")
    controls.show_url_notes()
    run = current(st.session_state)
    running = run is not None and run.state == "running"
    buttons = st.container(horizontal=True)
    buttons.button("Train", key="ld_train", on_click=_train, args=(key, target, seed), disabled=running,
                   help="Train this rung from scratch, with the shipped run's settings.")
    buttons.button("Stop", key="ld_stop", on_click=_stop, disabled=not running, help="Stop here.")
    page.live(panel, key, target, seed, name="ladder_live", run_every=TICK_EVERY_S if running else None)

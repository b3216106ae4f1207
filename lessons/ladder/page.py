"""Lesson: the ladder from a bigram to a transformer. Each rung adds one piece, every rung trained by the core on the
same text with the same split, budget and seed (python -m tools.train_ladder); the page draws the shipped results
(bars, table, curves, samples), each attention rung's maps on a prompt, and retrains a rung live beside its shipped
curve."""

import numpy as np
import streamlit as st

from core.bigram import generate_bigram, table_logits
from core.model import block
from lessons import COURSE
from lessons.ladder import cached, live, maths
from lessons.ladder import views as lv
from lessons.ladder.questions import questions
from ui.drawing import plots, render
from ui.frame import page, prose
from ui.state import controls
from ui.text import code_span

EARLY_STEP = 300  # the curve point at which the page compares layer norm with the rung below it


def ladder_section(results: dict) -> None:
    """The settings every rung shares, and the ladder's table."""
    s, cpus = results["settings"], results["machine"]["cpus"]
    prose.section("The ladder", "ladder", "ladder", context=s["context"], train=results["train_characters"],
                  val=results["val_characters"], steps=s["steps"], batch=s["batch_size"], lr=s["lr"], seed=s["seed"],
                  D=s["d_model"], H=s["n_heads"], dk=s["d_model"] // s["n_heads"], L=s["more_blocks"],
                  seconds=results["seconds"], cpus=cpus, command=code_span(results["command"]))
    lv.draw_table(results)


def bars_part(results: dict) -> None:
    """The bars in nats or bits, with the two reference lines: a live part of its own (its one control)."""
    unit = controls.option("ld_unit", "Unit", tuple(lv.UNITS), "nats", container=st, horizontal=True)
    controls.show_url_notes()
    lv.draw_bars(results, unit)
    recs = lv.records(results)
    prose.show("ladder", "bars", bigram=recs["counts"]["val_loss"], V=results["vocab_size"],
               uniform=lv.uniform_loss(results))


def step_values(results: dict) -> dict[str, dict]:
    """The numbers each rung's sentence fills in: how far its loss moved from the rung above, and what explains it."""
    recs, falls = lv.records(results), {f["key"]: f["fall"] for f in maths.steps_between(results)}
    largest = max((k for k in falls if k != "bigram"), key=falls.get)
    own = {k: float(np.mean(cached.looks(k)["own"])) for k in maths.ATTENTION_KEYS}
    values = {}
    for key, fall in falls.items():
        values[key] = {"moved": "fell by" if fall > 0 else "rose by", "fall": abs(fall),
                       "largest": prose.text("ladder", "largest") if key == largest else ""}
    values["bigram"].update(side="above" if falls["bigram"] < 0 else "below")
    values["one_head"].update(own=own["one_head"])
    values["heads"].update(params=recs["heads"]["parameters"], one=recs["one_head"]["parameters"],
                           H=results["settings"]["n_heads"], own=own["heads"])
    values["residual"].update(before=own["ffn"], own=own["residual"])
    values["layer_norm"].update(step=EARLY_STEP, here=curve_at(recs["layer_norm"], EARLY_STEP),
                                below=curve_at(recs["residual"], EARLY_STEP))
    values["blocks"].update(ratio=recs["blocks"]["parameters"] / recs["layer_norm"]["parameters"],
                            L=results["settings"]["more_blocks"])
    return values


def curve_at(rec: dict, step: int) -> float:
    return rec["curve"]["val"][rec["curve"]["step"].index(step)]


def steps_section(results: dict) -> None:
    """One or two sentences per rung: what it bought, and why by as much as it did."""
    prose.section("What each step bought", "ladder", "steps")
    values = step_values(results)
    st.markdown("\n".join(prose.text("ladder", f"step_{key}", **values[key]) for key in maths.KEYS[1:]))


def first_overfit(results: dict) -> str | None:
    """The first rung whose training loss is below its validation loss, or None."""
    return next((rec["key"] for rec in results["rungs"] if rec["train_loss"] < rec["val_loss"]), None)


def curves_section(results: dict) -> None:
    """Every rung's validation curve, then one rung's training and validation curves: a live part (its control)."""
    s = results["settings"]
    prose.section("Training curves", "ladder", "curves", every=s["eval_every"], windows=s["eval_windows"])
    render.show(plots.line_chart, lv.validation_curves(results), width="stretch", x_title="step",
                y_title="validation loss (nats)", title="Validation loss while training, every rung", whole_x=True)
    recs, first = lv.records(results), first_overfit(results)
    prose.show("ladder", "gap", b_val=recs["counts"]["val_loss"], b_train=recs["counts"]["train_loss"],
               first=lv.LABELS.get(first, "none"))
    trained = [k for k in maths.KEYS if k != "counts"]
    key = maths.key_of(controls.option("ld_gap_rung", "Rung", maths.labels(trained), maths.rung("blocks").label,
                                       kind="selectbox", container=st))
    controls.show_url_notes()
    rec = recs[key]
    render.show(plots.line_chart, lv.gap_curves(rec), width="stretch", x_title="step", y_title="loss (nats)",
                title=f"{maths.rung(key).label}: training against validation", whole_x=True)
    prose.show("ladder", "gap_numbers", label=maths.rung(key).label, train=rec["train_loss"], val=rec["val_loss"],
               gap=rec["val_loss"] - rec["train_loss"])


def samples_section(results: dict) -> None:
    s = results["settings"]
    prose.section("What each rung writes", "ladder", "samples", n=s["sample_chars"],
                  prompt=code_span(s["sample_prompt"]), temperature=s["sample_temperature"], seed=s["sample_seed"])
    lv.samples(results)


def sections() -> None:
    try:
        results = cached.results()
    except cached.NotShipped as err:
        st.error(str(err))
        return
    ladder_section(results)
    page.live(bars_part, results)
    steps_section(results)
    page.live(curves_section, results)
    samples_section(results)
    page.live(lv.attention_section)
    page.live(live.section)


page.opening(COURSE, "ladder")
sections()
page.closing(COURSE, "ladder", questions, code=(
    maths.config, maths.train_rung, maths.curve_point, maths.counted_table, table_logits, generate_bigram, block,
    maths.where_heads_look))

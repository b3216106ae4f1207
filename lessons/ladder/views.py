"""What only the Ladder page draws, from the shipped results: the rungs' table, the bars of validation loss with
their reference lines, the curves, the samples side by side, and the attention of a rung's heads (the section with
its rung and prompt controls, a live part of its own).

Shapes: L layers, H heads, T characters read.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from lessons.ladder import cached, maths
from ui.drawing import charts, heatmap, plots, render, tables
from ui.drawing.chart_data import ChartData
from ui.frame import prose
from ui.sections import views
from ui.state import controls
from ui.text import escape_md, shape_caption

LN2 = math.log(2)
UNITS = {"nats": 1.0, "bits": 1 / LN2}  # a loss in nats times this is the loss in that unit
REFERENCES = ("bigram (counted)", "uniform guess")  # the bars' reference lines, in bar_chart's order
LABELS = {r.key: r.label for r in maths.RUNGS}
GRID_WIDTH_PX, GRID_PANEL_PX = 900, heatmap.NARROW_ROOM_PX
GRID_CELL_PX = 18  # a rung has up to L x H maps of a prompt of up to 200 characters: cells that keep each panel small
DEFAULT_PROMPT = "The value of the attribute is"
MAX_PROMPT_CHARS = 200


def uniform_loss(results: dict) -> float:
    """A uniform guess over the V characters: ln V nats per character."""
    return math.log(results["vocab_size"])


def records(results: dict) -> dict[str, dict]:
    return {rec["key"]: rec for rec in results["rungs"]}


def loss_bars(results: dict, unit: str) -> ChartData:
    """One bar per rung, its validation loss in `unit`; the counted bigram's and a uniform guess's as lines."""
    k = UNITS[unit]
    recs = records(results)
    return plots.bar_frame([LABELS[key] for key in recs], [rec["val_loss"] * k for rec in recs.values()],
                           references=[recs["counts"]["val_loss"] * k, uniform_loss(results) * k])


def draw_bars(results: dict, unit: str) -> None:
    render.show(plots.bar_chart, loss_bars(results, unit), width="stretch", title="Validation loss of each rung",
                x_title=f"{unit} per character", y_title="rung", references=REFERENCES, number_format=".3f")


def table(results: dict) -> dict:
    """The ladder's table: rung, parameters, training time, validation loss (nats, bits), training loss, the gap."""
    rows = maths.table(results)
    return {"rung": [r["rung"] for r in rows], "parameters": [r["parameters"] for r in rows],
            "training time (s)": [r["seconds"] for r in rows], "validation (nats)": [r["val_nats"] for r in rows],
            "validation (bits)": [r["val_bits"] for r in rows], "training loss (nats)": [r["train_nats"] for r in rows],
            "validation − training": [r["gap"] for r in rows]}


def draw_table(results: dict) -> None:
    tables.show(table(results), {"parameters": "localized", "training time (s)": "%.1f", "validation (nats)": "%.3f",
                                 "validation (bits)": "%.3f", "training loss (nats)": "%.3f",
                                 "validation − training": "%+.3f"})


def numbered(key: str) -> str:
    """A rung's name numbered by its place in the table ("3 · one head"): a sorted legend keeps their order."""
    return f"{maths.KEYS.index(key) + 1} · {LABELS[key]}"


def validation_curves(results: dict) -> ChartData:
    """The validation loss of every trained rung at each curve point, one line per rung, and the counted bigram's
    (its one point, drawn across)."""
    recs = records(results)
    steps = recs["bigram"]["curve"]["step"]
    lines = {numbered("counts"): [recs["counts"]["curve"]["val"][0]] * len(steps)}
    lines.update({numbered(key): rec["curve"]["val"] for key, rec in recs.items() if key != "counts"})
    return plots.line_frame(steps, lines)


def gap_curves(rec: dict) -> ChartData:
    """One rung's training and validation loss at each curve point."""
    return plots.line_frame(rec["curve"]["step"], {"training": rec["curve"]["train"],
                                                   "validation": rec["curve"]["val"]})


def samples(results: dict) -> None:
    """Every rung's sample, two to a row (one on a phone), each under its rung's name."""
    recs = list(results["rungs"])
    settings = results["settings"]
    for i in range(0, len(recs), 2):
        for column, rec in zip(st.columns(2), recs[i:i + 2]):
            with column:
                st.markdown(f"**{escape_md(LABELS[rec['key']])}** · validation {rec['val_loss']:.3f} nats")
                st.code(settings["sample_prompt"] + rec["sample"], language=None, wrap_lines=True)


def attention_maps(key: str, chars: list[str], weights: np.ndarray) -> None:
    """Every layer x head map of a rung on the prompt."""
    L, H, T = weights.shape[0], weights.shape[1], weights.shape[-1]
    labels = [charts.visible(c) for c in chars]
    names = views.layer_head_names(L, H)
    maps = weights.reshape(L * H, T, T)
    views.layers_heads_grid(charts.grid_frame(maps, names, labels, labels), L, H, T, width_px=GRID_WIDTH_PX,
                            panel_px=GRID_PANEL_PX, cell_px=GRID_CELL_PX, min_cell_px=6)
    views.record_maps(maps, labels, names, GRID_WIDTH_PX)


def looks_table(key: str) -> dict:
    """Per head: the mean weight on the query's own character and on the one before it (validation text)."""
    seen = cached.looks(key)
    L, H = seen["own"].shape
    return {"head": views.layer_head_names(L, H), "own character": seen["own"].ravel(),
            "character before": seen["previous"].ravel()}


def attention_section() -> None:
    """Each attention rung's maps on a prompt, and where its heads look on the validation text: a live part."""
    prose.section("Inside the attention rungs", "ladder", "attention", T=maths.SETTINGS.context)
    left, right = st.columns(2)
    key = maths.key_of(controls.option("ld_rung", "Attention rung", maths.labels(maths.ATTENTION_KEYS),
                                       maths.rung("one_head").label, kind="selectbox", container=left))
    prompt = controls.text("ld_prompt", "Prompt", DEFAULT_PROMPT, max_chars=MAX_PROMPT_CHARS, container=right,
                           help="Any text; the rung reads the last characters it knows, up to its context.")
    controls.show_url_notes()
    seen = cached.reading(key, prompt)
    if not seen["chars"]:
        st.info(prose.text("ladder", "empty_prompt"))
        return
    attention_maps(key, seen["chars"], seen["weights"])
    shape_caption("weights", seen["weights"], "(layers, H, T, T)")
    looks = cached.looks(key)
    views.number_table(looks_table(key), number_format="%.2f")
    prose.show("ladder", "attention_numbers", label=maths.rung(key).label, own=float(np.mean(looks["own"])),
               prev=float(np.mean(looks["previous"])), windows=maths.LOOK_WINDOWS)

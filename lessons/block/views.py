"""What only the block lesson draws: the model it reads and the chart data its readings make (the readings
themselves, shared by every session, are made in cached.py)."""

from __future__ import annotations

import numpy as np

from ui.compute import model_store
from ui.compute.model_store import Model
from ui.drawing import plots
from ui.drawing.chart_data import ChartData

MODEL = "pydoc_char"  # the shipped character model this lesson reads
DEFAULT_PROMPT = "Return the number of items in the list."
MAX_PROMPT_CHARS = 1000
MAX_POSITION = 64  # the position slider keeps one range (the model's max_len) so that it survives prompt edits
DEFAULT_POSITION = 7
MAX_DEPTH, DEFAULT_DEPTH = 32, 32  # blocks in the random stack of the depth experiment: the gap widens with
# depth, and the page sets the seed's stack beside ten others (seed 0, the default, has the widest of them at 32)
STREAM = {"x": "x (block input)", "attn_out": "attention adds", "res_1": "x + attention",
          "ffn_out": "feed-forward adds", "res_2": "x + attention + feed-forward"}  # reading keys -> bar labels


def the_model() -> tuple[Model, str | None]:
    """The shipped model, or seeded random weights and why the model could not be read."""
    try:
        return model_store.load_model(MODEL), None
    except ValueError as err:
        return model_store.random_model(0), str(err)


def written_bars(r: dict) -> ChartData:
    """How long a vector each group of hidden units writes through W_proj at the reading's position."""
    fires = r["firing_row"]
    return plots.bar_frame([f"{fires} that fire", f"{r['F'] - fires} that do not"],
                           [r["written_row"]["firing"], r["written_row"]["silent"]])


def stream_bars(r: dict) -> ChartData:
    """The length of each piece of the residual stream at the reading's position, in the order it is built."""
    return plots.bar_frame(list(STREAM.values()), [r["row_norms"][key] for key in STREAM])


def stream_lines(r: dict) -> ChartData:
    """Row lengths of the stream over the positions: the input, after attention, after the feed-forward."""
    n = r["norms"]
    return plots.line_frame(np.arange(r["T"]), {STREAM["x"]: n["x"], STREAM["res_1"]: n["res_1"],
                                                STREAM["res_2"]: n["res_2"]})


def hidden_lines(r: dict) -> ChartData:
    """The row's F hidden units, lowest pre-activation first: before and after the activation."""
    return plots.line_frame(np.arange(r["F"]), {"pre-activation": r["row_pre_sorted"],
                                                "after GELU": r["row_act_sorted"]})


def wiring_lines(w: dict) -> ChartData:
    """Row lengths over the positions: the block's input and its output in each wiring."""
    n = w["norms"]
    return plots.line_frame(np.arange(len(n["input"])), {"input x": n["input"], "pre-norm output": n["pre"],
                                                          "post-norm output": n["post"]})

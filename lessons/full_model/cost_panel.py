"""What attention costs a model at length T: the bytes of its maps and KV cache, its FLOPs, memory curves."""

from __future__ import annotations

import streamlit as st

from core import costs
from core.costs import FLOAT_OF_BYTES
from core.model import ModelConfig
from ui.drawing import plots, render
from ui.frame import prose
from ui.sections import views
from ui.state import controls

MAX_LENGTH = 1_000_000
DEFAULT_LENGTH = 4096


def cost_controls() -> tuple[int, str]:
    """The length T (typed in, 1..MAX_LENGTH) and the float type of the cost estimates, bound to the URL."""
    left, right = views.in_a_row(2)
    with left:
        T = int(controls.number_box("fm_length", "Sequence length T", 1, MAX_LENGTH, DEFAULT_LENGTH, step=1000,
                                    container=st, help=f"Any whole number from 1 to {MAX_LENGTH:,}."))
    with right:
        n_bytes = controls.choice("fm_bytes", "Bytes per number (2, 4 or 8)", [2, 4, 8], 2, container=right,
                                  help="2 = float16 (or bfloat16), 4 = float32, 8 = float64.")
    controls.show_url_notes()  # what the link asked of these two, said here beside them
    return T, FLOAT_OF_BYTES[n_bytes]


def costs_section(cfg: ModelConfig) -> None:
    st.header("What attention costs at length T")
    T, dtype = cost_controls()
    c = costs.attention_costs(T, cfg, dtype)
    cols = views.in_a_row(4)
    cols[0].metric("One head's weights (T x T)", costs.human_bytes(c["per_head"]))
    cols[1].metric(f"All {cfg.n_heads * cfg.n_layers} maps", costs.human_bytes(c["maps"]))
    cols[2].metric("KV cache (2 x T x D per layer)", costs.human_bytes(c["kv_cache"]))
    cols[3].metric("Attention FLOPs (all layers)", f"{c['flops']:.3g}")
    st.caption(prose.text("full_model", "flops", T=T, D=cfg.d_model, H=cfg.n_heads, L=cfg.n_layers,
                          flops=c["flops_per_layer"], share=c["quadratic_share"]))
    one_head = costs.human_bytes(costs.attention_memory(100_000, 1, 1, "float16")["per_head"])
    prose.show("full_model", "long_context", one_head=one_head)
    lengths, curves = costs.memory_curves(cfg, dtype)
    render.show(plots.line_chart, plots.line_frame(lengths, curves), width="stretch", x_title="sequence length T",
                y_title="bytes", title=f"Memory against length ({dtype})", log_x=True, log_y=True)
    st.caption(prose.text("full_model", "memory_curves", maps=cfg.n_heads * cfg.n_layers))

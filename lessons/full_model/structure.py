"""What the model is, whatever it reads: its positional encoding, its parameters counted by part and from the arrays
themselves, and what attention costs it at long lengths (lessons.full_model.cost_panel)."""

from __future__ import annotations

import streamlit as st

from core import costs
from core.layers import positional_encoding
from lessons.full_model import cost_panel as cost_views
from ui.compute.model_store import Model
from ui.drawing import heatmap
from ui.frame import page, prose
from ui.sections import model_views as mv
from ui.sections.views import dim_labels

POSITION_CELL_PX = 12  # the positions map is (max_len, d_model), up to 64 x 64: thin cells keep it a picture


def model_sections(model: Model) -> None:
    """What the model is, whatever it reads: its positions, its parameters, what attention costs it."""
    positions_section(model)
    parameters_section(model)
    page.live(lambda: cost_views.costs_section(model.cfg))  # its own two controls rerun it alone


def positions_section(model: Model) -> None:
    cfg, sinusoidal = model.cfg, model.cfg.pos_encoding == "sinusoidal"
    st.header("Positions")
    pe = positional_encoding(cfg.max_len, cfg.d_model, cfg.pos_encoding, model.params.get("wpe"))  # (max_len, D)
    heatmap.show(pe, [str(p) for p in range(cfg.max_len)], dim_labels(cfg.d_model),
                 title="Sinusoidal positional encoding" if sinusoidal else "Learned positions wpe",
                 diverging=True, annotate=False, cell_px=POSITION_CELL_PX, x_title="dimension", y_title="position")
    st.caption(f"PE · shape ({cfg.max_len}, {cfg.d_model}) = (max_len, D), added to the character embeddings. "
               + prose.text("full_model", "pe_sinusoidal" if sinusoidal else "pe_learned"))


def parameters_section(model: Model) -> None:
    st.header("Parameters")
    parts = costs.param_count(model.cfg)
    total = parts.pop("total")
    left, right = st.columns([3, 1])
    with left:
        mv.parameter_table(parts, total)
    with right:
        st.metric("Total parameters", f"{total:,}")
        counted = costs.count_params(model.params)
        st.caption(f"Counted from the arrays themselves: {counted:,}" + (" ✓" if counted == total else " (differs!)"))
    st.caption(prose.text("full_model", "attention_params", n=costs.attention_params(model.cfg.d_model),
                          ffn=parts["feed-forward"] // model.cfg.n_layers, emb=parts["token embedding (tied head)"]))

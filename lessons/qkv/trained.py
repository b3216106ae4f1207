"""The QKV lesson with trained weights: the toy-English model's embeddings, and the queries, keys, values,
scores and weights of the head the measurements single out for the sentence's rule."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.demos.word_heads import RULE_SENTENCES
from lessons.qkv.cached import trained_layer
from lessons.qkv.views import EMBEDDINGS_ROOM_PX
from ui.drawing import heatmap
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.sections.views import heatmaps, panels, square, token_rows


def view() -> None:
    """The sidebar's sentence box and the note on the fixed sizes, then the model's reading of the sentence."""
    sentence, seen = tv.opening()
    if seen is None:
        return
    kind, layer, head = tv.rule_head(seen["rule"])
    labels = seen["labels"]
    first = trained_layer(sentence, 0)
    st.header("Embeddings X")
    heatmaps(token_rows(first["block_in"], labels, "X = token + position", "qkv_tr_x", "X", shape="(T, d_model)",
                        max_width=EMBEDDINGS_ROOM_PX))
    prose.show("qkv", "trained_embeddings", D=first["block_in"].shape[1])
    a = first if layer == 0 else trained_layer(sentence, layer)
    h, name = head, tv.head_name(layer, head)
    st.header(f"Queries, keys, values of {name}")
    prose.show("qkv", "trained_head" if layer == 0 else "trained_head_later", head=name, kind=kind,
               layer=layer + 1, before=layer, n=RULE_SENTENCES, off=tv.measured(kind)["off_accuracy"])
    panels("Q, K, V", *[
        token_rows(np.asarray(a[x][h]), labels, f"{x.upper()} of {name}", f"qkv_tr_{x}", x.upper(),
                   cell_px=heatmap.SMALL_CELL_PX) for x in "qkv"], said_names=False)  # names: the head read
    st.header("Scores and weights")
    scores = square(np.asarray(a["scores"][h]), labels, f"scores of {name}", "qkv_tr_scores", "Q Kᵀ / √d_k",
                    diverging=True)
    weights = tv.weights_heatmap({**seen, "weights": np.asarray(seen["weights"])}, layer, head, "qkv_tr_weights",
                                 f"weights of {name}")
    weights.note = tv.share_note(seen, layer, head)
    heatmaps(scores, weights)
    prose.show("qkv", "trained_mask")
    tv.closing_note()

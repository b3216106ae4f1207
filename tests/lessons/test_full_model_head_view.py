"""The head view on the Full model page: one layer's attention as lines between two columns of characters,
the layer and each head switched through controls bound to the link, the numbers the model's own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.model import forward
from lessons.full_model import head_view as hv
from tests.apptest_helpers import (
    SENT_RTOL,
    chart_alt,
    chart_by_title,
    chart_data,
    chart_design,
    chart_spec,
    charts,
    ok,
    run_page,
)
from ui.compute import model_store
from ui.drawing.colours import SUBTITLE_ON_DARK, SUBTITLE_ON_LIGHT, contrast, subtitle_colour
from ui.text import code_span

PAGE = "lessons/full_model/page.py"
PROMPT = "The attention "
TITLE = "Layer "


def page_model():
    name = model_store.default_model()
    return model_store.load_model(name) if name else model_store.random_model(0)


def layer_weights(model, prompt: str, layer: int) -> np.ndarray:
    """(H, T, T) of one layer on the prompt, from the model's forward pass."""
    ids = model.tokenizer.encode(prompt)[-model.cfg.max_len:]
    return forward(model.params, model.cfg, ids)[1].layers[layer].weights


def drawn(at) -> tuple[np.ndarray, list[str], pd.DataFrame]:
    """The head view's weights back as (heads drawn, T, T), its head names and its table."""
    df = chart_data(chart_by_title(at, TITLE))
    heads = list(dict.fromkeys(df.sort_values("head_i")["head"]))
    T = int(df["q_i"].max()) + 1
    w = np.zeros((len(heads), T, T))
    w[df["head_i"], df["q_i"], df["k_i"]] = df["value"].astype(float)
    return w, heads, df


def test_the_lines_are_the_layers_weights_for_every_head():
    at = ok(run_page(PAGE))
    model = page_model()
    H = model.cfg.n_heads
    w, heads, df = drawn(at)
    want = layer_weights(model, PROMPT, 0)
    assert heads == [f"head {h + 1}" for h in range(H)]
    np.testing.assert_allclose(w, want, rtol=SENT_RTOL, atol=1e-7)
    # both columns are the prompt's characters, spaces made visible
    labels = list(df.sort_values(["head_i", "q_i", "k_i"]).drop_duplicates("q_i")["q"])
    assert labels == [c if c != " " else "␣" for c in PROMPT]
    spec, name = chart_spec(chart_by_title(at, TITLE)), chart_alt(chart_by_title(at, TITLE))
    assert spec["title"]["text"] == "Layer 1: each character (left) and what it reads (right)"
    # the caption and the text alternative name each head's heaviest line from the last character
    caption = next(c.value for c in at.caption if c.value.startswith("From the last character"))
    for h in range(H):
        k = int(np.argmax(want[h, -1]))
        key = "␣" if PROMPT[k] == " " else PROMPT[k]
        assert f"head {h + 1} → {code_span(key)} ({want[h, -1, k]:.2f})" in caption
        # a speech engine says the space drawn as "␣" as a word (alt_text.spoken)
        assert f"head {h + 1} to {'space' if key == '␣' else key} ({want[h, -1, k]:.2f})" in name


def test_switching_heads_and_the_layer():
    model = page_model()
    at = ok(run_page(PAGE))
    ok(at.toggle(key="fm_hv_head2").set_value(False).run())
    w, heads, _ = drawn(at)
    keep = [h for h in range(model.cfg.n_heads) if h != 1]
    assert heads == [f"head {h + 1}" for h in keep]
    np.testing.assert_allclose(w, layer_weights(model, PROMPT, 0)[keep], rtol=SENT_RTOL, atol=1e-7)
    ok(at.radio(key="fm_hv_layer").set_value(f"layer {model.cfg.n_layers}").run())
    w, _, _ = drawn(at)
    np.testing.assert_allclose(w, layer_weights(model, PROMPT, model.cfg.n_layers - 1)[keep], rtol=SENT_RTOL,
                               atol=1e-7)
    assert chart_spec(chart_by_title(at, TITLE))["title"]["text"].startswith(f"Layer {model.cfg.n_layers}:")
    for h in keep:
        at.toggle(key=f"fm_hv_head{h + 1}").set_value(False).run()
    ok(at)
    assert not any(chart_spec(c).get("title", {}).get("text", "").startswith(TITLE) for c in charts(at))
    assert "Every head is switched off" in "\n".join(i.value for i in at.info)


def test_a_link_opens_the_same_head_view_and_a_bad_one_says_so():
    model = page_model()
    linked = ok(run_page(PAGE, {"fm_hv_layer": "layer 2", "fm_hv_head1": "false"}))
    w, heads, _ = drawn(linked)
    assert "head 1" not in heads
    np.testing.assert_allclose(w, layer_weights(model, PROMPT, 1)[1:], rtol=SENT_RTOL, atol=1e-7)
    bad = ok(run_page(PAGE, {"fm_hv_layer": "layer 9", "fm_hv_head3": "maybe"}))
    notes = "\n".join(i.value for i in bad.info)
    assert "fm_hv_layer" in notes and "not available" in notes
    assert "fm_hv_head3" in notes and "use true or false" in notes
    assert drawn(bad)[1] == [f"head {h + 1}" for h in range(model.cfg.n_heads)]  # layer 1, every head


def test_a_long_prompt_draws_its_last_characters_and_says_so():
    prompt = "abcdefghij" * 5  # 50 characters
    at = ok(run_page(PAGE, {"fm_prompt": prompt}))
    w, _, _ = drawn(at)
    assert w.shape[-1] == hv.MAX_POSITIONS
    model = page_model()
    np.testing.assert_allclose(w, layer_weights(model, prompt, 0)[:, -32:, -32:], rtol=SENT_RTOL, atol=1e-7)
    assert "Only the last 32 of the 50 characters are drawn" in "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("prompt", ["T", ""])
def test_short_and_empty_prompts(prompt):
    at = ok(run_page(PAGE, {"fm_prompt": prompt}))
    if prompt:
        w, _, _ = drawn(at)
        assert w.shape[-1] == 1 and np.allclose(w, 1.0)  # one character reads only itself
    else:
        assert not any(chart_spec(c).get("title", {}).get("text", "").startswith(TITLE) for c in charts(at))


def test_the_design_reads_in_both_themes_and_validates():
    """Head colours at least 3:1 on the light and the dark background; the characters in the theme-aware grey;
    the chart keeps its own size (autosize pad) and is valid Vega-Lite."""
    for colour in hv.HEAD_COLOURS:
        assert contrast(colour, "#ffffff") >= 3 and contrast(colour, "#0e1117") >= 3, colour
    assert contrast(SUBTITLE_ON_LIGHT, "#ffffff") >= 4.5 and contrast(SUBTITLE_ON_DARK, "#0e1117") >= 4.5
    spec = hv.head_view_chart(5, (0, 2)).to_dict()  # validated against the schema
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert len(texts) == 2 and all(t["mark"]["color"] == subtitle_colour() for t in texts)
    rule = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rule")
    assert rule["encoding"]["color"]["scale"] == {"domain": ["head 1", "head 3"],
                                                  "range": [hv.HEAD_COLOURS[0], hv.HEAD_COLOURS[2]]}
    assert spec["autosize"]["type"] == "pad"
    at = ok(run_page(PAGE))
    assert chart_design(chart_by_title(at, TITLE))["height"] == hv.ROW_PX * len(PROMPT)

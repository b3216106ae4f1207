"""The head view on the Full model page: one layer's attention as lines between two columns of characters, the
layer a control bound to the link, each head a check box the chart draws itself (ui.state.chart_controls),
the numbers the model's own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import vl_convert

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
from ui.drawing import export
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


def shown(at) -> list[bool]:
    """Each head's switch as the chart draws it (its parameter's value in the design)."""
    params = {p["name"]: p["value"][0]["on"] for p in chart_spec(chart_by_title(at, TITLE))["params"]}
    return [params[hv.switch_key(h)] for h in range(len(params))]


def drawn(at) -> tuple[np.ndarray, list[str], pd.DataFrame]:
    """The head view's weights back as (heads drawn, T, T), those heads' names and the chart's table (every head:
    the chart's switches hide the rest)."""
    df = chart_data(chart_by_title(at, TITLE))
    heads = list(dict.fromkeys(df.sort_values("head_i")["head"]))
    T = int(df["q_i"].max()) + 1
    w = np.zeros((len(heads), T, T))
    w[df["head_i"], df["q_i"], df["k_i"]] = df["value"].astype(float)
    on = shown(at)
    return w[np.flatnonzero(on)], [name for name, o in zip(heads, on) if o], df


def click(at, head: int, on: bool):
    """What the browser reports when head `head`'s (0-based) check box is clicked to `on`: the chart's selection of
    that switch, added to the ones it reported before."""
    key = at.session_state["_fm_hv_pinned"]["key"]
    try:
        before = dict(at.session_state[key]["selection"])
    except KeyError:
        before = {}
    at.session_state[key] = {"selection": {**before, hv.switch_key(head): [{"on": on}]}}
    return at


def caption_of(at) -> str:
    return next((c.value for c in at.caption if c.value.startswith("From the last character")), "")


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
    # the caption names each head's heaviest line from the last character
    caption = caption_of(at)
    for h in range(H):
        k = int(np.argmax(want[h, -1]))
        key = "␣" if PROMPT[k] == " " else PROMPT[k]
        assert f"head {h + 1} → {code_span(key)} ({want[h, -1, k]:.2f})" in caption
    # the text alternative says what the chart is and where its numbers are, never a number or a character: a text
    # that changed would make the browser build the chart again, its switches back at their first values
    assert name == spec["description"] and name.startswith(hv.DESCRIPTION)
    other = ok(run_page(PAGE, {"fm_prompt": "def main(", "fm_hv_layer": "layer 2"}))
    assert chart_alt(chart_by_title(other, TITLE)) == name


def test_switching_heads_and_the_layer():
    """A click on a head's box hides its lines in the browser; the chart reports it, and the page rewrites the
    caption and the link while the chart's design, and with it the drawn chart, stays as it was. A move of the layer
    keeps the switches."""
    model = page_model()
    H = model.cfg.n_heads
    at = ok(run_page(PAGE))
    design, key = chart_design(chart_by_title(at, TITLE)), at.session_state["_fm_hv_pinned"]["key"]
    ok(click(at, 1, False).run())
    keep = [h for h in range(H) if h != 1]
    assert chart_design(chart_by_title(at, TITLE)) == design  # the same chart: the browser drew the change itself
    assert at.session_state["_fm_hv_pinned"]["key"] == key
    assert at.query_params["fm_hv_head2"] == "false"
    assert "head 2" not in caption_of(at) and all(f"head {h + 1} →" in caption_of(at) for h in keep)
    w_all = chart_data(chart_by_title(at, TITLE))  # the chart holds every head: its box hides head 2
    assert w_all["head_i"].nunique() == H
    # the export panel's matrix and file are the heads shown now, whatever the drawn chart started from
    # (the last one recorded: a lesson page run alone, without the entry point, keeps its earlier runs' records)
    item = [i for i in at.session_state["_drawn_matrices"] if i.get("title", "").startswith("Layer 1")][-1]
    T = len(PROMPT)
    assert item["matrix"].shape == ((H - 1) * T, T) and not any(r.startswith("head 2 ·") for r in item["rows"])
    file = export.spec_of(item)
    assert {p["name"]: p["value"] for p in file["params"]}["fm_hv_head2"] == [{"on": False}]
    assert "<svg" in vl_convert.vegalite_to_svg(file)  # drawn without a browser, its check boxes left out
    ok(at.radio(key="fm_hv_layer").set_value(f"layer {model.cfg.n_layers}").run())
    w, heads, _ = drawn(at)  # a new title is a new design: it starts from the switches as they are
    assert heads == [f"head {h + 1}" for h in keep]
    np.testing.assert_allclose(w, layer_weights(model, PROMPT, model.cfg.n_layers - 1)[keep], rtol=SENT_RTOL,
                               atol=1e-7)
    assert chart_spec(chart_by_title(at, TITLE))["title"]["text"].startswith(f"Layer {model.cfg.n_layers}:")
    assert at.query_params["fm_hv_head2"] == "false"
    for h in keep:
        click(at, h, False)
    ok(at.run())
    assert chart_by_title(at, TITLE) is not None  # the boxes stay, to tick one again
    assert "box under the chart is unticked" in "\n".join(i.value for i in at.info) and not caption_of(at)
    ok(click(at, 2, True).run())
    assert "head 3 →" in caption_of(at) and "fm_hv_head3" not in at.query_params


def test_the_switches_go_with_the_view_into_a_settings_file_and_back():
    """The share panel's view holds the switches; a settings file that says a head is off draws the chart anew
    with that head's box unticked."""
    from ui.state import controls

    at = ok(click(ok(run_page(PAGE)), 0, False).run())
    assert at.session_state[controls._VIEW]["fm_hv_head1"] is False
    at.session_state[controls.PENDING] = {"fm_hv_head3": "false"}
    before = at.session_state["_fm_hv_pinned"]["key"]
    ok(at.run())
    assert shown(at)[:3] == [False, True, False]  # head 1 as clicked, head 3 as the file says
    assert at.session_state["_fm_hv_pinned"]["key"] != before  # a new chart, starting from those values


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
    spec = hv.head_view_chart(5, (True, False, True)).to_dict()  # validated against the schema
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert len(texts) == 2 and all(t["mark"]["color"] == subtitle_colour() for t in texts)
    rule = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rule")
    assert rule["encoding"]["color"]["scale"] == {"domain": ["head 1", "head 2", "head 3"],
                                                  "range": list(hv.HEAD_COLOURS[:3])}
    # a check box per head, last head first (Vega lists them last first), each starting as `shown` says
    assert [(p["name"], p["bind"], p["value"]) for p in spec["params"]] == [
        (hv.switch_key(h), {"input": "checkbox", "name": f"head {h + 1}"}, [{"on": on}])
        for h, on in reversed(list(enumerate((True, False, True))))]
    assert spec["autosize"]["type"] == "pad"
    at = ok(run_page(PAGE))
    assert chart_design(chart_by_title(at, TITLE))["height"] == hv.ROW_PX * len(PROMPT)

"""The full-model page through AppTest: probabilities, top-k, generation, attention maps, parameters, costs.

Runs with whatever core/weights holds (a trained model or none); the trained-model path is also driven
with a tiny model saved to a temporary folder, so it is tested either way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1.element_tree import Block

from core.costs import attention_memory, human_bytes, param_count
from core.layers import sinusoidal_encoding
from core.model import ModelConfig, forward, init_params
from core.model_file import save
from core.sampling import generate, probs_from_logits
from core.tokenize import CharTokenizer
from lessons.full_model.guess import game_model
from tests.apptest_helpers import (
    SENT_ATOL,
    SENT_RTOL,
    chart_by_title,
    chart_data,
    chart_design,
    chart_title,
    charts,
    matrix,
    numbered_title,
    ok,
    run_app,
    run_page,
    shown_table,
    texts,
)
from ui.compute import model_store
from ui.drawing.charts import MIN_LABEL_PX
from ui.text import CODE_KEY, code_span

PAGE = "lessons/full_model/page.py"
PROMPT = "The attention "



def page_model(seed: int = 0):
    """The model the page uses: the default trained one if there is one, else the seeded random model."""
    name = model_store.default_model()
    return model_store.load_model(name) if name else model_store.random_model(seed)


def bars(at, which: str = "P(next") -> pd.DataFrame:
    return chart_data(chart_by_title(at, which))


def expected_probs(model, prompt: str, temperature: float, top_k: int | None) -> np.ndarray:
    ids = model.tokenizer.encode(prompt)[-model.cfg.max_len:]
    logits, _ = forward(model.params, model.cfg, ids)
    return probs_from_logits(logits[-1], temperature, top_k)


def generated(at) -> list[str]:
    return [c.value for c in at.code if c.language == "text"]


def grid(at) -> np.ndarray:
    df = chart_data(next(c for c in charts(at) if " layers x " in chart_title(c)))
    maps = [g.pivot(index="row_i", columns="col_i", values="value").to_numpy()
            for _, g in df.groupby("panel_i", sort=True)]
    return np.stack(maps)


def test_defaults():
    at = ok(run_page(PAGE, opened=[CODE_KEY]))  # with "Show the code" open
    model = page_model()
    assert at.title[0].value == numbered_title("full_model")
    text = texts(at)
    assert ("These weights are random" in text) != model.trained
    shown = bars(at)
    probs = expected_probs(model, PROMPT, 1.0, None)
    assert len(shown) == min(15, model.cfg.vocab_size)
    np.testing.assert_allclose(shown["value"], np.sort(probs)[::-1][:15], rtol=SENT_RTOL, atol=1e-12)  # as sent
    assert shown["value"].sum() <= 1 + SENT_RTOL
    # every layer x head map, causal rows summing to 1
    maps = grid(at)
    T = len(PROMPT)
    assert maps.shape == (model.cfg.n_layers * model.cfg.n_heads, T, T)
    np.testing.assert_allclose(maps.sum(axis=-1), 1.0, atol=T * SENT_ATOL)  # each weight sent to 4 decimals
    assert np.all(np.triu(maps, k=1) == 0)
    # parameters: the table and the total are core.costs.param_count
    parts = param_count(model.cfg)
    table = shown_table(at, "part")
    assert dict(zip(table["part"], table["parameters"])) == {k: v for k, v in parts.items() if k != "total"}
    assert {m.label: m.value for m in at.metric}["Total parameters"] == f"{parts['total']:,}"
    if model.cfg.pos_encoding == "sinusoidal":
        pe = matrix(chart_by_title(at, "Sinusoidal positional encoding")).to_numpy()
        np.testing.assert_allclose(pe, sinusoidal_encoding(model.cfg.max_len, model.cfg.d_model), rtol=SENT_RTOL,
                                   atol=1e-12)
    assert "20.0 GB" in text  # one head at 100,000 tokens in float16
    assert any("def forward" in c.value for c in at.code)


def test_temperature_zero_and_top_k():
    at = run_page(PAGE)
    ok(at.slider(key="sample_temp").set_value(0.0).run())
    values = bars(at)["value"].to_numpy()
    assert values[0] == 1.0 and np.all(values[1:] == 0)
    at.slider(key="sample_temp").set_value(1.0).run()
    for k in (1, 5, 12):
        ok(at.slider(key="fm_top_k").set_value(k).run())
        values = bars(at)["value"].to_numpy()
        assert np.count_nonzero(values) == k
        assert values.sum() == pytest.approx(1.0, abs=SENT_RTOL)  # renormalised over the k survivors
    model = page_model()
    np.testing.assert_allclose(bars(at)["value"][:12], np.sort(expected_probs(model, PROMPT, 1.0, 12))[::-1][:12],
                               rtol=SENT_RTOL, atol=1e-12)


def test_slider_extremes():
    at = run_page(PAGE)
    V = page_model().cfg.vocab_size
    at.slider(key="sample_temp").set_value(3.0).run()
    at.slider(key="fm_top_k").set_value(V).run()
    at.sidebar.slider(key="seed").set_value(999).run()
    ok(at.slider(key="fm_n_chars").set_value(1).run())
    values = bars(at)["value"].to_numpy()
    assert values.sum() <= 1 + SENT_RTOL and np.count_nonzero(values) == len(values)
    at.button(key="fm_generate").click().run()
    assert len(generated(ok(at))[0]) == 1


def test_generation_length_and_reproducibility():
    at = run_page(PAGE, {"fm_n_chars": "40", "seed": "3", "sample_temp": "0.8"})
    assert generated(at) == []  # only on request
    first = generated(ok(at.button(key="fm_generate").click().run()))[0]
    assert len(first) == 40
    again = generated(ok(at.button(key="fm_generate").click().run()))[0]
    assert again == first
    model = page_model(3)
    ids = model.tokenizer.encode(PROMPT)
    out = generate(model.params, model.cfg, ids, 40, 0.8, None, rng=np.random.default_rng(3))
    assert first == model.tokenizer.decode(out[len(ids):])
    ok(at.sidebar.slider(key="seed").set_value(4).run())
    assert "earlier settings" in texts(at)
    assert generated(ok(at.button(key="fm_generate").click().run()))[0] != first


def test_cost_panel_follows_the_length_and_bytes():
    at = run_page(PAGE)
    model = page_model()
    ok(at.number_input(key="fm_length").set_value(100_000).run())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["One head's weights (T x T)"] == "20.0 GB"
    ok(at.select_slider(key="fm_bytes").set_value(4).run())
    metrics = {m.label: m.value for m in at.metric}
    total = attention_memory(100_000, model.cfg.n_heads, model.cfg.n_layers, "float32")["total"]
    assert metrics["One head's weights (T x T)"] == "40.0 GB"
    assert metrics[f"All {model.cfg.n_heads * model.cfg.n_layers} maps"] == human_bytes(total)
    ok(at.number_input(key="fm_length").set_value(1).run())


@pytest.mark.parametrize("prompt, shown", [
    ("", "The prompt is empty"),
    ("T", None),
    ("hello 😀 wörld", "not in the model's vocabulary"),
    ("<script>alert('x')</script> **bold** [link](http://e.com) `tick`", None),
    ("ab" * 300, "sees only the last"),
])
def test_odd_prompts(prompt, shown):
    at = ok(run_page(PAGE, {"fm_prompt": prompt}))
    text = texts(at)
    if shown:
        assert shown in text
    if prompt:
        model = page_model()
        T = min(len(prompt), model.cfg.max_len, 64)
        assert grid(at).shape[-1] == T
        assert bars(at)["value"].sum() <= 1 + SENT_RTOL
    else:
        assert not any(chart_title(c).startswith("P(next") for c in charts(at))
        assert "Parameters" in text  # the rest of the page keeps working
    if "<script>" in prompt:  # shown as a code span, never as HTML or Markdown
        tok = page_model().tokenizer
        read = tok.decode(tok.encode(prompt)[-page_model().cfg.max_len:])
        assert f"The model reads {code_span(read)}" in [m.value for m in at.markdown]


@pytest.mark.parametrize("query, message", [
    ({"sample_temp": "-1", "fm_top_k": "1e9"}, "allowed range"),
    ({"fm_length": "1e12", "fm_n_chars": "99999"}, "allowed range"),
    ({"fm_length": "abc"}, "not a number"),
    ({"fm_bytes": "3"}, "not one of"),
    ({"fm_prompt": "x" * 5000}, "only the first"),
])
def test_hand_edited_links_are_corrected_and_said(query, message):
    at = ok(run_page(PAGE, query))
    assert message in "\n".join(i.value for i in at.info)
    assert bars(at)["value"].sum() <= 1 + SENT_RTOL


def test_link_reproduces_the_hand_set_view():
    query = {"fm_prompt": "Hello there", "sample_temp": "0.5", "fm_top_k": "7", "seed": "3", "fm_length": "2048",
             "fm_bytes": "8"}
    linked = ok(run_page(PAGE, query))
    by_hand = run_page(PAGE)
    by_hand.sidebar.text_input(key="fm_prompt").input("Hello there").run()
    by_hand.slider(key="sample_temp").set_value(0.5).run()
    by_hand.slider(key="fm_top_k").set_value(7).run()
    by_hand.sidebar.slider(key="seed").set_value(3).run()
    by_hand.number_input(key="fm_length").set_value(2048).run()
    ok(by_hand.select_slider(key="fm_bytes").set_value(8).run())
    assert [chart_title(c) for c in charts(linked)] == [chart_title(c) for c in charts(by_hand)]
    for a, b in zip(charts(linked), charts(by_hand)):
        pd.testing.assert_frame_equal(chart_data(a), chart_data(b))
    assert [m.value for m in linked.metric] == [m.value for m in by_hand.metric]


def test_a_trained_model_becomes_the_default_and_compares_with_random(tmp_path, monkeypatch):
    text = "the attention lab reads characters. "
    tok = CharTokenizer.fit(text)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_layers=2, max_len=32)
    save(tmp_path / "char_test", init_params(cfg, np.random.default_rng(1)), cfg,
         {"tokenizer": tok.to_dict(), "val_loss": 1.5})
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)
    at = ok(run_page(PAGE, {"fm_prompt": "the attention 😀"}))
    text_shown = texts(at)
    assert "Trained weights" in text_shown and "char_test" in text_shown and "Validation loss 1.5 nats" in text_shown
    assert "not in the model's vocabulary" in text_shown  # the emoji
    assert grid(at).shape == (4, 15, 15)
    ok(at.sidebar.toggle(key="fm_compare").set_value(True).run())
    titles = [chart_title(c) for c in charts(at)]
    assert any(t.startswith("Trained · P(next") for t in titles)
    assert any(t.startswith("Random · P(next") for t in titles)
    assert not np.allclose(bars(at, "Trained")["value"], bars(at, "Random")["value"])
    ok(at.button(key="fm_generate").click().run())
    assert len(generated(at)) == 2 and all(len(g) == 80 for g in generated(at))
    table = shown_table(at, "part")
    assert table["parameters"].sum() == param_count(cfg)["total"]


def test_deep_link_through_the_app():
    at = ok(run_app(PAGE, {"fm_prompt": "Hi", "sample_temp": "0"}))
    assert at.title[0].value == numbered_title("full_model")
    assert bars(at)["value"].iloc[0] == 1.0 and grid(at).shape[-1] == 2


@pytest.mark.parametrize("prompt, cell_px, fit", [(PROMPT, 12, 4), ("ab" * 300, 4, 3)])
def test_attention_grid_layout(prompt, cell_px, fit):
    """Panels about 180 px wide in rows of 1000 px: 14 characters get 12 px cells, four panels to a row;
    64 get cells shrunk to 4 px (below the snapped sizes), three to a row. The title says when a row is a layer."""
    at = ok(run_page(PAGE, {"fm_prompt": prompt}))
    cfg = page_model().cfg
    chart = next(c for c in charts(at) if " layers x " in chart_title(c))
    spec, columns = chart_design(chart), min(cfg.n_heads, fit)
    assert (spec["spec"]["width"]["step"], spec["columns"]) == (cell_px, columns)
    one_row = " (one row per layer)" if columns == cfg.n_heads else ""
    assert chart_title(chart) == f"{cfg.n_layers} layers x {cfg.n_heads} heads{one_row}"


def grid_axes(at) -> tuple[int, list[dict]]:
    """The grid's cell size and the axes of its maps."""
    spec = chart_design(next(c for c in charts(at) if " layers x " in chart_title(c)))
    found, todo = [], [{k: v for k, v in spec.items() if k != "config"}]  # not the config's shared colours
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            found += [node["axis"]] if isinstance(node.get("axis"), dict) else []
            todo += list(node.values())
        elif isinstance(node, list):
            todo += node
    return spec["spec"]["width"]["step"], found


@pytest.mark.parametrize("prompt", [PROMPT, "abcdefghijklmnopqrstuvwxyz", "ab" * 300])
def test_a_long_prompt_keeps_the_grid_labels_readable(prompt):
    """26 characters drew the maps' labels at 6 px, letters 4 px high. Labels never go below MIN_LABEL_PX:
    on cells smaller than that, the ones that would overlap are left out; the grid stays 1000 px wide."""
    at = ok(run_page(PAGE, {"fm_prompt": prompt}))
    cell, axes = grid_axes(at)
    T = grid(at).shape[-1]
    assert axes and all(a["labelFontSize"] >= MIN_LABEL_PX for a in axes)
    assert all(a["labelOverlap"] == ("parity" if cell < MIN_LABEL_PX else False) for a in axes)
    assert (cell < MIN_LABEL_PX) == (len(prompt) > 22)  # 180 px panels: 8 px cells hold 22 characters
    assert min(page_model().cfg.n_heads, 3) * (cell * T + 70) <= 1000


def test_characters_inside_an_emoji_are_visible_labels(tmp_path, monkeypatch):
    """A model that knows the characters of 👩‍💻 and ❤️ reads the joiner U+200D and the variation selector
    U+FE0F as characters of their own: the maps' labels and the bars name them, none is blank."""
    text = "👩\u200d💻 ❤\ufe0f codes "
    tok = CharTokenizer.fit(text)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_layers=1, max_len=32)
    save(tmp_path / "char_emoji", init_params(cfg, np.random.default_rng(2)), cfg, {"tokenizer": tok.to_dict()})
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)
    at = ok(run_page(PAGE, {"fm_prompt": "👩\u200d💻 ❤\ufe0f"}))
    rows = chart_data(next(c for c in charts(at) if " layer x " in chart_title(c))).drop_duplicates("row_i")
    assert list(rows.sort_values("row_i")["row"]) == ["👩", "U+200D", "💻", "␣", "❤", "U+FE0F"]
    assert {"U+200D", "U+FE0F"} <= set(bars(at)["label"])
    for chart in charts(at):
        df = chart_data(chart)
        for field in {"row", "col", "label"} & set(df.columns):
            assert all(str(label).strip() for label in df[field]), (chart_title(chart), field)


def test_an_unknown_joiner_is_named_in_the_warning():
    at = ok(run_page(PAGE, {"fm_prompt": "ok 👩\u200d💻 ❤\ufe0f"}))
    warning = "\n".join(w.value for w in at.warning)
    assert "not in the model's vocabulary" in warning and "`U+200D`" in warning and "`U+FE0F`" in warning
    assert "``" not in warning.replace("```", "")  # no empty code span


def knockout_metrics(at) -> dict:
    return {m.label: m for m in at.metric if m.label.startswith("Loss,")}


def test_knocking_out_a_head_changes_the_loss_and_the_bars():
    """The switch is bound to the URL; the loss, the bars and the layers x heads table are the core's."""
    from core.demos.knockout import knockout_table
    from core.model import Knockout

    model = page_model()
    at = ok(run_page(PAGE))
    ids = model.tokenizer.encode(PROMPT)
    base = knockout_metrics(at)["Loss, all heads on"].value
    logits, _ = forward(model.params, model.cfg, ids)
    from core.demos.knockout import position_losses
    assert base == f"{position_losses(logits[:-1], ids[1:]).mean():.3f}"
    table = shown_table(at, "layer")
    want = knockout_table(model.params, model.cfg, ids[:-1], ids[1:])
    # printed "%+.3f" (ui/sections/knockout_views.py): within half its last digit
    np.testing.assert_allclose(table.drop(columns="layer").to_numpy(dtype=float), want, rtol=0, atol=5e-4)
    ok(at.selectbox(key="fm_off").set_value("layer 1 · head 1").run())
    shown = knockout_metrics(at)["Loss, layer 1 · head 1 off"]
    assert float(shown.value) - float(base) == pytest.approx(want[0, 0], abs=2e-3)
    off, _ = forward(model.params, model.cfg, ids, knockout=Knockout(((0, 0),)))
    np.testing.assert_allclose(np.sort(bars(at, "Head off")["value"])[::-1],
                               np.sort(probs_from_logits(off[-1], 1.0, None))[::-1][:15], rtol=SENT_RTOL, atol=1e-9)
    ok(at.radio(key="fm_off_mode").set_value("mean").run())
    assert knockout_metrics(at)["Loss, layer 1 · head 1 off"].value != shown.value
    linked = ok(run_page(PAGE, {"fm_off": "layer 1 · head 1", "fm_off_mode": "mean"}))
    assert [m.value for m in knockout_metrics(linked).values()] == [m.value for m in knockout_metrics(at).values()]


@pytest.mark.parametrize("query, message", [({"fm_off": "layer 9 · head 9"}, "not available"),
                                            ({"fm_off_mode": "half"}, "not available")])
def test_a_bad_knockout_link_falls_back_and_says_so(query, message):
    at = ok(run_page(PAGE, query))
    assert message in "\n".join(i.value for i in at.info)
    assert knockout_metrics(at)["Loss, nothing switched off"].delta == "no change"


def test_knockout_needs_two_characters():
    at = ok(run_page(PAGE, {"fm_prompt": "T"}))
    assert "at least two characters" in texts(at)


def test_random_weights_page_says_so_without_developer_talk(tmp_path, monkeypatch):
    """With no trained character model on the server, the page says its weights are random and where a trained
    one comes from (the Training page), never a folder of the code; its cost caption says what it counts."""
    monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)  # an empty folder: no shipped model
    at = ok(run_page(PAGE))
    shown = texts(at)
    assert "These weights are random and never trained" in shown and "Training page" in shown
    assert "core/weights" not in shown and "saved in core" not in shown
    assert "counting the matrix products of attention alone" in shown and "Not counted: the softmax" in shown


# ---- the order of the screen ---------------------------------------------------------------------------------

# The sections as a student reads them: what the model says next and how it is drawn from, the model's insides
# that decided it, the game against it, then what the model is (prose.md tells them in this order).
READING_ORDER = [
    "The prompt, as the model reads it", "Next character", "Generate",
    "Why top-p: greedy decoding loops, pure sampling wanders",
    "Every attention map, layer by layer", "Head view: who reads whom", "Knock out a head",
    "Guess the next character",
    "Positions", "Parameters", "What attention costs at length T",
]


def screen_headings(at) -> list[str]:
    """The section headings, top to bottom as the screen shows them: by place, not by when a part drew them."""
    def walk(node):
        if isinstance(node, Block):
            for index in sorted(node.children):
                yield from walk(node.children[index])
        elif node.type == "header":
            yield node.value
        elif node.type == "markdown" and str(node.value).startswith("## "):  # prose.section's heading
            yield str(node.value).split("\n", 1)[0].removeprefix("## ")

    return [h for h in walk(at.main) if h in READING_ORDER]


@pytest.mark.parametrize("weights", ["shipped", "random"])
def test_the_sections_come_in_reading_order(weights, tmp_path, monkeypatch):
    """Whichever live part draws a section (the seed's random weights put positions, parameters and costs in the
    reading part; a trained model's are outside it), the screen shows every section in reading order."""
    if weights == "random":
        monkeypatch.setattr(model_store, "WEIGHTS_DIR", tmp_path)  # no shipped model: the weights follow the seed
    at = ok(run_page(PAGE))
    shown = [h for h in READING_ORDER if game_model() is not None or not h.startswith("Why top-p")]
    assert screen_headings(at) == shown
    ok(at.sidebar.slider(key="seed").set_value(5).run())
    assert screen_headings(at) == shown

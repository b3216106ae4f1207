"""Top-p on the Full model page: the slider bound to the link, the nucleus marked on the next-character bars
and described in a caption from core.sampling.nucleus, and generation drawing from the nucleus."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.model import forward
from core.sampling import generate, nucleus, probs_from_logits
from lessons.full_model.nucleus import CUT, IN
from tests.apptest_helpers import SENT_RTOL, chart_by_title, chart_data, chart_title, charts, ok, run_page
from ui.compute import model_store

PAGE = "lessons/full_model/page.py"
PROMPT = "The attention "


def page_model(seed: int = 0):
    name = model_store.default_model()
    return model_store.load_model(name) if name else model_store.random_model(seed)


def logits_of(model, prompt: str = PROMPT) -> np.ndarray:
    ids = model.tokenizer.encode(prompt)[-model.cfg.max_len:]
    return forward(model.params, model.cfg, ids)[0][-1]


def bars(at) -> pd.DataFrame:
    return chart_data(chart_by_title(at, "P(next"))


def nucleus_caption(at) -> str:
    found = [c.value for c in at.caption if "the nucleus holds" in c.value]
    assert len(found) == 1, found
    return found[0]


def expected(model, temperature: float, top_k: int | None, top_p: float) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities before the cut, nucleus mask) as core.sampling computes them."""
    before = probs_from_logits(logits_of(model), temperature, top_k)
    kept = nucleus(before, top_p) > 0
    return before, kept


@pytest.mark.parametrize("top_p, top_k, temperature", [(0.5, 0, 1.0), (0.9, 0, 1.0), (0.3, 0, 2.0), (0.8, 5, 1.0),
                                                       (0.05, 0, 1.0), (0.95, 0, 0.0)])
def test_the_bars_mark_the_nucleus_and_the_caption_counts_it(top_p, top_k, temperature):
    at = ok(run_page(PAGE, {"fm_top_p": str(top_p), "fm_top_k": str(top_k), "sample_temp": str(temperature)}))
    model = page_model()
    before, kept = expected(model, temperature, top_k or None, top_p)
    shown = bars(at)
    order = np.argsort(-before, kind="stable")[:15]
    order = order[before[order] > 0]
    # the bars are the probabilities before the cut, most likely first, each marked in or out
    np.testing.assert_allclose(shown["value"], before[order], rtol=SENT_RTOL, atol=1e-12)
    assert list(shown["group"]) == [IN if kept[i] else CUT for i in order]
    assert chart_title(chart_by_title(at, "P(next")).endswith(f"top-p {top_p:g}")
    # the caption: how many characters, how much mass, and the top one renormalised
    text = nucleus_caption(at)
    n, mass = int(kept.sum()), before[kept].sum()
    assert f"At p = {top_p:g} the nucleus holds {n} of the {model.cfg.vocab_size} characters, {mass:.3f} of" in text
    top = int(np.argmax(before))
    assert f"from {before[top]:.3f} to {nucleus(before, top_p)[top]:.3f}" in text
    assert ("further down the list" in text) == (n > len(shown))
    # the grey bars are counted where there are some, and never spoken of where there are none
    cut = int((shown["group"] == CUT).sum())
    assert ("grey" in text) == (cut > 0)
    if cut:
        assert f"The {cut} grey {'bar is' if cut == 1 else 'bars are'} such characters." in text
    assert "sampling never picks it" in text and "drawn" not in text  # "drawn" meant sampled, then shown: gone
    assert "**Top-p**" in text and "**nucleus**" in text  # the terms are defined where they appear


def test_top_p_of_1_is_off_and_the_bars_stay_as_they_were():
    at = ok(run_page(PAGE))
    assert "group" not in bars(at).columns
    assert not any("the nucleus holds" in c.value for c in at.caption)
    assert "top-p" not in chart_title(chart_by_title(at, "P(next"))


def test_moving_the_slider_marks_fewer_characters_and_back():
    at = ok(run_page(PAGE))
    slider = at.slider(key="fm_top_p")
    assert (slider.min, slider.max, slider.value) == (0.05, 1.0, 1.0)
    counts = []
    for p in (0.95, 0.6, 0.2):
        ok(at.slider(key="fm_top_p").set_value(p).run())
        counts.append(int(re.search(r"the nucleus holds (\d+) of", nucleus_caption(at)).group(1)))
        assert (bars(at)["group"] == IN).sum() == min(counts[-1], len(bars(at)))
    assert counts == sorted(counts, reverse=True) and counts[-1] >= 1
    ok(at.slider(key="fm_top_p").set_value(1.0).run())
    assert "group" not in bars(at).columns


def test_generation_draws_from_the_nucleus():
    query = {"fm_top_p": "0.6", "seed": "5", "fm_n_chars": "30"}
    at = ok(run_page(PAGE, query))
    ok(at.button(key="fm_generate").click().run())
    text = next(c.value for c in at.code if c.language == "text")
    model = page_model(5)
    ids = model.tokenizer.encode(PROMPT)
    out = generate(model.params, model.cfg, ids, 30, 1.0, None, rng=np.random.default_rng(5), top_p=0.6)
    assert text == model.tokenizer.decode(out[len(ids):])
    free = generate(model.params, model.cfg, ids, 30, 1.0, None, rng=np.random.default_rng(5))
    assert text != model.tokenizer.decode(free[len(ids):])  # the cut changes what is drawn
    ok(at.slider(key="fm_top_p").set_value(0.9).run())
    assert "earlier settings" in "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("raw, message, used", [("0", "allowed range", 0.05), ("7", "allowed range", 1.0),
                                                ("abc", "not a number", 1.0), ("nan", "not a number", 1.0)])
def test_a_bad_top_p_in_the_link_is_corrected_and_said(raw, message, used):
    at = ok(run_page(PAGE, {"fm_top_p": raw}))
    notes = "\n".join(i.value for i in at.info)
    assert message in notes and "fm_top_p" in notes
    assert at.slider(key="fm_top_p").value == pytest.approx(used)
    assert bars(at)["value"].sum() <= 1 + SENT_RTOL


def test_the_link_reproduces_a_top_p_view():
    linked = ok(run_page(PAGE, {"fm_top_p": "0.7", "fm_top_k": "10"}))
    by_hand = run_page(PAGE)
    by_hand.slider(key="fm_top_k").set_value(10).run()
    ok(by_hand.slider(key="fm_top_p").set_value(0.7).run())
    for a, b in zip(charts(linked), charts(by_hand)):
        pd.testing.assert_frame_equal(chart_data(a), chart_data(b))
    assert nucleus_caption(linked) == nucleus_caption(by_hand)


def test_beside_random_weights_each_side_marks_its_own_nucleus():
    at = ok(run_page(PAGE, {"fm_top_p": "0.5", "fm_compare": "true"}))
    model = page_model()
    random = model_store.random_model(0, like=model.name)
    captions = [c.value for c in at.caption if "the nucleus holds" in c.value]
    assert len(captions) == 2
    for side, m, caption in (("Trained", model, captions[0]), ("Random", random, captions[1])):
        before = probs_from_logits(logits_of(m), 1.0, None)
        kept = nucleus(before, 0.5) > 0
        assert f"the nucleus holds {int(kept.sum())} of the {m.cfg.vocab_size} characters" in caption
        shown = bars_of(at, side)
        assert (shown["group"] == IN).sum() == min(int(kept.sum()), len(shown))


def bars_of(at, side: str) -> pd.DataFrame:
    return chart_data(chart_by_title(at, f"{side} · P(next"))

"""The word lessons' switch weights=trained (QKV projection, Multi-head, Context and order): the toy-English
model reads the sentence in its own words; its measured head is drawn with the share saved with the model, and
hostile input (an unknown word, nothing, 500 words, a bad link value) gets a message and a working view."""

from __future__ import annotations

import pytest

from core.demos.heads import single_head
from core.demos.word_heads import read_words, rule_positions, training_draws, untrained, word_model
from core.tokenize import word_tokens
from core.toy_english import chance_drawn
from lessons.communication import trained as comm_trained
from lessons.communication.maths import bank_similarity
from tests.apptest_helpers import chart_by_title, charts, matrix, ok, run_page, texts
from tests.ui.test_share import assert_same_view, link, query, run_shared
from ui.frame import prose
from ui.sections import trained_views as tv
from ui.state.controls import DEFAULT_TEXT

PAGES = {"qkv": "lessons/qkv/page.py", "multi_head": "lessons/multi_head/page.py"}
MARGIN = 0.5  # the deciding row's weight on the subject beats every other weight of that row by this much
TRAINED = {"weights": "trained"}


def agreement_head() -> tuple[int, int]:
    layer, head = word_model().meta["phenomena"]["agreement"]["head"]
    return layer, head


def head_map(at, layer: int, head: int):
    return matrix(chart_by_title(at, f"weights of {tv.head_name(layer, head)}"))


@pytest.mark.parametrize("page", PAGES.values())
def test_trained_view_shows_the_model_reading_the_example(page):
    at = ok(run_page(page, TRAINED))
    shown = texts(at)
    seen = read_words(tv.EXAMPLE)
    assert "**Tokens the model reads:** " + " · ".join(f"`{t}`" for t in seen["tokens"]) in shown
    assert "learned" in shown and "docs/" not in shown  # no repository path for a student
    # the test sentences are not held out, and the page says how likely training was to have drawn each
    assert "not held out" in shown and "held-out" not in shown
    assert f"chance of {chance_drawn('agreement', training_draws()):.0%} (agreement)" in shown
    layer, head = agreement_head()
    rule = rule_positions(seen["tokens"])
    assert rule["kind"] == "agreement"
    assert (seen["tokens"][rule["cue"]], seen["tokens"][rule["query"]]) == ("dog", "trees")
    row = head_map(at, layer, head).iloc[rule["query"]]  # the nearer noun, the position that predicts the verb
    subject = row.iloc[rule["cue"]]
    assert subject > 0.5 and subject - row.drop(row.index[rule["cue"]]).max() > MARGIN, row.tolist()
    share = word_model().meta["phenomena"]["agreement"]["share"]
    assert f"mean share of **{share:.2f}**" in "\n".join(c.value for c in at.caption)
    assert f"D = {word_model().cfg.d_model}, {word_model().cfg.n_heads} heads" in shown


def test_trained_qkv_draws_the_heads_vectors_and_no_random_sliders():
    at = ok(run_page(PAGES["qkv"], TRAINED))
    layer, head = agreement_head()
    name = tv.head_name(layer, head)
    for title in ("X = token + position", f"Q of {name}", f"K of {name}", f"V of {name}", f"scores of {name}"):
        chart_by_title(at, title)
    assert not [s for s in at.slider if s.key in ("d_k", "seq_len", "seed")]


@pytest.mark.parametrize("lesson", ["qkv", "multi_head"])
def test_the_trained_view_says_the_closing_lists_follow_the_random_one(lesson):
    """Their Try-this steps move d_k, the seed and the heads, sliders the trained view does not show."""
    trained, random = ok(run_page(PAGES[lesson], TRAINED)), ok(run_page(PAGES[lesson]))
    assert "are written for the random weights" in texts(trained)
    assert "are written for the random weights" not in texts(random)


def test_multi_head_names_every_rules_head():
    at = ok(run_page(PAGES["multi_head"], TRAINED))
    shown = texts(at)
    for kind, figures in word_model().meta["phenomena"].items():
        assert f"{tv.head_name(*figures['head'])} for {kind} (share {figures['share']:.2f})" in shown


def test_the_bank_section_shows_the_cores_cosines_beside_the_same_model_before_training():
    """Like for like: the trained model's cosines stage by stage beside the same architecture's random initial
    weights (core.demos.word_heads.untrained), not beside one random head."""
    at = ok(run_page("lessons/communication/page.py", TRAINED))
    metrics = {m.label: m.value for m in at.metric}
    similar = bank_similarity(comm_trained.SENTENCE_1, comm_trained.SENTENCE_2)
    start = bank_similarity(comm_trained.SENTENCE_1, comm_trained.SENTENCE_2, model=untrained())
    for stage, cos, before in zip(similar["stages"], similar["cosine"], start["cosine"]):
        assert metrics[f"cosine, {stage}, trained"] == f"{cos:.2f}"
        assert metrics[f"cosine, {stage}, before training"] == f"{before:.2f}"
    assert start["cosine"][-1] > 0.95 > 0.2 > similar["cosine"][-1]  # training, not the architecture, splits them
    assert "training is what pulls the two apart" in texts(at)  # the text for a pair that training splits
    assert not any(label.startswith("cosine, random weights") for label in metrics)
    layer, head = word_model().meta["phenomena"]["bank"]["head"]
    for n, cue in ((1, "river"), (2, "money")):
        row = matrix(chart_by_title(at, f"row of “bank” in sentence {n}")).iloc[0]
        words = read_words(getattr(comm_trained, f"SENTENCE_{n}"))["tokens"]
        assert row.iloc[words.index(cue)] > 0.5
    share = word_model().meta["phenomena"]["bank"]["share"]
    assert f"mean share on the cue is **{share:.2f}**" in "\n".join(c.value for c in at.caption)
    assert tv.head_name(layer, head) in texts(at)
    off = word_model().meta["phenomena"]["bank"]["off_accuracy"]  # set beside what a coin toss would get
    assert f"in {off:.0%} of the test sentences, where a coin toss would be right in half" in texts(at)


def test_a_typed_pair_that_training_does_not_split_gets_the_plainer_text():
    """Two sentences alike around "bank" (the same cue): the page does not say that training pulled them apart."""
    same = "she saw the river by the bank"
    at = ok(run_page("lessons/communication/page.py", {**TRAINED, "bank_one": same, "bank_two": same}))
    shown = texts(at)
    assert "pulls the two apart" not in shown and "is what training changed" in shown

@pytest.mark.parametrize("page", PAGES.values())
def test_an_unknown_word_is_named_and_read_as_unk(page):
    at = ok(run_page(page, {**TRAINED, "words": "the zebra near the trees runs ."}))
    warned = "\n".join(w.value for w in at.warning)
    assert "`zebra`" in warned and "`<unk>`" in warned
    assert "`<unk>`" in texts(at) and charts(at)


@pytest.mark.parametrize("page", PAGES.values())
def test_an_empty_sentence_says_so(page):
    at = ok(run_page(page, TRAINED))
    at.text_input(key=tv.WORDS_KEY).set_value("").run()
    ok(at)
    assert any("no words to read" in w.value for w in at.warning)


@pytest.mark.parametrize("page", PAGES.values())
def test_a_500_word_text_is_capped_at_the_context(page):
    at = ok(run_page(page, TRAINED))
    at.text_input(key=tv.WORDS_KEY).set_value(" ".join(["dog"] * 500)).run()
    ok(at)
    cfg = word_model().cfg
    assert any(f"reads at most {cfg.max_len} words" in i.value for i in at.info)
    layer, head = agreement_head()
    assert head_map(at, layer, head).shape == (cfg.max_len, cfg.max_len)


def test_the_trained_context_page_says_which_sections_use_random_weights():
    trained, random = (ok(run_page("lessons/communication/page.py", query)) for query in (TRAINED, {}))
    said = prose.text("communication", "trained_rest")
    assert "Only the section above reads the trained model" in said and "use random weights" in said
    assert any(said in i.value for i in trained.info)
    assert not any(said in i.value for i in random.info)
    # the note comes right after the trained section: before the first random section's heading
    shown = [str(el.value) for el in trained.main if hasattr(el, "value")]
    note = next(i for i, v in enumerate(shown) if said in v)
    assert any("Self-attention and cross-attention" in v for v in shown[note + 1:])
    assert not any("Self-attention and cross-attention" in v for v in shown[:note])


def test_the_bank_section_says_when_bank_is_missing_or_a_sentence_empty():
    at = ok(run_page("lessons/communication/page.py", {**TRAINED, "bank_one": "she saw the river"}))
    assert any("need the word `bank`" in w.value for w in at.warning)
    at = ok(run_page("lessons/communication/page.py", TRAINED))
    at.text_input(key="bank_two").set_value("").run()
    ok(at)
    assert any("no words to read" in w.value for w in at.warning)
    assert charts(at)  # the sections below still draw


@pytest.mark.parametrize("page", [*PAGES.values(), "lessons/communication/page.py"])
def test_a_bad_weights_value_in_the_link_is_noted_and_random_is_used(page):
    at = ok(run_page(page, {"weights": "xyz"}))
    assert any("weights “xyz”" in i.value and "random" in i.value for i in at.info)
    assert at.radio(key=tv.KEY).value == tv.RANDOM
    assert "Tokens the model reads" not in texts(at)


def test_random_stays_the_default_view():
    at = ok(run_page(PAGES["qkv"]))
    assert at.radio(key=tv.KEY).value == tv.RANDOM
    a = single_head(word_tokens(DEFAULT_TEXT, 16), 16, 8, 0)
    assert matrix(chart_by_title(at, "softmax")).to_numpy() == pytest.approx(a["weights"], abs=1e-3)


TRAINED_MOVES = {"lessons/qkv/page.py": {"words": "the queen met the king so she left ."},
                 "lessons/multi_head/page.py": {"words": "the cats behind the old wall sleep ."},
                 "lessons/communication/page.py": {"bank_one": "he found the cash by the bank",
                                                   "bank_two": "he found the lake by the bank"}}


@pytest.mark.parametrize("page", list(TRAINED_MOVES))
def test_a_link_reproduces_the_trained_view(page):
    """The switch and the trained sentence boxes travel in the share link like every other setting."""
    at = run_shared(page)
    at.radio(key=tv.KEY).set_value(tv.TRAINED)
    ok(at.run())
    for key, value in TRAINED_MOVES[page].items():
        at.text_input(key=key).set_value(value)
    ok(at.run())
    q = query(link(at))
    assert q[tv.KEY] == [tv.TRAINED] and all(q[k] == [v] for k, v in TRAINED_MOVES[page].items()), q
    assert_same_view(run_shared(page, q), at)


@pytest.mark.parametrize(("sentence", "kind", "cue", "query"), [
    ("the dog near the trees runs .", "agreement", "dog", "trees"),
    ("the old queen met the king so she left .", "pronoun", "queen", "so"),
    ("he found the cash by the new bank loan .", "bank", "cash", "bank"),
])
def test_rule_positions_match_the_measured_query_and_cue(sentence, kind, cue, query):
    """The positions the page reads are read_rule's: the deciding query is the word before the decided one."""
    tokens = read_words(sentence)["tokens"]
    rule = rule_positions(tokens)
    assert (rule["kind"], tokens[rule["cue"]], tokens[rule["query"]]) == (kind, cue, query)
    assert rule_positions(read_words("hello there")["tokens"]) is None

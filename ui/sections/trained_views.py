"""What the word lessons (QKV projection, Multi-head, Context and order) draw when the switch "weights" says
trained: the toy-English model (core.demos.word_heads) reading the student's sentence in its own words.

The switch sits in the sidebar beside the sentence settings and is bound to the link (?weights=trained);
random, its default, leaves each page as it was. Every figure here comes from the core: the model's
configuration, its reading of the sentence, and the shares measured on test sentences (meta["phenomena"]): fresh
draws from the grammar, most of which training had drawn too (core.toy_english.chance_drawn), so not held out.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.demos.word_heads import RULE_SENTENCES, rule_positions, training_draws, word_model
from core.toy_english import chance_drawn
from ui.compute import cached
from ui.drawing.charts import unique_labels
from ui.sections import views
from ui.sections.views import Heatmap
from ui.state import controls
from ui.text import code_span

KEY = "weights"  # in the link: ?weights=trained
RANDOM, TRAINED = "random", "trained"
WORDS_KEY = "words"  # the sentence the trained model reads (its own box: the random view's text stays as it was)
EXAMPLE = "the dog near the trees runs ."  # an agreement sentence in the model's words

# What each rule of the grammar decides, where, and from which word (the query and the cue of read_rule).
RULES = {"agreement": ("the verb", "the nearer noun, the position whose next word is the verb", "the subject"),
         "pronoun": ("the pronoun", "the link word, the position whose next word is the pronoun", "the antecedent"),
         "bank": ("the word after “bank”", "“bank” itself, the position whose next word it decides",
                  "the word that sets its sense")}


def weights_switch() -> bool:
    """The sidebar's Random / Trained switch, bound to the link; True for trained."""
    return controls.option(KEY, "Weights", [RANDOM, TRAINED], RANDOM, horizontal=True,
                           help="random: weights drawn from the seed, as in the rest of the course. trained: a "
                                "small model trained on a toy English grammar, reading your sentence.") == TRAINED


def model_config():
    return word_model().cfg


def fixed_settings_note() -> None:
    """In the sidebar, where the size sliders would be: the sizes the trained model fixes (from its config)."""
    cfg = model_config()
    st.sidebar.caption(f"The trained model fixes its sizes: D = {cfg.d_model}, {cfg.n_heads} heads of "
                       f"d_k = {cfg.d_k}, {cfg.n_layers} layers, and it reads at most {cfg.max_len} words "
                       "(its context, the start marker included). The seed does not apply: nothing is random.")


def sentence_box() -> str:
    """The sentence the trained model reads, bound to the link as `words` (the example by default)."""
    return controls.text(WORDS_KEY, "Sentence (the model's words)", EXAMPLE, max_chars=controls.MAX_TEXT_CHARS,
                         help="Words of the toy English the model learned, e.g. “the dogs behind the old wall "
                              "sleep .” or “the queen met the king so she left .”")


def vocabulary() -> list[str]:
    """The model's words, <unk> left out."""
    return [w for w in word_model().tokenizer.itos if w != "<unk>"]


def measured(kind: str) -> dict:
    """The figures measured for one rule on its test sentences (saved with the model)."""
    return word_model().meta["phenomena"][kind]


def head_name(layer: int, head: int) -> str:
    """A head as the pages name it, counted from 1: 'layer 2 · head 4'."""
    return f"layer {layer + 1} · head {head + 1}"


def learned_note() -> str:
    draws = training_draws()
    seen = {kind: chance_drawn(kind, draws) for kind in RULES}
    return (f"These weights were **learned**: a {model_config().n_layers}-layer model trained on {draws:,} "
            "sentences of a toy English grammar with three rules (a verb agrees with its subject across a nearer "
            "noun; a pronoun follows the first person named; the word after “bank” follows river or money). The "
            f"figures quoted here were measured on {RULE_SENTENCES} test sentences per rule, fresh draws from that "
            "small grammar, not held out: a given sentence was among the training draws with a chance of "
            f"{seen['agreement']:.0%} (agreement), {seen['pronoun']:.0%} (pronoun) or {seen['bank']:.0%} (bank). They "
            "say what the model does with the rules, not how it copes with sentences it never saw.")


def labelled(seen: dict) -> dict:
    """seen with labels: its tokens as the model reads them (a word it does not know shows as <unk>)."""
    return {**seen, "labels": [word_model().tokenizer.itos[i] for i in seen["ids"]]}


def read(sentence: str, title: str = "Tokens the model reads", box: str = "the sidebar's “Sentence” box",
         example: str = EXAMPLE) -> dict | None:
    """The model's reading of the sentence, with its tokens listed as the model reads them (labels: an unknown
    word shows as <unk>), and a message for unknown words and for a sentence past the context; None (after
    a message) when there are no words. title heads the tokens' line; box names where the sentence is typed."""
    seen = cached.trained_attention(sentence)
    if len(seen["tokens"]) < 2:
        st.warning(f"There are no words to read: type a sentence in {box}, for example {code_span(example)}.")
        return None
    seen = labelled(seen)
    if seen["unknown"]:
        listed = ", ".join(code_span(w) for w in dict.fromkeys(seen["unknown"]))
        st.warning(f"The model does not know {listed}: it reads {'each' if len(seen['unknown']) > 1 else 'it'} as "
                   f"{code_span('<unk>')}, a token it has never learned anything about. Its "
                   f"{len(vocabulary())} words: " + " ".join(code_span(w) for w in vocabulary()))
    st.markdown(f"**{title}:** " + " · ".join(code_span(t) for t in seen["labels"]))
    if seen["cut"]:
        cfg = model_config()
        st.info(f"The model reads at most {cfg.max_len} words (its context, the start marker `.` included): "
                f"the first {cfg.max_len - 1} words of the sentence are used, {seen['cut']:,} more are left out.",
                icon=":material/content_cut:")
    seen["rule"] = rule_positions(seen["labels"])
    return seen


def cue_of(seen: dict, kind: str) -> int | None:
    """The position of the cue of the sentence's rule when it is of this kind, else None."""
    rule = seen["rule"]
    return rule["cue"] if rule and rule["kind"] == kind else None


def rule_head(rule: dict | None) -> tuple[str, int, int]:
    """(kind, layer, head): the sentence's rule and the head the measurements single out for it; agreement's
    when the sentence holds none of the three patterns."""
    kind = rule["kind"] if rule else "agreement"
    layer, head = measured(kind)["head"]
    return kind, layer, head


def share_note(seen: dict, layer: int, head: int) -> str:
    """What to look for in the head's map, with the weight on this sentence and the share measured."""
    rule = seen["rule"]
    kind = rule["kind"] if rule else "agreement"
    decided, where, cue = RULES[kind]
    share, off = measured(kind)["share"], measured(kind)["off_accuracy"]
    named = f"**{head_name(layer, head)}**"
    if rule is None:
        return (f"This sentence holds none of the grammar's three patterns, so nothing here decides a word. "
                f"The map is {named}, the head that reads the verb's subject in agreement sentences (mean share "
                f"**{share:.2f}** on its test sentences).")
    labels = unique_labels(seen["labels"])
    weight = float(seen["weights"][layer, head, rule["query"], rule["cue"]])
    return (f"Look at row {code_span(labels[rule['query']])} ({where}): it puts **{weight:.2f}** of its weight on "
            f"{code_span(labels[rule['cue']])}, {cue}, which decides {decided}. Measured on {RULE_SENTENCES} test "
            f"sentences, {named} puts a mean share of **{share:.2f}** there; with it switched off the rule is right "
            f"{off:.0%} of the time{', about a coin toss' if 0.35 < off < 0.65 else ''}.")


def heads_named() -> str:
    """Which head the measurements single out for which rule, with its share, from the saved figures."""
    found = [f"{head_name(*measured(kind)['head'])} for {kind} (share {measured(kind)['share']:.2f})"
             for kind in RULES]
    return "The measurements single out one head per rule: " + "; ".join(found) + "."


def weights_heatmap(seen: dict, layer: int, head: int, key: str, title: str) -> Heatmap:
    """One head's (T, T) weights on the sentence, the deciding row outlined."""
    labels = seen["labels"]
    rule = seen["rule"]
    return views.weights_map(np.asarray(seen["weights"][layer, head]), labels, title, key,
                             name=f"weights[{layer}, {head}]", shape="(T, T), rows sum to 1",
                             picked=rule["query"] if rule else None)


def opening() -> tuple[str, dict | None]:
    """What a one-sentence trained view (QKV, Multi-head) begins with: the sidebar's sentence box, the note on
    the sizes a trained model fixes, the link's notes, where the weights come from, and the model's reading of
    the sentence (None, after a message, when there is nothing to read)."""
    sentence = sentence_box()
    fixed_settings_note()
    controls.show_url_notes()
    st.caption(learned_note())
    return sentence, read(sentence)


def closing_note() -> None:
    """The end of a trained view: the lesson's closing lists name the random view's sliders, which it fixes."""
    st.caption("“What to notice” and “Try this”, below, are written for the random weights and name sliders this "
               "view fixes: switch **Weights** to random in the sidebar to follow them.")

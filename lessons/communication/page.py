"""Lesson: attention as tokens talking. One word in two contexts, self- against cross-attention, why word
order needs positions, an encoder against a decoder, and attention's one step against a recurrence."""

import streamlit as st

from core.tokenize import word_tokens
from lessons import COURSE
from lessons.communication import cached, maths
from lessons.communication import trained as trained_bank
from lessons.communication import views as context_views
from lessons.communication.questions import questions
from ui.frame import page, prose
from ui.sections import trained_views, views
from ui.state import controls, phone
from ui.text import code_span, escape_md

SENTENCE_1 = "I sat on the bank of the river"
SENTENCE_2 = "I paid the money into the bank"
MOST_TOKENS = 32  # of each of the two sentences (seq_len is the sidebar sentence's)

two_contexts, cross_attention = cached.same_word_two_contexts, cached.cross_attention
order_view, encoder_decoder = cached.order_view, cached.encoder_decoder


def contexts_section(D: int, d_k: int, seed: int, trained: bool = False) -> tuple[list[str], list[str]]:
    """Two sentences that share a word; returns their tokens (the first MOST_TOKENS of each). With trained
    weights, "bank" in two sentences read by the toy-English model."""
    if trained:
        return trained_bank.bank_section(D, d_k, seed)
    prose.section("One word, two contexts", "communication", "contexts")
    first, second, shared = views.in_a_row(3)
    one = controls.text("comm_one", "Sentence 1", SENTENCE_1, container=first)
    two = controls.text("comm_two", "Sentence 2", SENTENCE_2, container=second)
    word = controls.text("comm_word", "Shared word", "bank", max_chars=40, container=shared, width=180)
    tokens_1, tokens_2, picked = word_tokens(one, MOST_TOKENS), word_tokens(two, MOST_TOKENS), word_tokens(word)
    if not picked:
        st.warning("The shared word has no letters, digits or punctuation: type a word both sentences contain.")
        return tokens_1, tokens_2
    if len(picked) > 1:
        st.caption(f"The shared word splits into {len(picked)} tokens; only the first, {code_span(picked[0])}, "
                   "is followed.")
    try:
        result = two_contexts(tokens_1, tokens_2, picked[0], D, d_k, seed)
    except ValueError as err:  # an empty sentence, or a word one of them lacks
        st.warning(escape_md(str(err)))
        return tokens_1, tokens_2
    context_views.two_contexts(result, picked[0])
    st.caption(prose.text("communication", "random_weights"))
    return tokens_1, tokens_2


def two_sentences_section(D: int, d_k: int, seed: int, trained: bool) -> None:
    """The two sentences and what attention makes of them: a live part of its own (its three boxes reach
    nothing else)."""
    tokens_1, tokens_2 = contexts_section(D, d_k, seed, trained)
    if trained:  # say where the trained model stops
        st.info(prose.text("communication", "trained_rest"), icon=":material/shuffle:")
    cross_section(tokens_1, tokens_2, D, d_k, seed)
    controls.show_url_notes()


def cross_section(tokens_1: list[str], tokens_2: list[str], D: int, d_k: int, seed: int) -> None:
    prose.section("Self-attention and cross-attention", "communication", "cross")
    if not tokens_1 or not tokens_2:
        st.info("Cross-attention needs two sentences: type some words into both boxes above.")
        return
    context_views.self_and_cross(cross_attention(tokens_1, tokens_1, D, d_k, seed),
                                 cross_attention(tokens_1, tokens_2, D, d_k, seed))


def order_section(tokens: list[str], D: int, d_k: int, seed: int) -> None:
    prose.section("Word order: what positions are for", "communication", "order")
    left, middle, right = views.in_a_row(3)
    shuffle = controls.number_slider("comm_shuffle", "Shuffle seed", 0, 999, 1, container=left,
                                     help="Which random order the words are put in.")
    typed = controls.text("comm_order", "…or type an order", "", max_chars=200, container=middle,
                          help="Original positions in their new order, e.g. 2 1 0 for three words.")
    positions = controls.toggle("comm_positions", "Add positional encodings", container=right,
                                help="Add the sinusoidal positions to the embeddings before attention.")
    controls.show_url_notes()
    if len(tokens) < 2:
        st.info("One token has no order to change: add words to the sidebar text.")
        return
    order = maths.shuffled_order(len(tokens), shuffle)
    if typed.strip():
        try:
            order = maths.parse_order(typed, len(tokens))
        except ValueError as err:
            st.warning(f"{escape_md(str(err))} The shuffle seed's order is used meanwhile.")
    context_views.word_order(order_view(tokens, D, d_k, seed, tuple(order.tolist()), positions))


def encoder_section(r: dict, tokens: list[str]) -> None:
    prose.section("Encoder and decoder: who talks to whom", "communication", "encoder")
    context_views.encoder_decoder(r, tokens)


def recurrence_section(r: dict, tokens: list[str]) -> None:
    prose.section("Why attention replaced recurrence", "communication", "recurrence")
    keep = controls.number_slider("comm_keep", "Share a recurrence step keeps", 0.0, 1.0, 0.5, step=0.05,
                                  container=st.columns(2)[0],
                                  help="The share of its state each step passes on; it takes in 1 − keep of the new "
                                       "token.")
    controls.show_url_notes()
    context_views.reach(maths.reach_of_first_token(r["V"], r["weights_decoder"], keep), tokens, keep)


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    trained = trained_views.weights_switch()  # only the first section has a trained model to show
    sentence, max_tokens, D, d_k, seed = views.sentence_settings()
    phone.in_reach("d_k")  # on a phone, d_k stays beside the outputs it changes
    controls.show_url_notes()  # now, in case an empty sidebar text stops the page below

    # The sections with controls of their own are live parts of their own: a move of one reruns that alone.
    page.live(two_sentences_section, D, d_k, seed, trained)
    st.divider()
    prose.show("communication", "sidebar_sentence")
    tokens = views.tokens_line(sentence, max_tokens)
    page.live(order_section, tokens, D, d_k, seed)
    talk = encoder_decoder(tokens, D, d_k, seed)
    encoder_section(talk, tokens)
    page.live(recurrence_section, talk, tokens)


page.opening(COURSE, "communication")

page.live(controls_and_sections)

page.closing(COURSE, "communication", questions, code=(
    maths.same_word_two_contexts, maths.cosine, maths.cross_attention, maths.word_order,
    maths.shuffled_order, maths.parse_order, maths.order_view,
    maths.encoder_decoder, maths.recurrence, maths.reach_of_first_token))

"""Lesson: the causal mask, what it does to the weights, how it goes wrong, and proof that it works."""

import streamlit as st

from core import attention
from core.demos import context, heads
from core.tokenize import word_tokens
from lessons import COURSE
from lessons.masking import cached, maths, mistakes
from lessons.masking.questions import questions
from ui.drawing import heatmap
from ui.frame import page, prose
from ui.sections import views, walkthrough_views
from ui.sections.views import Heatmap, beside, heatmaps, numbers_text, square, token_rows, weights_map
from ui.state import controls, phone
from ui.text import code_span, counted, every

MAX_DIMS_IN_TABLE = 6
AVERAGE_ROOM_PX = 260  # the running average's (T, T) weights, beside the masked ones: a little over a narrow map
POSITIONS_ROOM_PX = 420  # (T, 2) and (T, 3) maps with T's cells (across=T): room for their labels beside them
MAX_T = 32  # seq_len's upper end; the position slider keeps one fixed range so that its state survives text edits
VERDICT = {"same": st.info, "first": st.info, "held": st.success, "leaked": st.error}  # peek_outcome's kinds

compute, peek = cached.masking_view, cached.no_peeking


def mask_section(a: dict, tokens: list[str]) -> None:
    st.header("The causal mask")
    heatmaps(weights_map(a["mask"].astype(float), tokens, "causal mask (1 = may look)", "masking_mask", "mask",
                         "(T, T), True on and below the diagonal"),
             square(a["masked_scores"], tokens, "masked scores Q Kᵀ / √d_k", "masking_scores", "masked scores",
                    "(T, T), −∞ above the diagonal", diverging=True))
    st.caption(prose.text("masking", "mask") + " " + prose.text("masking", "random_weights"))


def compare_section(a: dict, tokens: list[str]) -> int:
    """Weights and outputs without and with the mask; returns the query row picked (the last token unless the
    Query row box or a click on the masked weights says otherwise)."""
    st.header("Compare: without and with the mask")
    query = views.query_picker(tokens)
    heatmaps(
        weights_map(a["weights_free"], tokens, "weights without a mask", "masking_free", shape="(T, T), rows sum to 1"),
        weights_map(a["weights_masked"], tokens, "weights with the causal mask: click a row", "masking_weights",
                    shape="(T, T), rows sum to 1, 0 above the diagonal", picked=query))
    prose.show("masking", "row_0", row=numbers_text(a["weights_masked"][0]))
    views.explain_row(a["weights_masked"], a["V"], tokens, query, where="the masked weights")
    # one quantity with and without the mask, compared cell by cell: one colour scale, so equal rows look equal
    row_0 = "row 0 = V[0]" if page.technical() else ""  # V[0] is the Technical text's (Simple: value rows)
    masked, shape = ("outputs with the causal mask: " + row_0, "(T, d_k); " + row_0) if row_0 else \
        ("outputs with the causal mask", "(T, d_k)")
    views.panels("Outputs",
                 token_rows(a["out_free"], tokens, "outputs without a mask", "masking_out_free", "out",
                            cell_px=heatmap.SMALL_CELL_PX),
                 token_rows(a["out_masked"], tokens, masked, "masking_out", "out", shape,
                            cell_px=heatmap.SMALL_CELL_PX), shared=True)
    return query


def averaging_section(a: dict, tokens: list[str], i: int) -> None:
    prose.section("The averaging trick", "masking", "averaging")
    uniform = weights_map(a["uniform"], tokens, "uniform causal weights", "masking_uniform", "W",
                          "(T, T), row i is 1/(i+1) on keys 0..i", max_width=AVERAGE_ROOM_PX)
    with beside(uniform, (2, 3)):
        d_k = a["V"].shape[1]
        shown = min(d_k, MAX_DIMS_IN_TABLE)
        dims = f" (first {shown} of {d_k} dimensions)" if shown < d_k else ""
        prose.show("masking", "averaging_row", i=i, token=code_span(tokens[i]), rows=counted(i + 1, "value row"),
                   dims=dims)
        names, rows = maths.averaging_rows(a, tokens, i)
        views.number_table(views.row_table(names, rows[:, :shown]))
        st.caption(prose.text("masking", "averaging_error", rows=every(len(tokens), "row"),
                              error=a["running_mean_error"]))


def peek_section(tokens: list[str], D: int, d_k: int, seed: int) -> None:
    """The no-peeking check: a live part of its own, its two controls beside it (they reach nothing else)."""
    st.header("Proof of no peeking")
    position, replacement = views.in_a_row(2)
    # One fixed range: a range that followed the text's length would reset the slider on every edit.
    asked = controls.number_slider("masking_pos", "Position to change", 0, MAX_T - 1, 4, container=position,
                                   help="The token at this position is replaced; only later outputs may "
                                        "change. Past the end of the text, the last token is changed.")
    word = controls.text("masking_word", "Replacement word", "dog", max_chars=40, container=replacement, width=220,
                         help="The word put in at that position (its first token is used).")
    controls.show_url_notes()
    replacement, position = word_tokens(word), min(asked, len(tokens) - 1)
    if len(tokens) < 2:
        st.info("With a single token there is no later token to change: add some words to the text.")
        return
    if not replacement:
        st.warning("The replacement word has no letters, digits or punctuation: type a word in the sidebar.")
        return
    new, old = code_span(replacement[0]), code_span(tokens[position])
    if len(replacement) > 1:
        st.caption(f"The replacement splits into several tokens; only the first, {new}, is used.")
    if position < asked:
        st.caption(f"Position {asked} is past the last token, so the last position, {position}, is changed.")
    p = peek(tokens, position, replacement[0], D, d_k, seed)
    prose.show("masking", "peek", position=position, old=old, new=new)
    peek_changes(p, tokens)
    outcome = maths.peek_outcome(p, position)
    part = "peek_held_none" if outcome["kind"] == "held" and not outcome["moved"] else "peek_" + outcome["kind"]
    if said := prose.text("masking", part, new=new, old=old, **outcome):  # a part the Simple text may not hold
        VERDICT[outcome["kind"]](said)


def peek_changes(p: dict, tokens: list[str]) -> None:
    versions = ["with the mask", "without a mask"]
    with beside(Heatmap(p["diffs"], [f"{i} {t}" for i, t in enumerate(tokens)], versions,
                        "max |change| of each output", "masking_peek", "changes",
                        "(T, 2): one number per output row and version",
                        dict(x_title="", y_title="position", across=len(tokens), max_width=POSITIONS_ROOM_PX)), (2, 3)):
        table = {"position": range(len(tokens)), "before": tokens, "after": p["changed_tokens"],
                 versions[0]: p["diff_masked"], versions[1]: p["diff_unmasked"]}
        views.number_table(table, "%.3g", versions)


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    sentence, max_tokens, D, d_k, seed = views.sentence_settings(seq_len_hi=MAX_T)
    phone.in_reach("d_k")  # on a phone, d_k stays beside the scores the mask hides
    controls.show_url_notes()

    tokens = views.tokens_line(sentence, max_tokens)
    a = compute(tokens, D, d_k, seed)
    mask_section(a, tokens)
    if page.technical():  # how code writes the mask
        walkthrough_views.conventions_section(a["scaled_scores"], tokens)
    query = compare_section(a, tokens)
    averaging_section(a, tokens, query)
    if page.technical():  # the four mistakes, an aside drawn only while open
        box = controls.aside(mistakes.OPEN_KEY, mistakes.TITLE, icon=":material/report:")
        controls.show_url_notes()  # a link's unusable value for it is noted beside it
        if box.open:
            with box:
                mistakes.sections(a, tokens)
    page.live(peek_section, tokens, D, d_k, seed)


page.opening(COURSE, "masking")

page.live(controls_and_sections)

page.closing(COURSE, "masking", questions, code=(
    maths.masking_view, attention.causal_mask, heads.single_head, attention.scaled_dot_product_attention,
    attention.softmax, maths.fill_masked, maths.running_mean_weights, maths.running_mean,
    maths.mask_after_softmax, maths.naive_softmax, maths.fully_masked_row, maths.causal_fill_difference,
    maths.fill_in_float16, maths.mask_by_multiplying, maths.additive_mask_by_triu, maths.triu_times_inf,
    maths.no_peeking, context.boolean_masks, context.mask_conventions))

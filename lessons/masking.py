"""Lesson 3: the causal mask, what it does to the weights, how it goes wrong, and proof that it works."""

import pandas as pd
import streamlit as st

from core.attention import causal_mask, scaled_dot_product_attention, softmax
from core.demos import masking
from core.demos.heads import single_head
from core.tokenize import word_tokens
from ui import charts, controls, explain, page, presenter, render
from ui.text import code_span, notice, shape_caption, show_code

MAX_DIMS_IN_TABLE = 6
MAX_T = 32  # seq_len's upper end; the position slider keeps one fixed range so that its state survives text edits


@st.cache_data(show_spinner=False, max_entries=256)
def compute(tokens: tuple[str, ...], D: int, d_k: int, seed: int) -> dict:
    return masking.masking_view(list(tokens), D, d_k, seed)


@st.cache_data(show_spinner=False, max_entries=256)
def peek(tokens: tuple[str, ...], position: int, replacement: str, D: int, d_k: int, seed: int) -> dict:
    return masking.no_peeking(list(tokens), position, replacement, D, d_k, seed)


def fmt(x: float) -> str:
    """A number as people write it: -1e+09, -inf, -65504, NaN, 0.25."""
    return "NaN" if x != x else f"{x:g}"


page.header(__file__)
st.title("3 · Masking")
st.markdown(
    "A language model learns by predicting each next token from the ones before it, all positions at "
    "once. If token i could attend to token i + 1, it would simply copy the answer. The **causal mask** "
    "forbids that: query i may look at keys 0 … i and nothing after. It works on the scores, before the "
    "softmax: every forbidden score is set to −∞, and since e^−∞ = 0, those keys get exactly zero weight "
    "while the allowed ones share all of it. Row 0 is left with only itself; the last row sees everything."
)

sentence = controls.input_text()
max_tokens = controls.seq_len(hi=MAX_T)
D = controls.d_model()
d_k = controls.d_k(hi=64)
seed = controls.seed()
st.sidebar.markdown("**No-peeking check**")
# A range that followed the sentence's length would make Streamlit treat every length as a new widget and
# reset it; one fixed range keeps the setting, and a position past the end means the last token.
asked_position = controls.number_slider("masking_pos", "Position to change", 0, MAX_T - 1, 4,
                                        help="The token at this position is replaced; only later outputs may "
                                             "change. Past the end of the text, the last token is changed.")
word = controls.text("masking_word", "Replacement word", "dog", max_chars=40,
                     help="The word put in at that position (its first token is used).")
controls.show_url_notes()

tokens = word_tokens(sentence, max_tokens)
T = len(tokens)
position = min(asked_position, T - 1)
if not tokens:
    st.warning("There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation).")
    st.stop()
a = compute(tuple(tokens), D, d_k, seed)
# Cell sizes that keep a heatmap inside its column (a chart wider than its column is squeezed unreadably).
cell_half = min(charts.CELL_PX, 360 // T)  # two heatmaps side by side
cell_dims = min(22, 360 // d_k)  # (T, d_k) outputs, two side by side

st.markdown("**Tokens:** " + " · ".join(code_span(t) for t in tokens))
if len(word_tokens(sentence)) > T:
    st.caption(f"Showing the first {T} of {len(word_tokens(sentence))} tokens (seq_len).")

# ---- the mask -----------------------------------------------------------------------------------------
st.subheader("The causal mask")
left, right = st.columns(2)
with left:
    render.show_heatmap(a["mask"].astype(float), tokens, tokens, title="causal mask (1 = may look)",
                        key="masking_mask", domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("mask", a["mask"], "(T, T), True on and below the diagonal")
with right:
    render.show_heatmap(a["masked_scores"], tokens, tokens, title="masked scores Q Kᵀ / √d_k",
                        key="masking_scores", diverging=True, cell_px=cell_half)
    shape_caption("masked scores", a["masked_scores"], "(T, T), −∞ above the diagonal")
st.caption("Query i (a row) may look at key j (a column) when j ≤ i. Above the diagonal the score is replaced "
           "by −∞ (grey cells): np.where(mask, scores, −∞).")

# ---- without and with -----------------------------------------------------------------------------------
st.subheader("Compare: without and with the mask")
left, right = st.columns(2)
with left:
    render.show_heatmap(a["weights_free"], tokens, tokens, title="weights without a mask", key="masking_free",
                        domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("weights", a["weights_free"], "(T, T), rows sum to 1")
with right:
    picked = render.show_heatmap(a["weights_masked"], tokens, tokens, title="weights with the causal mask: click a row",
                                 key="masking_weights", select_rows=True, domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("weights", a["weights_masked"], "(T, T), rows sum to 1, 0 above the diagonal")
row0 = ", ".join(fmt(w) for w in a["weights_masked"][0][:6]) + (", …" if T > 6 else "")
st.markdown(f"Row 0 with the mask is exactly **[{row0}]**: the first token can only attend to itself. The last "
            f"row is the same with and without the mask, because the last token may look at every key anyway.")
query = picked if picked is not None and picked < T else T - 1
st.caption("Click a query row in the masked weights to see its output built up; the last token is shown until you do.")
explain.weighted_sum(a["weights_masked"][query], a["V"], tokens, query)
dims = [f"d{j}" for j in range(d_k)]
left, right = st.columns(2)
with left:
    render.show_heatmap(a["out_free"], tokens, dims, title="outputs without a mask", key="masking_out_free",
                        diverging=True, x_title="dimension", y_title="token", cell_px=cell_dims)
    shape_caption("out", a["out_free"], "(T, d_k)")
with right:
    render.show_heatmap(a["out_masked"], tokens, dims, title="outputs with the causal mask", key="masking_out",
                        diverging=True, x_title="dimension", y_title="token", cell_px=cell_dims)
    shape_caption("out", a["out_masked"], "(T, d_k); row 0 equals V[0]")

# ---- averaging -------------------------------------------------------------------------------------------
st.subheader("The averaging trick")
st.markdown(
    "Before attention learns anything, give every allowed key the same score, say 0. The softmax of a row "
    "with i + 1 equal scores is 1/(i + 1) each, so the weights are a lower triangle of 1, ½, ⅓, … and "
    "**out = W V** makes out[i] the mean of V[0], …, V[i]: a running average of everything so far, computed by "
    "one matrix product instead of a loop. Attention replaces the equal scores with learned ones, so each "
    "token takes a *weighted* average instead."
)
left, right = st.columns([2, 3])
with left:
    render.show_heatmap(a["uniform"], tokens, tokens, title="uniform causal weights", key="masking_uniform",
                        domain=(0.0, 1.0), cell_px=min(charts.CELL_PX, 260 // T))
    shape_caption("W", a["uniform"], "(T, T), row i is 1/(i+1) on keys 0..i")
with right:
    i = query
    shown = min(d_k, MAX_DIMS_IN_TABLE)
    table = pd.DataFrame(a["V"][: i + 1, :shown], columns=dims[:shown])
    table.insert(0, "row", [f"V[{j}] ({t})" for j, t in enumerate(tokens[: i + 1])])
    summary = pd.DataFrame([[f"mean of V[0..{i}]", *a["running_mean"][i, :shown]],
                            [f"out[{i}] = (W V)[{i}]", *a["uniform_out"][i, :shown]]], columns=table.columns)
    st.markdown(f"Row {i} ({code_span(tokens[i])}), the query picked above: the output of the uniform weights, "
                f"the mean of its {i + 1} value rows, and the rows themselves"
                + (f" (first {shown} of {d_k} dimensions)" if shown < d_k else ""))
    st.dataframe(pd.concat([summary[::-1], table], ignore_index=True), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in dims[:shown]})
    st.caption(f"Largest difference between W V and the running mean over all {T} rows: "
               f"{a['running_mean_error']:.1e} (float rounding).")

# ---- mistakes ----------------------------------------------------------------------------------------------
st.subheader("Mistake 1: masking after the softmax")
after = a["after_softmax"]
st.markdown(
    "Apply the softmax first and zero the future afterwards, and the weight a row had given to future keys is "
    "thrown away instead of being shared among the allowed ones. The rows no longer sum to 1, so every output "
    "shrinks towards 0 by a different amount. Only the last row, which masks nothing, is untouched."
)
left, right = st.columns(2)
with left:
    render.show_heatmap(after["wrong"], tokens, tokens, title="wrong: softmax, then mask", key="masking_after",
                        domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("softmax(scores) * mask", after["wrong"], "(T, T)")
with right:
    render.show(charts.bar_chart, charts.bar_frame(tokens, after["row_sums"]), width="stretch",
                title="row sums after masking late", x_title="row sum (should be 1)", y_title="query")
    shape_caption("row sums", after["row_sums"], "(T,)")
st.caption(f"Row sums: {', '.join(f'{x:.3f}' for x in after['row_sums'][:8])}{', …' if T > 8 else ''}. "
           "Masking first (before the softmax) gives rows that sum to exactly 1.")

st.subheader("Mistake 2: a row with nothing left to see")
fm = a["fully_masked"]
st.markdown(
    "Mask the diagonal too (j < i instead of j ≤ i, an off-by-one in np.triu) and row 0 has no key left: "
    "every score in it is −∞. A textbook softmax subtracts the row's max, and (−∞) − (−∞) is NaN. The NaN row "
    "then poisons every matrix product it enters. This library's softmax returns a row of zeros instead."
)
left, right = st.columns(2)
with left:
    render.show_heatmap(fm["naive"], tokens, tokens, title="naive softmax: row 0 is NaN", key="masking_naive",
                        domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("weights", fm["naive"], "(T, T)")
with right:
    render.show_heatmap(fm["ours"], tokens, tokens, title="guarded softmax: row 0 is 0", key="masking_ours",
                        domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("weights", fm["ours"], "(T, T)")
row_naive = ", ".join(fmt(w) for w in fm["naive"][0][:6])
st.markdown(f"Row 0, naive: [{row_naive}{', …' if T > 6 else ''}] (the grey row); guarded: all 0, so that "
            "token's output is a vector of zeros and nothing downstream breaks. Every other row is the same in both.")

st.subheader("Mistake 3: −1e9 instead of −∞")
fills = a["fills"]
fill_table = pd.DataFrame({"fill value": [fmt(x) for x in fills["value"]],
                           "in float32": [fmt(x) for x in fills["float32"]],
                           "in float16": [fmt(x) for x in fills["float16"]]})
row_big = ", ".join(f"{w:.3f}" for w in fm["big_negative"][0][:6])
row_f16 = ", ".join(fmt(w) for w in fm["big_negative_f16"][0][:6])
st.markdown(
    "A large negative number looks like a safe stand-in for −∞, and on a row with some allowed keys it is: "
    "e^(−1e9 − max) is 0 in any float. It fails twice. On a fully masked row (the same off-by-one mask as "
    f"above), row 0's scores are all equal to −1e9, so the softmax spreads the weight evenly: [{row_big}"
    f"{', …' if T > 6 else ''}], 1/{T} on every key, **future keys included**: the mask leaks."
)
left, right = st.columns(2)
with left:
    render.show_heatmap(fm["big_negative"], tokens, tokens, title="fill −1e9: row 0 leaks", key="masking_big",
                        domain=(0.0, 1.0), cell_px=cell_half)
    shape_caption("weights", fm["big_negative"], "(T, T)")
with right:
    st.dataframe(fill_table, hide_index=True, width="stretch")
    st.markdown(
        "And in float16, whose largest finite value is 65504, −1e9 and −1e10 *are* −∞: the row is NaN again "
        f"after all. Row 0 in float16 with the −1e9 fill: [{row_f16}{', …' if T > 6 else ''}]. "
        "Use a boolean mask and −∞, with a softmax that handles an empty row."
    )

# ---- no peeking --------------------------------------------------------------------------------------------
st.subheader("Proof of no peeking")
replacement = word_tokens(word)[:1]
if T < 2:
    st.info("With a single token there is no later token to change: add some words to the text.")
elif not replacement:
    st.warning("The replacement word has no letters, digits or punctuation: type a word in the sidebar.")
else:
    new = replacement[0]
    if len(word_tokens(word)) > 1:
        st.caption(f"The replacement splits into several tokens; only the first, {code_span(new)}, is used.")
    if position < asked_position:
        st.caption(f"Position {asked_position} is past the last token, so the last position, {position}, is changed.")
    p = peek(tuple(tokens), position, new, D, d_k, seed)
    st.markdown(f"Replace token {position}, {code_span(tokens[position])}, with {code_span(new)}, run attention "
                "again, and measure how far each output row moved: the largest |after − before| over its dimensions.")
    labels = [f"{i} {t}" for i, t in enumerate(tokens)]
    versions = ["with causal mask", "without a mask"]
    left, right = st.columns([2, 3])
    with left:
        render.show_heatmap(p["diffs"], labels, versions,
                            title="max |change| of each output", key="masking_peek", x_title="",
                            y_title="position", cell_px=min(charts.CELL_PX, 420 // T))
        shape_caption("changes", p["diffs"], "(T, 2): one number per output row and version")
    with right:
        peek_table = pd.DataFrame({"position": range(T), "before": tokens, "after": p["changed_tokens"],
                                   versions[0]: p["diff_masked"], versions[1]: p["diff_unmasked"]})
        st.dataframe(peek_table, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.3g") for c in versions})
    if p["diff_unmasked"].max() == 0:
        st.info(f"{code_span(new)} has the same embedding as {code_span(tokens[position])} (case is ignored), so "
                "nothing changes anywhere: type a different word to see the test work.")
    elif position == 0:
        st.info("Position 0 has no earlier positions: every output may change. Move the position slider right.")
    else:
        before = p["diff_masked"][:position]
        moved = int((p["diff_unmasked"][:position] > 0).sum())
        box = st.success if (before == 0).all() else st.error
        box(f"With the mask, positions 0 to {position - 1} did not move at all: their largest change is "
            f"{before.max():g}, exactly zero, bit for bit. Without the mask, {moved} of those {position} "
            "earlier positions changed: they had been reading the future.")

notice([
    "The masked weights are zero above the diagonal, and every row still sums to 1.",
    "Row 0 under the causal mask is exactly [1, 0, 0, …]: the first token's output is its own value row.",
    "The last row is identical with and without the mask: the last token may look at everything anyway.",
    "Masking after the softmax leaves rows that sum to less than 1; masking before it never does.",
    "−1e9 behaves like −∞ until a row is fully masked (uniform leak) or the numbers are float16 (−∞, then NaN).",
    "Changing a later token leaves every earlier output bit for bit the same: the model cannot peek.",
])
if not presenter.presenting():
    show_code(masking.masking_view, causal_mask, single_head, scaled_dot_product_attention, softmax,
              masking.fill_masked, masking.running_mean_weights, masking.running_mean, masking.mask_after_softmax,
              masking.naive_softmax, masking.fully_masked_row, masking.fill_in_float16, masking.no_peeking)
page.footer(__file__)

"""Lesson 4: several heads side by side, their concatenation, W_O, and three equal implementations."""

import numpy as np
import pandas as pd
import streamlit as st

from core.attention import (
    merge_heads,
    multi_head_attention,
    multi_head_attention_einsum,
    multi_head_attention_loop,
    qkv_heads,
    split_heads,
)
from core.demos.heads import mha_weights, multi_head
from core.demos.measures import entropy
from core.tokenize import word_embeddings, word_tokens
from ui import charts, controls, explain, page, presenter, render
from ui.text import code_span, notice, shape_caption, shape_str, show_code

GRID_DROP = ["text", "dark_text", "dark_text_div"]  # the small multiples print no values in their cells
COMPARE_PANELS = 16  # the side-by-side comparison draws at most this many heads (the grid above has all)


@st.cache_data(show_spinner=False, max_entries=256)
def compute(tokens: tuple[str, ...], D: int, H: int, seed: int, causal: bool) -> dict:
    a = multi_head(list(tokens), D, H, seed, causal)
    # The page shows only each form's output shape and its difference: keep the cached result small.
    a["forms"] = {name: out.shape for name, (out, _) in a["forms"].items()}
    return a


@st.cache_data(show_spinner=False, max_entries=128)
def head_grid(tokens: tuple[str, ...], D: int, H: int, seed: int, causal: bool, first: int | None = None
              ) -> pd.DataFrame:
    """One panel per head (the first `first` heads), ready to draw: (H, T, T) weights -> tidy frame."""
    weights = compute(tokens, D, H, seed, causal)["weights"][:first]
    names = [f"head {h + 1}" for h in range(len(weights))]
    return charts.grid_frame(weights, names, tokens, tokens).drop(columns=GRID_DROP)


def grid_layout(T: int, H: int, width_px: int, panel_px: int) -> tuple[int, int]:
    """(cell_px, columns): panels at most panel_px wide (half that beyond 16 heads), as many per row as fit."""
    scale = presenter.chart_scale()
    cell_px = charts.cell_size(T, int(34 * scale), max_width=int((panel_px if H <= 16 else panel_px // 2) * scale))
    columns = max(1, min(H, int(width_px * scale) // (cell_px * T + 70)))
    return cell_px, columns


def show_grid(tokens: tuple[str, ...], D: int, H: int, seed: int, causal: bool, title: str, width_px: int,
              panel_px: int = 240, first: int | None = None):
    cell_px, columns = grid_layout(len(tokens), min(H, first or H), width_px, panel_px)
    render.show(charts.grid_chart, head_grid(tokens, D, H, seed, causal, first), columns=columns, cell_px=cell_px,
                title=title)


page.header(__file__)
st.title("4 · Multi-head")
st.markdown(
    "One attention head makes one weighted average per token, so it can follow only one kind of relation "
    "at a time. **Multi-head attention** runs H heads side by side. The same D-wide projections "
    "X W_Q, X W_K and X W_V are cut into H slices of width **d_k = D / H**; each slice is a head with its own "
    "queries, keys and values, and each head computes its own attention map. The heads' outputs are laid "
    "next to each other again (the *concat*, back to width D) and one more matrix **W_O** mixes them. "
    "Splitting costs no extra parameters: it is the same D x 3D matrix, read in slices."
)
st.latex(r"\text{head}_h = \text{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}}\right) V_h, \qquad "
         r"\text{MultiHead}(X) = [\text{head}_1, \dots, \text{head}_H]\, W_O")

sentence = controls.input_text()
max_tokens = controls.seq_len()
D = controls.d_model()
H = controls.heads(D)
seed = controls.seed()
causal = controls.toggle("mh_causal", "Causal mask",
                         help="Each token may look only at itself and earlier tokens (as in a language model).")
focus = controls.choice("mh_head", "Head to look at closely", list(range(1, H + 1)), 1) if H > 1 else 1
controls.show_url_notes()

tokens = tuple(word_tokens(sentence, max_tokens))
if not tokens:
    st.warning("There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation).")
    st.stop()
try:
    a = compute(tokens, D, H, seed, causal)
except ValueError as err:  # a setting core cannot use: say why, never a traceback
    st.error(str(err))
    st.stop()
T, d_k = len(tokens), D // H
labels = list(tokens)

st.markdown("**Tokens:** " + " · ".join(code_span(t) for t in tokens))
if len(word_tokens(sentence)) > T:
    st.caption(f"Showing the first {T} of {len(word_tokens(sentence))} tokens (seq_len).")

st.subheader(f"{H} head{'s' if H > 1 else ''}, each with d_k = {D} / {H} = {d_k}")
cols = st.columns(3)
cols[0].metric("d_model (D)", D)
cols[1].metric("heads (H)", H)
cols[2].metric("d_k = D / H", d_k)
show_grid(tokens, D, H, seed, causal, "Attention weights, one map per head", width_px=1000)
st.caption(f"weights · shape {shape_str(a['weights'].shape)} = (H, T, T): one (T, T) map per head, every row "
           f"sums to 1{', nothing above the diagonal (causal)' if causal else ''}. Hover a cell for its value.")

st.subheader(f"Inside head {focus}")
h = focus - 1
dims = [f"d{j}" for j in range(d_k)]
cols = st.columns(3)
for col, name in zip(cols, "QKV"):
    with col:
        render.show_heatmap(a[name][h], labels, dims, title=f"{name} of head {focus}", diverging=True,
                            x_title="dimension", y_title="token", cell_px=26)
        shape_caption(f"{name}[{h}]", a[name][h], "(T, d_k)")
st.caption(f"Head {focus} reads columns {h * d_k} to {(h + 1) * d_k - 1} of X W_Q, X W_K and X W_V "
           f"(each (T, D)): the reshape (T, D) -> (T, H, d_k) -> (H, T, d_k) does the cutting.")
left, right = st.columns([3, 2])
with left:
    picked = render.show_heatmap(a["weights"][h], labels, labels, title=f"Head {focus} weights: click a row",
                                 key=f"mh_weights_{h}", select_rows=True, domain=(0.0, 1.0))
    shape_caption(f"weights[{h}]", a["weights"][h], "(T, T), rows sum to 1")
with right:
    render.show_heatmap(a["heads"][h], labels, dims, title=f"Output of head {focus}", diverging=True,
                        x_title="dimension", y_title="token", cell_px=26)
    shape_caption(f"head {focus} output", a["heads"][h], "(T, d_k)")
query = picked if picked is not None and picked < T else T - 1
st.caption("Click a query row in the weights to see its output built up; the last token is shown until you do.")
explain.weighted_sum(a["weights"][h][query], a["V"][h], labels, query)

st.subheader("Concat, then W_O")
concat_cols = [f"h{c // d_k + 1}·{c % d_k}" for c in range(D)]
render.show_heatmap(a["concat"], labels, concat_cols, title="Concat of the head outputs", diverging=True,
                    x_title="head · dimension", y_title="token", cell_px=22)
shape_caption("concat", a["concat"], f"(T, H·d_k) = (T, {H}·{d_k}) = (T, D)")
left, right = st.columns(2)
with left:
    render.show_heatmap(a["w_o"], concat_cols, [f"d{j}" for j in range(D)], title="W_O", diverging=True,
                        x_title="output dim", y_title="head · dimension", cell_px=22)
    shape_caption("W_O", a["w_o"], "(D, D)")
with right:
    render.show_heatmap(a["out"], labels, [f"d{j}" for j in range(D)], title="Output = concat · W_O",
                        diverging=True, x_title="dimension", y_title="token", cell_px=22)
    shape_caption("output", a["out"], "(T, D), the same shape as the input X")
st.caption("Row r of W_O tells how much concat column r feeds into each output dimension: this is where "
           "the heads' findings are mixed together. Without W_O, head h could only ever write to its own slice.")

st.subheader("Three ways to write it, one answer")
rows = []
functions = [multi_head_attention, multi_head_attention_loop, multi_head_attention_einsum]
for (name, shape), fn in zip(a["forms"].items(), functions):
    d_out, d_w = a["max_diff"][name]
    rows.append({"implementation": name, "core function": fn.__name__, "output shape": shape_str(shape),
                 "max |Δ output| vs reshape": d_out, "max |Δ weights| vs reshape": d_w})
table = pd.DataFrame(rows)
st.dataframe(table, hide_index=True, width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.1e") for c in table.columns[3:]})
worst = max(max(d) for d in a["max_diff"].values())
box = st.success if worst < 1e-10 else st.error
box(f"Largest difference between the three implementations: {worst:.1e}. Float64 carries about 16 digits, so "
    "differences near 1e-16 are rounding in a different order of additions, not a different computation.")
st.caption("The reshape form splits all heads at once, (T, D) -> (H, T, d_k); the loop slices one head at a "
           "time, as the paper draws it; einsum folds the head axis into the weights, W_Q viewed as (D, H, d_k).")

st.subheader(f"Compare: 1 head vs {H} heads")
if H == 1:
    st.info("Pick more than one head in the sidebar to compare the split with a single head.")
else:
    one = compute(tokens, D, 1, seed, causal)
    st.markdown(f"Same sentence, same W_qkv and W_O. On the left one head uses all D = {D} columns; "
                f"on the right the same columns are cut into {H} heads of d_k = {d_k}.")
    left, right = st.columns([2, 3])
    with left:
        render.show_heatmap(one["weights"][0], labels, labels, title=f"1 head, d_k = {D}", domain=(0.0, 1.0),
                            annotate=False, cell_px=max(8, min(34, 300 // T)))
        shape_caption("weights", one["weights"], "(1, T, T)")
    with right:
        show_grid(tokens, D, H, seed, causal, f"{H} heads, d_k = {d_k}", width_px=600, panel_px=170,
                  first=COMPARE_PANELS)
        shape_caption("weights", a["weights"], "(H, T, T)")
        if H > COMPARE_PANELS:
            st.caption(f"The first {COMPARE_PANELS} of the {H} heads; the grid at the top of the page has them all.")
    ent_one = float(entropy(one["weights"]).mean())
    ent_heads = entropy(a["weights"]).mean(axis=-1)  # (H,)
    cols = st.columns(3)
    cols[0].metric("Mean row entropy, 1 head", f"{ent_one:.2f} bits")
    cols[1].metric(f"Mean row entropy, {H} heads", f"{ent_heads.mean():.2f} bits",
                   help="Averaged over heads; 0 bits = all weight on one key, log2(T) bits = uniform.")
    cols[2].metric("Parameters in W_qkv and W_O", f"{4 * D * D + 4 * D:,}", help="The same for any H: 4D² + 4D.")
    st.caption(f"Entropy per head: {', '.join(f'{e:.2f}' for e in ent_heads)} bits; a row spread evenly over "
               f"all {T} keys has log2({T}) = {np.log2(T):.2f} bits. The single head's score for a pair is the "
               "sum of the heads' scores for it (over √H), so it sees one blended pattern; the heads keep "
               "theirs apart.")

notice([
    "Each head's map is different although every head reads the same tokens: different slices of the "
    "projections ask different questions.",
    f"Moving the heads slider changes d_k = D / H but not the number of parameters: W_qkv is always "
    f"{D} x {3 * D} and W_O {D} x {D}.",
    "The concat has exactly the width of the input, D, so blocks can be stacked; W_O then lets every output "
    "dimension draw on every head.",
    "The per-head loop, the reshape and the einsum agree to about 1e-16: three spellings of one computation.",
    "With many heads, d_k gets small (at H = D it is 1): each head's scores are then products of single numbers, "
    "too coarse to be selective. Real models keep d_k around 64.",
    "Switch on the causal mask: every head loses its upper triangle, the first token can only look at itself.",
])
if not presenter.presenting():
    show_code(multi_head, mha_weights, multi_head_attention, qkv_heads, split_heads, merge_heads,
              multi_head_attention_loop, multi_head_attention_einsum, word_embeddings)
page.footer(__file__)

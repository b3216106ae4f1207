"""Lesson 1: from token embeddings to queries, keys, values and raw scores."""

import streamlit as st

from core.attention import scaled_dot_product_attention, softmax
from core.demos.heads import projections, single_head
from core.tokenize import word_embeddings, word_tokens
from ui import controls, explain, page, presenter, render
from ui.text import code_span, notice, shape_caption, show_code


@st.cache_data(show_spinner=False, max_entries=256)
def compute(tokens: tuple[str, ...], D: int, d_k: int, seed: int) -> dict:
    return single_head(list(tokens), D, d_k, seed)


page.header(__file__)
st.title("1 · QKV projection")
st.markdown(
    "Attention starts by giving every token three different vectors. Each token's embedding **x** is "
    "multiplied by three learned matrices: **q = x W_Q** (the *query*: what this token is looking for), "
    "**k = x W_K** (the *key*: what this token offers to be found by) and **v = x W_V** (the *value*: what it "
    "hands over when it is chosen). Think of a library: the query is the question you bring, the keys are the "
    "labels on the spines, the values are the books' contents. How well a query matches a key is their dot "
    "product, so all matches at once are the score matrix **Q Kᵀ**."
)

sentence = controls.input_text()
max_tokens = controls.seq_len()
D = controls.d_model()
d_k = controls.d_k(hi=64)
seed = controls.seed()
controls.show_url_notes()

tokens = word_tokens(sentence, max_tokens)
if not tokens:
    st.warning("There are no tokens to show: type a sentence in the sidebar (letters, digits or punctuation).")
    st.stop()
a = compute(tuple(tokens), D, d_k, seed)
T = len(tokens)
dims_D, dims_k = [f"d{j}" for j in range(D)], [f"d{j}" for j in range(d_k)]

st.markdown("**Tokens:** " + " · ".join(code_span(t) for t in tokens))
if len(word_tokens(sentence)) > T:
    st.caption(f"Showing the first {T} of {len(word_tokens(sentence))} tokens (seq_len).")

st.subheader("Embeddings X")
render.show_heatmap(a["X"], tokens, dims_D, title="X", key="qkv_x", diverging=True, x_title="dimension",
                    y_title="token", max_width=700)
shape_caption("X", a["X"], "(T, d_model)")

st.subheader("Three projections")
cols = st.columns(3)
for col, name in zip(cols, ["W_Q", "W_K", "W_V"]):
    with col:
        render.show_heatmap(a[name], dims_D, dims_k, title=name, key=f"qkv_{name}", diverging=True,
                            x_title="output dim", y_title="input dim", cell_px=22)
        shape_caption(name, a[name], "(d_model, d_k)")

st.subheader("Queries, keys, values")
cols = st.columns(3)
roles = ["what each token asks", "what each token offers", "what each token hands over"]
for col, name, role in zip(cols, "QKV", roles):
    with col:
        render.show_heatmap(a[name], tokens, dims_k, title=f"{name}: {role}", key=f"qkv_{name}", diverging=True,
                            x_title="dimension", y_title="token", cell_px=26)
        shape_caption(name, a[name], "(T, d_k)")

st.subheader("Raw scores Q Kᵀ")
left, right = st.columns(2)
with left:
    render.show_heatmap(a["scores"], tokens, tokens, title="scores = Q Kᵀ", key="qkv_scores", diverging=True)
    shape_caption("Q Kᵀ", a["scores"], "(T, T)")
with right:
    picked = render.show_heatmap(a["weights"], tokens, tokens, title="softmax(Q Kᵀ / √d_k): click a row",
                                 key="qkv_weights", select_rows=True, domain=(0.0, 1.0))
    shape_caption("weights", a["weights"], "(T, T), rows sum to 1")
query = picked if picked is not None and picked < T else T - 1
st.caption("Click a query row in the weights to see its output built up; the last token is shown until you do.")
explain.weighted_sum(a["weights"][query], a["V"], tokens, query)

notice([
    "Row i of the scores is token i's query compared with every key: a large positive score means a good match.",
    "Q and K have the same width d_k, since they are compared by dot products; V could have any width.",
    "A word that appears twice gets the same embedding, so the same query, key and value rows.",
    "The scores are not symmetric: q_i·k_j ≠ q_j·k_i because W_Q ≠ W_K (compare row 0 with column 0).",
    "Move d_k up: the scores spread wider, and the softmax rows get sharper. The next lesson is about that.",
])
if not presenter.presenting():
    show_code(single_head, projections, word_embeddings, scaled_dot_product_attention, softmax)
page.footer(__file__)

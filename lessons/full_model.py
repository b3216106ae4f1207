"""Lesson 5: the whole model end to end on characters: next-character probabilities, generation,
every attention map, positions, parameters, and what attention costs at long lengths."""

import numpy as np
import pandas as pd
import streamlit as st

from core.costs import (
    DTYPE_BYTES,
    attention_flops,
    attention_memory,
    count_params,
    human_bytes,
    kv_cache_bytes,
    param_count,
)
from core.layers import positional_encoding, sinusoidal_encoding
from core.model import attention_layer, block, embed, forward
from core.sampling import generate, next_token_probs, probs_from_logits
from ui import charts, controls, model_store, page, presenter, render
from ui.text import code_span, escape_md, notice, shape_caption, show_code

DEFAULT_PROMPT = "The attention "
MAX_PROMPT_CHARS = 1000
TOP_BARS = 15  # bars drawn: the most likely characters
MAX_DRAWN = 64  # attention maps show at most the last 64 positions
MAX_LENGTH = 1_000_000
DEFAULT_LENGTH = 4096
DTYPE_OF_BYTES = {2: "float16", 4: "float32", 8: "float64"}
GRID_DROP = ["text", "dark_text", "dark_text_div"]
SHOWN = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}  # invisible characters, made visible on axes and bars


def shown(c: str) -> str:
    return SHOWN.get(c, c if c.isprintable() else f"U+{ord(c):04X}")


@st.cache_data(show_spinner=False, max_entries=256)
def read_prompt(source: tuple, ids: tuple[int, ...]) -> dict:
    """One forward pass over the prompt: the last position's logits (V,) and every attention map (L, H, T, T)."""
    m = model_store.from_source(source)
    logits, trace = forward(m.params, m.cfg, np.array(ids, dtype=np.int64))
    weights = np.stack([layer["weights"] for layer in trace["layers"]])  # L x (H, T, T) -> (L, H, T, T)
    return {"logits": logits[-1], "weights": weights}


@st.cache_data(show_spinner=False, max_entries=128)
def attention_grid(source: tuple, ids: tuple[int, ...]) -> pd.DataFrame:
    """Every layer x head map of the last MAX_DRAWN positions, as one small-multiples frame."""
    m = model_store.from_source(source)
    w = read_prompt(source, ids)["weights"][..., -MAX_DRAWN:, -MAX_DRAWN:]  # (L, H, T', T')
    L, H, T = w.shape[0], w.shape[1], w.shape[-1]
    labels = [shown(c) for c in m.tokenizer.decode(ids[-T:])]
    names = [f"layer {layer + 1} · head {h + 1}" for layer in range(L) for h in range(H)]
    return charts.grid_frame(w.reshape(L * H, T, T), names, labels, labels).drop(columns=GRID_DROP)


@st.cache_data(show_spinner=False, max_entries=64)
def generate_text(source: tuple, ids: tuple[int, ...], n: int, temperature: float, top_k: int | None,
                  seed: int) -> str:
    """n sampled characters after the prompt; the same arguments always give the same text."""
    m = model_store.from_source(source)
    out = generate(m.params, m.cfg, np.array(ids, dtype=np.int64), n, temperature, top_k,
                   rng=np.random.default_rng(seed))
    return m.tokenizer.decode(out[len(ids):])


def model_picker(names: list[str]) -> str:
    """Which trained model, when there are several; a link naming an unknown one falls back to the first."""
    return controls.option("fm_model", "Trained model", names, kind="selectbox")


def length_input() -> int:
    """A sequence length for the cost estimates, typed in, bound to the URL and clamped to 1..MAX_LENGTH."""
    return int(controls.number_box("fm_length", "Sequence length T", 1, MAX_LENGTH, DEFAULT_LENGTH, step=1000,
                                   container=st, help=f"Any whole number from 1 to {MAX_LENGTH:,}."))


def bars(probs: np.ndarray, tokenizer, title: str) -> pd.DataFrame:
    """The TOP_BARS most likely next characters, most likely first, drawn as bars."""
    order = np.argsort(-probs, kind="stable")[:TOP_BARS]
    labels = [shown(tokenizer.itos[i]) + (" (unknown)" if i == 0 else "") for i in order]
    frame = charts.bar_frame(labels, probs[order])
    render.show(charts.bar_chart, frame, width="stretch", title=title, y_title="next character")
    return frame


def training_summary(meta: dict, V: int) -> str:
    """The saved model's figures in a sentence: its validation loss against the uniform and bigram baselines."""
    def number(key):
        value = meta.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    parts = []
    if number("val_loss") is not None:
        parts.append(f"Validation loss {number('val_loss'):.3g} nats per character; guessing uniformly gives "
                     f"ln {V} = {np.log(V):.3f}")
        if number("bigram_val_loss") is not None:
            parts[-1] += f", a bigram model {number('bigram_val_loss'):.3g}"
    if number("steps") is not None:
        parts.append(f"Trained for {int(number('steps')):,} steps")
    if isinstance(meta.get("data"), str):
        parts.append(f"Trained on {code_span(meta['data'][:60])}")
    return ". ".join(parts) + "." if parts else ""


# ---- the page ------------------------------------------------------------------------------------------

page.header(__file__)
st.title("5 · Full model")
st.markdown(
    "Here every piece of the earlier lessons runs together in a small language model that reads and writes "
    "**characters**. Each character becomes a vector (its embedding plus a positional encoding); a stack of "
    "blocks, each one causal multi-head attention followed by a feed-forward layer, with layer norms and "
    "residual connections, refines those vectors; the last position's vector is compared with every "
    "character's embedding to give a score per character, and a softmax turns the scores into the "
    "probability of the next character. Generating text is just repeating that: pick a character, append "
    "it, read again."
)

# Shipped character models first, then any model trained on the Training page in this session.
trained = model_store.char_models() + list(model_store.session_models())
prompt = controls.text("fm_prompt", "Prompt", DEFAULT_PROMPT, max_chars=MAX_PROMPT_CHARS,
                       help="Any text. The model reads it one character at a time.")
temperature = controls.temperature()
seed = controls.seed()
model_error = None
if trained:
    name = model_picker(trained) if len(trained) > 1 else trained[0]
    compare = controls.toggle("fm_compare", "Compare with random weights",
                              help="The same model shape with untrained weights, side by side.")
    try:
        model = model_store.get_model(name)
    except ValueError as err:
        model_error, model, compare = str(err), model_store.random_model(seed), False
else:
    model, compare = model_store.random_model(seed), False
cfg, tok = model.cfg, model.tokenizer
task = model.meta.get("task")
if task:
    kind = task.get("kind", "synthetic") if isinstance(task, dict) else str(task)
    st.info(f"This model was trained on the {escape_md(kind)} task and knows only the characters "
            f"{code_span(''.join(tok.itos[1:]))}: try a prompt such as {code_span('ABCDEFGH|')}.")
top_k = controls.number_slider("fm_top_k", "Top-k (0 = no limit)", 0, cfg.vocab_size, 0,
                               help="Keep only the k most likely characters before sampling; 0 keeps them all.")
n_chars = controls.number_slider("fm_n_chars", "Characters to generate", 1, 300, 80)
controls.show_url_notes()

if model_error:
    st.error(f"{model_error} Showing random weights instead.")
if model.trained:
    st.success(f"Trained weights: {code_span(model.name)}. {training_summary(model.meta, cfg.vocab_size)}")
else:
    st.info(
        "These weights are random: GPT-2's initialisation (normal, standard deviation 0.02), never trained. "
        f"Every next-character probability is close to 1/V = 1/{cfg.vocab_size} ≈ {1 / cfg.vocab_size:.3f} and "
        "every attention row close to an even average, so generated text is gibberish. That is the starting "
        "point training moves away from; once a trained character model is saved in core/weights, this page "
        "uses it and offers these random weights for comparison."
    )
st.caption(f"Model: V = {cfg.vocab_size} characters, D = {cfg.d_model}, H = {cfg.n_heads} heads (d_k = {cfg.d_k}), "
           f"{cfg.n_layers} layers, reads at most {cfg.max_len} characters, {cfg.pos_encoding} positions, "
           f"{cfg.norm}-norm, {cfg.activation}.")
random_twin = model_store.random_model(seed, like=model.name) if compare else None

st.subheader("The prompt, as the model reads it")
ids = tok.encode(prompt)
if len(ids) == 0:
    st.info("The prompt is empty: type some text in the sidebar to see the next-character probabilities, "
            "generation and attention maps. The sections on positions, parameters and cost below still work.")
else:
    if len(ids) > cfg.max_len:
        st.warning(f"The prompt has {len(ids)} characters; the model reads at most {cfg.max_len}, "
                   f"so it sees only the last {cfg.max_len}.")
        ids = ids[-cfg.max_len:]
    unknown = tok.unknown(prompt)
    if unknown:
        st.warning(f"{len(unknown)} character{'s' if len(unknown) > 1 else ''} of the prompt "
                   f"({' '.join(code_span(c) for c in unknown[:20])}) {'are' if len(unknown) > 1 else 'is'} "
                   f"not in the model's vocabulary; each is read as the unknown token {code_span(tok.UNKNOWN)} "
                   "(id 0), so the model cannot tell them apart.")
    st.markdown(f"The model reads {code_span(tok.decode(ids))}")
    st.caption(f"ids · shape ({len(ids)},) = (T,): {', '.join(str(i) for i in ids[:24])}"
               f"{', …' if len(ids) > 24 else ''}")
ids_key = tuple(int(i) for i in ids)

if ids_key:
    try:
        seen = read_prompt(model.source, ids_key)
    except ValueError as err:
        st.error(str(err))
        seen = None
    if seen is not None:
        st.subheader("Next character")
        k = top_k or None
        probs = probs_from_logits(seen["logits"], temperature, k)  # (V,)
        title = f"P(next | prompt), temperature {temperature:g}" + (f", top-{top_k}" if top_k else "")
        if random_twin is not None:
            left, right = st.columns(2)
            with left:
                bars(probs, tok, f"Trained · {title}")
            with right:
                rnd = probs_from_logits(read_prompt(random_twin.source, ids_key)["logits"], temperature, k)
                bars(rnd, tok, f"Random · {title}")
        else:
            bars(probs, tok, title)
        shown_mass = float(np.sort(probs)[::-1][:TOP_BARS].sum())
        st.caption(f"probabilities · shape ({len(probs)},) = (V,). The {min(TOP_BARS, cfg.vocab_size)} "
                   f"bars hold {shown_mass:.3f} of the total 1. Temperature divides the scores before the softmax "
                   "(0 puts everything on the top character); top-k sets all but the k largest to zero.")

        st.subheader("Generate")
        st.markdown(f"Sample {n_chars} characters one at a time, each from the distribution above "
                    f"(recomputed after every new character), with random seed {seed}.")
        settings = (model.source, ids_key, n_chars, temperature, top_k, seed, compare)
        if st.button("Generate", key="fm_generate", type="primary"):
            try:
                made = {"trained": generate_text(model.source, ids_key, n_chars, temperature, k, seed)}
                if random_twin is not None:
                    made["random"] = generate_text(random_twin.source, ids_key, n_chars, temperature, k, seed)
                st.session_state["fm_generated"] = {"settings": settings, "texts": made}
            except ValueError as err:
                st.error(str(err))
        result = st.session_state.get("fm_generated")
        if result:
            for which, text in result["texts"].items():
                if len(result["texts"]) > 1:
                    st.markdown(f"**{which.capitalize()} weights:**")
                st.code(text, language="text", wrap_lines=True)
            st.caption(f"{len(next(iter(result['texts'].values())))} characters after the prompt."
                       + ("" if result["settings"] == settings else
                          " Made with earlier settings: press Generate for the current ones."))
        else:
            st.caption("Press Generate. The same prompt, settings and seed always give the same text.")

        st.subheader("Every attention map, layer by layer")
        W = seen["weights"]
        L, H, T = W.shape[0], W.shape[1], W.shape[-1]
        drawn = min(T, MAX_DRAWN)
        scale = presenter.chart_scale()
        fit = int(180 * scale) // drawn  # panels about 180 px wide, so a layer's heads fit in one row
        cell_px = charts.cell_size(drawn, int(26 * scale), max_width=int(180 * scale)) if fit >= 8 else max(4, fit)
        columns = max(1, min(H, int(1000 * scale) // (cell_px * drawn + 70)))
        render.show(charts.grid_chart, attention_grid(model.source, ids_key), columns=columns, cell_px=cell_px,
                    title=f"{L} layers x {H} heads" + (" (one row per layer)" if columns == H else ""))
        shape_caption("weights", W, "(layers, H, T, T)")
        if drawn < T:
            st.caption(f"Showing the last {drawn} of {T} positions: the earlier keys hold the rest of each row.")
        st.caption("Causal: nothing above the diagonal, every row sums to 1. The last row of each map is what "
                   "decided the next-character bars above.")

st.subheader("Positions")
pe = positional_encoding(cfg.max_len, cfg.d_model, cfg.pos_encoding, model.params.get("wpe"))  # (max_len, D)
pe_title = "Sinusoidal positional encoding" if cfg.pos_encoding == "sinusoidal" else "Learned positions wpe"
render.show_heatmap(pe, [str(p) for p in range(cfg.max_len)], [f"d{j}" for j in range(cfg.d_model)], title=pe_title,
                    diverging=True, annotate=False, cell_px=12, x_title="dimension", y_title="position")
st.caption(f"PE · shape ({cfg.max_len}, {cfg.d_model}) = (max_len, D), added to the character embeddings. "
           + ("PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(p / 10000^(2i/D)): the left columns turn "
              "fast with position, the right ones slowly, so every position gets its own pattern."
              if cfg.pos_encoding == "sinusoidal" else "A table learned in training, one row per position."))

st.subheader("Parameters")
parts = param_count(cfg)
total = parts.pop("total")
left, right = st.columns([3, 1])
with left:
    table = pd.DataFrame({"part": list(parts), "parameters": list(parts.values())})
    table["share"] = table["parameters"] / total
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"parameters": st.column_config.NumberColumn(format="localized"),
                                "share": st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})
with right:
    st.metric("Total parameters", f"{total:,}")
    counted = count_params(model.params)
    st.caption(f"Counted from the arrays themselves: {counted:,}" + (" ✓" if counted == total else " (differs!)"))
st.caption(f"Attention is 4D² + 4D = {4 * cfg.d_model ** 2 + 4 * cfg.d_model:,} per layer whatever the number "
           "of heads; the feed-forward layer is about twice that; the embedding grows with the vocabulary.")

st.subheader("What attention costs at length T")
left, right = st.columns(2)
with left:
    T_cost = length_input()
with right:
    n_bytes = controls.choice("fm_bytes", "Bytes per number (2, 4 or 8)", [2, 4, 8], 2, container=right,
                              help="2 = float16 (or bfloat16), 4 = float32, 8 = float64.")
    dtype = DTYPE_OF_BYTES[n_bytes]
controls.show_url_notes()  # what the link asked of these two, said here beside them
mem = attention_memory(T_cost, cfg.n_heads, cfg.n_layers, dtype)
flops = attention_flops(T_cost, cfg.d_model, cfg.n_layers)
kv = kv_cache_bytes(T_cost, cfg.d_model, cfg.n_layers, dtype)
cols = st.columns(4)
cols[0].metric("One head's weights (T x T)", human_bytes(mem["per_head"]))
cols[1].metric(f"All {cfg.n_heads * cfg.n_layers} maps", human_bytes(mem["total"]))
cols[2].metric("KV cache (2 x T x D per layer)", human_bytes(kv))
cols[3].metric("Attention FLOPs (all layers)", f"{flops['total']:.3g}")
share = flops["scores_and_mix"] / flops["per_layer"]
st.caption(f"At T = {T_cost:,} in {dtype} with this model's shape (D = {cfg.d_model}, {cfg.n_heads} heads, "
           f"{cfg.n_layers} layers). Of each layer's {flops['per_layer']:.3g} FLOPs, {share:.1%} are the T x T "
           f"scores and the weighted sum (growing like T²D); the rest are the projections (growing like TD²).")
big = attention_memory(100_000, 1, 1, "float16")["per_head"]
st.markdown(f"The weights grow with T², the KV cache only with T. At 100,000 tokens in float16, one head's "
            f"weight matrix alone is 100,000 x 100,000 x 2 bytes = **{human_bytes(big)}**, for one head of one "
            "layer. This is why long-context models never store it whole: FlashAttention computes the same "
            "result in tiles, keeping only a running softmax per row.")
lengths = 2 ** np.arange(4, 21)
curves = {
    "attention maps": [
        attention_memory(int(t), cfg.n_heads, cfg.n_layers, dtype)["total"] for t in lengths],
    "KV cache": [kv_cache_bytes(int(t), cfg.d_model, cfg.n_layers, dtype) for t in lengths],
    "parameters": [total * DTYPE_BYTES[dtype]] * len(lengths),
}
render.show(charts.line_chart, charts.line_frame(lengths, curves), width="stretch", x_title="sequence length T",
            y_title="bytes", title=f"Memory against length ({dtype})", log_x=True, log_y=True)
st.caption(f"attention maps: all {cfg.n_heads * cfg.n_layers} T x T weight matrices; KV cache: the keys and values "
           "of every position, kept while generating; parameters: the model's own weights. On these log-log axes "
           "a line's slope is its power of T: 2 for the maps, 1 for the cache, 0 for the weights.")

notice([
    "Temperature 0 puts all probability on one character; high temperatures flatten the bars towards 1/V.",
    "Top-k leaves exactly k bars above zero and renormalises them: it cuts off the unlikely tail.",
    "The same seed, prompt and settings always generate the same text: sampling is random, but seeded.",
    "Attention maps in different layers and heads differ: each head learned (or, with random weights, "
    "happens) to look somewhere else. Random weights give almost even rows; trained ones pick out characters.",
    "Most parameters sit in the feed-forward layers and the embedding, not in attention.",
    "The attention weights grow with the square of the length: double T and they take four times the memory.",
])
if not presenter.presenting():
    show_code(forward, embed, block, attention_layer, next_token_probs, probs_from_logits, generate,
              sinusoidal_encoding, param_count, attention_memory, attention_flops, kv_cache_bytes)
page.footer(__file__)

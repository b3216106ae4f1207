"""Lesson: attention one block of keys at a time with the online softmax (FlashAttention's idea), ending
in the same output as the full softmax, and the memory both ways at any length."""

import streamlit as st

from core.attention import causal_mask, scaled_dot_product_attention
from core.costs import FLOAT_OF_BYTES, attention_memory, human_bytes
from core.demos.heads import single_head
from lessons import COURSE
from lessons.tiles import cached, maths
from lessons.tiles.questions import questions
from ui.drawing import heatmap
from ui.drawing.charts import unique_labels
from ui.frame import page, prose
from ui.sections import views
from ui.sections.views import Heatmap, heatmaps, square, token_rows
from ui.state import controls, phone
from ui.text import counted

MAX_T = 32  # seq_len's upper end: the block and step sliders keep one fixed range so they survive text edits
MAX_LENGTH = 1_000_000
MEMORY_BLOCKS = (16, 32, 64, 128, 256)
TILE_ROOM_PX = 360  # a tile's (T, b) scores, drawn with T's cells (across=T) beside the running state

compute = cached.tiles_view


def steps_section(a: dict, tokens: list[str]) -> None:
    """The tiles, step by step: a live part of its own, its slider above it, so a step through the tiles reruns
    these sections alone."""
    asked = controls.number_slider("tl_step", "Blocks folded in so far", 1, MAX_T, 2, container=st,
                                   width=controls.IN_PAGE_PX,
                                   help="Step through the tiles; past the last block, the last is shown.")
    controls.show_url_notes()
    block, n = a["tiled"]["block_size"], len(a["tiled"]["steps"])
    step = min(asked, n)
    if step < asked:
        st.caption(f"A block size of {block} gives {n} block{'s' * (n > 1)}; step {asked} shows the last.")
    tile_section(a, tokens, step)
    running_section(a, tokens, step)
    output_section(a, tokens, step)


def tile_section(a: dict, tokens: list[str], step: int) -> None:
    s, n, T = a["tiled"]["steps"][step - 1], len(a["tiled"]["steps"]), len(tokens)
    start, stop = s["keys"]
    labels = unique_labels(tokens)
    prose.section(f"Step {step} of {n}: keys {start} to {stop - 1}", "tiles", "tile")
    heatmaps(square(a["held_maps"][step - 1], tokens, "scores held at this step", "tiles_held", "held",
                    "(T, T): grey = not held now, or masked", diverging=True, annotate=False),
             Heatmap(s["scores"], labels, labels[start:stop], "the tile Q K_blockᵀ / √d_k", "tiles_tile", "tile",
                     "(T, b), −∞ where masked", dict(diverging=True, across=T, max_width=TILE_ROOM_PX)))
    st.caption(prose.text("tiles", "held", held=s["held"], queries=counted(T, "query", "queries"),
                          keys=counted(stop - start, "key"), T=T, b=stop - start, block=a["tiled"]["block_size"],
                          tile=T * a["tiled"]["block_size"], full=T * T))


def running_section(a: dict, tokens: list[str], step: int) -> None:
    prose.section("The running maximum m and sum l", "tiles", "running")
    blocks = [f"block {i + 1}" for i in range(step)]
    cell = dict(x_title="block folded in", y_title="query", across=len(tokens), max_width=heatmap.NARROW_ROOM_PX)
    heatmaps(Heatmap(a["m"][:, :step], tokens, blocks, "running max m", "tiles_m", "m", "(T, blocks so far)",
                     dict(diverging=True, **cell)),
             Heatmap(a["rescale"][:, :step], tokens, blocks, "rescale exp(m_old − m_new)", "tiles_rescale",
                     "rescale", "(T, blocks so far)", dict(domain=views.PROBABILITY, **cell)),
             Heatmap(a["l"][:, :step], tokens, blocks, "running sum l", "tiles_l", "l", "(T, blocks so far)", cell))
    if rescale := prose.text("tiles", "rescale"):  # Technical: the factor's formula
        st.caption(rescale)


def output_section(a: dict, tokens: list[str], step: int) -> None:
    st.header("The output so far")
    s, n = a["tiled"]["steps"][step - 1], len(a["tiled"]["steps"])
    # one quantity two ways, compared cell by cell (the lesson's point is that they end equal): one colour scale.
    # The full way's name holds no formula: one name at both levels, true with the mask and without
    views.panels("Outputs",
                 token_rows(s["out"], tokens, "tiled: acc / l so far", "tiles_out", "out"),
                 token_rows(a["full_out"], tokens, "full: every key at once", "tiles_full", "full out"), shared=True)
    if step == n:
        st.success(prose.text("tiles", "same", diff=f"{a['diffs'][-1]:.1e}",
                                   blocks=f"all {n} blocks" if n > 1 else "its one block"))
    else:
        st.info(prose.text("tiles", "not_yet", diff=f"{a['diffs'][step - 1]:.3g}",
                           left=counted(n - step, "more block")))


def memory_section(d_k: int) -> None:
    st.header("Memory: every score at once, or one tile")
    left, middle, right = views.in_a_row(3)
    T = controls.number_box("tl_length", "Sequence length T", 1, MAX_LENGTH, 4096, step=1024, container=left,
                            help=f"Any whole number from 1 to {MAX_LENGTH:,}.")
    asked = controls.choice("tl_mem_block", "Block size b", MEMORY_BLOCKS, 128, container=middle,
                            help="FlashAttention's tiles are typically 64 or 128 keys wide.")
    n_bytes = controls.choice("tl_bytes", "Bytes per number (2, 4 or 8)", [2, 4, 8], 4, container=right,
                              help="2 = float16, 4 = float32, 8 = float64.")
    controls.show_url_notes()
    b, dtype = min(asked, T), FLOAT_OF_BYTES[n_bytes]
    mem = maths.attention_memory_both_ways(T, b, d_k, dtype)
    cols = views.in_a_row(5)
    cols[0].metric(f"Full scores ({T:,} x {T:,})", human_bytes(mem["full_scores"]))
    cols[1].metric(f"One tile ({T:,} x {b})", human_bytes(mem["tile_scores"]))
    cols[2].metric("Tile + m, l + accumulator", human_bytes(mem["tiled_total"]))
    cols[3].metric("Full / tiled", f"{mem['ratio']:,.1f} x")
    cols[4].metric(f"FlashAttention block ({b} x {b})", human_bytes(mem["block_scores"]),
                   help="b queries against b keys: what FlashAttention holds on chip at a time, whatever T is.")
    if b < asked:
        st.caption(f"A block of {asked} is longer than T = {T}: one block of {b} is used.")
    st.caption(prose.text("tiles", "memory", T=f"{T:,}", b=b, d_k=d_k, dtype=dtype,
                          stats=human_bytes(mem["running_stats"]), acc=human_bytes(mem["accumulator"])))
    st.caption(prose.text("tiles", "flash", T=f"{T:,}", tile=human_bytes(mem["tile_scores"]), bb=f"{b * b:,}",
                          block=human_bytes(mem["block_scores"]), block_total=human_bytes(mem["block_total"]),
                          d_k=d_k))


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    sentence, max_tokens, D, d_k, seed = views.sentence_settings(seq_len_hi=MAX_T)
    st.sidebar.markdown("**Tiles**")
    asked_block = controls.number_slider("tl_block", "Block size (keys per tile)", 1, MAX_T, 2,
                                         help="How many keys each tile holds. Past the sentence's length, all of them.")
    causal = controls.toggle("tl_causal", "Causal mask", True, help="Query i may only look at keys 0..i.")
    phone.in_reach("tl_block")  # on a phone, the block size stays beside the tiles it cuts
    controls.show_url_notes()

    tokens = views.tokens_line(sentence, max_tokens)
    a = compute(tokens, D, d_k, seed, asked_block, causal)
    if a["tiled"]["block_size"] < asked_block:
        st.caption(f"A block of {asked_block} keys is longer than the sentence: one block of all "
                   f"{a['tiled']['block_size']} is used.")
    # the sections with controls of their own are live parts of their own: a move of one reruns that alone
    page.live(steps_section, a, tokens)
    page.live(memory_section, d_k)


page.opening(COURSE, "tiles")

page.live(controls_and_sections)

page.closing(COURSE, "tiles", questions, code=(
    maths.tiles_view, maths.tiled_attention, maths.online_softmax_step, maths.normalise, single_head,
    scaled_dot_product_attention, causal_mask, maths.attention_memory_both_ways, attention_memory))

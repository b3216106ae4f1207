"""Lesson: the bigram model as a model: its counts, its rows as probabilities, text sampled from it, and its
loss on held-out text against the trained character transformer's."""

import numpy as np
import streamlit as st

from core import bigram
from core.tokenize import CharTokenizer
from lessons import COURSE
from lessons.bigram import cached, maths
from lessons.bigram import views as bv
from lessons.bigram.questions import questions
from ui.compute.model_store import Model
from ui.drawing import heatmap
from ui.frame import page, prose
from ui.sections import views
from ui.sections.model_views import shown
from ui.sections.views import Heatmap, beside
from ui.state import controls, phone
from ui.text import code_span, counted


def text_section(source: str, own: str, tok: CharTokenizer, fit: np.ndarray, held: np.ndarray) -> None:
    prose.section("The text", "bigram", "pydoc" if source == cached.SOURCES[0] else "own", N=len(fit) + len(held),
                  fit=len(fit), held=len(held), share=len(held) / (len(fit) + len(held)), V=tok.vocab_size)
    unknown = tok.unknown(own) if source == cached.SOURCES[1] else []
    if unknown:
        chars = " ".join(code_span(shown(c)) for c in unknown[:20])  # a joiner or selector named, not blank
        st.warning(prose.text("bigram", "unknown", characters=counted(len(unknown), "character"), chars=chars,
                              unk=code_span(tok.UNKNOWN)))


def counts_section(v: dict, labels: list[str], fit: np.ndarray, tok: CharTokenizer, documentation: bool) -> None:
    """The counts of the drawn characters, coloured by their square root: one pair (a space after a space, in
    indented documentation) outnumbers the median cell many times over, and a linear scale showed one colour.
    On the documentation, where that pair is the largest cell, where its pairs come from."""
    st.header("Counts: which character follows which")
    counts = v["counts_top"]  # (n, n)
    views.heatmaps(Heatmap(counts, labels, labels, "counts[a, b]: b right after a (colour: √count)", "bg_counts",
                          "counts", f"(n, n) of the full (V, V) = {v['counts'].shape}", dict(
                              x_title="next character b", y_title="character a", annotate=False,
                              cell_px=heatmap.LARGE_CELL_PX, colour_scale="sqrt")))
    a, b = np.unravel_index(np.argmax(counts), counts.shape)
    median = float(np.median(counts[counts > 0])) if counts.any() else 1.0
    st.caption(prose.text("bigram", "counts", pairs=f"{len(fit) - 1:,}", total=f"{int(v['counts'].sum()):,}",
                          n=len(labels), share=v["covered"], top_pair=code_span(f"{labels[a]} → {labels[b]}"),
                          top=f"{int(counts[a, b]):,}", median=f"{median:,.0f}",
                          ratio=counts[a, b] / median))
    if documentation and a == b and tok.itos[int(v["top"][a])] == " ":
        s = maths.space_pairs(fit, tok.stoi[" "], tok.stoi.get("\n", -1), tuple(tok.stoi[c] for c in ".!?"
                                                                              if c in tok.stoi))
        if said := prose.text("bigram", "spaces", pairs=f"{s['pairs']:,}", indent=f"{s['indent']:,}",
                              inside=f"{s['inside']:,}", sentence=f"{s['sentence']:,}",
                              indent_share=s["indent"] / s["pairs"], inside_share=s["inside"] / s["pairs"]):
            st.caption(said)


def probs_section(v: dict, labels: list[str], alpha: float) -> None:
    prose.section("Rows as probabilities", "bigram", "probs", alpha=alpha)
    with beside(Heatmap(v["probs_top"], labels, [*labels, "other"], "P(next = b | a)", "bg_probs", "probs",
                        "(n, n + 1): the last column holds the other characters", dict(
                            x_title="next character b", y_title="character a", cell_px=heatmap.LARGE_CELL_PX)), (3, 2)):
        sums = np.column_stack([v["probs_top"].sum(axis=1), v["row_sums"][v["top"]]])  # (n, 2)
        views.number_table(views.row_table(labels, sums, "a", ["drawn row", "all V"]), "%.9f")
        st.caption(prose.text("bigram", "row_sums", V=len(v["row_sums"]),
                              err=f"{np.abs(v['row_sums'] - 1).max():.1e}"))


def sample_section(source: str, own: str, chars: str, alpha: float) -> None:
    """Text sampled from the model: a live part of its own, its length and seed beside it (they reach nothing
    else)."""
    title = st.container()  # the heading's text names the length and seed: written once they are read
    length_place, seed_place = views.in_a_row(2)
    length = controls.number_slider("bg_length", "Characters to sample", 10, 500, 200, container=length_place)
    seed = controls.seed(container=seed_place, help="Fixes the random draws of the sample, so the same seed always "
                                                    "writes the same text.")
    controls.show_url_notes()
    text = cached.sample(source, own, chars, alpha, length, seed)
    with title:
        prose.section("Text sampled from the bigram model", "bigram", "sample", start=code_span(shown(text[0])),
                      n=length, seed=seed)
    st.code(text, language="text", wrap_lines=True)


def loss_section(v: dict, model: Model | None, loss: float | None) -> None:
    st.header("Loss on held-out text")
    cols = views.in_a_row(3)
    cols[0].metric("Bigram model", f"{v['loss']:.3f} nats" if np.isfinite(v["loss"]) else "∞")
    cols[1].metric("Transformer", f"{loss:.3f} nats" if loss is not None else "not available")
    cols[2].metric(f"Uniform guess over {len(v['row_sums'])} characters", f"{v['uniform']:.3f} nats")
    name = code_span(model.name) if model else "(none on this server)"
    prose.show("bigram", "loss", pairs=f"{v['pairs']:,}", name=name)
    if not np.isfinite(v["loss"]):
        st.warning(prose.text("bigram", "infinite"))
    if loss is None:
        st.info(prose.text("bigram", "no_model"))
    elif not np.isfinite(v["loss"]):
        return  # an infinite loss is explained above; no gap to speak of
    elif loss < v["loss"]:
        st.success(prose.text("bigram", "lower", gap=v["loss"] - loss, L=model.cfg.max_len))
    else:
        st.info(prose.text("bigram", "higher", gap=loss - v["loss"]))


def controls_and_sections() -> None:
    """The page's controls and the sections they drive: a move of a control reruns this alone."""
    source = controls.option("bg_source", "Text", cached.SOURCES, help="The documentation the shipped model was "
                             "trained on, or a text you type.")
    own = controls.text("bg_text", "Your own text", bv.OWN_TEXT, max_chars=bv.MAX_OWN_CHARS,
                        help="Used when 'Your own text' is chosen. Characters outside the model's vocabulary read "
                             "as one.")
    top_n = controls.number_slider("bg_top", "Characters drawn (most frequent)", 2, 40, 12)
    alpha = controls.number_slider("bg_alpha", "Smoothing alpha", 0.0, 2.0, 1.0, step=0.05,
                                   help="Added to every count before dividing: a pair never seen keeps a small chance.")
    phone.in_reach("bg_alpha")  # on a phone, smoothing stays beside the map it flattens
    controls.show_url_notes()

    model = bv.shipped_model()
    source, tok = bv.choose_text(source, own, model)
    fit, held = cached.split_text(source, own, "".join(tok.itos[1:]))
    text_section(source, own, tok, fit, held)
    # the sections with controls of their own are live parts of their own: a move of one reruns that alone
    page.live(bv.pairs_section, fit, tok, model)
    chars = "".join(tok.itos[1:])
    v = cached.view(source, own, chars, alpha, top_n)
    labels = [shown(tok.itos[i]) for i in v["top"]]
    counts_section(v, labels, fit, tok, source == cached.SOURCES[0])
    probs_section(v, labels, alpha)
    page.live(sample_section, source, own, chars, alpha)
    loss_section(v, model, cached.transformer_loss(model.source, source, own) if model else None)


page.opening(COURSE, "bigram")

page.live(controls_and_sections)

page.closing(COURSE, "bigram", questions, code=(
    maths.context_target_pairs, maths.same_last_other_target, bigram.bigram_counts, bigram.bigram_probs,
    maths.bigram_sample, maths.bigram_loss, maths.bigram_view,
    maths.most_frequent, maths.held_out_split, maths.model_loss))

"""Attention Lab: the entry point. Page config, navigation and the home page."""

from __future__ import annotations

import streamlit as st

from lessons import COURSE
from lessons import glossary as glossary_page
from tools.process import keep_freed_memory, one_blas_thread
from ui.compute import turns, warm
from ui.drawing import export
from ui.frame import exercises, glossary
from ui.state import controls

# The pipeline the lessons walk through, one box per step: HTML boxes that wrap onto a second row in the
# page's own type size (a graphviz picture shrank its text to ~8 px to fit the page's width). A numbered list,
# so a screen reader reads the steps in order (the arrows between them are hidden from it). Constant text.
# Each arrow stands before the step it leads to, in the same item: a row then starts with an arrow into its first
# box (the flow coming on from the row above) and never ends with one pointing at nothing.
# Pre-norm, as every model here: layer norm before attention and before the feed-forward layer, each sublayer's
# output added to the residual stream.
PIPELINE_HTML = """<style>
.pipeline { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem .4rem; margin: .5rem 0 1rem;
            list-style: none; padding: 0; }
.pipeline li { display: flex; align-items: center; gap: .4rem; margin: 0; padding: 0; }
.pipeline .step { display: block; background: #eef1f7; color: #111111; border: 2px solid #3b528b; border-radius: .6rem;
                  padding: .45rem .8rem; font-size: 1.15rem; line-height: 1.3; text-align: center; }
.pipeline .arrow { color: #5b7bd5; font-size: 1.6rem; font-weight: bold; }
/* captions at 4.5:1 or more in both themes: the same rule as ui.state.presenter.BASE_CSS on the lessons */
[data-testid="stCaptionContainer"] { color: inherit; opacity: 1; }
[data-testid="stCaptionContainer"] p { color: color-mix(in srgb, currentColor 85%, transparent); }
[data-testid="stCaptionContainer"] code { color: inherit; }
</style>
<ol class="pipeline" aria-label="A transformer, step by step">
<li><span class="step">token embeddings X<br>+ positions</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">layer norm</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">Q, K, V<br>= X W</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">scores<br>Q Kᵀ</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">÷ √d_k</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">causal<br>mask</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">softmax</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">weighted sum<br>of V</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">heads →<br>concat → W_O</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">+ residual</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">layer norm → FFN<br>→ + residual</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">more blocks,<br>final layer norm</span></li>
<li><span class="arrow" aria-hidden="true">→</span><span class="step">logits → next token</span></li></ol>"""


def home() -> None:
    st.title("Attention Lab")
    st.markdown(
        "Transformer attention, built from first principles and drawn one matrix at a time. "
        "Every number on these pages comes from a small NumPy library you can read end to end, computed as the "
        "page draws (some figures about a shipped model, such as its losses while it trained, were measured then "
        "and saved with it); "
        "move a slider and watch every matrix downstream change. Every view is in its link: copy the "
        "address bar and a classmate sees exactly what you see."
    )
    st.html(PIPELINE_HTML)
    st.markdown("## The path through the lessons")
    for number, lesson in enumerate(COURSE, start=1):
        cols = st.columns([3, 4])
        cols[0].page_link(lesson.path, label=f"{number}. {lesson.title}",
                          icon=lesson.icon)
        cols[1].markdown(f"*{lesson.step}*")
    st.caption("One block, pre-norm as every model here: layer norm before attention and before the feed-forward "
               "layer, each adding its result to the residual stream. The attention equation the first lessons "
               "unpack: Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V.")
    solved, attempted = exercises.total_progress()
    if attempted:
        st.success(f"Check-yourself progress this session: {solved} solved of {attempted} tried.")
    st.markdown(
        "**For teachers:** every page has a *Share this view* button in the sidebar (a link that reproduces the "
        "exact view, or the settings as a file), and a *Presenter mode* switch for large type on a projector; "
        "a link with `present=true` opens with the sidebar folded away."
    )


SHOWN_PAGE = "_shown_page"  # the url path of the page this session's last whole run drew
CLASS_PAGE, CLASS_URL_PATH = "classroom/page.py", "class"  # the class mode: a teacher asks, the room answers

FOLDED = "_sidebar_folded"  # decided by a session's first run, and kept


def folded_sidebar() -> bool:
    """A link with present=true opens with the sidebar folded away, ready for the projector. The session's first
    run decides, and every later run says the same: the browser folds or unfolds the sidebar when this setting
    changes, so switching presenter mode on later leaves the sidebar (and its Share button) where it is."""
    if FOLDED not in st.session_state:
        st.session_state[FOLDED] = str(st.query_params.get("present", "")).strip().lower() in controls.TRUE_WORDS
    return st.session_state[FOLDED]


def main() -> None:
    st.set_page_config(page_title="Attention Lab", page_icon="🧠", layout="wide",
                       initial_sidebar_state="collapsed" if folded_sidebar() else "auto")
    one_blas_thread()
    keep_freed_memory()  # a training step frees and reallocates MB-sized arrays: keep them in the heap
    controls.start_run()
    export.start_run()
    pages = [st.Page(home, title="Home", icon=":material/home:", default=True)] + [
        st.Page(lesson.path, title=lesson.title, url_path=lesson.url_path, icon=lesson.icon) for lesson in COURSE
    ] + [st.Page(glossary_page.PAGE, title="Glossary", url_path=glossary.URL_PATH, icon=":material/menu_book:"),
         st.Page(CLASS_PAGE, title="Class", url_path=CLASS_URL_PATH, icon=":material/groups:")]
    # expanded: the whole course in the sidebar (past twelve pages Streamlit would hide all but ten behind
    # a "View more" button, and the last lessons with them)
    page = st.navigation(pages, expanded=True)
    # the page's run takes its turn with the class's other runs (ui/compute/turns.py); a page this session has not
    # shown yet (its first view, another lesson opened) goes before the moves waiting
    with turns.turn(visit=st.session_state.get(SHOWN_PAGE) != page.url_path):
        page.run()
    st.session_state[SHOWN_PAGE] = page.url_path  # reached only when the run was not cut short by a newer one


if __name__ == "__main__":  # a visit: Streamlit runs this file as the script of every session's every run
    main()
else:
    # `streamlit run streamlit_app.py` imports this file once when the server starts, finds this st.App and
    # serves it: its lifespan warms every page before the server answers (ui/compute/warm.py), so the first
    # student after a start finds the imports, the shipped weights and the chart designs ready. GET /api/ready
    # says ok once that warm-up has ended (the Kubernetes readiness probe asks it).
    app = st.App(__file__, lifespan=warm.at_start(["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH,
                                                   CLASS_URL_PATH]),
                 routes=[warm.ready_route()])

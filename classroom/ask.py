"""The teacher's "Ask the room" panel: a check-yourself question of any lesson, a prediction on a live view built
from the lesson's own settings (answered by the core), or the quiz before or after the lesson.

A prediction is its lesson's (lessons/<name>/questions.py), and starts from the settings the teacher last used on
that lesson in this browser tab (the sentence, d_model, d_k, the seed, the query row, the prompt: read by the lesson's
own `settings`, from the keys its page binds), else the lesson's defaults, and can be changed here. What
the core cannot make a fair question of (one token, an empty prompt) is refused with its reason.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from classroom import asked, faults
from classroom.questions import ClassQuestion, bank
from classroom.quiz import quiz
from classroom.reveal import short
from core.tokenize import word_tokens
from lessons import COURSE
from lessons.full_model import questions as full_model
from lessons.masking import questions as masking
from lessons.qkv import questions as qkv
from lessons.scaling import questions as scaling
from store import classes
from store.engine import Engine
from ui.drawing.charts import unique_labels
from ui.frame.page import technical
from ui.state import controls
from ui.text import counted, escape_md

SOURCES = ("A lesson's check-yourself question", "Predict: the key a query attends to most",
           "Predict: the next character", "Predict: the largest weight as d_k grows", "The quiz before the lesson",
           "The quiz after the lesson")


def _setting(settings: dict, name: str, default):
    """The value a lesson's control had in this tab (from the lesson's settings), else its default."""
    value = settings.get(name)
    return default if value is None else value


def _from_bank() -> tuple[ClassQuestion, ...] | None:
    titles = {lesson.url_path: lesson.title for lesson in COURSE}
    questions = bank()
    lessons = list(dict.fromkeys(q.source.split("/")[0] for q in questions))
    lesson = st.selectbox("Lesson", lessons, format_func=lambda u: titles.get(u, u), key="ask_lesson")
    mine = [q for q in questions if q.source.split("/")[0] == lesson]
    if not technical():  # the Simple level leaves out what only its Technical sections teach
        hidden = sum(q.technical for q in mine)
        mine = [q for q in mine if not q.technical]
        if hidden:
            st.caption(f"{counted(hidden, 'question')} of this lesson's Technical sections left out at the Simple "
                       "level (the level switch in the sidebar).")
    if not mine:
        return None
    picked = st.selectbox("Question", range(len(mine)), key="ask_question",
                          format_func=lambda i: ("(Technical) " if mine[i].technical else "")
                          + short(mine[i].prompt, 110))
    return (mine[picked],) if mine else None


def _sentence_settings(prefix: str, now: dict) -> tuple[str, int, int, int]:
    """The sentence, seq_len, d_model and seed of a prediction on one head (as the lesson's sidebar set them)."""
    text = st.text_area("Sentence", _setting(now, "text", controls.DEFAULT_TEXT), max_chars=controls.MAX_TEXT_CHARS,
                        key=f"{prefix}_text", height=68)
    left, middle, right = st.columns(3)
    seq_len = left.number_input("seq_len", 1, 32, int(_setting(now, "seq_len", 16)), key=f"{prefix}_seq_len")
    D = middle.number_input("d_model", 1, 128, int(_setting(now, "d_model", 16)), key=f"{prefix}_d_model")
    seed = right.number_input("seed", 0, 999, int(_setting(now, "seed", 0)), key=f"{prefix}_seed")
    return text, int(seq_len), int(D), int(seed)


def _query(text: str, seq_len: int, prefix: str, now: dict) -> int:
    labels = unique_labels(word_tokens(text, seq_len)) or ["(no tokens)"]
    remembered = _setting(now, "query", labels[-1])
    picked = st.selectbox("Query row", labels, index=labels.index(remembered) if remembered in labels else
                          len(labels) - 1, key=f"{prefix}_query")
    return labels.index(picked)


def _attend_most() -> tuple[ClassQuestion, ...]:
    now = qkv.settings(st.session_state)
    text, seq_len, D, seed = _sentence_settings("ask_attend", now)
    d_k = st.number_input("d_k", 1, 512, int(_setting(now, "d_k", 8)), key="ask_attend_d_k")
    masked = st.toggle("Causal mask (as on Masking)", key="ask_attend_masked")
    query = _query(text, seq_len, "ask_attend", now)
    return ((masking if masked else qkv).attend_most(text, D, int(d_k), seed, seq_len, query),)


def _next_character() -> tuple[ClassQuestion, ...]:
    now = full_model.settings(st.session_state)
    prompt = st.text_input("Prompt", _setting(now, "prompt", "The attention "), max_chars=full_model.MAX_PROMPT_CHARS,
                           key="ask_prompt")
    return (full_model.next_character(prompt, model_name=now["model"]),)


def _rise_or_fall() -> tuple[ClassQuestion, ...]:
    now = scaling.settings(st.session_state)
    text, seq_len, D, seed = _sentence_settings("ask_rise", now)
    query = _query(text, seq_len, "ask_rise", now)
    return (scaling.rise_or_fall(text, D, seed, seq_len, query=query),)


BUILDERS: dict[str, Callable[[], tuple[ClassQuestion, ...] | None]] = {
    SOURCES[0]: _from_bank, SOURCES[1]: _attend_most, SOURCES[2]: _next_character, SOURCES[3]: _rise_or_fall,
    SOURCES[4]: lambda: tuple(quiz()), SOURCES[5]: lambda: tuple(quiz())}
ROUND = {SOURCES[4]: "pre", SOURCES[5]: "post"}


def preview(q: ClassQuestion) -> None:
    """A question as the room will read it: its prompt and its options."""
    st.markdown(q.prompt)
    for i, option in enumerate(q.options):
        st.markdown(f"{chr(65 + i)}. {option}" if q.kind == "choice" else f"· {option}")


def panel(engine: Engine, code: str, key: str) -> None:
    """Choose a question, see it as the room will, and put it to the room."""
    source = st.radio("Ask", SOURCES, key="ask_source")
    try:
        chosen = BUILDERS[source]()
    except ValueError as error:  # a setting the core cannot make a fair question of: its own sentence says why
        st.warning(escape_md(str(error)))
        return
    if not chosen:
        return
    if len(chosen) == 1:
        with st.container(border=True):
            preview(chosen[0])
    else:
        st.caption(f"{len(chosen)} questions, open together: each student answers them on their phone.")
        with st.expander(f"See the {len(chosen)} questions"):
            for n, q in enumerate(chosen, 1):
                st.markdown(f"**{n}.**")
                preview(q)
    if st.button("Put to the room", key="ask_put"):
        try:  # a quiz's items all at once, or none: a failure leaves no half quiz on the phones
            result = asked.put_all(engine, code, key, list(chosen), ROUND.get(source))
        except classes.StoreError as error:
            st.error(faults.failed(error))
            return
        if isinstance(result, classes.Refusal):
            st.error(result.message)
            return
        st.rerun(scope="app")

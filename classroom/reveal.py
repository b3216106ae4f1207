"""What the projector shows on Reveal: the room's answers beside the answer the core computed, its explanation,
and the view the question was about (the real attention row, the model's next characters).

The room's answers are counted by classroom.questions.summary; nothing here knows who gave which. Each chart is
one of the lessons' own (ui.drawing), so it reads the same on a projector (presenter mode scales it) and in the
dark theme, and carries a text for screen readers.
"""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from classroom.questions import ClassQuestion, answer_text, summary
from ui.drawing import heatmap, plots, render
from ui.drawing.chart_data import ChartData, numbers
from ui.frame.class_question import number_text
from ui.text import counted, escape_md

RIGHT, OTHER = "the right answer", "other answers"
GROUPS = ((RIGHT, "#1b7837"), (OTHER, "#3b528b"))  # green and the app's blue: told apart by name, not colour alone
NUMBER_GROUPS = (("the bar holding the answer", "#1b7837"), ("other bars", "#3b528b"))
WHAT_ONE_IS = {"choice": "an option", "key": "a key", "number": "a number", "char": "one character"}
MAX_LABEL = 48  # characters of an option shown under its bar


def short(text: str, limit: int = MAX_LABEL) -> str:
    """Markdown we wrote (an option, a prompt) as plain text: one line, at most `limit` characters, its emphasis
    and code marks dropped and its escapes undone."""
    plain = re.sub(r"(?<!\\)[*`]", "", str(text))  # emphasis and code marks, not an escaped \* or \`
    plain = " ".join(re.sub(r"\\(.)", r"\1", plain).split())
    return plain if len(plain) <= limit else plain[: limit - 1] + "…"


def _bars(labels: list[str], values: list[float], right: list[bool] | None, title: str, x_title: str,
          number_format: str = "d", groups=GROUPS, domain: tuple[float, float] | None = None) -> None:
    """Horizontal bars; `right` colours each bar by the groups (None: one colour, no legend)."""
    columns = {"label": labels, "value": numbers(values), "order": list(range(len(labels)))}
    if right is not None:
        (yes, _), (no, _) = groups
        columns["group"] = [yes if r else no for r in right]
    render.show(plots.bar_chart, ChartData(columns), width="stretch", title=title, x_title=x_title, y_title="",
                groups=groups if right is not None else (), number_format=number_format, domain=domain)


def room(q: ClassQuestion, values: list[str]) -> dict:
    """The room's answers drawn for q's kind; returns the summary it drew (answered, right, counts...)."""
    s = summary(q, values)
    answered = s["answered"]
    heading = f"The room: {answered} answer{'s' * (answered != 1)}, {s['right']} right"
    if q.kind == "key" and "tokens" in q.view:  # a heat row, above the real row and keyed the same way
        shares = np.array(s["counts"], dtype=float) / max(answered, 1)
        heatmap.show(shares[None, :], ["the room"], q.view["tokens"], title=heading, x_title="key",
                            y_title="", domain=(0.0, 1.0), annotate=True, max_width=700)
        st.caption("Each cell: the share of the answers that picked that key.")
    elif q.kind in ("choice", "key"):
        right = [i == q.answer or i in q.also_right for i in range(len(q.options))]
        labels = [f"{chr(65 + i)}. {short(o)}" if q.kind == "choice" else short(o) for i, o in enumerate(q.options)]
        _bars(labels, s["counts"], right, heading, "students")
    elif q.kind == "char":
        shown = s["counts"][:8]
        _bars([_char(c) for c, _ in shown], [n for _, n in shown], [c == q.answer for c, _ in shown], heading,
              "students")
    else:  # numbers: a histogram of what the room typed; the bar holding the answer may hold near misses too
        labels, right = bins(s["edges"], q.answer)
        _bars(labels, s["counts"], right, heading, "students", groups=NUMBER_GROUPS)
        holding = next((n for n, r in zip(s["counts"], right) if r), 0)
        near = (f" The green bar holds {holding}: it can hold near misses too." if holding > s["right"] else "")
        within = "exactly" if q.tolerance == 0 else f"within {tolerance_text(q)} of"
        st.caption(f"Counted right: {within} {answer_text(q)}.{near}")
        apart = [f"{s['below']} below" if s["below"] else "", f"{s['above']} above" if s["above"] else ""]
        if any(apart):
            st.caption(f"Far from the rest, not in a bar: {' and '.join(a for a in apart if a)}.")
    if s.get("unreadable"):
        st.caption(f"{counted(s['unreadable'], 'answer')} could not be read as {WHAT_ONE_IS[q.kind]}.")
    return s


def bins(edges: list[float], answer: float) -> tuple[list[str], list[bool]]:
    """The histogram's bar labels and which bar holds the answer. A bar holds its left edge and not its right
    one, as the counting does (classroom.histogram), but the last holds both: "0.58 to under 0.6", then "0.6 to
    under 0.62", so a typed 0.6 is in one bar by its label too, and so is an answer on an edge."""
    last = len(edges) - 2
    labels = [f"{number_text(edges[i])} to {'' if i == last else 'under '}{number_text(edges[i + 1])}"
              for i in range(last + 1)]
    right = [edges[i] <= answer < edges[i + 1] or (i == last and answer == edges[i + 1]) for i in range(last + 1)]
    return labels, right


def tolerance_text(q: ClassQuestion) -> str:
    """How far from a number question's answer a typed number still counts as right (the exercises' rule)."""
    return f"{q.tolerance * max(1.0, abs(q.answer)):,.3g}"


def _char(c: str) -> str:
    return {" ": "␣ (space)", "\n": "⏎"}.get(c, c)


def computed(q: ClassQuestion) -> None:
    """The answer the core computed, its explanation and the view it is about."""
    st.success(f"**Answer:** {answer_text(q)}", icon=":material/check_circle:")
    st.markdown(q.explanation)
    view = q.view
    if q.kind == "key" and "weights" in view:
        tokens = view["tokens"]
        heatmap.show(np.array([view["weights"]]), [short(tokens[view["query"]])], tokens,
                            title="The computed attention row (random weights)", x_title="key", y_title="query",
                            domain=(0.0, 1.0),
                            annotate=True, max_width=700)
    elif q.kind == "char" and "top" in view:
        top = view["top"]
        _bars([_char(c) for c, _ in top], [p for _, p in top], [c == q.answer for c, _ in top],
              "What the model gives each next character", "probability", ".3f")
    elif "rows" in view and "d_k" in view:  # rise or fall: the query's row at both sizes
        for d_k, row, largest in zip(view["d_k"], view["rows"], view["largest"]):
            heatmap.show(np.array([row]), [short(view["tokens"][view["query"]])], view["tokens"],
                                title=f"d_k = {d_k}: largest weight {largest:.3f}", x_title="key", y_title="query",
                                domain=(0.0, 1.0), annotate=True, max_width=700)
    else:
        pictures(q)


def pictures(q: ClassQuestion) -> None:
    """The pictures a question is about (Masking's two maps), side by side; nothing for a question without."""
    if "heatmaps" not in q.view:
        return
    columns = st.columns(len(q.view["heatmaps"]))
    for place, picture in zip(columns, q.view["heatmaps"]):
        with place:
            heatmap.show(np.array(picture["values"]), picture["rows"], picture["columns"],
                                title=escape_md(picture["title"]), domain=(0.0, 1.0), annotate=True)


def quiz_room(items: list[tuple[ClassQuestion, object]], positions: list[int]) -> None:
    """A revealed quiz on the projector: the share of the room right on each item (items with their Tally)."""
    shares, labels = [], []
    for (q, tally), position in zip(items, positions):
        values = [value for value, n in tally.counts.items() for _ in range(n)]
        s = summary(q, values)
        shares.append(100 * s["right"] / s["answered"] if s["answered"] else 0.0)
        labels.append(f"{position}. {short(q.prompt)}" + ("" if s["answered"] else " (no answers)"))
    _bars(labels, shares, None, "The room, question by question: % of its answers right", "% right", ".0f",
          domain=(0.0, 100.0))
    st.caption("Each question's answer and explanation are on your phone.")

"""Text helpers: safe display of anything a user typed, shapes, and the 'show the code' expander."""

from __future__ import annotations

import functools
import inspect
import re

import streamlit as st

# Markdown (and Streamlit's :colour[...] directives) must never act on user text: escape every marker.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def escape_md(text: str) -> str:
    """User text -> Markdown that shows exactly that text (no links, no HTML, no formatting)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def code_span(text: str) -> str:
    """User text as an inline code span: shown verbatim, nothing inside is interpreted."""
    text = str(text).replace("\n", " ")
    fence = "`" * (1 + max(map(len, re.findall("`+", text)), default=0))  # longer than any run inside: unclosable
    return f"{fence} {text} {fence}" if "`" in text else f"{fence}{text}{fence}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """3, 'head' -> '3 heads'; 1, 'head' -> '1 head' (plural: the noun's plural when it is not noun + 's')."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def every(n: int, noun: str, plural: str | None = None) -> str:
    """7, 'row' -> 'all 7 rows'; 1, 'row' -> 'the one row' ("all 1 rows" is what a student would read otherwise)."""
    return f"all {counted(n, noun, plural)}" if n != 1 else f"the one {noun}"


def shape_str(shape) -> str:
    """(7, 8) -> '(7, 8)'; a 1-D shape keeps Python's trailing comma: '(7,)'."""
    dims = [str(int(n)) for n in shape]
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def shape_text(name: str, array, legend: str = "") -> str:
    """'Q · shape (7, 8) = (T, d_k)', the line under a matrix."""
    note = f" = {legend}" if legend else ""
    return f"{name} · shape {shape_str(array.shape)}{note}"


def shape_caption(name: str, array, legend: str = "") -> None:
    """The shape line under a matrix drawn without ui.sections.views (which puts it in the chart as its subtitle)."""
    st.caption(shape_text(name, array, legend))


@functools.lru_cache(maxsize=128)
def _source(obj) -> str:
    """Source of a function, class or method (Trainer.step), read once per process.

    inspect.getsource reads and tokenizes the whole file (milliseconds), and every rerun of a page with an
    open expander asks again. Keyed by the object itself (functions and classes are hashable): a module
    the dev server reloads brings new objects, so edited source is never served stale.
    """
    return inspect.getsource(obj)


CODE_KEY = "code_open"


def show_code(*functions, title: str = "Show the code") -> None:
    """An expander with the source of the functions (or methods) that produced what is on screen: the core's and
    the lesson's own maths.

    Filled only while open (a closed one costs a slider move nothing): opening it reruns the page.
    """
    box = st.expander(title, key=CODE_KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        for fn in functions:
            st.markdown(f"`{fn.__module__}.{fn.__qualname__}`")
            st.code(_source(fn), language="python")

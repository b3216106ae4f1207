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


def shape_str(shape) -> str:
    """(7, 8) -> '(7, 8)'; a 1-D shape keeps Python's trailing comma: '(7,)'."""
    dims = [str(int(n)) for n in shape]
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"


def shape_caption(name: str, array, legend: str = "") -> None:
    """'Q · shape (7, 8) = (T, d_k)' under a matrix."""
    note = f" = {legend}" if legend else ""
    st.caption(f"{name} · shape {shape_str(array.shape)}{note}")


def idea(text: str) -> None:
    st.markdown(text)


def notice(points: list[str], title: str = "What to notice") -> None:
    st.markdown(f"#### {title}")
    st.markdown("\n".join(f"- {p}" for p in points))


@functools.lru_cache(maxsize=128)
def _source(obj) -> str:
    """Source of a function, class or method (Trainer.step), read once per process.

    inspect.getsource reads and tokenizes the whole file (milliseconds), and every rerun of a page with an
    open expander asks again. Keyed by the object itself (functions and classes are hashable): a module
    the dev server reloads brings new objects, so edited source is never served stale.
    """
    return inspect.getsource(obj)


def show_code(*functions, title: str = "Show the code") -> None:
    """An expander with the source of the core functions (or methods) that produced what is on screen."""
    with st.expander(title):
        for fn in functions:
            st.markdown(f"`{fn.__module__}.{fn.__qualname__}`")
            st.code(_source(fn), language="python")

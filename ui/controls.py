"""The shared sidebar controls, each bound to the URL so a copied link reproduces the exact view.

The URL is read here, once, and checked: a value out of range is clamped, a value that is not a
number falls back to the default, and either way the page says what happened. Streamlit's binding
then keeps the URL in step with the widget as the user moves it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import streamlit as st

from core.model import divisors
from ui.text import escape_md

DEFAULT_TEXT = "The cat sat on the warm mat"
MAX_TEXT_CHARS = 2000
TRUE_WORDS = ("true", "1", "on", "yes")  # what a link may say for a switch that is on
FALSE_WORDS = ("false", "0", "off", "no")
_NOTES = "_url_notes"
_VIEW = "_view"  # the settings the current page used this run: what a shared link must carry
_PENDING = "_pending_settings"  # settings loaded from a file, read like a URL on the next run


def start_run() -> None:
    """Called once per script run by the entry point, before the page draws its controls."""
    st.session_state[_VIEW] = {}


def current_view() -> dict:
    """{key: value} of every URL-bound setting the page drew in this run."""
    return dict(st.session_state.get(_VIEW, {}))


def _record(key: str, value):
    st.session_state.setdefault(_VIEW, {})[key] = value
    return value


def apply_settings(settings: dict) -> None:
    """Take settings (a loaded JSON file) as if they came in a link: same checks, same messages.

    Runs in a widget callback; each control picks its value up when it is drawn next, and that value
    wins over the browser's copy and over the link the page was opened with.
    """
    st.session_state[_PENDING] = {str(k): str(v) for k, v in settings.items()}


def _note(message: str) -> None:
    st.session_state.setdefault(_NOTES, []).append(message)


def show_url_notes() -> None:
    """Tell the user which link values were unusable and what was used instead (once)."""
    for message in st.session_state.pop(_NOTES, []):
        st.info(message, icon="🔗")


def _incoming(key: str) -> str | None:
    """A new value for `key` as text: from a loaded settings file, else from the link on first sight."""
    pending = st.session_state.get(_PENDING, {})
    if key in pending:
        return pending.pop(key)
    if key in st.session_state:
        return None  # the widget has its value; the link only seeds it
    raw = st.query_params.get(key)
    return None if raw is None else str(raw)


def _parse_number(key: str, raw: str, lo, hi, default, integer: bool):
    try:
        value = float(raw)
        if value != value:  # NaN
            raise ValueError
    except ValueError:
        _note(f"The link set {key} to “{escape_md(raw[:40])}”, which is not a number; using {default}.")
        return default
    clamped = min(max(value, lo), hi)
    if integer:
        # int(), not round(): Streamlit's URL binding seeds an integer slider with int(value), so the
        # note must name that value (round(2.6) said 3 while the slider showed 2)
        clamped = int(clamped)
    if clamped != value:
        _note(f"The link set {key} to {escape_md(raw[:40])}; the allowed range here is {lo} to {hi}, "
              f"so {clamped} is used.")
    return clamped


def _prepare(key: str, lo, hi, default, integer: bool) -> None:
    """Put a valid value into session state before the widget is drawn (from the URL on first sight)."""
    raw = _incoming(key)
    if raw is not None:
        st.session_state[key] = _parse_number(key, raw, lo, hi, default, integer)
    elif key not in st.session_state:
        st.session_state[key] = default
    elif not (lo <= st.session_state[key] <= hi):  # another page may have allowed a wider range
        st.session_state[key] = min(max(st.session_state[key], lo), hi)


def number_slider(key: str, label: str, lo, hi, default, step=1, help: str | None = None, container=None):
    """A slider over [lo, hi] bound to the URL parameter `key`."""
    integer = isinstance(step, int) and isinstance(lo, int)
    _prepare(key, lo, hi, default, integer)
    box = container or st.sidebar
    return _record(key, box.slider(label, lo, hi, step=step, key=key, help=help, bind="query-params"))


def choice(key: str, label: str, options: Sequence, default, help: str | None = None, container=None,
           nearest: bool = True):
    """A select slider over numeric options bound to the URL; an invalid value snaps to the nearest option."""
    options = list(options)
    raw = _incoming(key)
    current = st.session_state.get(key, default)
    if raw is not None:
        current = default
        try:
            asked = float(raw)
            if not math.isfinite(asked):  # no option is nearest to nan or inf
                raise ValueError
            current = min(options, key=lambda o: (abs(o - asked), o))
            if current != asked:
                _note(f"The link set {key} to {escape_md(raw[:40])}, which is not one of {options}; "
                      f"using {current}.")
        except ValueError:
            _note(f"The link set {key} to “{escape_md(raw[:40])}”, which is not a number; using {default}.")
    if current not in options:
        snapped = min(options, key=lambda o: (abs(o - current), o)) if nearest else default
        current = snapped
    st.session_state[key] = current
    box = container or st.sidebar
    return _record(key, box.select_slider(label, options=options, key=key, help=help, bind="query-params"))


def option(key: str, label: str, options: Sequence[str], default: str | None = None, kind: str = "radio",
           container=None, **widget_args) -> str:
    """One of a few names (a radio or a select box) bound to the URL; a name not offered means the default."""
    options = list(options)
    default = default if default in options else options[0]
    raw = _incoming(key)
    if raw is not None and raw not in options:
        _note(f"The link asked for {key} “{escape_md(raw[:40])}”, which is not available here; using {default}.")
    if raw is not None:
        st.session_state[key] = raw if raw in options else default
    elif st.session_state.get(key) not in options:
        st.session_state[key] = default
    box = container or st.sidebar
    widget = box.radio if kind == "radio" else box.selectbox
    return _record(key, widget(label, options, key=key, bind="query-params", **widget_args))


def number_box(key: str, label: str, lo, hi, default, step, container=None, **widget_args):
    """A typed number in [lo, hi] bound to the URL, with the same checks and notes as the sliders."""
    integer = isinstance(step, int) and isinstance(lo, int)
    _prepare(key, lo, hi, default, integer=integer)
    st.session_state[key] = float(st.session_state[key])
    box = container or st.sidebar
    # A float box even for whole numbers: Streamlit seeds an integer box from the URL with int(value)
    # before any range check, and a link with fm_length=inf would raise there instead of being clamped.
    value = box.number_input(label, float(lo), float(hi), step=float(step), key=key, bind="query-params",
                             **({"format": "%.0f"} if integer else {}), **widget_args)
    return _record(key, int(value) if integer else value)


# ---- the shared settings ----------------------------------------------------------------------------


def input_text(default: str = DEFAULT_TEXT, label: str = "Input text") -> str:
    """The sentence the page works on. Capped in length: the pages read only the first seq_len tokens."""
    raw = _incoming("text")
    if raw is not None and len(raw) > MAX_TEXT_CHARS:
        _note(f"The link's text was {len(raw)} characters long; only the first {MAX_TEXT_CHARS} are kept.")
    if raw is not None or "text" not in st.session_state:
        st.session_state["text"] = default if raw is None else raw[:MAX_TEXT_CHARS]
    return _record("text", st.sidebar.text_area(
        label, key="text", max_chars=MAX_TEXT_CHARS, height=80, bind="query-params",
        help="Any text. It is split into words and punctuation; each becomes a token."))


def toggle(key: str, label: str, default: bool = False, help: str | None = None, container=None) -> bool:
    """An on/off switch bound to the URL (key=true / key=false); anything else in the link means the default."""
    raw = _incoming(key)
    if raw is not None or key not in st.session_state:
        value = default
        if raw is not None:
            if raw.strip().lower() in TRUE_WORDS:
                value = True
            elif raw.strip().lower() in FALSE_WORDS:
                value = False
            else:
                _note(f"The link set {key} to “{escape_md(raw[:40])}”; use true or false. Using {default}.")
        st.session_state[key] = value
    box = container or st.sidebar
    return _record(key, box.toggle(label, key=key, help=help, bind="query-params"))


def text(key: str, label: str, default: str, max_chars: int = 200, help: str | None = None, container=None) -> str:
    """A one-line text input bound to the URL, capped at max_chars."""
    raw = _incoming(key)
    if raw is not None and len(raw) > max_chars:
        _note(f"The link's {key} was {len(raw)} characters long; only the first {max_chars} are kept.")
    if raw is not None or key not in st.session_state:
        st.session_state[key] = default if raw is None else raw[:max_chars]
    box = container or st.sidebar
    return _record(key, box.text_input(label, key=key, max_chars=max_chars, help=help, bind="query-params"))


def seq_len(hi: int = 32, default: int = 16) -> int:
    return number_slider("seq_len", "Tokens used (seq_len)", 1, hi, min(default, hi),
                         help="The page keeps at most this many tokens of the input text.")


def d_model(options: Sequence[int] = (4, 8, 12, 16, 24, 32, 48, 64, 96, 128), default: int = 16) -> int:
    return choice("d_model", "d_model (embedding width)", options, default,
                  help="The width of every token's vector. Heads split it into equal slices.")


def d_k(hi: int = 64, default: int = 8, lo: int = 1) -> int:
    return number_slider("d_k", "d_k (query/key size)", lo, hi, min(default, hi),
                         help="How many numbers each query and key has. Scores are dot products of this length.")


def heads(width: int, default: int = 2) -> int:
    """Only divisors of d_model are offered: heads split d_model into equal slices."""
    options = divisors(width)
    default = default if default in options else min(options, key=lambda o: abs(o - default))
    return choice("heads", "Heads (divisors of d_model)", options, default,
                  help=f"d_model = {width} splits evenly into {options} heads.")


def temperature(default: float = 1.0, hi: float = 3.0) -> float:
    return number_slider("temp", "Temperature", 0.0, hi, default, step=0.05,
                         help="Divides the scores before the softmax. Below 1 sharpens, above 1 flattens; 0 is argmax.")


def seed(default: int = 0) -> int:
    return number_slider("seed", "Random seed", 0, 999, default,
                         help="Fixes the random weights, so the same seed always shows the same numbers.")

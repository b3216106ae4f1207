"""The shared sidebar controls, each bound to the URL so a copied link reproduces the exact view.

Streamlit's bind="query-params" seeds a widget from a valid URL value on the page's first run (over a
value put in st.session_state in that run), keeps the URL in step as the user moves it, drops a value
equal to the widget's default from it, cuts text to max_chars and seeds an integer slider with int(2.6).
A value it cannot use (out of range, inf, not a number, not among the options, "yes" for a switch) it
drops without a word, and the widget shows its default; an integer number box even crashes on inf.
So this module reads the link once more: it clamps a number, snaps to the nearest option, says what
it did, and checks a value from a loaded settings file or carried from another page (session state,
which the binding does not check and a slider raises on). Each widget gets the control's default as
its value, so the URL leaves out exactly the values a link without them would give.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import streamlit as st

from core.model import divisors
from ui import streamlit_internals
from ui.state import parts
from ui.text import escape_md

DEFAULT_TEXT = "The cat sat on the warm mat"
TEXT, D_MODEL, D_K, SEED = "text", "d_model", "d_k", "seed"  # the shared settings' keys, in the link too
MAX_TEXT_CHARS = 2000
TRUE_WORDS = ("true", "1", "on", "yes")  # what a link may say for a switch that is on
FALSE_WORDS = ("false", "0", "off", "no")
_NOTES = "_url_notes"
_VIEW = "_view"  # the settings the current page used this run: what a shared link must carry
_HELD = "_held_by_asides"  # the settings inside this page's asides, drawn or not (aside's `holds`)
_VIEW_PARTS = "_view_parts"  # each of those settings -> the live parts it was drawn in (ui.state.parts)
PENDING = "_pending_settings"  # settings loaded from a file, read like a URL on the next run
FROM_LINK = "_from_link"  # keys this run seeded from the link: the address bar must then show what is used


def start_run() -> None:
    """Called once per script run by the entry point, before the page draws its controls."""
    st.session_state[_VIEW] = {}
    st.session_state[_HELD] = set()
    st.session_state[_VIEW_PARTS] = {}
    parts.start_run()


def current_view() -> dict:
    """{key: value} of every URL-bound setting the page drew in this run."""
    return dict(st.session_state.get(_VIEW, {}))


def settings_of_page() -> set[str]:
    """The keys of every setting of this page: drawn in this run, or inside a shut aside."""
    return set(current_view()) | st.session_state.get(_HELD, set())


def forget_part(part: str) -> None:
    """Forget the settings drawn in `part` (and the parts inside it): it reruns alone and records them again,
    and a control it no longer draws is no longer part of the view."""
    view, where = st.session_state.setdefault(_VIEW, {}), st.session_state.setdefault(_VIEW_PARTS, {})
    for key in [key for key, drawn_in in where.items() if part in drawn_in]:
        view.pop(key, None)
        del where[key]


def record(key: str, value, default):
    """Note the value a control shows (a widget's, or a chart's own switch); when it came from a link that had to be
    corrected, put the value used in the address bar (the binding drops a value it cannot use: the bare path)."""
    st.session_state.setdefault(_VIEW, {})[key] = value
    st.session_state.setdefault(_VIEW_PARTS, {})[key] = parts.current()
    if key in st.session_state.get(FROM_LINK, ()):
        st.session_state[FROM_LINK].discard(key)
        # The binding offers no public way to correct a bound key's link (st.query_params refuses to set one): the
        # adapter corrects it through the object the binding itself corrects links by.
        streamlit_internals.show_in_address_bar(key, None if value == default else url_text(value))
    return value


def url_text(value) -> str:
    """A value as the binding writes it in a link: true/false, 16 (not 16.0), 0.5, text as it is."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    return str(value)


def link_means(key: str, value) -> None:
    """The value a link's `key` stands for (a stored run's id for the run's full label): the control takes it,
    and the address bar says it once the control is drawn. Without this the binding, finding the link's value
    among none of the options, drops it from the address bar, and a reload or a copied address loses it."""
    st.session_state[key] = value
    st.session_state.setdefault(FROM_LINK, set()).add(key)


def apply_settings(settings: dict) -> None:
    """Take settings (a loaded JSON file) as if they came in a link: same checks, same messages.

    Runs in a widget callback; each control picks its value up when it is drawn next, and that value
    wins over the browser's copy and over the link the page was opened with.
    """
    st.session_state[PENDING] = {str(k): str(v) for k, v in settings.items()}


def hand_over(settings: dict) -> None:
    """Settings another page's controls take the next time they are drawn (and only then), over the value they
    had: the Training page opens the Full model page on the run it trained, with a prompt that run can read."""
    st.session_state.setdefault(PENDING, {}).update({str(k): str(v) for k, v in settings.items()})


def _note(message: str, icon: str = ":material/link:") -> None:
    st.session_state.setdefault(_NOTES, []).append((message, icon))


def show_url_notes() -> None:
    """Tell the user which link values (or pasted texts) were unusable and what was used instead (once)."""
    for message, icon in st.session_state.pop(_NOTES, []):
        st.info(message, icon=icon)


def asked(key: str) -> str | None:
    """The value a control is about to be given, before it is drawn: a loaded file's, the one it has (perhaps
    from another page), or the link's; None when none says anything (a page that must fetch something the
    value names, such as a stored run, does it before the control checks the value against its options)."""
    pending = st.session_state.get(PENDING, {})
    if key in pending:
        return str(pending[key])
    if key in st.session_state:
        return str(st.session_state[key])
    raw = st.query_params.get(key)
    return None if raw is None else str(raw)


def _seed(key: str, parse: Callable[[str], object], fit: Callable = lambda v: v) -> None:
    """Before the widget: a loaded file's value or (on first sight) the link's, parsed; else make the
    value the control already has (perhaps from another page) fit here; else the widget's default."""
    pending = st.session_state.get(PENDING, {})
    if key in pending:
        st.session_state[key] = parse(pending.pop(key))
    elif key in st.session_state:  # the widget has its value; the link only seeds it
        if fit(st.session_state[key]) != st.session_state[key]:
            st.session_state[key] = fit(st.session_state[key])
    elif (raw := st.query_params.get(key)) is not None:
        st.session_state[key] = parse(str(raw))
        st.session_state.setdefault(FROM_LINK, set()).add(key)


def link_number(key: str, raw: str, default, fit: Callable, says: str, finite: bool = False):
    """A number from the link made to fit; when that changed it, a note ends with says.format(used).
    Text or NaN (or inf, when `finite`) means the default."""
    try:
        asked = float(raw)
    except ValueError:
        asked = math.nan
    if math.isnan(asked) or (finite and math.isinf(asked)):
        _note(f"The link set {key} to “{escape_md(raw[:40])}”, which is not a number; using {default}.")
        return default
    used = fit(asked)
    if used != asked:
        _note(f"The link set {key} to {escape_md(raw[:40])}{says.format(used)}")
    return used


def _bounded(key: str, lo, hi, default, step):
    """Seed a number control over [lo, hi]; returns its default (made to fit) and whether it is whole."""
    integer = isinstance(step, int) and isinstance(lo, int)

    def fit(x):  # int(), not round(): the binding seeds an integer slider with int(2.6) = 2, and so must we
        return int(min(max(x, lo), hi)) if integer else min(max(x, lo), hi)

    default = fit(default)
    says = f"; the allowed range here is {lo} to {hi}, so {{}} is used."
    _seed(key, lambda raw: link_number(key, raw, default, fit, says), fit)
    return default, integer


# The width of a control drawn in the page beside the section it drives (the sidebar's are its own width).
IN_PAGE_PX = 360


def number_slider(key: str, label: str, lo, hi, default, step=1, help: str | None = None, container=None,
                  width: int | str = "stretch"):
    """A slider over [lo, hi] bound to the URL parameter `key` (in the sidebar, unless a container is given;
    width in pixels, or "stretch")."""
    default, _ = _bounded(key, lo, hi, default, step)
    box = container or st.sidebar
    return record(key, box.slider(label, lo, hi, default, step=step, key=key, help=help, bind="query-params",
                                   width=width), default)


def number_box(key: str, label: str, lo, hi, default, step, container=None, **widget_args):
    """A typed number in [lo, hi] bound to the URL, with the same checks and notes as the sliders."""
    default, integer = _bounded(key, lo, hi, default, step)
    box = container or st.sidebar
    # A float box even for whole numbers: the binding seeds an integer box with int(value) before any
    # range check, and a link with fm_length=inf would raise there instead of being clamped.
    value = box.number_input(label, float(lo), float(hi), float(default), step=float(step), key=key,
                             bind="query-params", **({"format": "%.0f"} if integer else {}), **widget_args)
    return record(key, int(value) if integer else value, default)


def choice(key: str, label: str, options: Sequence, default, help: str | None = None, container=None,
           nearest: bool = True, width: int | str = "stretch"):
    """A select slider over numeric options bound to the URL; an invalid value snaps to the nearest option."""
    options = list(options)

    def snap(x):
        return min(options, key=lambda o: (abs(o - x), o))

    default = default if default in options else snap(default)
    says = f", which is not one of {options}; using {{}}."
    _seed(key, lambda raw: link_number(key, raw, default, snap, says, finite=True),
          lambda v: v if v in options else (snap(v) if nearest else default))
    box = container or st.sidebar
    return record(key, box.select_slider(label, options, default, key=key, help=help, bind="query-params",
                                          width=width), default)


def option(key: str, label: str, options: Sequence[str], default: str | None = None, kind: str = "radio",
           container=None, **widget_args) -> str:
    """One of a few names (a radio or a select box) bound to the URL; a name not offered means the default."""
    options = list(options)
    default = default if default in options else options[0]

    def parse(raw: str) -> str:
        if raw not in options:
            _note(f"The link asked for {key} “{escape_md(raw[:40])}”, which is not available here; "
                  f"using {escape_md(str(default))}.")
        return raw if raw in options else default

    _seed(key, parse, lambda v: v if v in options else default)
    box = container or st.sidebar
    widget = box.radio if kind == "radio" else box.selectbox
    return record(key, widget(label, options, options.index(default), key=key, bind="query-params", **widget_args),
                   default)


def switch(key: str, default: bool, instead: str = "") -> Callable[[str], bool]:
    """A link's on/off value read: true or false (or their other words); else the default, said (or `instead`)."""

    def parse(raw: str) -> bool:
        word = raw.strip().lower()
        if word in TRUE_WORDS + FALSE_WORDS:
            return word in TRUE_WORDS
        _note(f"The link set {key} to “{escape_md(raw[:40])}”; use true or false. {instead or f'Using {default}.'}")
        return default

    return parse


def toggle(key: str, label: str, default: bool = False, help: str | None = None, container=None) -> bool:
    """An on/off switch bound to the URL (key=true / key=false); anything else in the link means the default."""
    _seed(key, switch(key, default))
    box = container or st.sidebar
    return record(key, box.toggle(label, default, key=key, help=help, bind="query-params"), default)


def aside(key: str, label: str, icon: str | None = None, holds: Sequence[str] = ()):
    """A part of a page shut until opened, filled only while open (the expander: its .open says so), and in the link
    while open (key=true). Shut, it costs a move nothing: no chart computed, sent or redrawn (about 8 ms a chart in
    Chromium, bench/README.md). A label that changed would be a new expander, shut again: it names, never counts.
    holds: the keys of the settings inside it, the page's even while it is shut (a settings file may set them)."""
    st.session_state.setdefault(_HELD, set()).update(holds)
    _seed(key, switch(key, False, f"“{escape_md(label)}” stays shut."))
    box = st.expander(label, key=key, icon=icon, bind="query-params")
    record(key, box.open, False)
    return box


def _text(widget, key: str, label: str, default: str, max_chars: int, **widget_args) -> str:
    """A text box bound to the URL, capped at max_chars, with a note whenever a link or a paste was cut.

    The box itself has no max_chars: the browser then refuses a paste past the limit without a word and
    keeps the old text. So the box takes any length and a callback cuts it before the run that reads it;
    a link's text is cut the same way before the binding seeds the box from it."""

    def cut(raw: str) -> str:
        if len(raw) > max_chars:
            _note(f"The link's {key} was {len(raw)} characters long; only the first {max_chars} are kept.")
            _link_seeds(key, raw[:max_chars])
        return raw[:max_chars]

    def cut_typed() -> None:
        typed = st.session_state.get(key) or ""
        if len(typed) > max_chars:
            st.session_state[key] = typed[:max_chars]
            _note(f"The text put into “{label}” was {len(typed):,} characters long; only the first {max_chars:,} "
                  "are kept.", icon=":material/content_cut:")

    default = default[:max_chars]
    _seed(key, cut, lambda v: v[:max_chars])
    value = widget(label, default, key=key, bind="query-params", on_change=cut_typed, **widget_args)
    return record(key, value[:max_chars], default)


def _link_seeds(key: str, text: str) -> None:
    """Make the binding seed the box `key` from `text` instead of the link's own value on this first run
    (it reads the link as it was when the page opened, and prefers it to a value set in session state)."""
    streamlit_internals.seed_from_link(key, text)


def text(key: str, label: str, default: str, max_chars: int = 200, help: str | None = None, container=None,
         width: int | str = "stretch") -> str:
    """A one-line text input bound to the URL, capped at max_chars; width in pixels, or "stretch"."""
    return _text((container or st.sidebar).text_input, key, label, default, max_chars, help=help, width=width)


# ---- the shared settings ----------------------------------------------------------------------------


def input_text(default: str = DEFAULT_TEXT, label: str = "Input text") -> str:
    """The sentence the page works on. Capped in length: the pages read only the first seq_len tokens."""
    return _text(st.sidebar.text_area, TEXT, label, default, MAX_TEXT_CHARS, height=80,
                 help="Any text. It is split into words and punctuation; each becomes a token.")


def d_model(options: Sequence[int] = (4, 8, 12, 16, 24, 32, 48, 64, 96, 128), default: int = 16) -> int:
    return choice(D_MODEL, "d_model (embedding width)", options, default,
                  help="The width of every token's vector. Heads split it into equal slices.")


def d_k(hi: int = 64, default: int = 8, lo: int = 1) -> int:
    return number_slider(D_K, "d_k (query/key size)", lo, hi, min(default, hi),
                         help="How many numbers each query and key has. Scores are dot products of this length.")


def heads(width: int, default: int = 2) -> int:
    """Only divisors of d_model are offered: heads split d_model into equal slices."""
    return choice("heads", "Heads (divisors of d_model)", divisors(width), default,
                  help=f"d_model = {width} splits evenly into {divisors(width)} heads.")


def sampling_temperature(default: float = 1.0, hi: float = 3.0, container=None) -> float:
    """The temperature the next token is drawn with: a setting of generation, apart from attention's τ."""
    return number_slider("sample_temp", "Sampling temperature", 0.0, hi, default, step=0.05, container=container,
                         help="Divides the next-character scores (logits) before the softmax. Below 1 sharpens, "
                              "above 1 flattens; 0 always takes the most likely character (greedy).")


def seed(default: int = 0, container=None,
         help: str = "Fixes the random weights, so the same seed always shows the same numbers.") -> int:
    return number_slider(SEED, "Random seed", 0, 999, default, container=container, help=help)

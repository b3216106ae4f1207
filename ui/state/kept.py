"""What a user typed or uploaded, kept while they visit other pages.

Streamlit forgets a widget's value at the end of any run that does not draw the widget: a student who pastes a
text on one page, opens another and comes back finds the box empty. The URL-bound controls come back from the
link (ui.state.controls); a text too long for a link, an answer and an uploaded file come back from here: a copy
in the browser session's memory (never on disk), given back to the widget before it is drawn again.
"""

from __future__ import annotations

import streamlit as st

from ui.text import escape_md

_KEPT = "_kept_inputs"  # widget key -> the value it last had
_FILES = "_kept_files"  # uploader key -> (file name, bytes) of the last file it received


def _kept() -> dict:
    return st.session_state.setdefault(_KEPT, {})


def restore(key: str) -> None:
    """Call just before drawing the widget `key` (a text box, a radio): give back the value it had when the
    page was left. A widget drawn with no value= of its own takes it without a warning."""
    if key not in st.session_state and key in _kept():
        st.session_state[key] = _kept()[key]


def remember(key: str) -> None:
    """Call just after drawing the widget `key`: its value now is what restore() gives back later."""
    if key in st.session_state:
        _kept()[key] = st.session_state[key]


def _file_changed(key: str) -> None:
    """The uploader's callback: a file added is kept, and the ✕ that removes it forgets the kept copy too."""
    upload = st.session_state.get(key)
    files = st.session_state.setdefault(_FILES, {})
    if upload is None:
        files.pop(key, None)
    else:
        files[key] = (upload.name, upload.getvalue())


def upload(label: str, key: str, **uploader_args) -> tuple[str, bytes] | None:
    """A file uploader whose file outlives a visit to another page: (name, bytes) of the file it holds, or of
    the one it held when the page was left (the uploader itself then shows empty, so a line says which file
    is in use and a button forgets it)."""
    st.file_uploader(label, key=key, on_change=_file_changed, args=(key,), **uploader_args)
    current = st.session_state.get(key)
    files = st.session_state.setdefault(_FILES, {})
    if current is not None:
        files[key] = (current.name, current.getvalue())  # also when the callback did not run (a test sets it)
        return files[key]
    if key not in files:
        return None
    name, data = files[key]
    cols = st.columns([4, 1], vertical_alignment="center")
    cols[0].caption(f"In use: the file you uploaded earlier, “{escape_md(name)}” ({len(data):,} bytes), held in the "
                    "server's memory for this browser session.")
    cols[1].button("Forget it", key=f"{key}_forget", on_click=lambda: files.pop(key, None))
    return files[key]

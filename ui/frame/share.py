"""Sharing a view: the link that reproduces it, and the same settings as a JSON file to save and load."""

from __future__ import annotations

import json
import threading
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from ui.state import controls
from ui.text import escape_md

MAX_SETTINGS_BYTES = 20_000
OPEN_KEY = "share_open"  # the share popover's state: True while it is open
# The panel's placeholder, from the page's header to its footer: a script run stays on one thread.
_slot = threading.local()


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else str(value)
    return str(value)


def view_settings() -> dict:
    """Every setting this page drew, by its URL key (the link and the JSON file carry exactly these)."""
    return {key: _fmt(value) for key, value in controls.current_view().items()}


def page_url() -> str:
    """The address of this page without its query string ('' in tests, where there is no browser)."""
    try:
        url = st.context.url or ""
    except Exception:  # no browser session (e.g. bare script runs)
        url = ""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")) if url else ""


def share_link() -> str:
    """A link that reproduces the current view: this page's address plus every setting."""
    query = urlencode(view_settings())
    return f"{page_url()}?{query}" if query else page_url()


def settings_file() -> str:
    """The current settings as pretty JSON, with the page they belong to."""
    return json.dumps({"page": urlsplit(page_url()).path or "", "settings": view_settings()}, indent=1)


def parse_settings(raw: bytes) -> dict:
    """A settings file -> {key: value}; ValueError with a readable reason when it is not one."""
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ValueError(f"This file is {len(raw):,} bytes; a settings file is a few hundred. Nothing was changed.")
    try:
        # utf-8-sig: a file saved by Windows Notepad starts with a byte-order mark
        doc = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        # ValueError covers bad UTF-8, bad JSON and an integer too long to convert; RecursionError a file
        # of thousands of nested brackets (which would otherwise crash the page)
        raise ValueError("This is not a settings file (it is not JSON text). Nothing was changed.") from None
    settings = doc.get("settings") if isinstance(doc, dict) else None
    if not isinstance(settings, dict) or not all(isinstance(v, (str, int, float, bool)) for v in settings.values()):
        raise ValueError("This JSON has no 'settings' object of names and values. Nothing was changed.")
    return {str(k): _fmt(v) for k, v in settings.items()}


def _on_upload() -> None:
    uploaded = st.session_state.get("share_upload")
    if uploaded is None:
        return
    try:
        settings = parse_settings(uploaded.getvalue())
    except ValueError as err:
        st.session_state["share_upload_error"] = str(err)
        return
    known = controls.settings_of_page()
    controls.apply_settings({k: v for k, v in settings.items() if k in known})
    ignored = sorted(set(settings) - known)
    if ignored:
        # the names come from the file: shown as text, never as Markdown (cut first, so no escape is halved)
        names = escape_md(", ".join(ignored)[:200])
        st.session_state["share_upload_error"] = (
            f"Loaded. These settings do not belong on this page and were ignored: {names}.")


def share_panel() -> None:
    """Sidebar panel: the link to copy, and the settings as a file to download or load.

    Drawn at the top of the sidebar before the page's controls, so the link and the file are filled in
    later, by fill_share_panel() from the page's footer, once every setting of this run is known (built
    here, the link carried only the settings drawn before it: none of the page's own).
    """
    _slot.notes = []
    # Filled only while open (the uploader and the link cost every slider move otherwise); opening reruns.
    box = st.sidebar.popover("Share this view", icon=":material/share:", width="stretch", key=OPEN_KEY,
                             on_change="rerun")
    if not box.open:
        _slot.value = None
        return
    with box:
        st.markdown("Copy this link (button at its right) and anyone who opens it sees exactly this view.")
        _slot.value = st.empty()
        _slot.value.caption("The link is made once the page has drawn its charts.")
        st.file_uploader("Load settings (JSON)", type=["json"], key="share_upload", on_change=_on_upload)
        message = st.session_state.pop("share_upload_error", None)
        if message:
            st.warning(message)


def cannot_carry(message: str) -> None:
    """Say in the share panel, under the link, what of this view the link cannot carry (a model trained in this
    browser tab that the server could not keep): its promise is then not kept, and the panel says so."""
    notes = getattr(_slot, "notes", None)
    if notes is not None and message not in notes:
        notes.append(message)


def fill_share_panel() -> None:
    """Put the link and the settings file into the panel, now that the page has drawn all its controls."""
    slot, _slot.value = getattr(_slot, "value", None), None
    if slot is None:  # no panel in this run
        return
    with slot.container():
        st.code(share_link() or "?", language=None, wrap_lines=True)
        for message in getattr(_slot, "notes", None) or ():
            st.warning(message, icon=":material/link_off:")
        st.download_button("Download settings (JSON)", settings_file(), file_name="attention-lab-view.json",
                           mime="application/json", key="share_download", on_click="ignore")

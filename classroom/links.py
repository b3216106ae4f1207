"""The class mode's links and its QR code: what students open, what the projector shows, what the teacher keeps.

Three links to one class, each to the Class page (its url path is PAGE):
- the join link, `/class?code=K7M4QX`: what students open (the QR code holds it; the code alone works too);
- the projector's link, `/class?code=K7M4QX&view=projector`: the question, the count, the room's answers on
  Reveal, never a nickname and never a control; safe to show, since all of it is on the projector anyway;
- the teacher's page, `/class?code=K7M4QX&teacher=1`: it holds no key. The browser that started the class is
  its teacher there (classroom.device); another browser is let in by the teacher pasting the key, which never
  goes in an address (an address stays in the browser's history and the address bar's suggestions).

The links are built from the address the browser used (st.context.url), so they are right behind a proxy or
under another host name, as the students will reach the server.
"""

from __future__ import annotations

import functools
import io
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno
import streamlit as st

PAGE = "class"
FALLBACK = "http://localhost:8501"  # a run with no browser (tests): the address `streamlit run` prints


def app_address() -> str:
    """The app's own address as the browser sees it, without the page or the query: "https://host/prefix"."""
    return browser_address() or FALLBACK


def browser_address() -> str | None:
    """app_address as the browser gave it; None in a run with no browser behind it."""
    try:
        url = st.context.url or ""
    except Exception:  # no session to ask (a test outside a run)
        url = ""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    path = parts.path
    if path.rstrip("/").endswith("/" + PAGE):
        path = path.rstrip("/")[: -len(PAGE) - 1]
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


def only_this_computer(address: str) -> bool:
    """Whether an address names the computer it is opened on (localhost, 127.x, ::1): a phone that opens it
    reaches itself, not the server."""
    host = (urlsplit(address).hostname or "").lower()
    return host == "localhost" or host.endswith(".localhost") or host.startswith("127.") or host == "::1"


def link(**query: str) -> str:
    """The Class page's address with this query."""
    return f"{app_address()}/{PAGE}?{urlencode(query)}"


def join_link(code: str) -> str:
    return link(code=code)


def projector_link(code: str) -> str:
    """present=true: the sidebar starts folded (streamlit_app.folded_sidebar), the page in large type."""
    return link(code=code, view="projector", present="true")


def teacher_page_link(code: str) -> str:
    return link(code=code, teacher="1")


@functools.lru_cache(maxsize=64)
def qr_png(text: str, scale: int = 10) -> bytes:
    """A QR code of `text` as a PNG: black on white with its quiet zone, readable by a phone's camera across a
    classroom (error correction level M; `scale` pixels a module). Kept per link: the projector redraws it at
    every refresh, and encoding it was half of a refresh's server time."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=4, dark="#000000", light="#ffffff")
    return buffer.getvalue()

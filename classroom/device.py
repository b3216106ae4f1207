"""Who is who in a class: one browser is one student, and the browser that started a class stays its teacher.

A browser keeps a random device number in a cookie (DEVICE, 128 bits, made by the browser itself with
crypto.getRandomValues, kept a year). The server reads it from the request that opened the page
(st.context.cookies), so every tab of the browser, a reload, a student who leaves by the sidebar and comes back,
and every server process behind a proxy see the same number. From it and the class code come, by HMAC-SHA256:

- the student's token in that class: the same in every tab, so two tabs are one student with one answer a
  question; another class gets an unrelated token (the store cannot link a device across classes);
- the teacher's key of the class that browser started: a reload, a second tab or a server restart finds it
  again, so the teacher keeps control. Another device gets control when the teacher pastes the key there.

A page that cannot see the cookie yet (the browser's first visit) writes SCRIPT, which makes the number, sets
the cookie and reloads the page once, so the next request carries it. A browser that keeps no cookie (or a
client that is not a browser) is known by its tab alone (TAB_TOKEN), as the page says; nothing here is in an
address. The cookie can be read by the page's own scripts (it is set by one), so it is only as safe as the page
is from injected script: the app renders no HTML or script a user wrote (tests/system/test_security.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import streamlit as st

from store import codes

DEVICE = "attention_lab_device"
DEVICE_SHAPE = re.compile(r"[A-Za-z0-9_-]{22}")  # 16 bytes in URL-safe base64, unpadded: what SCRIPT makes
TAB_TOKEN = "_class_tab_device"  # a browser without the cookie: a device number for this tab alone

# Sets the cookie when the browser has none, then reloads once (sessionStorage: never a loop when a browser
# or a proxy drops the cookie). Secure over https; SameSite=Lax: sent when a student opens a link to the app.
SCRIPT = """<script>
(() => {
  const NAME = "attention_lab_device", RELOADED = "attention_lab_device_reloaded";
  const held = () => document.cookie.split("; ").some(c => c.startsWith(NAME + "="));
  if (!held()) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const number = btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    document.cookie = NAME + "=" + number + "; Path=/; Max-Age=31536000; SameSite=Lax"
      + (location.protocol === "https:" ? "; Secure" : "");
  }
  if (held() && !sessionStorage.getItem(RELOADED)) {
    sessionStorage.setItem(RELOADED, "1");
    location.reload();
  }
})();
</script>"""


def from_cookie() -> str | None:
    """The browser's device number, when the request that opened this page carried a well-formed one."""
    try:
        value = st.context.cookies.get(DEVICE)
    except Exception:  # no browser request behind this run (a test outside a page)
        return None
    return value if isinstance(value, str) and DEVICE_SHAPE.fullmatch(value) else None


def number() -> tuple[str, bool]:
    """(the device number, whether the whole browser shares it). Without the cookie, the page asks the browser
    to make one (SCRIPT) and, until it has, this tab has a number of its own."""
    found = from_cookie()
    if found is not None:
        return found, True
    st.html(SCRIPT, unsafe_allow_javascript=True)
    if TAB_TOKEN not in st.session_state:
        st.session_state[TAB_TOKEN] = codes.new_token()
    return st.session_state[TAB_TOKEN], False


def derived(device: str, role: str, code: str) -> str:
    """HMAC-SHA256(device, role:code) in URL-safe base64 (43 characters): a secret per device, role and class."""
    mac = hmac.new(device.encode(), f"{role}:{code}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def student_token(code: str) -> tuple[str, bool]:
    """This browser's token in the class `code` (what the store knows the student by), and whether every tab of
    the browser shares it."""
    device, shared = number()
    return derived(device, "student", code), shared


def teacher_key(code: str, generation: int = 0) -> tuple[str, bool]:
    """The teacher's key this browser gives the class `code` it starts (and finds again after a reload), and
    whether the whole browser holds it; `generation` counts the new keys its teacher made since (each one's key
    differs, so an earlier key pasted elsewhere stops working)."""
    device, shared = number()
    return derived(device, "teacher", code if generation == 0 else f"{code}:{generation}"), shared


def address() -> str:
    """The network address this page's browser comes from, for the limits per address (store.classes.budgets).

    The connection's own address, unless it comes from this machine: then it is the last address a proxy here
    appended to X-Forwarded-For (the HAProxy set-up adds it), or "local" for a browser on this machine. A
    proxy elsewhere is not trusted, since anyone can send that header."""
    peer = st.context.ip_address  # None for a connection from this machine (and no str under AppTest)
    if isinstance(peer, str) and peer:
        return peer
    lines = st.context.headers.get_all("X-Forwarded-For")
    hops = [hop.strip() for line in lines if isinstance(line, str) for hop in line.split(",")]
    hops = [hop for hop in hops if hop]
    return hops[-1] if hops else "local"

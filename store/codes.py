"""What a person types or a link carries in the class mode: class codes, the teacher's key, a student's token,
nicknames and typed answers. Pure functions, no database: here, beside the tables, because the store cleans and
hashes what it keeps with them and sizes its columns by their limits (store.schema), and the store imports nothing
of the class mode's pages, which use them too.

A class code is 6 symbols from an alphabet of 30 (30^6 ≈ 7.3e8 codes). The alphabet keeps one symbol of each
group that looks alike on a projector (0/O, 1/I/L, 5/S, 8/B, U/V) and reads the others as that one, so a
student who types O for 0 still gets in. Keys and tokens are random URL-safe strings; only their SHA-256
is stored, and a given one is compared with that in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata

ALPHABET = "0123456789ACDEFGHJKMNPQRTVWXYZ"  # no B, I, L, O, S, U: each reads as a symbol kept here
CODE_LENGTH = 6
EXAMPLE_CODE = "K7M4QX"  # the code the messages give as an example (shown as K7M-4QX)
# What a student may type for a symbol that looks like it; the dashes are the ones phones put in for "-"
LOOK_ALIKES = str.maketrans({"O": "0", "I": "1", "L": "1", "S": "5", "B": "8", "U": "V"})
SEPARATORS = str.maketrans("", "", " \t-‐‑‒–—_.")
KEY_BYTES = 32  # the teacher's key: 256 bits
TOKEN_BYTES = 16  # a student's token: 128 bits
NICKNAME_MAX = 24
ANSWER_MAX = 200
TITLE_MAX = 80
_TYPED_MAX = 1000  # longer input is cut before it is cleaned: cleaning stays cheap whatever is sent

assert len(ALPHABET) == len(set(ALPHABET)) == 30


def new_code() -> str:
    """A fresh class code, e.g. "K7M4QX" (6 symbols of ALPHABET, from the OS's secure random source)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


NO_BREAK_HYPHEN = "\u2011"  # looks like "-", and a line never breaks at it (a phone broke "K7M-" from "4QX")


def shown_code(code: str) -> str:
    """The code as a projector shows it, split in two halves by a hyphen no line breaks at: "K7M‑4QX" (normal_code
    reads it back, with that hyphen or a typed one)."""
    half = CODE_LENGTH // 2
    return f"{code[:half]}{NO_BREAK_HYPHEN}{code[half:]}"


def normal_code(text: object) -> str | None:
    """The canonical code for what a student typed ("k7m 4qx", "K7M-4QX", "k7m4qx "), or None if it cannot
    be one: not 6 symbols once spaces and dashes are gone, or a symbol outside the alphabet and its look-alikes."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    code = unicodedata.normalize("NFKC", text).upper().translate(SEPARATORS).translate(LOOK_ALIKES)
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


assert normal_code(EXAMPLE_CODE) == EXAMPLE_CODE
CODE_RULE = f"a code is {CODE_LENGTH} letters and digits, like {shown_code(EXAMPLE_CODE)}"  # for messages


def new_key() -> str:
    """A teacher's key for the teacher's link (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(KEY_BYTES)


def new_token() -> str:
    """A student's token, kept by the student's page (22 URL-safe characters, 128 bits)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_secret(secret: str) -> str:
    """SHA-256 of a key or token, as 64 hex digits: what the store keeps instead of the secret. The secrets
    are 128 random bits or more, so a plain hash (no salt, no slow hash) cannot be turned back by guessing."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def same_secret(given: object, stored_hash: object) -> bool:
    """Whether `given` is the secret whose hash is `stored_hash`, in time that does not depend on where the
    two first differ. Anything that is not a string (a missing key, say) is simply not the secret."""
    if not isinstance(given, str) or not isinstance(stored_hash, str) or len(given) > 200:
        return False
    return hmac.compare_digest(hash_secret(given), stored_hash.encode("ascii", "replace").decode())


MAX_MARKS = 3  # combining marks kept on one character: Vietnamese stacks 2; more only pile up over the lines above


def clean_text(text: object, limit: int) -> str | None:
    """`text` as one line: control and format characters dropped (line breaks, bidi overrides, zero-width
    joiners: they can reorder or hide what a page shows), runs of whitespace made one space, ends stripped,
    cut to `limit` characters. None when nothing is left, or when `text` is not a string."""
    kept = _one_line(text)
    kept = kept[:limit].rstrip() if kept is not None else None
    return kept or None


def _one_line(text: object) -> str | None:
    """clean_text without the cut: whitespace made single spaces, ends stripped, the rest dropped or capped."""
    if not isinstance(text, str):
        return None
    text = _nfc(text[:_TYPED_MAX])
    # whitespace first (a tab or line break is a space, not nothing), then the other control characters
    kept = "".join(c for c in " ".join(text.split()) if not unicodedata.category(c).startswith("C"))
    return " ".join(kept.split())


def _nfc(text: str) -> str:
    """`text` in NFC with at most MAX_MARKS combining marks on each character (counted decomposed, so that é
    counts its accent): a name of 200 stacked accents would draw over the rows above it on the teacher's list."""
    kept, run = [], 0
    for c in unicodedata.normalize("NFD", text):
        run = run + 1 if unicodedata.combining(c) else 0
        if run <= MAX_MARKS:
            kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept))


def too_long(typed: object, kept: str | None, limit: int) -> bool:
    """Whether an answer or a nickname is over its limit: `kept` (what a clean_* function kept of `typed`) has
    more than `limit` characters, or `typed` was too long to clean at all. The store refuses it rather than keep
    a part the student did not choose."""
    return (isinstance(typed, str) and len(typed) > _TYPED_MAX) or (kept is not None and len(kept) > limit)


def clean_nickname(text: object) -> str | None:
    """A nickname as it is stored and shown, not cut (too_long says when it is over NICKNAME_MAX); None means
    anonymous."""
    return _one_line(text) or None


def clean_answer(text: object) -> str | None:
    """An answer as it is stored, not cut (too_long says when it is over ANSWER_MAX); None when there is nothing
    to store. Numbers are answered as text: the page that asked decides how to read them."""
    return _one_line(_as_typed(text)) or None


def clean_character(text: object) -> str | None:
    """An answer to a one-character question as it is stored: as typed, spaces kept (a space is a character a
    student can mean: the model's answer is often one), other whitespace made a space, control and format
    characters dropped; not cut. None when nothing is left."""
    text = _as_typed(text)
    if not isinstance(text, str):
        return None
    text = _nfc(text[:_TYPED_MAX])
    spaced = "".join(" " if c.isspace() else c for c in text)
    return "".join(c for c in spaced if not unicodedata.category(c).startswith("C")) or None


def _as_typed(value: object) -> object:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return repr(value)
    return value

"""The user's own text as a training corpus: what an upload or a paste may be, and what to tell its author.

core.data.text_corpus takes a string and states facts; here live the policy for text from a browser (UTF-8,
with or without a byte-order mark, or UTF-16 with one; no binary files; at most max_chars characters) and
refusals worded for the person who gave the text.
"""

from __future__ import annotations

from core.data import VAL_FRACTION, TextCorpus, TextTooShort, text_corpus

MAX_USER_CHARS = 200_000  # longer texts are cut: training on them in a browser session would not finish
SNIFF_BYTES = 8192  # a zero byte among a file's first 8 KB: a binary file, not text
# A byte-order mark says how a text file is encoded. UTF-16 (Windows Notepad's "Unicode") puts a zero byte
# beside every ASCII letter, so its mark must be read before the zero-byte test would call it binary.
UTF16_MARKS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def decode(data: bytes | str) -> str:
    """An uploaded file's bytes or a pasted string -> its text with "\\n" line ends. ValueError for the user."""
    if isinstance(data, bytes) and data[:2] in UTF16_MARKS:
        try:
            data = data[2:].decode(UTF16_MARKS[data[:2]])
        except UnicodeDecodeError as err:
            raise ValueError(f"This file starts as UTF-16 text but byte {err.start + 2} cannot be decoded; "
                             "save it as UTF-8 plain text.") from None
        if any(c < " " and c not in "\t\n\r\f" for c in data[:SNIFF_BYTES]):  # a binary file that began FF FE
            raise ValueError("This file looks binary (it holds control characters); upload a plain-text file.")
    if isinstance(data, bytes):
        if b"\x00" in data[:SNIFF_BYTES]:
            raise ValueError("This file looks binary (it contains zero bytes); upload a plain-text file.")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise ValueError(
                f"This file is not UTF-8 text (byte {err.start} cannot be decoded); save it as UTF-8 plain text."
            ) from None
    if not isinstance(data, str):
        raise ValueError("Give the text as a string or as the bytes of a UTF-8 or UTF-16 file.")
    return data.replace("\r\n", "\n").replace("\r", "\n")


def user_text_corpus(data: bytes | str, context: int, max_chars: int = MAX_USER_CHARS) -> TextCorpus:
    """The user's own text (an uploaded file's bytes or a pasted string) as a corpus named "your text".

    Raises ValueError, with a sentence for the user, when it is not UTF-8 text, is empty or is too short
    for the context; cuts it to max_chars characters (the corpus is then marked truncated).
    """
    text = decode(data)
    if not text.strip():
        raise ValueError("The text is empty: paste or upload some text to train on.")
    try:
        return text_corpus(text[:max_chars], context, name="your text", truncated=len(text) > max_chars)
    except TextTooShort as err:
        raise ValueError(
            f"The text is too short: with a context of {err.context} characters it needs at least "
            f"{err.needed} characters (it has {err.length}), because the last {VAL_FRACTION:.0%} "
            "is kept aside for validation. Paste more text or choose a shorter context."
        ) from None

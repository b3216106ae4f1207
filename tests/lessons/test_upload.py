"""The user's own text (lessons/training/upload.py): decoding, refusals worded for the user, the size cap."""

from __future__ import annotations

import pytest

from core.data import TextTooShort
from lessons.training.upload import MAX_USER_CHARS, user_text_corpus


def test_user_text_accepts_utf8_bytes_and_strings():
    text = "Il était une fois un petit chat.\r\n" * 100
    corpus = user_text_corpus(text.encode("utf-8"), context=16)
    assert corpus.name == "your text" and not corpus.truncated
    assert "é" in corpus.tokenizer.itos and "\r" not in corpus.tokenizer.itos
    assert user_text_corpus(text, context=16).vocab_size == corpus.vocab_size


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_utf8_and_utf16_files_with_their_mark_read_as_the_same_text(encoding):
    text = "Ünïcode text, typed in Notepad.\r\n" * 100
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # the codec writes no mark of its own: put the one Notepad writes
        data = ("\ufeff" + text).encode(encoding)
    assert b"\x00" in data or encoding.startswith("utf-8")
    corpus = user_text_corpus(data, context=16)
    assert "".join(corpus.tokenizer.itos[1:]) == "".join(sorted(set(text.replace("\r\n", "\n"))))
    assert "\ufeff" not in corpus.tokenizer.itos


def test_a_binary_file_that_happens_to_start_like_utf16_is_still_refused():
    with pytest.raises(ValueError, match="binary"):
        user_text_corpus(b"\xff\xfe" + bytes(4000), context=16)  # zeros: U+0000, no text has them


@pytest.mark.parametrize(("data", "match"), [
    (b"", "empty"),
    ("   \n\t ", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("caf\u00e9 ".encode("latin-1") * 500, "UTF-8"),
    ("short text", "too short"),
    (12345, "string"),
])
def test_user_text_rejections_are_readable(data, match):
    with pytest.raises(ValueError, match=match):
        user_text_corpus(data, context=16)


def test_user_text_is_capped():
    corpus = user_text_corpus("abcdefghij" * 1000, context=8, max_chars=2000)
    assert corpus.truncated
    assert len(corpus.train_ids) + len(corpus.val_ids) == 2000


def test_too_short_tells_the_user_what_to_do():
    """The same sentence the Training page has always shown, built from core's TextTooShort facts."""
    with pytest.raises(ValueError) as caught:
        user_text_corpus("short text", context=16)
    assert not isinstance(caught.value, TextTooShort)
    assert str(caught.value) == (
        "The text is too short: with a context of 16 characters it needs at least 340 characters (it has 10), "
        "because the last 10% is kept aside for validation. Paste more text or choose a shorter context.")


def test_the_default_cap():
    corpus = user_text_corpus("abc " * (MAX_USER_CHARS // 4 + 10), context=8)
    assert corpus.truncated and len(corpus.train_ids) + len(corpus.val_ids) == MAX_USER_CHARS

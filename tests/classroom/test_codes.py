"""Join codes, keys and tokens, and the text a student types: store.codes (no database)."""

from __future__ import annotations

import unicodedata

import pytest

from store import codes


def test_the_alphabet_has_30_symbols_and_no_look_alike_pair():
    assert len(codes.ALPHABET) == 30 and codes.CODE_LENGTH == 6
    assert 30**6 > 7e8
    for group in ("0O", "1IL", "5S", "8B", "UV"):
        assert sum(c in codes.ALPHABET for c in group) == 1, group


def test_codes_are_random_symbols_of_the_alphabet():
    made = {codes.new_code() for _ in range(2000)}
    assert len(made) == 2000  # 2000 draws from 7e8: a repeat has odds of 3 in 1000
    assert all(len(c) == 6 and set(c) <= set(codes.ALPHABET) for c in made)
    assert set("".join(made)) == set(codes.ALPHABET)  # 12000 symbols: every one of the 30 turns up


@pytest.mark.parametrize("typed, code", [
    ("K7M4QX", "K7M4QX"), ("k7m4qx", "K7M4QX"), (" k7m-4qx ", "K7M4QX"), ("K7M 4QX", "K7M4QX"),
    ("k7m–4qx", "K7M4QX"),  # a phone turns "-" into an en dash
    ("KOM4QX", "K0M4QX"), ("KIM4QX", "K1M4QX"), ("KLM4QX", "K1M4QX"), ("KSM4QX", "K5M4QX"),
    ("KBM4QX", "K8M4QX"), ("KUM4QX", "KVM4QX"), ("Ｋ７Ｍ４ＱＸ", "K7M4QX"),  # full-width, from a CJK keyboard
])
def test_what_a_student_types_reads_as_the_code(typed, code):
    assert codes.normal_code(typed) == code


@pytest.mark.parametrize("typed", ["", "K7M4Q", "K7M4QXX", "K7M4Q!", "K7M4Q\u0301X", "K" * 1000, None, 123456,
                                   "<b>K7M4QX</b>", "K7M\n4QX"])
def test_what_cannot_be_a_code_is_none(typed):
    assert codes.normal_code(typed) is None


def test_a_shown_code_reads_back():
    code = codes.new_code()
    assert codes.shown_code(code) == f"{code[:3]}\u2011{code[3:]}"  # a hyphen no line breaks at
    assert codes.normal_code(f"{code[:3]}-{code[3:]}") == code
    assert codes.normal_code(codes.shown_code(code)) == code
    assert codes.normal_code(codes.shown_code(code).lower()) == code


def test_keys_and_tokens_are_long_random_and_url_safe():
    keys = {codes.new_key() for _ in range(200)}
    tokens = {codes.new_token() for _ in range(200)}
    assert len(keys) == len(tokens) == 200
    assert {len(k) for k in keys} == {43} and {len(t) for t in tokens} == {22}  # 256 and 128 bits
    allowed = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert all(set(s) <= allowed for s in keys | tokens)


def test_a_secret_is_stored_hashed_and_compared_with_its_hash():
    key = codes.new_key()
    stored = codes.hash_secret(key)
    assert len(stored) == 64 and key not in stored and set(stored) <= set("0123456789abcdef")
    assert codes.same_secret(key, stored)
    assert not codes.same_secret(key[:-1], stored)
    assert not codes.same_secret(key + "x", stored)
    assert not codes.same_secret(stored, stored)  # the hash itself is not the key
    for wrong in (None, "", 42, b"bytes", "é" * 10, "x" * 10_000):
        assert not codes.same_secret(wrong, stored)
    assert not codes.same_secret(key, None)


@pytest.mark.parametrize("typed, kept", [
    ("  Ann  ", "Ann"), ("Ann   Lee", "Ann Lee"), ("Ann\tLee\n", "Ann Lee"), ("Ann\r\nLee", "Ann Lee"),
    ("Ann\x00\x07Lee", "AnnLee"), ("\u202eevil\u202c", "evil"),  # a right-to-left override would flip the text
    ("a\u200bb", "ab"), ("\u200b \u200b", None), ("", None), ("   ", None), (None, None), (42, None),
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),  # kept as text
    ("Zoë", "Zoë"), ("Zoe\u0308", "Zoë"), ("李雷", "李雷"), ("🦊 fox", "🦊 fox"),
])
def test_nicknames_are_one_short_line_of_visible_text(typed, kept):
    assert codes.clean_nickname(typed) == kept


@pytest.mark.parametrize("typed, over", [
    ("x" * 24, False), ("x" * 25, True), ("  " + "x" * 24 + "  ", False), ("x " * 12, False), ("x" * 5000, True),
])
def test_a_nickname_over_the_limit_is_found_not_cut(typed, over):
    """The store refuses it (too_long) rather than keep a part the student did not choose."""
    kept = codes.clean_nickname(typed)
    assert codes.too_long(typed, kept, codes.NICKNAME_MAX) is over
    assert over or kept == " ".join(typed.split())


def test_answers_are_text_not_cut():
    assert codes.clean_answer("  3 ") == "3"
    assert codes.clean_answer("a" * 500) == "a" * 500
    assert codes.too_long("a" * 500, "a" * 500, codes.ANSWER_MAX)
    assert not codes.too_long(" 3 " * 100, "3", codes.ANSWER_MAX)  # measured on what is kept
    assert codes.clean_answer(3) == "3" and codes.clean_answer(0.25) == "0.25" and codes.clean_answer(True) == "true"
    assert codes.clean_answer("") is None and codes.clean_answer(None) is None and codes.clean_answer([1]) is None
    huge = "x\n" * 5000  # a huge paste stays cheap to clean, and is over the limit however it cleans
    assert codes.clean_answer(huge) == " ".join("x" * 500) and codes.too_long(huge, "x", codes.ANSWER_MAX)


@pytest.mark.parametrize("typed, kept", [
    (" ", " "), ("  a ", "  a "), ("\t", " "), ("é", "é"), ("e\u0301", "é"), ("\u202e", None), ("", None),
    (None, None), ("a\u200bb", "ab"),
])
def test_a_one_character_answer_is_kept_as_typed(typed, kept):
    """A space is an answer to "the next character" (the model's is often one): not stripped to nothing."""
    assert codes.clean_character(typed) == kept


def test_combining_marks_cannot_pile_up_over_the_lines_above():
    tower = "Z" + "\u0301\u0300\u0302\u0303\u0308" * 40 + "oe"
    for clean in (codes.clean_nickname, codes.clean_answer, codes.clean_character):
        assert clean(tower) == unicodedata.normalize("NFC", "Z\u0301\u0300\u0302oe"), clean
    assert codes.clean_nickname("Việt Nam") == "Việt Nam"  # two marks on one letter stay (ệ: dot below, circumflex)


def test_the_rule_a_message_gives_is_the_codes_own():
    """The example is a code normal_code keeps, CODE_LENGTH symbols long, split as the projector splits it."""
    assert codes.normal_code(codes.EXAMPLE_CODE) == codes.EXAMPLE_CODE
    assert len(codes.EXAMPLE_CODE) == codes.CODE_LENGTH
    assert codes.CODE_RULE == (f"a code is {codes.CODE_LENGTH} letters and digits, "
                               f"like {codes.shown_code(codes.EXAMPLE_CODE)}")

"""The class mode's secrets, as a test can see them: the database keeps no teacher key and no student token (only
their SHA-256), a key is drawn from the operating system's secure source, and a given key or token is compared
with its stored hash in constant time (hmac.compare_digest)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

import pytest
from sqlalchemy import Engine

from classroom import asked
from classroom.questions import ClassQuestion
from store import classes, codes
from tests.classroom.conftest import snapshot

QUESTION = ClassQuestion(kind="number", prompt="How many?", answer=3.0, explanation="Three.", source="test/three")


@pytest.fixture
def db(tmp_path) -> Engine:
    engine = classes.engine_for(f"sqlite:///{tmp_path / 'class.sqlite3'}")
    classes.prepare(engine)
    yield engine
    engine.dispose()


def stored_cells(engine: Engine) -> list[str]:
    return [str(cell) for table in snapshot(engine).values() for row in table for cell in row]


def assert_kept_hashed(engine: Engine, *secrets_given: str) -> None:
    cells = stored_cells(engine)
    for secret in secrets_given:
        assert not [c for c in cells if secret in c], "a secret is stored as it is"
        assert codes.hash_secret(secret) in cells, "its hash is not stored where the store looks"


def test_no_row_of_any_table_holds_a_key_or_a_token(db):
    """Every column of every table, read back once a class was started, once students joined, and once they
    answered: the key and the tokens are nowhere, their SHA-256 is (each step checked before the next needs it)."""
    code, key = classes.start_session(db, time.time(), title="Tuesday")
    assert_kept_hashed(db, key)
    tokens = [codes.new_token() for _ in range(3)]
    for token in tokens:
        classes.join(db, code, token, "Ada", time.time())
    assert_kept_hashed(db, key, *tokens)
    qid = asked.put(db, code, key, QUESTION)
    for token in tokens:
        assert classes.answer(db, code, token, qid, "3", time.time()) is None
    assert_kept_hashed(db, key, *tokens)
    (session,) = snapshot(db)["class_sessions"]
    assert hashlib.sha256(key.encode()).hexdigest() in session


def test_a_hash_is_sha256_and_no_secret_reads_back_from_it():
    key = codes.new_key()
    assert codes.hash_secret(key) == hashlib.sha256(key.encode()).hexdigest()
    assert key not in codes.hash_secret(key)


def test_keys_and_tokens_come_from_the_secure_source(monkeypatch):
    """new_key and new_token are what secrets.token_urlsafe gave, asked for 256 and 128 bits at least."""
    asked_for = []

    def spy(n: int) -> str:
        asked_for.append(n)
        return f"from-the-secure-source-{len(asked_for):03d}-" + "x" * 20

    monkeypatch.setattr(secrets, "token_urlsafe", spy)
    key, token = codes.new_key(), codes.new_token()
    assert (key, token) == ("from-the-secure-source-001-" + "x" * 20, "from-the-secure-source-002-" + "x" * 20)
    assert asked_for == [codes.KEY_BYTES, codes.TOKEN_BYTES] and codes.KEY_BYTES >= 32 and codes.TOKEN_BYTES >= 16


def test_a_started_class_gets_its_key_from_the_secure_source(db, monkeypatch):
    made = []
    real = secrets.token_urlsafe

    def spy(n: int) -> str:
        made.append(real(n))
        return made[-1]

    monkeypatch.setattr(secrets, "token_urlsafe", spy)
    _, key = classes.start_session(db, time.time())
    assert key in made


def test_codes_are_drawn_with_the_secure_source(monkeypatch):
    drawn = []
    real = secrets.choice

    def spy(seq):
        drawn.append(real(seq))
        return drawn[-1]

    monkeypatch.setattr(secrets, "choice", spy)
    code = codes.new_code()
    assert code == "".join(drawn) and len(drawn) == codes.CODE_LENGTH


def test_keys_look_random_across_many():
    """Whatever the source, 500 keys: all different, 43 URL-safe characters, and the characters spread over the
    alphabet of 64 as a random source spreads them (a weak or seeded source repeats, a counter does not spread)."""
    keys = [codes.new_key() for _ in range(500)]
    assert len(set(keys)) == len(keys) and {len(k) for k in keys} == {43}
    counts = [0] * 64
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for k in keys:
        for c in k[:42]:  # the 43rd character carries 4 bits only
            counts[alphabet.index(c)] += 1
    expected = 500 * 42 / 64
    chi2 = sum((n - expected) ** 2 / expected for n in counts)
    assert chi2 < 130, chi2  # 63 degrees of freedom: p < 1e-6 beyond 130


def test_a_secret_is_compared_in_constant_time(monkeypatch):
    """same_secret gives its verdict by hmac.compare_digest, for a right and a wrong secret alike."""
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    key = codes.new_key()
    stored = codes.hash_secret(key)
    assert codes.same_secret(key, stored) and len(calls) == 1
    assert not codes.same_secret(key[:-1] + ("A" if key[-1] != "A" else "B"), stored) and len(calls) == 2


def test_the_store_checks_a_teacher_key_in_constant_time(db, monkeypatch):
    """A teacher's call, right key or wrong, goes through hmac.compare_digest: no `==` on the hash anywhere."""
    code, key = classes.start_session(db, time.time())
    calls = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    assert isinstance(classes.teacher(db, code, key), classes.Session) and calls
    calls.clear()
    assert isinstance(classes.teacher(db, code, codes.new_key()), classes.Refusal) and calls
    calls.clear()
    assert isinstance(classes.export_rows(db, code, "x" * 43), classes.Refusal) and calls

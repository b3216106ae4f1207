"""What one network address may send: new students, and wrong join codes.

A class's seats stop a flood of made-up students in one class; these budgets stop one address making students in
every class, or trying join codes one after another until one opens a class. Each is generous enough for a school
whose every phone reaches the app from one address: JOIN_BURST new students at once, then one more every JOIN_S
seconds (five classes of 40 joining together, then a class a minute); GUESS_BURST wrong codes at once, then one
every GUESS_S seconds (a room's typing slips, never a search of the codes: there are 30**6). A guess from an address
past its budget is refused before the code is looked up, right or wrong, so a refusal says nothing about the code.

The budget is the same rule as a student's answers (the cell-rate algorithm, store.classes.answers): one row per address
and kind holds when its budget is whole again, moved one interval later by each use, in one statement (two processes
cannot both take the last). The address itself is never stored: the row's key is an HMAC of it under a random key
the database keeps (meta "address_key"), and a row is deleted once its budget is whole again (sessions._purge, at
least hourly), so an address is kept, as a keyed hash, at most LONGEST_S seconds (a budget spent whole comes back
within it) plus an hour.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Literal

from sqlalchemy import Connection, Engine, case, select

from store.classes.records import upsert
from store.schema import address_budgets, meta

Kind = Literal["join", "guess"]
JOIN_BURST, JOIN_S = 200, 1.0
GUESS_BURST, GUESS_S = 20, 3.0
RULES: dict[str, tuple[int, float]] = {"join": (JOIN_BURST, JOIN_S), "guess": (GUESS_BURST, GUESS_S)}
LONGEST_S = max(burst * interval for burst, interval in RULES.values())  # a budget spent is whole again within


def _address_key(conn: Connection) -> bytes | None:
    """The database's random key for hashing addresses; None before the first budget was spent."""
    value = conn.scalar(select(meta.c.value).where(meta.c.key == "address_key"))
    return None if value is None else bytes.fromhex(value)


def _hash(key: bytes, address: str) -> str:
    return hmac.new(key, address.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def spend(engine: Engine, conn: Connection, kind: Kind, address: str, now: float) -> bool:
    """Take one from the address's budget of this kind, inside the caller's (writing) transaction: whether there
    was one."""
    burst, interval = RULES[kind]
    if (key := _address_key(conn)) is None:  # the first address: make the database's key
        conn.execute(upsert(engine, meta).values(key="address_key", value=secrets.token_hex(32))
                     .on_conflict_do_nothing(index_elements=[meta.c.key]))
        key = _address_key(conn)
    digest = _hash(key, address)
    conn.execute(upsert(engine, address_budgets).values(address_hash=digest, kind=kind, whole_at=now)
                 .on_conflict_do_nothing(index_elements=[address_budgets.c.address_hash, address_budgets.c.kind]))
    whole_at = address_budgets.c.whole_at
    return conn.execute(address_budgets.update().where(
        address_budgets.c.address_hash == digest, address_budgets.c.kind == kind,
        whole_at <= now + (burst - 1) * interval,
    ).values(whole_at=case((whole_at > now, whole_at), else_=now) + interval)).rowcount == 1


def spent(conn: Connection, kind: Kind, address: str, now: float) -> bool:
    """Whether the address has nothing left of this kind now (nothing is taken; a reading transaction will do)."""
    burst, interval = RULES[kind]
    if (key := _address_key(conn)) is None:
        return False
    whole_at = conn.scalar(select(address_budgets.c.whole_at).where(
        address_budgets.c.address_hash == _hash(key, address), address_budgets.c.kind == kind))
    return whole_at is not None and whole_at > now + (burst - 1) * interval


def forget_whole(conn: Connection, now: float) -> int:
    """Delete the rows of budgets whole again by now (they hold nothing a later call needs); how many."""
    return conn.execute(address_budgets.delete().where(address_budgets.c.whole_at <= now)).rowcount

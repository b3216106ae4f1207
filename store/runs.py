"""Trained runs a link can share: a model trained on the Training page, kept in the app's database (the class
mode's, ui.compute.database) under a short random id, so any browser and any server process can open it; the
table is store.schema's trained_runs.

Plain SQL (no UI library), one transaction per call, every database failure a StoreError with a sentence.

Limits, so that runs cannot fill the disk under the class mode's tables (the same database): a run is kept
EXPIRE_DAYS days; a browser session keeps its PER_SESSION newest runs (an older one is deleted when a newer is
stored); a run's weights may be at most MAX_RUN_BYTES (the largest model the Training page allows is far below
it); and the server keeps at most MAX_RUNS runs and MAX_TOTAL_BYTES of weights in all, whoever stored them: a
script that makes a new session for every run meets that cap, and its oldest runs go first. All of it is
enforced whenever a run is stored, in the same transaction; on SQLite the freed pages then leave the file
(store.engine.reclaim), so the file shrinks back when runs are deleted.
"""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, func, select

from store import engine as sql
from store.errors import RUNS_UNREACHABLE, RunIdTaken
from store.schema import RUN_ID_LENGTH, RUNS_LOCK, for_runs, trained_runs

EXPIRE_DAYS = 7
PER_SESSION = 5  # runs kept per browser session, the newest
MAX_RUN_BYTES = 8_000_000  # a run's .npz: d_model 64, 2 layers and a large vocabulary stay under 2 MB
# In all, whoever stored them: 250 MB is 125 runs of the largest model, 300 students' five small runs each
# several times over, and a bound a server's disk can take under the class tables.
MAX_RUNS = 2_000
MAX_TOTAL_BYTES = 250_000_000
ID_LENGTH = RUN_ID_LENGTH
ID_CHARS = string.ascii_letters + string.digits  # 62^8: about 2e14 ids, none guessable

UNREACHABLE = RUNS_UNREACHABLE  # the reason; the page says the rest
# What the page says of a stored run, wherever it promises a link: the run's limits, as the code keeps them
KEPT_RULE = (f"A browser session keeps its {PER_SESSION} newest stopped runs (each Stop stores one): a newer one "
             "replaces the oldest, and the oldest's link stops working. The server keeps at most "
             f"{MAX_RUNS:,} runs ({MAX_TOTAL_BYTES // 1_000_000} MB) from everyone together, the oldest going first.")


@dataclass(frozen=True)
class StoredRun:
    id: str
    name: str
    weights: bytes
    config: dict
    meta: dict
    stored_at: float
    expires_at: float


class RunExpired(LookupError):
    """The run was stored once but its time is up (or its session stored newer runs)."""


def new_id() -> str:
    return "".join(secrets.choice(ID_CHARS) for _ in range(ID_LENGTH))


def valid_id(run_id: str) -> bool:
    return len(run_id) == ID_LENGTH and all(c in ID_CHARS for c in run_id)


@for_runs
def store(engine: Engine, run_id: str, owner: str, name: str, weights: bytes, config: dict, meta: dict,
          now: float) -> float:
    """Keep the run `run_id` (replacing the owner's own run of that id, never another's: RunIdTaken); returns
    when it expires. ValueError when it is over MAX_RUN_BYTES.
    Every expired run, the owner's runs beyond the PER_SESSION newest and everyone's oldest beyond MAX_RUNS or
    MAX_TOTAL_BYTES are deleted in the same transaction."""
    if len(weights) > MAX_RUN_BYTES:
        raise ValueError(f"This run's weights take {len(weights) / 1e6:.1f} MB, over the "
                         f"{MAX_RUN_BYTES / 1e6:.0f} MB a stored run may take.")
    expires = now + EXPIRE_DAYS * 86_400
    with sql.writing(engine) as conn:
        if engine.dialect.name == "postgresql":  # stores take turns, so the cap counts every other store's run
            conn.execute(select(func.pg_advisory_xact_lock(RUNS_LOCK)))
        freed = conn.execute(trained_runs.delete().where(trained_runs.c.expires_at < now)).rowcount
        freed += conn.execute(trained_runs.delete().where(trained_runs.c.id == run_id,
                                                          trained_runs.c.owner == owner)).rowcount
        if conn.scalar(select(trained_runs.c.id).where(trained_runs.c.id == run_id)) is not None:
            raise RunIdTaken(f"The run id {run_id} is taken: draw another.")
        conn.execute(trained_runs.insert().values(
            id=run_id, owner=owner, name=name[:200], weights=weights, config=json.dumps(config),
            meta=json.dumps(meta), size=len(weights), stored_at=now, expires_at=expires))
        older = conn.scalars(select(trained_runs.c.id).where(trained_runs.c.owner == owner)
                             .order_by(trained_runs.c.stored_at.desc()).offset(PER_SESSION)).all()
        freed += _delete(conn, older) + _delete(conn, _over_the_cap(conn, run_id, len(weights)))
    if freed:
        sql.reclaim(engine)
    return expires


def _over_the_cap(conn: Connection, kept_id: str, kept_size: int) -> list[str]:
    """The runs past the newest that fit MAX_RUNS and MAX_TOTAL_BYTES together, the one just stored counted
    first (it always stays: it is at most MAX_RUN_BYTES)."""
    others = conn.execute(select(trained_runs.c.id, trained_runs.c.size).where(trained_runs.c.id != kept_id)
                          .order_by(trained_runs.c.stored_at.desc(), trained_runs.c.id)).all()
    count, total = 1, kept_size
    for n, (_, size) in enumerate(others):
        count, total = count + 1, total + size
        if count > MAX_RUNS or total > MAX_TOTAL_BYTES:
            return [run_id for run_id, _ in others[n:]]
    return []


def _delete(conn: Connection, run_ids: list[str]) -> int:
    if not run_ids:
        return 0
    return conn.execute(trained_runs.delete().where(trained_runs.c.id.in_(run_ids))).rowcount


@for_runs
def load(engine: Engine, run_id: str, now: float) -> StoredRun:
    """The run `run_id`. KeyError when no such run was ever kept (or it was deleted), RunExpired when its time
    is up; StoreError when the database cannot be read."""
    with sql.reading(engine) as conn:
        row = conn.execute(select(trained_runs).where(trained_runs.c.id == run_id)).first()
    if row is None:
        raise KeyError(run_id)
    if row.expires_at < now:
        raise RunExpired(run_id)
    return StoredRun(row.id, row.name, bytes(row.weights), json.loads(row.config), json.loads(row.meta),
                     row.stored_at, row.expires_at)


@for_runs
def owned(engine: Engine, owner: str) -> list[str]:
    """The ids of the runs a browser session has kept, newest first (for tests and the cap)."""
    with sql.reading(engine) as conn:
        return list(conn.scalars(select(trained_runs.c.id).where(trained_runs.c.owner == owner)
                                 .order_by(trained_runs.c.stored_at.desc())))

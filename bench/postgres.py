"""A PostgreSQL schema of one's own, for a test or a benchmark run on a shared server: made, first on the search
path of the URL it yields, and dropped with everything in it afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import make_url, text

from store import classes


@contextmanager
def own_schema(server: str, prefix: str = "t") -> Iterator[str]:
    """The server's URL (psycopg 3) with a new schema `<prefix>_<random>` first on its search path."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = classes.engine_for(server)
    try:
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
        url = make_url(server).set(drivername="postgresql+psycopg")
        yield url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    finally:
        admin.dispose()

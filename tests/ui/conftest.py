"""The class store's real databases (a SQLite file, PostgreSQL) for the store of trained runs, which shares them."""

from tests.classroom.conftest import (  # noqa: F401 (fixtures, found by pytest under these names)
    db_url,
    engine,
    make_engine,
    postgres_server,
    postgres_url,
)

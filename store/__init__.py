"""The app's data store: every table and every SQL statement, on SQLAlchemy Core, the same on SQLite and
PostgreSQL. No UI library here; a page or a test hands each call an engine.

    engine.py      engines (the one URL rule, the connection settings), transactions, each part prepared once
    errors.py      the StoreError family, and a database failure said as a sentence a page shows
    schema.py      every table, the class tables' migrations, and how each part's tables are made
    codes.py       class codes, keys, tokens, nicknames and answers as the store cleans and hashes them
    classes/       the class mode's statements (its entry, store.classes, lists the calls)
    runs.py        trained runs a link can share

Where the database is (the environment, secrets.toml, a file of the user's) is ui.compute.database's.
"""

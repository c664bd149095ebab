"""Opening a SQLite file the way every store here does: WAL (readers never wait for a writer), autocommit
(transactions are explicit), usable from any thread behind the store's own lock."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from core.errors import StoreUnavailable


def open_database(path: Path, schema: str, *, unavailable: str) -> sqlite3.Connection:
    """The connection, with `schema` applied; StoreUnavailable(`unavailable`) when the file cannot be opened."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=5000")
        conn.executescript(schema)
        return conn
    except sqlite3.Error as exc:
        raise StoreUnavailable(unavailable, key="err_store_unopenable") from exc

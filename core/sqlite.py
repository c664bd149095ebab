"""Opening a SQLite store the way every store here does (WAL: readers never wait for a writer; autocommit:
transactions are explicit; usable from any thread behind the store's own lock), and knowing when it is damaged.

A store that existed is never silently recreated empty. How "a database was here" is told from "first run":

- A new store is written whole under a temporary name and linked into place, so a file under a store's name
  was always a whole database: a 0-byte file, or one without SQLite's 16-byte header, is damage, never a first
  run (SQLite itself would take a 0-byte file for a new, empty database).
- A missing file whose backups exist (DATA_DIR/backups/<name>/, core.backup) was there before: missing is
  damage too. Without a backup a missing file is a first run; a store deleted before its first backup (the
  first minutes after it was made) cannot be told from one never made.
- An existing file is checked before use: the header, that the file is not shorter than its header says
  (when no write-ahead log is pending), then PRAGMA quick_check.

A damaged store opens as a `DamagedConnection`: every use raises StoreDamaged, one sentence naming the store
and what to do (`python -m assistant repair`). The store object exists, so what does not need it keeps
working: damaged cards never take down questions or notes. At run time a query meeting damage
(SQLITE_CORRUPT, SQLITE_NOTADB) turns the store damaged the same way, and a full disk (SQLITE_FULL) raises
DiskFull: nothing was written, nothing is damaged.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.errors import DiskFull, Notice, StoreDamaged, StoreUnavailable

log = logging.getLogger(__name__)

MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class StoreKind:
    """One of the data folder's SQLite stores."""
    file: str                      # its path under the data folder
    what: str                      # what it is, in English ("The study cards database")
    what_key: str                  # the same in static/i18n.json
    counted: tuple[str, ...] = ()  # tables whose rows a backup counts (what a restore brings back)

    @property
    def name(self) -> str:
        return Path(self.file).name

    def data_dir(self, path: Path) -> Path | None:
        """The data folder of the store at `path`, when it sits where this kind lives in one."""
        parts = Path(self.file).parts
        path = Path(path)
        return path.parents[len(parts) - 1] if path.parts[-len(parts):] == parts else None


DOCUMENTS = StoreKind("documents.sqlite", "The documents database", "store_documents",
                      ("documents", "chunks"))
MEMORIES = StoreKind("memory/memories.sqlite3", "The notes and memories database", "store_memories",
                     ("memories",))
CARDS = StoreKind("study/cards.sqlite3", "The study cards database", "store_cards",
                  ("cards", "reviews", "quiz_answers"))
GRAPH = StoreKind("memory/graph.sqlite3", "The concept graph database", "store_graph",
                  ("graph_entities", "graph_relations"))
GRAPH_OUTBOX = StoreKind("memory/graph_outbox.sqlite3", "The graph server's waiting writes", "store_graph_outbox",
                         ("graph_outbox",))
STORES = (DOCUMENTS, MEMORIES, CARDS, GRAPH, GRAPH_OUTBOX)


# -- is it whole? ---------------------------------------------------------------------------------------------

def sidecars(path: Path) -> list[Path]:
    """The write-ahead log and shared-memory files beside a database."""
    return [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal")]


def header_damage(path: Path) -> str | None:
    """Why the file at `path` cannot be a whole database, judged from its size and header alone (no SQLite):
    "empty" (0 bytes), "header" (no SQLite header), "truncated" (shorter than its header says), or None."""
    size = path.stat().st_size
    if size == 0:
        return "empty"
    with open(path, "rb") as f:
        head = f.read(100)
    if len(head) < 100 or head[:16] != MAGIC:
        return "header"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return "header"
    pages = int.from_bytes(head[28:32], "big")
    wal = path.with_name(path.name + "-wal")
    pending = wal.exists() and wal.stat().st_size > 0   # a checkpoint cut short by a crash: the log completes it
    if not pending and head[24:28] == head[92:96] and pages and size < pages * page_size:
        return "truncated"
    return None


def quick_check(conn: sqlite3.Connection) -> str | None:
    """None when PRAGMA quick_check finds the database whole, else what it found."""
    try:
        rows = [r[0] for r in sqlite3.Connection.execute(conn, "PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        if (getattr(exc, "sqlite_errorname", "") or "").startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            raise
        return str(exc)
    return None if rows == ["ok"] else "; ".join(rows[:3])


def damage_of(path: Path) -> str | None:
    """Why the existing file at `path` is not a whole database ("empty", "header", "truncated", or what
    quick_check found), or None. Opens it read-only: nothing is created or changed."""
    reason = header_damage(path)
    if reason:
        return reason
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        return quick_check(conn)
    finally:
        conn.close()


REASONS = {"empty": "emptied (0 bytes)", "header": "its header is garbled", "truncated": "cut short",
           "missing": "missing"}


def described(reason: str) -> str:
    return REASONS.get(reason, f"it fails SQLite's integrity check ({reason})")


def has_backup(kind: StoreKind, data_dir: Path | None) -> bool:
    from core.backup import backups_of   # core.backup builds on this module
    return bool(data_dir and backups_of(data_dir, kind))


def damaged_error(kind: StoreKind, data_dir: Path | None) -> StoreDamaged:
    """The one sentence of a damaged store: what it is, which file, and what to do."""
    what = Notice(kind.what, kind.what_key)
    if has_backup(kind, data_dir):
        return StoreDamaged(f"{kind.what} ({kind.file}) is damaged; stop the app and run "
                            "`python -m assistant repair` to restore it from the last backup.",
                            key="err_store_damaged", what=what, file=kind.file, store=kind.file)
    return StoreDamaged(f"{kind.what} ({kind.file}) is damaged and has no backup yet; stop the app and run "
                        "`python -m assistant repair` to set it aside (it is kept) and start it again.",
                        key="err_store_damaged_no_backup", what=what, file=kind.file, store=kind.file)


# -- connections -----------------------------------------------------------------------------------------------

class _State:
    """What the connections of one store share: whether it was found damaged, and the sentence saying so."""

    def __init__(self, kind: StoreKind | None, path: Path):
        self.kind, self.path = kind, path
        self.data_dir = kind.data_dir(path) if kind else None
        self.reason: str | None = None
        self._lock = threading.Lock()

    def damaged(self, reason: str) -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
                log.error("%s is damaged (%s): refused until `python -m assistant repair` restores it",
                          self.path, described(reason))

    def error(self) -> StoreDamaged:
        if self.kind is None:
            return StoreDamaged(f"The database {self.path.name} is damaged; stop the app and run "
                                "`python -m assistant repair`.", key="err_database_damaged", file=self.path.name)
        return damaged_error(self.kind, self.data_dir)


@contextmanager
def _translated(state: _State):
    """SQLite's damage and full-disk errors as the sentences a person can act on."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith("SQLITE_FULL") or "database or disk is full" in str(exc):
            raise DiskFull() from exc
        if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            state.damaged(str(exc))
            raise state.error() from exc
        raise


class _Cursor(sqlite3.Cursor):
    """A cursor whose every step says damage and a full disk the way _translated does."""


def _translating(name: str):
    method = getattr(sqlite3.Cursor, name)

    def step(self, *args):
        with _translated(self.connection.state):
            return method(self, *args)
    step.__name__ = name
    return step


for _name in ("execute", "executemany", "executescript", "fetchone", "fetchmany", "fetchall", "__next__"):
    setattr(_Cursor, _name, _translating(_name))


class StoreConnection(sqlite3.Connection):
    """A connection whose damage and full-disk errors are StoreDamaged and DiskFull; once its store is found
    damaged, every use raises StoreDamaged (no write goes on into a damaged file)."""
    state: _State

    def _live(self) -> None:
        if self.state.reason is not None:
            raise self.state.error()

    def execute(self, sql, parameters=()):
        if sql == "ROLLBACK" and (self.state.reason is not None or not self.in_transaction):
            # SQLite already rolled back (a full disk does), or damage interrupted the transaction: end it if
            # it is open, so the file's lock is let go, and let the error that got here be the one raised
            try:
                return sqlite3.Connection.execute(self, sql) if self.in_transaction else None
            except sqlite3.Error:
                return None
        self._live()
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql, parameters):
        self._live()
        return self.cursor(_Cursor).executemany(sql, parameters)

    def executescript(self, script):
        self._live()
        return self.cursor(_Cursor).executescript(script)


class DamagedConnection:
    """Stands in for the connection of a store found damaged: every use raises its StoreDamaged."""

    def __init__(self, state: _State):
        self.state = state

    def _refuse(self, *args, **kwargs):
        raise self.state.error()

    execute = executemany = executescript = cursor = commit = rollback = backup = _refuse
    __enter__ = _refuse

    def __exit__(self, *exc) -> bool:
        return False

    def close(self) -> None:
        pass


def is_damaged(conn) -> bool:
    return isinstance(conn, DamagedConnection) or getattr(getattr(conn, "state", None), "reason", None) is not None


def _create(path: Path, schema: str) -> None:
    """A new store, written whole under a temporary name and linked into place (only if no other process made
    one meanwhile): a file under the store's name is always a whole database."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{threading.get_ident()}")
    for leftover in (tmp, *sidecars(tmp)):
        leftover.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            conn.executescript(schema)
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass                                  # made by another process meanwhile: that one is used
        except OSError:                           # a filesystem without hard links
            if not path.exists():
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, *sidecars(tmp)):
            leftover.unlink(missing_ok=True)


def _connect(path: Path, state: _State, timeout: float) -> StoreConnection:
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=timeout,
                           factory=StoreConnection)
    conn.state = state
    return conn


def open_database(path: Path, schema: str, *, unavailable: str, kind: StoreKind | None = None,
                  timeout: float = 5.0) -> sqlite3.Connection:
    """The store's connection with `schema` applied, or a DamagedConnection when the file is damaged (see the
    module's docstring); StoreUnavailable(`unavailable`) when it cannot be opened at all, DiskFull when
    there is no room to create it."""
    path = Path(path)
    state = _State(kind, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            if kind is not None and has_backup(kind, state.data_dir):
                state.damaged("missing")
                return DamagedConnection(state)
            _create(path, schema)
        reason = header_damage(path)
        if reason:
            state.damaged(reason)
            return DamagedConnection(state)
        conn = _connect(path, state, timeout)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            reason = quick_check(conn)
            if reason:
                state.damaged(reason)
                conn.close()
                return DamagedConnection(state)
            conn.executescript(schema)
        except BaseException:
            conn.close()
            raise
        return conn
    except StoreDamaged:
        return DamagedConnection(state)
    except DiskFull:
        raise
    except (sqlite3.Error, OSError) as exc:
        from core.errors import is_disk_full
        if is_disk_full(exc):
            raise DiskFull() from exc
        log.exception("opening %s failed", path)
        raise StoreUnavailable(unavailable, key="err_store_unopenable") from exc


def another_connection(conn, *, timeout: float = 5.0):
    """A second connection to the store of `conn` (a reader of a pool), sharing what it knows about damage."""
    state: _State = conn.state
    if state.reason is not None:
        return DamagedConnection(state)
    other = _connect(state.path, state, timeout)
    other.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    return other

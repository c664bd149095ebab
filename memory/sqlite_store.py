"""The document store of every persistent memory: one SQLite file (WAL) under data_dir, rows per user.

It is the source of truth: Qdrant holds the same vectors for fast search, the graph the entities,
but a memory exists when (and only while) its row exists here. Each row keeps its embedding so that
filtered searches (time range, importance) can be scored exactly without a vector-store filter.

Keyword search is SQLite FTS5 (BM25) over `core.text.search_tokens` (CJK-aware, stopwords removed;
FTS5's porter stemmer then folds English word forms). Each user gets their own FTS table, so BM25
statistics and matches never mix users.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from core.sqlite import MEMORIES, open_database
from core.registry import ProcessRegistry
from core.text import search_tokens
from memory.types import MemoryItem, MemoryType

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    content     TEXT NOT NULL,
    importance  REAL NOT NULL,
    timestamp   REAL NOT NULL,           -- epoch seconds, UTC: when the memory happened
    session_id  TEXT,
    metadata    TEXT NOT NULL DEFAULT '{}',
    vector      BLOB,                    -- float32 embedding of the indexed text (NULL for none)
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_user_type_time ON memories (user_id, memory_type, timestamp);
CREATE INDEX IF NOT EXISTS memories_user_session ON memories (user_id, session_id);
CREATE TABLE IF NOT EXISTS fts_tables (user_id TEXT PRIMARY KEY, name TEXT NOT NULL);
"""

COMMON_DF = 5000  # a query word in this many of a user's memories is a stopword when rarer words are present
_COLUMNS = "id, user_id, memory_type, content, importance, timestamp, session_id, metadata"


def _fts_name(user_id: str) -> str:
    return "fts_" + hashlib.sha1(user_id.encode("utf-8")).hexdigest()[:20]


def fts_query(tokens: list[str]) -> str | None:
    """An FTS5 MATCH expression: any of the tokens (quoted so no token is read as syntax)."""
    unique = list(dict.fromkeys(t for t in tokens if t.strip()))
    if not unique:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique[:64])


def _fts_columns(text: "str | tuple[str, str]") -> tuple[str, str]:
    own, context = (text, "") if isinstance(text, str) else text
    return " ".join(search_tokens(own)), " ".join(search_tokens(context)) if context else ""


class MemoryDocumentStore:
    """Rows of memories, always read and written with a user id. Thread-safe (one connection + lock)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._conn = open_database(self.path, _SCHEMA, kind=MEMORIES, unavailable=(
            f"Cannot open the memory database {self.path}; check the data folder is writable "
            "and not used by another program."))
        self._lock = threading.RLock()
        self._fts_known: set[str] = set()

    # -- helpers ---------------------------------------------------------------------------------
    def _fts(self, user_id: str, create: bool) -> str | None:
        name = _fts_name(user_id)
        if name in self._fts_known:
            return name
        row = self._conn.execute("SELECT name FROM fts_tables WHERE user_id=?", (user_id,)).fetchone()
        if row is None:
            if not create:
                return None
            self._conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5("
                "tokens, context, id UNINDEXED, memory_type UNINDEXED, tokenize='porter unicode61')")
            self._conn.execute("INSERT OR REPLACE INTO fts_tables VALUES (?, ?)", (user_id, name))
        self._fts_known.add(name)
        return name

    @staticmethod
    def _row_to_item(row) -> MemoryItem:
        mid, user, mtype, content, importance, ts, session, meta = row
        return MemoryItem(id=mid, user_id=user, memory_type=MemoryType(mtype), content=content,
                          importance=float(importance),
                          timestamp=datetime.fromtimestamp(ts, tz=timezone.utc),
                          metadata=json.loads(meta or "{}"), session_id=session)

    @staticmethod
    def _filters(types: list[MemoryType] | None, since: float | None, until: float | None,
                 min_importance: float | None, session_id: str | None, prefix: str = "") -> tuple[str, list]:
        sql, args = "", []
        if types:
            sql += f" AND {prefix}memory_type IN ({','.join('?' * len(types))})"
            args += [t.value for t in types]
        if since is not None:
            sql += f" AND {prefix}timestamp >= ?"
            args.append(since)
        if until is not None:
            sql += f" AND {prefix}timestamp <= ?"
            args.append(until)
        if min_importance is not None:
            sql += f" AND {prefix}importance >= ?"
            args.append(min_importance)
        if session_id is not None:
            sql += f" AND {prefix}session_id = ?"
            args.append(session_id)
        return sql, args

    # -- writes ----------------------------------------------------------------------------------
    def insert_many(self, items: list[MemoryItem], vectors: np.ndarray | None = None,
                    index_texts: list["str | tuple[str, str]"] | None = None) -> None:
        """Insert rows (one transaction). `index_texts` is what keyword search indexes (default: the
        content): a text, or (text, context) where context is matched with a lower weight."""
        if not items:
            return
        now = datetime.now(timezone.utc).timestamp()
        rows = []
        for i, it in enumerate(items):
            vec = None if vectors is None else np.asarray(vectors[i], dtype=np.float32).tobytes()
            rows.append((it.id, it.user_id, it.memory_type.value, it.content, float(it.importance),
                         it.timestamp.timestamp(), it.session_id, json.dumps(it.metadata, ensure_ascii=False),
                         vec, now, now))
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    "INSERT INTO memories (id, user_id, memory_type, content, importance, timestamp, "
                    "session_id, metadata, vector, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
                by_user: dict[str, list] = {}
                for i, it in enumerate(items):
                    text = index_texts[i] if index_texts is not None else it.content
                    by_user.setdefault(it.user_id, []).append((*_fts_columns(text), it.id, it.memory_type.value))
                for user, fts_rows in by_user.items():
                    name = self._fts(user, create=True)
                    self._conn.executemany(f"INSERT INTO {name} (tokens, context, id, memory_type) VALUES (?,?,?,?)", fts_rows)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def update(self, item: MemoryItem, vector: np.ndarray | None = None,
               index_text: "str | tuple[str, str] | None" = None) -> None:
        """Rewrite one row (and its keyword index when `index_text` is given)."""
        now = datetime.now(timezone.utc).timestamp()
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.execute(
                    "UPDATE memories SET content=?, importance=?, timestamp=?, session_id=?, metadata=?, "
                    "updated_at=? WHERE id=? AND user_id=?",
                    (item.content, float(item.importance), item.timestamp.timestamp(), item.session_id,
                     json.dumps(item.metadata, ensure_ascii=False), now, item.id, item.user_id))
                if vector is not None:
                    self._conn.execute("UPDATE memories SET vector=? WHERE id=? AND user_id=?",
                                       (np.asarray(vector, dtype=np.float32).tobytes(), item.id, item.user_id))
                if index_text is not None:
                    name = self._fts(item.user_id, create=True)
                    self._conn.execute(f"DELETE FROM {name} WHERE id=?", (item.id,))
                    self._conn.execute(f"INSERT INTO {name} (tokens, context, id, memory_type) VALUES (?,?,?,?)",
                                       (*_fts_columns(index_text), item.id, item.memory_type.value))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def delete(self, user_id: str, ids: list[str]) -> list[str]:
        """Delete this user's rows with these ids; returns the ids that existed (and are now gone)."""
        if not ids:
            return []
        with self._lock:
            found = [r[0] for r in self._select_ids(user_id, ids)]
            if not found:
                return []
            self._conn.execute("BEGIN")
            try:
                name = self._fts(user_id, create=False)
                for i in range(0, len(found), 500):
                    part = found[i:i + 500]
                    marks = ",".join("?" * len(part))
                    self._conn.execute(f"DELETE FROM memories WHERE +user_id=? AND id IN ({marks})", [user_id, *part])
                    if name:
                        self._conn.execute(f"DELETE FROM {name} WHERE id IN ({marks})", part)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return found

    def clear_user(self, user_id: str) -> dict[str, int]:
        """Delete every row of this user; returns how many per memory type."""
        with self._lock:
            counts = self.counts(user_id)
            self._conn.execute("BEGIN")
            try:
                self._conn.execute("DELETE FROM memories WHERE user_id=?", (user_id,))
                name = self._fts(user_id, create=False)
                if name:
                    self._conn.execute(f"DROP TABLE IF EXISTS {name}")
                    self._conn.execute("DELETE FROM fts_tables WHERE user_id=?", (user_id,))
                    self._fts_known.discard(name)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return counts

    # -- reads -----------------------------------------------------------------------------------
    def _select_ids(self, user_id: str, ids: list[str]):
        out = []
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            out += self._conn.execute(
                # "+user_id": look rows up by primary key; with a long id list SQLite would otherwise
                # scan all of the user's rows through the user index.
                f"SELECT {_COLUMNS} FROM memories WHERE +user_id=? AND id IN ({','.join('?' * len(part))})",
                [user_id, *part]).fetchall()
        return out

    def get(self, user_id: str, memory_id: str) -> MemoryItem | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE user_id=? AND id=?",
                                     (user_id, memory_id)).fetchone()
        return self._row_to_item(row) if row else None

    def get_many(self, user_id: str, ids: list[str]) -> dict[str, MemoryItem]:
        with self._lock:
            rows = self._select_ids(user_id, list(dict.fromkeys(ids)))
        return {r[0]: self._row_to_item(r) for r in rows}

    def list(self, user_id: str, *, types: list[MemoryType] | None = None, since: float | None = None,
             until: float | None = None, min_importance: float | None = None, session_id: str | None = None,
             order: str = "timestamp DESC", limit: int | None = None, offset: int = 0) -> list[MemoryItem]:
        allowed = {"timestamp DESC", "timestamp ASC", "importance ASC, timestamp ASC",
                   "importance DESC, timestamp DESC"}
        if order not in allowed:
            raise ValueError(f"order must be one of {sorted(allowed)}")
        where, args = self._filters(types, since, until, min_importance, session_id)
        sql = f"SELECT {_COLUMNS} FROM memories WHERE user_id=?{where} ORDER BY {order}, id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [int(limit), int(offset)]
        with self._lock:
            rows = self._conn.execute(sql, [user_id, *args]).fetchall()
        return [self._row_to_item(r) for r in rows]

    def counts(self, user_id: str) -> dict[str, int]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT memory_type, COUNT(*) FROM memories WHERE user_id=? GROUP BY memory_type",
                (user_id,)).fetchall()
        return {t: n for t, n in rows}

    def sessions(self, user_id: str, types: list[MemoryType] | None = None) -> list[dict]:
        """Sessions of this user, newest first: {"session_id", "count", "start", "end"}."""
        where, args = self._filters(types, None, None, None, None)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT session_id, COUNT(*), MIN(timestamp), MAX(timestamp) FROM memories "
                f"WHERE user_id=? AND session_id IS NOT NULL{where} GROUP BY session_id ORDER BY MAX(timestamp) DESC",
                [user_id, *args]).fetchall()
        return [{"session_id": s, "count": n,
                 "start": datetime.fromtimestamp(a, tz=timezone.utc),
                 "end": datetime.fromtimestamp(b, tz=timezone.utc)} for s, n, a, b in rows]

    def last_in_session(self, user_id: str, memory_type: MemoryType, session_id: str, until: float) -> str | None:
        """Content of the last memory added to this session at or before `until` (ties: last inserted)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT content FROM memories WHERE user_id=? AND memory_type=? AND session_id=? AND timestamp<=? "
                "ORDER BY timestamp DESC, rowid DESC LIMIT 1",
                (user_id, memory_type.value, session_id, until)).fetchone()
        return row[0] if row else None

    def distinct_metadata(self, user_id: str, memory_type: MemoryType, key: str) -> list[str]:
        """Distinct values of one metadata field among this user's memories of this type."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT json_extract(metadata, ?) FROM memories WHERE user_id=? AND memory_type=?",
                (f"$.{key}", user_id, memory_type.value)).fetchall()
        return sorted(r[0] for r in rows if r[0] is not None)

    def newest_timestamp(self, user_id: str, types: list[MemoryType] | None = None) -> float | None:
        where, args = self._filters(types, None, None, None, None)
        with self._lock:
            row = self._conn.execute(f"SELECT MAX(timestamp) FROM memories WHERE user_id=?{where}",
                                     [user_id, *args]).fetchone()
        return row[0] if row and row[0] is not None else None

    def keyword_search(self, user_id: str, query: str, *, types: list[MemoryType] | None = None,
                       limit: int = 50, since: float | None = None, until: float | None = None,
                       min_importance: float | None = None, session_id: str | None = None,
                       context_weight: float = 0.3) -> list[tuple[str, float]]:
        """(memory id, BM25 score ≥ 0, higher is better), best first, for this user only. Words of a
        memory's context count `context_weight` times as much as its own words.

        Work stays bounded on big memories. FTS5 reads a word's whole posting list to score it, so a
        word found in tens of thousands of one user's memories costs tens of milliseconds while its
        IDF (≤ ln 20 at COMMON_DF = 5,000 of 100,000) adds little. When some query words match at least
        COMMON_DF memories and others fewer, the common ones are treated as stopwords for this query;
        dense search still sees the whole query. Below COMMON_DF memories per word nothing changes."""
        tokens = list(dict.fromkeys(search_tokens(query)))
        if not tokens:
            return []
        with self._lock:
            name = self._fts(user_id, create=False)
            if name is None:
                return []
            score = f"bm25({name}, 1.0, {float(context_weight)})"
            if any(v is not None for v in (since, until, min_importance, session_id)):
                where, args = self._filters(types, since, until, min_importance, session_id, prefix="m.")
                base = (f"FROM {name} JOIN memories m ON m.id = {name}.id AND m.user_id = ? "
                        f"WHERE {name} MATCH ?{where}")
                head = [user_id]
            else:
                # The FTS table is this user's own: no join needed (it costs a lookup per matching row).
                where, args = self._filters(types, None, None, None, None, prefix=f"{name}.")
                base = f"FROM {name} WHERE {name} MATCH ?{where}"
                head = []
            try:
                words = self._rare_tokens(name, tokens) or tokens
                rows = self._conn.execute(f"SELECT {name}.id, {score} AS s {base} ORDER BY s LIMIT ?",
                                          [*head, fts_query(words), *args, int(limit)]).fetchall()
            except sqlite3.OperationalError:
                return []  # a query FTS5 cannot parse finds nothing by keyword; dense search still runs
        return [(mid, -float(s)) for mid, s in rows]  # FTS5's bm25() is negative: lower is better

    def _rare_tokens(self, name: str, tokens: list[str]) -> list[str] | None:
        """The query words matching fewer than COMMON_DF memories, when the others match more;
        None when the plain query is cheap enough (or every word is common)."""
        if len(tokens) < 2:
            return None
        rare = []
        for t in tokens:
            n = self._conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {name} WHERE {name} MATCH ? "
                                   f"LIMIT {COMMON_DF})", (fts_query([t]),)).fetchone()[0]
            if n < COMMON_DF:
                rare.append(t)
        return rare if rare and len(rare) < len(tokens) else None

    def vectors(self, user_id: str, *, types: list[MemoryType] | None = None, since: float | None = None,
                until: float | None = None, min_importance: float | None = None,
                session_id: str | None = None, ids: list[str] | None = None) -> tuple[list[str], np.ndarray | None]:
        """Ids and stored embeddings of this user's memories matching the filters (for exact scoring)."""
        where, args = self._filters(types, since, until, min_importance, session_id)
        rows = []
        with self._lock:
            if ids is not None:
                for i in range(0, len(ids), 500):
                    part = ids[i:i + 500]
                    rows += self._conn.execute(
                        f"SELECT id, vector FROM memories WHERE +user_id=? AND vector IS NOT NULL{where} "
                        f"AND id IN ({','.join('?' * len(part))})", [user_id, *args, *part]).fetchall()
            else:
                rows = self._conn.execute(
                    f"SELECT id, vector FROM memories WHERE user_id=? AND vector IS NOT NULL{where}",
                    [user_id, *args]).fetchall()
        if not rows:
            return [], None
        return [r[0] for r in rows], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])

    def has_any(self, user_id: str, memory_type: MemoryType) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM memories WHERE user_id=? AND memory_type=? LIMIT 1",
                                      (user_id, memory_type.value)).fetchone() is not None

    def ids_matching(self, user_id: str, *, types: list[MemoryType] | None = None, since: float | None = None,
                     until: float | None = None, min_importance: float | None = None,
                     session_id: str | None = None) -> list[str]:
        where, args = self._filters(types, since, until, min_importance, session_id)
        with self._lock:
            return [r[0] for r in self._conn.execute(f"SELECT id FROM memories WHERE user_id=?{where}",
                                                     [user_id, *args])]

    def count_matching(self, user_id: str, *, types: list[MemoryType] | None = None, since: float | None = None,
                       until: float | None = None, min_importance: float | None = None,
                       session_id: str | None = None) -> int:
        where, args = self._filters(types, since, until, min_importance, session_id)
        with self._lock:
            return self._conn.execute(f"SELECT COUNT(*) FROM memories WHERE user_id=?{where}",
                                      [user_id, *args]).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


_stores: ProcessRegistry[MemoryDocumentStore] = ProcessRegistry()


def get_document_store(path: Path) -> MemoryDocumentStore:
    """One store (one connection) per database file per process."""
    return _stores.get(str(Path(path).resolve()), lambda: MemoryDocumentStore(Path(path)))


def close_document_store(path: Path) -> None:
    _stores.close(str(Path(path).resolve()))


def close_document_stores() -> None:
    _stores.close_all()

"""The embedded graph: three SQLite tables in one file (WAL), no server.

entities (user_id, key) -> name, label, properties JSON
relations (user_id, source, target, type, memory_id)   one row per relation per memory that recorded it
mentions (user_id, memory_id, key)                      which memory mentions which entity

Tables are prefixed `graph_` so the file can be shared with other SQLite stores. Neighbourhoods
are one recursive CTE over the relation indexes (both directions). One connection guarded by a
lock serves every thread: each call is milliseconds, and SQLite allows one writer anyway.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from core.errors import DiskFull, StoreUnavailable
from core.sqlite import GRAPH, open_database

from .base import (Entity, GraphNeighbour, GraphStore, GraphStoreUnavailable, GraphView, Relation,
                   check_id, clamp_depth, normalise_keys, prepare_memory, rank_neighbours,
                   score_memories)

DEFAULT_FILE_NAME = "graph.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_entities (
    user_id    TEXT NOT NULL,
    key        TEXT NOT NULL,
    name       TEXT NOT NULL,
    label      TEXT NOT NULL DEFAULT 'CONCEPT',
    properties TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (user_id, key)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS graph_relations (
    user_id   TEXT NOT NULL,
    source    TEXT NOT NULL,
    target    TEXT NOT NULL,
    type      TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (user_id, source, target, type, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_relations_by_target ON graph_relations (user_id, target, source);
CREATE INDEX IF NOT EXISTS graph_relations_by_memory ON graph_relations (user_id, memory_id);

CREATE TABLE IF NOT EXISTS graph_mentions (
    user_id   TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    key       TEXT NOT NULL,
    PRIMARY KEY (user_id, memory_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_mentions_by_key ON graph_mentions (user_id, key, memory_id);
"""

# Walk outwards from the query keys that exist, over relations in both directions. UNION keeps
# (key, distance) pairs unique; MIN(d) picks each entity's shortest distance.
WALK = """
WITH RECURSIVE walk(key, d) AS (
    SELECT key, 0 FROM graph_entities
     WHERE user_id = :user AND key IN (SELECT value FROM json_each(:keys))
    UNION
    SELECT r.target, w.d + 1 FROM walk w
      JOIN graph_relations r ON r.user_id = :user AND r.source = w.key
     WHERE w.d < :depth
    UNION
    SELECT r.source, w.d + 1 FROM walk w
      JOIN graph_relations r ON r.user_id = :user AND r.target = w.key
     WHERE w.d < :depth
), nearest(key, d) AS (SELECT key, MIN(d) FROM walk GROUP BY key)
"""

UPSERT_ENTITY = """
INSERT INTO graph_entities (user_id, key, name, label, properties) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (user_id, key) DO UPDATE SET name = excluded.name, label = excluded.label,
    properties = CASE WHEN excluded.properties = '{}' THEN graph_entities.properties
                      ELSE excluded.properties END
"""
INSERT_IMPLICIT_ENTITY = """
INSERT INTO graph_entities (user_id, key, name, label, properties) VALUES (?, ?, ?, 'CONCEPT', '{}')
ON CONFLICT (user_id, key) DO NOTHING
"""


def _dumps(properties: dict) -> str:
    return json.dumps(properties, ensure_ascii=False, sort_keys=True, default=str)


class SQLiteGraphStore(GraphStore):
    def __init__(self, path: str | Path):
        path = Path(path)
        if path.is_dir():
            path = path / DEFAULT_FILE_NAME
        self.path = path
        unavailable = f"Cannot open the embedded graph database at {path}; check that the data folder is writable."
        if str(path) == ":memory:":
            self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self._conn.executescript(SCHEMA)
        else:
            # Damage-aware like every store of the data folder (core.sqlite): a graph file emptied, cut short or
            # garbled is refused in one sentence (questions then use vectors only), never recreated empty.
            try:
                self._conn = open_database(path, SCHEMA, kind=GRAPH, unavailable=unavailable, timeout=30.0)
            except DiskFull:
                raise
            except StoreUnavailable as e:
                raise GraphStoreUnavailable(str(e), key="err_graph_unavailable") from e
        self._lock = threading.RLock()
        self._closed = False

    # --- plumbing ------------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed on success, rolled back on any error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    # --- writes --------------------------------------------------------------------------------

    def add_memory(self, user_id: str, memory_id: str, entities: list[Entity],
                   relations: list[Relation]) -> None:
        check_id("user_id", user_id)
        check_id("memory_id", memory_id)
        batch = prepare_memory(entities, relations)
        if not batch.mentioned_keys:
            return
        with self._write() as conn:
            self._write_entities(conn, user_id, batch.entities, batch.implicit_keys)
            self._write_mentions(conn, user_id, memory_id, batch.mentioned_keys)
            self._write_relations(conn, user_id, memory_id, batch.relations)

    def _write_entities(self, conn: sqlite3.Connection, user_id: str, entities: list[Entity],
                        implicit_keys: list[str]) -> None:
        with_properties = [e.key for e in entities if e.properties]
        stored: dict[str, dict] = {}
        if with_properties:   # merge properties per key: stored values, then the new ones
            stored = {key: json.loads(props) for key, props in conn.execute(
                "SELECT key, properties FROM graph_entities WHERE user_id = ? "
                "AND key IN (SELECT value FROM json_each(?))",
                (user_id, json.dumps(with_properties)))}
        conn.executemany(UPSERT_ENTITY, [
            (user_id, e.key, e.name, e.label, _dumps({**stored.get(e.key, {}), **e.properties}))
            if e.properties else
            (user_id, e.key, e.name, e.label, "{}")     # '{}': keep the stored properties
            for e in entities])
        conn.executemany(INSERT_IMPLICIT_ENTITY, [(user_id, key, key) for key in implicit_keys])

    @staticmethod
    def _write_mentions(conn: sqlite3.Connection, user_id: str, memory_id: str, keys: list[str]) -> None:
        conn.executemany("INSERT OR IGNORE INTO graph_mentions (user_id, memory_id, key) VALUES (?, ?, ?)",
                         [(user_id, memory_id, key) for key in keys])

    @staticmethod
    def _write_relations(conn: sqlite3.Connection, user_id: str, memory_id: str,
                         relations: list[tuple[str, str, str]]) -> None:
        conn.executemany("INSERT OR IGNORE INTO graph_relations (user_id, source, target, type, memory_id) "
                         "VALUES (?, ?, ?, ?, ?)",
                         [(user_id, s, t, type_, memory_id) for s, t, type_ in relations])

    def remove_memory(self, user_id: str, memory_id: str) -> None:
        check_id("user_id", user_id)
        with self._write() as conn:
            keys = [k for (k,) in conn.execute(
                "SELECT key FROM graph_mentions WHERE user_id = ? AND memory_id = ?", (user_id, memory_id))]
            conn.execute("DELETE FROM graph_relations WHERE user_id = ? AND memory_id = ?", (user_id, memory_id))
            conn.execute("DELETE FROM graph_mentions WHERE user_id = ? AND memory_id = ?", (user_id, memory_id))
            orphans = [k for (k,) in conn.execute(
                "SELECT e.key FROM graph_entities e WHERE e.user_id = ? "
                "AND e.key IN (SELECT value FROM json_each(?)) AND NOT EXISTS ("
                "  SELECT 1 FROM graph_mentions m WHERE m.user_id = e.user_id AND m.key = e.key)",
                (user_id, json.dumps(keys)))]
            if orphans:
                orphan_list = json.dumps(orphans)
                conn.execute("DELETE FROM graph_entities WHERE user_id = ? "
                             "AND key IN (SELECT value FROM json_each(?))", (user_id, orphan_list))
                # Like Cypher's DETACH DELETE: no relation may point at a deleted entity.
                conn.execute("DELETE FROM graph_relations WHERE user_id = ?1 "
                             "AND (source IN (SELECT value FROM json_each(?2)) "
                             "  OR target IN (SELECT value FROM json_each(?2)))", (user_id, orphan_list))

    def clear_user(self, user_id: str) -> None:
        check_id("user_id", user_id)
        with self._write() as conn:
            for table in ("graph_relations", "graph_mentions", "graph_entities"):
                conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,))

    # --- reads ---------------------------------------------------------------------------------

    def neighbours(self, user_id: str, keys: list[str], depth: int = 2,
                   limit: int = 50) -> list[GraphNeighbour]:
        check_id("user_id", user_id)
        keys = normalise_keys(keys)
        if not keys or limit <= 0:
            return []
        with self._read() as conn:
            rows = conn.execute(
                WALK + "SELECT e.key, e.name, e.label, n.d FROM nearest n "
                       "JOIN graph_entities e ON e.user_id = :user AND e.key = n.key "
                       "ORDER BY n.d, e.key LIMIT :limit",
                {"user": user_id, "keys": json.dumps(keys), "depth": clamp_depth(depth),
                 "limit": limit}).fetchall()
        return rank_neighbours((GraphNeighbour(k, name, label, d) for k, name, label, d in rows), limit)

    def memories_for(self, user_id: str, keys: list[str], depth: int = 2,
                     limit: int = 100) -> dict[str, float]:
        check_id("user_id", user_id)
        keys = normalise_keys(keys)
        if not keys or limit <= 0:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                WALK + "SELECT m.memory_id, MIN(n.d) FROM nearest n "
                       "JOIN graph_mentions m ON m.user_id = :user AND m.key = n.key "
                       "GROUP BY m.memory_id",
                {"user": user_id, "keys": json.dumps(keys), "depth": clamp_depth(depth)}).fetchall()
        return score_memories(rows, limit)

    def view(self, user_id: str, limit: int = 200) -> GraphView:
        check_id("user_id", user_id)
        with self._read() as conn:
            nodes = [{"key": k, "name": name, "label": label, "memories": n} for k, name, label, n in conn.execute(
                "SELECT e.key, e.name, e.label, COUNT(m.memory_id) AS n FROM graph_entities e "
                "LEFT JOIN graph_mentions m ON m.user_id = e.user_id AND m.key = e.key "
                "WHERE e.user_id = ? GROUP BY e.key ORDER BY n DESC, e.key LIMIT ?",
                (user_id, max(0, limit)))]
            shown = json.dumps([n["key"] for n in nodes])
            edges = [{"source": s, "target": t, "type": type_, "weight": w} for s, t, type_, w in conn.execute(
                "SELECT source, target, type, COUNT(*) FROM graph_relations WHERE user_id = ?1 "
                "AND source IN (SELECT value FROM json_each(?2)) AND target IN (SELECT value FROM json_each(?2)) "
                "GROUP BY source, target, type ORDER BY source, target, type", (user_id, shown))]
        return GraphView(nodes=nodes, edges=edges)

    def stats(self, user_id: str) -> dict:
        check_id("user_id", user_id)
        with self._read() as conn:
            count = lambda table: conn.execute(  # noqa: E731
                f"SELECT COUNT(*) FROM {table} WHERE user_id = ?", (user_id,)).fetchone()[0]
            return {"entities": count("graph_entities"), "relations": count("graph_relations"),
                    "memory_links": count("graph_mentions")}

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __repr__(self) -> str:
        return f"SQLiteGraphStore({str(self.path)!r})"

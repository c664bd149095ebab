"""The graph on a Neo4j server (or any Neo4j 5 compatible Bolt server), with the official driver.

(:Entity {user_id, key, name, label, properties})    properties: a JSON string (Neo4j has no map props)
(:Memory {user_id, memory_id})
(:Memory)-[:MENTIONS]->(:Entity)
(:Entity)-[:RELATION {user_id, type, memory_id}]->(:Entity)   one per relation per memory that recorded it

The relation type is a property, not the relationship type: Cypher cannot take a relationship type
as a parameter, and building queries from text the LLM extracted would be an injection. Every
node carries user_id and every MATCH/MERGE names it, so one user's calls never touch another's
nodes. Writes are batched (`UNWIND $rows AS row MERGE ...` for entities; edges: see LOCK_MEMORY)
inside managed transactions (`session.execute_write`), so a call is all or nothing and transient
errors are retried.

Neo4j 5 Cypher only, no procedures. Tested against Neo4j-compatible ArcadeDB (tests/bolt_server.py).
"""
from __future__ import annotations

import json
import logging
import random
import re
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import neo4j
from neo4j import GraphDatabase, ManagedTransaction
from neo4j.exceptions import (AuthError, ClientError, ConfigurationError, DriverError, Neo4jError,
                              ServiceUnavailable, SessionExpired)

from core.settings import BOLT_SCHEMES

from .base import (Entity, GraphNeighbour, GraphStore, GraphStoreUnavailable, GraphView, Relation,
                   check_id, clamp_depth, normalise_keys, prepare_memory, rank_neighbours,
                   score_memories)

log = logging.getLogger(__name__)
RETRY_SECONDS = 15.0                 # give up retrying conflicts after this long
CONFLICT_ATTEMPTS = 5
# Client errors that are really write conflicts on servers without Neo4j's locking (see _run).
CONFLICT_CODES = {"Neo.ClientError.Schema.ConstraintValidationFailed",
                  "Neo.ClientError.Statement.EntityNotFound"}
T = TypeVar("T")

# Tried one by one at start-up, each with a plain index as fallback. A server that refuses both
# (an edition or a compatible server without them) still works, only slower and without the
# guarantee against duplicate entities.
SCHEMA = [
    ("CREATE CONSTRAINT graph_entity_key IF NOT EXISTS "
     "FOR (e:Entity) REQUIRE (e.user_id, e.key) IS UNIQUE",
     "CREATE INDEX graph_entity_key_index IF NOT EXISTS FOR (e:Entity) ON (e.user_id, e.key)"),
    ("CREATE CONSTRAINT graph_memory_key IF NOT EXISTS "
     "FOR (m:Memory) REQUIRE (m.user_id, m.memory_id) IS UNIQUE",
     "CREATE INDEX graph_memory_key_index IF NOT EXISTS FOR (m:Memory) ON (m.user_id, m.memory_id)"),
]

# --- add_memory --------------------------------------------------------------------------------
READ_PROPERTIES = """
MATCH (e:Entity {user_id: $user}) WHERE e.key IN $keys
RETURN e.key AS key, e.properties AS properties
"""
# row.properties is null when the call brings none: keep what is stored.
MERGE_ENTITIES = """
UNWIND $rows AS row
MERGE (e:Entity {user_id: $user, key: row.key})
SET e.name = row.name, e.label = row.label, e.properties = coalesce(row.properties, e.properties, '{}')
"""
MERGE_IMPLICIT_ENTITIES = """
UNWIND $keys AS key
MERGE (e:Entity {user_id: $user, key: key})
ON CREATE SET e.name = key, e.label = 'CONCEPT', e.properties = '{}'
"""
# Mentions and relations are read once per call and only the missing ones CREATEd, instead of
# `MERGE (m)-[:MENTIONS]->(e)` per row: a relationship MERGE checks the node's existing edges for
# every row, which ArcadeDB does by scanning them, so 1,000 rows into one memory took 1.6 s
# instead of 0.04 s. Touching the Memory node first write-locks it (Neo4j) or makes a concurrent
# writer of the same memory conflict and retry (ArcadeDB), so two calls cannot both add an edge.
LOCK_MEMORY = """
MERGE (m:Memory {user_id: $user, memory_id: $memory})
SET m.updated_at = timestamp()
WITH m
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
RETURN collect(e.key) AS keys
"""
CREATE_MENTIONS = """
MATCH (m:Memory {user_id: $user, memory_id: $memory})
WITH m
UNWIND $keys AS key
MATCH (e:Entity {user_id: $user, key: key})
CREATE (m)-[:MENTIONS]->(e)
"""
# A memory's relations join entities it mentions, so they are found from its Memory node.
MEMORY_RELATIONS = """
MATCH (:Memory {user_id: $user, memory_id: $memory})-[:MENTIONS]->(a:Entity {user_id: $user})
MATCH (a)-[r:RELATION {memory_id: $memory}]->(b:Entity)
RETURN a.key AS source, b.key AS target, r.type AS type
"""
CREATE_RELATIONS = """
UNWIND $rows AS row
MATCH (a:Entity {user_id: $user, key: row.source})
MATCH (b:Entity {user_id: $user, key: row.target})
CREATE (a)-[:RELATION {user_id: $user, type: row.type, memory_id: $memory}]->(b)
"""

# --- remove_memory -----------------------------------------------------------------------------
MENTIONED_KEYS = """
MATCH (:Memory {user_id: $user, memory_id: $memory})-[:MENTIONS]->(e:Entity {user_id: $user})
RETURN e.key AS key
"""
DELETE_RELATIONS = """
MATCH (:Memory {user_id: $user, memory_id: $memory})-[:MENTIONS]->(e:Entity {user_id: $user})
MATCH (e)-[r:RELATION {memory_id: $memory}]-()
WITH DISTINCT r
DELETE r
"""
DELETE_MEMORY = "MATCH (m:Memory {user_id: $user, memory_id: $memory}) DETACH DELETE m"
DELETE_ORPHANS = """
MATCH (e:Entity {user_id: $user}) WHERE e.key IN $keys AND NOT (e)<-[:MENTIONS]-(:Memory)
DETACH DELETE e
"""

# --- reads -------------------------------------------------------------------------------------
FIND_ENTITIES = """
MATCH (e:Entity {user_id: $user}) WHERE e.key IN $keys
RETURN e.key AS key, e.name AS name, e.label AS label
"""
# One hop of a breadth-first walk. Per hop with DISTINCT rather than one variable-length pattern:
# `-[:RELATION*1..2]-` enumerates every path, which explodes around a hub entity that hundreds of
# memories mention; the frontier stays as small as the set of entities.
NEXT_HOP = """
MATCH (a:Entity {user_id: $user})-[:RELATION]-(b:Entity {user_id: $user}) WHERE a.key IN $keys
RETURN DISTINCT b.key AS key, b.name AS name, b.label AS label
"""
MENTIONING_MEMORIES = """
MATCH (m:Memory {user_id: $user})-[:MENTIONS]->(e:Entity {user_id: $user}) WHERE e.key IN $keys
RETURN m.memory_id AS memory, e.key AS key
"""
VIEW_NODES = """
MATCH (e:Entity {user_id: $user})
OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Memory)
WITH e, count(m) AS memories
RETURN e.key AS key, e.name AS name, e.label AS label, memories
ORDER BY memories DESC, key
LIMIT $limit
"""
VIEW_EDGES = """
MATCH (a:Entity {user_id: $user})-[r:RELATION]->(b:Entity {user_id: $user})
WHERE a.key IN $keys AND b.key IN $keys
RETURN a.key AS source, b.key AS target, r.type AS type, count(r) AS weight
ORDER BY source, target, type
"""
COUNT_ENTITIES = "MATCH (e:Entity {user_id: $user}) RETURN count(e) AS n"
COUNT_RELATIONS = "MATCH (:Entity {user_id: $user})-[r:RELATION]->(:Entity) RETURN count(r) AS n"
COUNT_MENTIONS = "MATCH (:Memory {user_id: $user})-[r:MENTIONS]->(:Entity) RETURN count(r) AS n"
CLEAR_ENTITIES = "MATCH (e:Entity {user_id: $user}) DETACH DELETE e"
CLEAR_MEMORIES = "MATCH (m:Memory {user_id: $user}) DETACH DELETE m"


def _reason(error: BaseException) -> str:
    """The useful part of a driver error, e.g. "[Errno 111] Connection refused"."""
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    found = re.findall(r"reason:?\s+(.+?)\)?\s*$", text, flags=re.MULTILINE)
    text = found[-1] if found else text.strip().splitlines()[-1]
    return text.strip().rstrip(".")


def _dumps(properties: dict) -> str:
    return json.dumps(properties, ensure_ascii=False, sort_keys=True, default=str)


class Neo4jGraphStore(GraphStore):
    def __init__(self, uri: str, username: str | None = None, password: str | None = None,
                 database: str | None = None, *, connection_timeout: float = 5.0,
                 create_schema: bool = True):
        """Connect and check the server answers on `database` (raises GraphStoreUnavailable if not).

        With no password the connection is unauthenticated (a server with auth disabled)."""
        self.uri = uri
        self.database = database or None
        auth = (username or "neo4j", password) if password is not None else None
        scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
        if scheme not in BOLT_SCHEMES:        # driver 6 also takes http:// (a preview HTTP API): not ours
            raise GraphStoreUnavailable(
                f"NEO4J_URI {uri!r} is not a Neo4j Bolt address: use bolt://host:7687 or "
                f"neo4j://host:7687, or unset NEO4J_URI to use the embedded graph.", key="err_graph_unavailable")
        try:
            self._driver = GraphDatabase.driver(uri, auth=auth, connection_timeout=connection_timeout,
                                                max_transaction_retry_time=0.0)   # see _run
        except (ConfigurationError, ValueError) as e:
            raise GraphStoreUnavailable(
                f"NEO4J_URI {uri!r} is not a Neo4j Bolt address ({_reason(e)}): use bolt://host:7687 or "
                f"neo4j://host:7687, or unset NEO4J_URI to use the embedded graph.", key="err_graph_unavailable") from e
        try:
            self._driver.verify_connectivity()
            with self._session() as session:            # proves the database exists and is usable
                session.run("RETURN 1 AS ok").consume()
        except BaseException as e:
            self._driver.close()
            if isinstance(e, (Neo4jError, DriverError, OSError)):
                raise self._unavailable(e) from e
            raise
        if create_schema:
            try:
                self._create_schema()
            except BaseException:
                self._driver.close()
                raise

    # --- plumbing ------------------------------------------------------------------------------

    def _unavailable(self, error: BaseException) -> GraphStoreUnavailable:
        where = f"the Neo4j server at {self.uri}"
        if isinstance(error, AuthError):
            return GraphStoreUnavailable(
                f"The Neo4j server at {self.uri} rejected the username or password ({_reason(error)}): "
                f"check NEO4J_USERNAME and NEO4J_PASSWORD, or unset NEO4J_URI to use the embedded graph.")
        if isinstance(error, ClientError) and _database_missing(error):
            name = self.database or "(the server's default)"
            return GraphStoreUnavailable(
                f"The Neo4j server at {self.uri} cannot open database {name}: {_reason(error)}. "
                f"Create it or fix NEO4J_DATABASE, or unset NEO4J_URI to use the embedded graph.")
        if isinstance(error, Neo4jError):
            return GraphStoreUnavailable(
                f"The Neo4j server at {self.uri} refused the graph store: {_reason(error)}. "
                f"Check its settings and the NEO4J_* variables, or unset NEO4J_URI to use the embedded graph.")
        return GraphStoreUnavailable(
            f"Cannot reach {where}: {_reason(error)}. "
            f"Start it or unset NEO4J_URI to use the embedded graph.")

    def _session(self) -> neo4j.Session:
        return self._driver.session(database=self.database)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Connection failures become GraphStoreUnavailable; query bugs stay as they are."""
        try:
            yield
        except (ServiceUnavailable, SessionExpired, AuthError, OSError) as e:
            raise self._unavailable(e) from e
        except ClientError as e:
            # A database not there (yet): a server that is starting opens Bolt before its databases.
            # Unavailable, not a failed write, so a waiting write stays in the outbox and is retried.
            if _database_missing(e):
                raise self._unavailable(e) from e
            raise

    def _run(self, write: bool, work: Callable[[ManagedTransaction], T]) -> T:
        """Run `work` in one managed transaction (`execute_write` / `execute_read`), retrying here.

        The driver's own retry loop is off (max_transaction_retry_time=0) because it also retries a
        refused connection, for up to 30 s by default: a search would hang that long when the
        server is down. Here a lost connection is retried once at once (a pooled connection may
        have gone stale) and then reported; conflicts are retried with a short backoff:
        - retryable server errors (deadlocks, concurrent changes: ArcadeDB reports them often);
        - CONFLICT_CODES, a few times: two transactions MERGE-ing the same new entity both try to
          create it, and a server without Neo4j's MERGE locks (ArcadeDB) fails the later one with
          a constraint violation instead of serialising them; ArcadeDB also reports a node that a
          concurrent transaction deleted as EntityNotFound. Every write here is idempotent (a
          MERGE, a CREATE of what a read in the same transaction found missing, a DELETE), so
          running it again succeeds."""
        deadline = time.monotonic() + RETRY_SECONDS
        delay, reconnected, client_conflicts = 0.05, False, 0
        while True:
            try:
                with self._translated(), self._session() as session:
                    return session.execute_write(work) if write else session.execute_read(work)
            except GraphStoreUnavailable as e:
                if reconnected or isinstance(e.__cause__, AuthError):
                    raise
                reconnected = True
                continue
            except Neo4jError as e:
                conflict = e.code in CONFLICT_CODES
                client_conflicts += conflict
                if (not (e.is_retryable() or conflict) or client_conflicts >= CONFLICT_ATTEMPTS
                        or time.monotonic() + delay > deadline):
                    raise
                log.debug("Graph transaction conflict (%s), retrying in %.2f s", e.code, delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)

    def _write(self, work: Callable[[ManagedTransaction], T]) -> T:
        return self._run(True, work)

    def _read(self, work: Callable[[ManagedTransaction], T]) -> T:
        return self._run(False, work)

    @staticmethod
    def _rows(tx: ManagedTransaction, query: str, **params: Any) -> list[dict]:
        return [record.data() for record in tx.run(query, **params)]

    def _create_schema(self) -> None:
        for statement, fallback in SCHEMA:
            for query in (statement, fallback):
                try:
                    with self._translated(), self._session() as session:
                        session.run(query).consume()
                    break
                except Neo4jError as e:        # unsupported here: try the fallback, else go without
                    log.info("Graph schema statement refused by %s (%s): %s", self.uri, _reason(e), query)

    # --- writes --------------------------------------------------------------------------------

    def add_memory(self, user_id: str, memory_id: str, entities: list[Entity],
                   relations: list[Relation]) -> None:
        check_id("user_id", user_id)
        check_id("memory_id", memory_id)
        batch = prepare_memory(entities, relations)
        if not batch.mentioned_keys:
            return

        def work(tx: ManagedTransaction) -> None:
            self._write_entities(tx, user_id, batch.entities, batch.implicit_keys)
            self._write_mentions(tx, user_id, memory_id, batch.mentioned_keys)
            self._write_relations(tx, user_id, memory_id, batch.relations)

        self._write(work)

    def _write_entities(self, tx: ManagedTransaction, user_id: str, entities: list[Entity],
                        implicit_keys: list[str]) -> None:
        with_properties = [e.key for e in entities if e.properties]
        stored: dict[str, dict] = {}
        if with_properties:   # merge properties per key: stored values, then the new ones
            for row in self._rows(tx, READ_PROPERTIES, user=user_id, keys=with_properties):
                try:
                    stored[row["key"]] = json.loads(row["properties"] or "{}")
                except (TypeError, ValueError):
                    stored[row["key"]] = {}
        rows = [{"key": e.key, "name": e.name, "label": e.label,
                 "properties": _dumps({**stored.get(e.key, {}), **e.properties}) if e.properties else None}
                for e in entities]
        if rows:
            tx.run(MERGE_ENTITIES, user=user_id, rows=rows).consume()
        if implicit_keys:
            tx.run(MERGE_IMPLICIT_ENTITIES, user=user_id, keys=implicit_keys).consume()

    @staticmethod
    def _write_mentions(tx: ManagedTransaction, user_id: str, memory_id: str, keys: list[str]) -> None:
        existing = set(tx.run(LOCK_MEMORY, user=user_id, memory=memory_id).single()["keys"])
        missing = [key for key in keys if key not in existing]
        if missing:
            tx.run(CREATE_MENTIONS, user=user_id, memory=memory_id, keys=missing).consume()

    def _write_relations(self, tx: ManagedTransaction, user_id: str, memory_id: str,
                         relations: list[tuple[str, str, str]]) -> None:
        if not relations:
            return
        existing = {(r["source"], r["target"], r["type"])
                    for r in self._rows(tx, MEMORY_RELATIONS, user=user_id, memory=memory_id)}
        missing = [{"source": s, "target": t, "type": type_} for s, t, type_ in relations
                   if (s, t, type_) not in existing]
        if missing:
            tx.run(CREATE_RELATIONS, user=user_id, memory=memory_id, rows=missing).consume()

    def remove_memory(self, user_id: str, memory_id: str) -> None:
        check_id("user_id", user_id)

        def work(tx: ManagedTransaction) -> None:
            keys = [row["key"] for row in self._rows(tx, MENTIONED_KEYS, user=user_id, memory=memory_id)]
            tx.run(DELETE_RELATIONS, user=user_id, memory=memory_id).consume()
            tx.run(DELETE_MEMORY, user=user_id, memory=memory_id).consume()
            if keys:
                tx.run(DELETE_ORPHANS, user=user_id, keys=keys).consume()

        self._write(work)

    def clear_user(self, user_id: str) -> None:
        check_id("user_id", user_id)

        def work(tx: ManagedTransaction) -> None:
            tx.run(CLEAR_MEMORIES, user=user_id).consume()
            tx.run(CLEAR_ENTITIES, user=user_id).consume()

        self._write(work)

    # --- reads ---------------------------------------------------------------------------------

    def _walk(self, tx: ManagedTransaction, user_id: str, keys: list[str], depth: int) -> list[GraphNeighbour]:
        """Breadth-first from the query keys that exist: every entity within `depth` hops, once,
        at its shortest distance."""
        found = {row["key"]: GraphNeighbour(row["key"], row["name"], row["label"], 0)
                 for row in self._rows(tx, FIND_ENTITIES, user=user_id, keys=keys)}
        frontier = list(found)
        for distance in range(1, depth + 1):
            if not frontier:
                break
            reached = []
            for row in self._rows(tx, NEXT_HOP, user=user_id, keys=frontier):
                if row["key"] not in found:
                    found[row["key"]] = GraphNeighbour(row["key"], row["name"], row["label"], distance)
                    reached.append(row["key"])
            frontier = reached
        return list(found.values())

    def neighbours(self, user_id: str, keys: list[str], depth: int = 2,
                   limit: int = 50) -> list[GraphNeighbour]:
        check_id("user_id", user_id)
        keys = normalise_keys(keys)
        if not keys or limit <= 0:
            return []
        found = self._read(lambda tx: self._walk(tx, user_id, keys, clamp_depth(depth)))
        return rank_neighbours(found, limit)

    def memories_for(self, user_id: str, keys: list[str], depth: int = 2,
                     limit: int = 100) -> dict[str, float]:
        check_id("user_id", user_id)
        keys = normalise_keys(keys)
        if not keys or limit <= 0:
            return {}

        def work(tx: ManagedTransaction) -> list[tuple[str, int]]:
            distance = {n.key: n.distance for n in self._walk(tx, user_id, keys, clamp_depth(depth))}
            if not distance:
                return []
            return [(row["memory"], distance[row["key"]]) for row in
                    self._rows(tx, MENTIONING_MEMORIES, user=user_id, keys=list(distance))]

        return score_memories(self._read(work), limit)

    def view(self, user_id: str, limit: int = 200) -> GraphView:
        check_id("user_id", user_id)

        def work(tx: ManagedTransaction) -> GraphView:
            nodes = [{"key": r["key"], "name": r["name"], "label": r["label"], "memories": r["memories"]}
                     for r in self._rows(tx, VIEW_NODES, user=user_id, limit=max(0, limit))]
            edges = []
            if nodes:
                edges = [{"source": r["source"], "target": r["target"], "type": r["type"], "weight": r["weight"]}
                         for r in self._rows(tx, VIEW_EDGES, user=user_id, keys=[n["key"] for n in nodes])]
            return GraphView(nodes=nodes, edges=edges)

        return self._read(work)

    def stats(self, user_id: str) -> dict:
        check_id("user_id", user_id)

        def work(tx: ManagedTransaction) -> dict:
            count = lambda query: tx.run(query, user=user_id).single()["n"]  # noqa: E731
            return {"entities": count(COUNT_ENTITIES), "relations": count(COUNT_RELATIONS),
                    "memory_links": count(COUNT_MENTIONS)}

        return self._read(work)

    def close(self) -> None:
        self._driver.close()

    def __repr__(self) -> str:
        return f"Neo4jGraphStore({self.uri!r}, database={self.database!r})"


def _database_missing(error: ClientError) -> bool:
    """The server answers but the database is not there (Neo4j: a Database.* code; ArcadeDB: the message)."""
    message = (getattr(error, "message", None) or str(error)).lower()
    return "database" in (error.code or "").lower() or ("database" in message and "not exist" in message)

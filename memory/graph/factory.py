"""The one place that picks the graph backend: Neo4j when a URI is configured, else the embedded store."""
from __future__ import annotations

from pathlib import Path

from .base import GraphStore


def create_graph_store(*, path: str | Path, neo4j_uri: str | None = None,
                       neo4j_username: str | None = None, neo4j_password: str | None = None,
                       neo4j_database: str | None = None, outbox_path: str | Path | None = None) -> GraphStore:
    """Neo4j at `neo4j_uri` when it is set (raises GraphStoreUnavailable if it cannot be reached:
    a configured server that is down is an error, never a silent fallback); otherwise the embedded
    SQLite graph at `path` (a file, or a folder to hold graph.sqlite3).

    With `outbox_path`, writes to the Neo4j server wait in that outbox while the server is away
    after it was reached once, and are replayed when it is back (memory.graph.resilience)."""
    if neo4j_uri and neo4j_uri.strip():
        from .neo4j_store import Neo4jGraphStore   # the driver is imported only when it is used
        server = Neo4jGraphStore(neo4j_uri.strip(), neo4j_username, neo4j_password, neo4j_database)
        if outbox_path is None:
            return server
        from .resilience import OutboxGraphStore
        return OutboxGraphStore(server, outbox_path, target=neo4j_uri.strip())
    from .sqlite_store import SQLiteGraphStore
    return SQLiteGraphStore(path)

"""The one place that picks the graph backend: Neo4j when a URI is configured, else the embedded store."""
from __future__ import annotations

from pathlib import Path

from .base import GraphStore


def create_graph_store(*, path: str | Path, neo4j_uri: str | None = None,
                       neo4j_username: str | None = None, neo4j_password: str | None = None,
                       neo4j_database: str | None = None) -> GraphStore:
    """Neo4j at `neo4j_uri` when it is set (raises GraphStoreUnavailable if it cannot be reached:
    a configured server that is down is an error, never a silent fallback); otherwise the embedded
    SQLite graph at `path` (a file, or a folder to hold graph.sqlite3)."""
    if neo4j_uri and neo4j_uri.strip():
        from .neo4j_store import Neo4jGraphStore   # the driver is imported only when it is used
        return Neo4jGraphStore(neo4j_uri.strip(), neo4j_username, neo4j_password, neo4j_database)
    from .sqlite_store import SQLiteGraphStore
    return SQLiteGraphStore(path)

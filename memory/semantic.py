"""Semantic memory: what the person knows (notes, concepts, facts). Qdrant vectors + an entity graph.

Score: (0.7·vector + 0.3·graph) × (0.8 + 0.4·importance), `vector` = cosine similarity (clamped at
0) and `graph` = the graph store's score for the memory: 1.0 when it mentions an entity of the
query, 1/(1+d) when its nearest entity is d hops away (d ≤ 2). Candidates are the dense top hits
PLUS memories the graph reaches, so graph search finds memories that share no words and little
meaning with the query but are linked to what it names (neighbours, 2-hop concepts).

Entities and relations come from spaCy (`memory.extract`). The graph store is the embedded SQLite
graph under data_dir, or Neo4j when NEO4J_URI is set (`memory.graph.factory`). If a configured graph
server cannot be reached since the start, adding a semantic memory fails with a clear message (and
nothing is half-written); if it goes away after it was reached, the memory is kept and its graph
writes wait in an outbox until the server is back (`memory.graph.resilience`). Either way searches
still answer from vectors alone meanwhile, flagged with score part `graph_unavailable`.
"""
from __future__ import annotations

import logging
from dataclasses import replace

from core.errors import StoreUnavailable
from core.registry import ProcessRegistry
from core.settings import Settings
from memory.extract import extract, query_keys
from memory.graph.base import GraphStore
from memory.graph.resilience import ConnectBackoff
from memory.scoring import semantic_score
from memory.types import MemoryItem, MemoryType
from memory.vector_memory import SearchFilters, VectorBackedMemory

log = logging.getLogger(__name__)

GRAPH_DEPTH = 2
GRAPH_CANDIDATES = 100

_graphs: ProcessRegistry[GraphStore] = ProcessRegistry()
_connecting = ConnectBackoff()


def _graph_key(settings: Settings) -> str:
    return settings.neo4j_uri or str(settings.data_dir.resolve() / "memory" / "graph.sqlite3")


def get_graph_store(settings: Settings) -> GraphStore:
    """The process-wide graph store for these settings (embedded under data_dir, or Neo4j). A Neo4j
    server that cannot be reached is reported in one sentence, then tried again with backoff; once
    reached, its writes outlive it going away (memory.graph.resilience)."""
    from memory.graph.factory import create_graph_store
    key = _graph_key(settings)

    def open_store() -> GraphStore:
        return create_graph_store(
            path=settings.path("memory", "graph.sqlite3"), neo4j_uri=settings.neo4j_uri,
            neo4j_username=settings.neo4j_username, neo4j_password=settings.neo4j_password,
            neo4j_database=settings.neo4j_database, outbox_path=settings.path("memory", "graph_outbox.sqlite3"))

    return _graphs.get(key, lambda: _connecting.open(key, open_store))


def close_graph_store(settings: Settings) -> None:
    """Close the graph store of these settings only, if open."""
    _graphs.close(_graph_key(settings))


def close_graph_stores() -> None:
    _graphs.close_all()


class SemanticMemory(VectorBackedMemory):
    memory_type = MemoryType.SEMANTIC
    purpose = "memory_semantic"

    def __init__(self, *args, graph: GraphStore | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._graph = graph

    @property
    def graph(self) -> GraphStore:
        if self._graph is None:
            self._graph = get_graph_store(self.settings)
        return self._graph

    def add_many(self, items: list[MemoryItem]) -> None:
        extractions = [extract(it.content) for it in items]
        graph = self.graph  # fail before writing anything if the graph server is unreachable
        super().add_many(items)
        done: list[MemoryItem] = []
        try:
            for it, ex in zip(items, extractions):
                graph.add_memory(self.user_id, it.id, ex.entities, ex.relations)
                done.append(it)
        except Exception as exc:
            for it in done:
                try:
                    graph.remove_memory(self.user_id, it.id)
                except Exception:  # noqa: BLE001 - best effort; the original error matters more
                    log.exception("undoing graph links of %s failed", it.id)
            super().remove_many(items)
            if isinstance(exc, StoreUnavailable):
                raise
            log.exception("writing to the graph store failed")
            raise StoreUnavailable("Could not save the memory's concepts in the graph store; "
                                   "check the graph database (or NEO4J_URI) and try again.",
                                   key="err_concepts_not_saved") from exc

    def reindex(self, item: MemoryItem) -> None:
        ex = extract(item.content)
        super().reindex(item)
        self.graph.remove_memory(self.user_id, item.id)
        self.graph.add_memory(self.user_id, item.id, ex.entities, ex.relations)

    def remove_many(self, items: list[MemoryItem]) -> list[str]:
        for it in items:
            self.graph.remove_memory(self.user_id, it.id)
        return super().remove_many(items)

    def clear(self) -> None:
        super().clear()
        self.graph.clear_user(self.user_id)

    def graph_scores(self, query: str) -> tuple[dict[str, float], bool]:
        """(memory id -> graph score, graph available?)."""
        keys = query_keys(query)
        if not keys:
            return {}, True
        try:
            return self.graph.memories_for(self.user_id, keys, depth=GRAPH_DEPTH, limit=GRAPH_CANDIDATES), True
        except StoreUnavailable:
            log.warning("graph store unavailable; semantic search uses vectors only", exc_info=True)
            return {}, False

    def search(self, query: str, *, limit: int, filters: SearchFilters, query_vec=None) -> list[MemoryItem]:
        qv = self.embedder.embed_query(query) if query_vec is None else query_vec
        cands = self.retrieve(query, filters, pool=max(self.pool, limit * 2), query_vec=qv)
        graph, graph_ok = self.graph_scores(query)
        missing = [i for i in graph if i not in cands]
        extra_cos = self.cosines(qv, missing)
        ids = list(cands) + [i for i in missing if i in extra_cos]
        items = self.docs.get_many(self.user_id, ids)
        hits = []
        for mid in ids:
            it = items.get(mid)
            if it is None or not filters.admits(it):
                continue
            c = cands.get(mid)
            vector = c.relevance if c else max(0.0, extra_cos[mid])
            g = graph.get(mid, 0.0)
            parts = {"vector": vector, "graph": g, "importance": it.importance}
            if not graph_ok:
                parts["graph_unavailable"] = 1.0
            hits.append(replace(it, score=semantic_score(vector, g, it.importance), score_parts=parts))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    def graph_stats(self) -> dict:
        """The graph's counts for this user, and how many of their writes wait for the graph server."""
        try:
            stats = self.graph.stats(self.user_id)
        except StoreUnavailable:
            stats = {}
        waiting = self._graph.pending_writes(self.user_id) if self._graph is not None else 0
        return {**stats, "pending_writes": waiting} if waiting else stats

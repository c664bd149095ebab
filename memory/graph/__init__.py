"""Per-user knowledge graph of the memory system: entities, relations, which memories mention them.

    store = create_graph_store(path=settings.data_dir / "graph.sqlite3", neo4j_uri=settings.neo4j_uri, ...)
    store.add_memory(user, memory_id, [Entity("transformer", "Transformer")], [Relation(...)])
    store.memories_for(user, ["transformer"])   # {memory_id: score in [0, 1]}
"""
from .base import (MAX_DEPTH, Entity, GraphNeighbour, GraphStore, GraphStoreUnavailable, GraphView,
                   Relation, distance_score, normalise_key)
from .factory import create_graph_store

__all__ = [
    "Entity", "Relation", "GraphNeighbour", "GraphView", "GraphStore", "GraphStoreUnavailable",
    "create_graph_store", "normalise_key", "distance_score", "MAX_DEPTH",
]

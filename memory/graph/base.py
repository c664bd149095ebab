"""The graph seam: entities, relations and which memories mention them, always scoped to one user.

Two implementations: an embedded store on disk (SQLite tables, the default) and Neo4j over Bolt
(chosen when NEO4J_URI is set). Both pass the same test suite.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entity:
    """A concept / named entity. `key` is the normalised name (lower-case, trimmed) and is unique per user."""
    key: str
    name: str
    label: str = "CONCEPT"          # spaCy label (PERSON, ORG, ...) or CONCEPT for user concepts
    properties: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Relation:
    """A directed edge between two entity keys, recorded by the memory it came from."""
    source: str
    target: str
    type: str = "RELATED_TO"
    memory_id: str = ""


@dataclass
class GraphNeighbour:
    key: str
    name: str
    label: str
    distance: int                    # 0 = the query entity itself, 1 = neighbour, 2 = 2-hop


@dataclass
class GraphView:
    """Nodes and edges of one user's graph, for display."""
    nodes: list[dict]                # {"key", "name", "label", "memories": int}
    edges: list[dict]                # {"source", "target", "type", "weight": int}


class GraphStoreUnavailable(Exception):
    """The configured graph server cannot be reached; the message says which and what to do."""


class GraphStore(ABC):
    @abstractmethod
    def add_memory(self, user_id: str, memory_id: str, entities: list[Entity],
                   relations: list[Relation]) -> None:
        """MERGE the entities and relations and link the memory to every entity it mentions.
        One transaction: all or nothing."""

    @abstractmethod
    def remove_memory(self, user_id: str, memory_id: str) -> None:
        """Unlink the memory; delete relations it recorded and entities no other memory mentions."""

    @abstractmethod
    def neighbours(self, user_id: str, keys: list[str], depth: int = 2,
                   limit: int = 50) -> list[GraphNeighbour]:
        """The query entities that exist plus entities within `depth` hops, nearest first."""

    @abstractmethod
    def memories_for(self, user_id: str, keys: list[str], depth: int = 2,
                     limit: int = 100) -> dict[str, float]:
        """memory_id -> graph score in [0, 1]: memories mentioning the query entities (1.0) or
        entities `depth` hops away (decaying with distance, e.g. 1/(1+d))."""

    @abstractmethod
    def view(self, user_id: str, limit: int = 200) -> GraphView: ...

    @abstractmethod
    def stats(self, user_id: str) -> dict:
        """{"entities": n, "relations": n, "memory_links": n} for this user."""

    @abstractmethod
    def clear_user(self, user_id: str) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

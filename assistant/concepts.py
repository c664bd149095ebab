"""The person's concepts: names to file a note under, how a note's concept joins the graph, and what one
concept gathers (its notes, study cards and the document pages that mention it).

The facade (`assistant.facade.PDFLearningAssistant`) delegates here; these functions take the facade or
its parts and hold no state of their own.

Concept keys come from `memory.graph.base.normalise_key` (case and plural folded). A bilingual name written
as "支持向量机 (SVM)" or "SVM（支持向量机）" is one node: its key is the key of whichever part the person
already uses (else the Latin part, so both spellings agree), and the other part is kept as an alias, so a
later note filed under either part alone lands on the same node.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field

from assistant.types import MemoryRef
from core.errors import AssistantError, InvalidRequest
from memory.graph.base import Entity, GraphView, Relation, normalise_key

log = logging.getLogger(__name__)

MAX_PAGES = 8
_CJK = re.compile(r"[\u3400-\u9fff]")
# "name (other name)" with ASCII or full-width brackets: the two spellings of one concept
_VARIANT = re.compile(r"^\s*(?P<main>[^()（）]+?)\s*[(（]\s*(?P<alias>[^()（）]+?)\s*[)）]\s*$")


@dataclass
class ConceptPage:
    doc_id: str
    doc_name: str
    page: int | None              # None for documents without pages
    heading: str                  # the section it is in ("" when unknown)
    snippet: str                  # the words around the mention


@dataclass
class ConceptDetails:
    key: str
    name: str
    aliases: list[str] = field(default_factory=list)
    notes: list[MemoryRef] = field(default_factory=list)
    cards: list = field(default_factory=list)          # study.types.Card
    pages: list[ConceptPage] = field(default_factory=list)


# -- names and keys -----------------------------------------------------------------------------------

def variants(name: str) -> list[str]:
    """The spellings a concept name holds: "支持向量机 (SVM)" -> ["支持向量机", "SVM"]; else [name]."""
    m = _VARIANT.match(name or "")
    return [m.group("main"), m.group("alias")] if m else [(name or "").strip()]


def spelling_keys(name: str) -> set[str]:
    """The keys a name can be found under: the whole name's and each of its spellings'."""
    return {normalise_key(p) for p in [name, *variants(name)] if p.strip()}


def known_keys(notes: list[MemoryRef], graph_keys: set[str]) -> dict[str, str]:
    """Every spelling's key -> the node key it belongs to: each part of a note's bilingual concept points
    at the node that note was filed under (first), and graph nodes are their own."""
    known: dict[str, str] = {}
    for note in notes:
        concept = str(note.metadata.get("concept") or "")
        node = note.metadata.get("concept_key") or (normalise_key(concept) if concept else "")
        for part in variants(concept) if node else []:
            known.setdefault(normalise_key(part), node)
    for k in graph_keys:
        known.setdefault(k, k)
    return known


def merge_aliases(view: GraphView, notes: list[MemoryRef]) -> GraphView:
    """The graph with each node named by another spelling of a person's concept (the entity "支持向量机"
    found in a note filed under "支持向量机 (SVM)") folded into that concept's node: one node, its
    memories added up, its edges moved over (weights added, self-loops dropped)."""
    alias = {k: node for k, node in known_keys(notes, set()).items() if k != node}
    if not any(n["key"] in alias for n in view.nodes):
        return view
    nodes: dict[str, dict] = {}
    for n in view.nodes:
        target = alias.get(n["key"], n["key"])
        if target not in nodes:
            nodes[target] = {**n, "key": target}
            continue
        memories = nodes[target].get("memories", 0) + n.get("memories", 0)
        if n["key"] == target:              # the concept's own name and label win over an alias's
            nodes[target].update(n)
        nodes[target]["memories"] = memories
    edges: dict[tuple[str, str, str], dict] = {}
    for e in view.edges:
        a, b = alias.get(e["source"], e["source"]), alias.get(e["target"], e["target"])
        if a == b:
            continue
        key = (a, b, e["type"])
        if key in edges:
            edges[key]["weight"] = edges[key].get("weight", 1) + e.get("weight", 1)
        else:
            edges[key] = {**e, "source": a, "target": b}
    return GraphView(nodes=list(nodes.values()), edges=list(edges.values()))


def _stored_graph(assistant, limit: int) -> GraphView:
    """The graph as stored (aliases not folded); empty when the graph store cannot be read."""
    try:
        return assistant.memory.semantic.graph.view(assistant.user_id, limit=limit)
    except AssistantError as exc:
        # Kept with the empty view so the notes tab says why (a damaged graph file, a server away) rather
        # than "no concepts yet", which would hide the concepts the person made.
        log.warning("graph view unavailable", exc_info=True)
        return GraphView(nodes=[], edges=[], unreadable=exc)


def concept_graph(assistant, limit: int = 60, notes: list[MemoryRef] | None = None) -> GraphView:
    """The person's concepts and how they connect, one node per concept however it is spelt. `notes`:
    the person's notes when the caller has read them already."""
    view = _stored_graph(assistant, limit)
    return merge_aliases(view, assistant.list_notes() if notes is None else notes) if view.nodes else view


def concept_key(name: str, known: dict[str, str]) -> tuple[str, list[str]]:
    """(the node key for a concept name, the other spellings it holds)."""
    parts = [p for p in variants(name) if p]
    keys = [normalise_key(p) for p in parts]
    for k in keys:                  # a spelling the person already uses decides
        if k in known:
            return known[k], [p for p, pk in zip(parts, keys) if pk != k]
    latin = [k for k in keys if not _CJK.search(k)]
    key = latin[0] if len(keys) > 1 and latin else keys[0]
    return key, [p for p, pk in zip(parts, keys) if pk != key]


def note_concept_key(assistant, concept: str) -> tuple[str, list[str]]:
    """The node key (and aliases) a new note's concept gets, given what this person already has."""
    # the stored graph is enough: a note's spellings map to its node before any stored alias key does
    graph = {n["key"] for n in _stored_graph(assistant, 500).nodes}
    return concept_key(concept, known_keys(assistant.list_notes(), graph))


def own_concept_keys(notes: list[MemoryRef]) -> set[str]:
    """The node keys the person filed notes under (shown in their own colour on the map)."""
    return {str(n.metadata.get("concept_key") or normalise_key(str(n.metadata.get("concept") or "")))
            for n in notes if n.metadata.get("concept")} - {""}


def link_note(assistant, memory_id: str, content: str, concept: str, key: str, aliases: list[str]) -> list[str]:
    """The note's concept becomes a CONCEPT node (its aliases recorded) with an ABOUT edge to each entity
    named in the note; returns those entities' names. A graph failure removes the note again: a note
    without its concept would be a silent half-success."""
    from memory.extract import extract
    entities = extract(content).entities
    if not concept:
        return [e.name for e in entities]
    others = list(dict.fromkeys(e.key for e in entities if e.key != key))
    properties = {"aliases": aliases} if aliases else {}
    try:
        assistant.memory.semantic.graph.add_memory(
            assistant.user_id, memory_id, [Entity(key=key, name=concept, label="CONCEPT", properties=properties)],
            [Relation(key, other, "ABOUT") for other in others])
    except Exception as exc:
        assistant.memory.remove(memory_id)
        if isinstance(exc, AssistantError):
            raise
        raise InvalidRequest("The note's concept could not be saved in the concept graph; try again.",
                             key="err_concept_not_saved") from exc
    return [e.name for e in entities]


# -- suggestions --------------------------------------------------------------------------------------

def suggest_concepts(assistant, doc_id: str | None = None, limit: int = 15) -> list[str]:
    """Concept names to file a note under: the person's own concepts, then the document's (or the last
    three documents') headings and most frequent entities; one per key ("Tuples" and "tuple" are one)."""
    out = [n["name"] for n in assistant.concept_graph(limit=30).nodes if n.get("label") == "CONCEPT"][:5]
    doc_ids = [doc_id] if doc_id else [d.doc_id for d in assistant.rag.list_documents()][-3:]
    for d in doc_ids:
        out += assistant._document_concepts(d)
    seen, unique = set(), []
    for name in out:
        key = normalise_key(name)
        if key and key not in seen:
            seen.add(key)
            unique.append(name.strip())
    return unique[:limit]


def document_concepts(rag, user_id: str, doc_id: str, cache: dict[str, list[str]]) -> list[str]:
    """A document's likely concepts: its most used headings, then entities named at least twice in its
    opening; junk (document parts, URL pieces, numbers: memory.extract.is_junk) left out. Cached per doc."""
    if doc_id in cache:
        return cache[doc_id]
    from memory.extract import extract, is_junk
    chunks = rag.store.chunks_of(user_id, doc_id)
    headings: Counter = Counter()
    for c in chunks:
        for h in c.heading_path:
            if 2 < len(h) <= 60 and not is_junk(normalise_key(h)):
                headings[h] += 1
    entities: Counter = Counter()
    names: dict[str, str] = {}
    for c in chunks[:25]:  # the opening of a document names its subject; this keeps spaCy to ~2 s
        for e in extract(c.text).entities:
            if e.label in ("CARDINAL", "DATE") or len(e.key) < 3 or is_junk(e.key):
                continue
            entities[e.key] += 1
            names.setdefault(e.key, e.name)
    ranked = [h for h, _ in headings.most_common(8)]
    ranked += [names[k] for k, n in entities.most_common(20) if n >= 2][:10]
    cache[doc_id] = ranked
    return ranked


# -- one concept's notes, cards and pages ---------------------------------------------------------------

def concept_details(assistant, key_or_name: str) -> ConceptDetails:
    """What the person has on one concept (a graph key, or a name as written)."""
    from study.mastery import concept_of
    notes = assistant.list_notes()
    view = concept_graph(assistant, 500, notes)
    known = known_keys(notes, {n["key"] for n in view.nodes})
    key = known.get(key_or_name) or concept_key(key_or_name, known)[0]
    node = next((n for n in view.nodes if n["key"] == key), None)
    name = node["name"] if node else key_or_name
    spellings = {s for s, node_key in known.items() if node_key == key} | {key}
    aliases = sorted({p for n in notes for p in variants(str(n.metadata.get("concept") or ""))
                      if normalise_key(p) in spellings} - {name})

    try:
        linked = set(assistant.memory.semantic.graph.memories_for(assistant.user_id, sorted(spellings), depth=0,
                                                                  limit=500))
    except AssistantError:
        log.warning("graph unavailable for the concept's notes", exc_info=True)
        linked = set()
    filed = [n for n in notes if n.id in linked or note_key(n, known) == key]
    cards = [c for c in assistant.study.cards() if spelling_keys(concept_of(c)) & spellings]
    names = [name, *aliases]
    return ConceptDetails(key, name, aliases, filed, cards, pages_mentioning(assistant.rag, assistant.user_id, names))


def note_key(note: MemoryRef, known: dict[str, str]) -> str:
    concept = str(note.metadata.get("concept") or "")
    return note.metadata.get("concept_key") or (concept_key(concept, known)[0] if concept else "")


def pages_mentioning(rag, user_id: str, names: list[str], limit: int = MAX_PAGES) -> list[ConceptPage]:
    """Pages of the person's documents whose text names the concept (any spelling), BM25 best first;
    one entry per (document, page)."""
    spellings = [s for s in dict.fromkeys(p for n in names for p in variants(n)) if len(s) >= 2]
    if not spellings:
        return []
    found = rag.store.bm25_search(user_id, " ".join(spellings), limit=60)
    chunks = rag.store.get_chunks(user_id, [chunk_id for chunk_id, _ in found])
    doc_names = {d.doc_id: d.name for d in rag.list_documents()}
    pages: dict[tuple[str, int | None], ConceptPage] = {}
    for chunk_id, _ in found:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        lowered = chunk.text.lower()
        at = min((i for i in (lowered.find(s.lower()) for s in spellings) if i >= 0), default=-1)
        if at < 0:                  # BM25 matched some words of the name, not the name itself
            continue
        page = chunk.pages_of_span(at, at + 1)[0]
        place = (chunk.doc_id, page)
        if place not in pages:
            snippet = " ".join(chunk.text[max(0, at - 60):at + 90].split())
            pages[place] = ConceptPage(chunk.doc_id, doc_names.get(chunk.doc_id, ""), page,
                                       chunk.heading_path[-1] if chunk.heading_path else "", snippet)
        if len(pages) >= limit:
            break
    return list(pages.values())

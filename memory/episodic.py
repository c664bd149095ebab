"""Episodic memory: what happened, when, in which session. SQLite (WAL) rows + Qdrant vectors.

Score: (0.8·vector + 0.2·recency) × (0.8 + 0.4·importance), recency = max(0.1, exp(-0.1·age_h/24)).
`vector` is the hybrid relevance 0.7·cosine + 0.3·BM25/best BM25 (see `memory.scoring`).

What is embedded is the content after its context: for a turn of a conversation, the turn before it in
the same session ("(after: <previous turn>) <content>"); an answer ("Yes, last Tuesday!") is rarely
findable on its own. What is keyword-indexed is the date the episode happened and the content, with
the previous turn in a second FTS5 column of lower weight. The stored content stays as given.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memory.scoring import episodic_score, recency
from memory.types import MemoryItem, MemoryType
from memory.vector_memory import SearchFilters, VectorBackedMemory

CONTEXT_CHARS = 300  # how much of the previous turn goes into a memory's index text


def date_label(ts: datetime) -> str:
    """'8 May 2023' (what people write and ask about), without the clock time."""
    return f"{ts.day} {ts:%B %Y}"


class EpisodicMemory(VectorBackedMemory):
    memory_type = MemoryType.EPISODIC
    purpose = "memory_episodic"
    with_date = True
    with_previous = True
    date_in_embedding = False  # the date is keyword-indexed; in the embedding it measured no better

    def texts(self, items: list[MemoryItem]) -> tuple[list[str], list[tuple[str, str]]]:
        embed_texts, keyword_texts = [], []
        previous: dict[str, str] = {}  # session -> content of the last memory added in this batch
        for it in items:
            date = f"[{date_label(it.timestamp)}] " if self.with_date else ""
            prev = None
            if self.with_previous:
                if it.metadata.get("context"):
                    prev = str(it.metadata["context"])
                elif it.session_id:
                    prev = previous.get(it.session_id)
                    if prev is None:
                        prev = self._last_in_session(it)
            context = f"(after: {prev[:CONTEXT_CHARS]}) " if prev else ""
            embed_texts.append(f"{date if self.date_in_embedding else ''}{context}{it.content}")
            keyword_texts.append((f"{date}{it.content}", prev[:CONTEXT_CHARS] if prev else ""))
            if it.session_id:
                previous[it.session_id] = it.content
        return embed_texts, keyword_texts

    def _last_in_session(self, item: MemoryItem) -> str | None:
        """The newest stored memory of the same session at or before this one (for its context)."""
        return self.docs.last_in_session(self.user_id, self.memory_type, item.session_id,
                                         item.timestamp.timestamp())

    def search(self, query: str, *, limit: int, filters: SearchFilters, reference_time: float,
               query_vec=None) -> list[MemoryItem]:
        cands = self.retrieve(query, filters, pool=max(self.pool, limit * 2), query_vec=query_vec)
        items = self.docs.get_many(self.user_id, list(cands))
        hits = []
        for mid, c in cands.items():
            it = items.get(mid)
            if it is None or not filters.admits(it):
                continue
            age_hours = (reference_time - it.timestamp.timestamp()) / 3600.0
            rec = recency(age_hours)
            score = episodic_score(c.relevance, rec, it.importance)
            parts = {"relevance": c.relevance, "cosine": c.cosine, "keyword": c.keyword, "recency": rec,
                     "importance": it.importance}
            hits.append(replace(it, score=score, score_parts=parts))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    def timeline(self, *, session_id: str | None = None, since: float | None = None, until: float | None = None,
                 limit: int | None = None, newest_first: bool = False) -> list[MemoryItem]:
        """This user's episodes in time order (optionally one session / a time range)."""
        return self.docs.list(self.user_id, types=[self.memory_type], session_id=session_id, since=since,
                              until=until, order="timestamp DESC" if newest_first else "timestamp ASC",
                              limit=limit)

    def sessions(self) -> list[dict]:
        return self.docs.sessions(self.user_id, types=[self.memory_type])

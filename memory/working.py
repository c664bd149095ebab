"""Working memory: the few things in play right now, held in process memory only.

By design it is not persisted: it has a capacity (default 50, oldest-least-important evicted first)
and a TTL (default 60 minutes), and a restart empties it. Important items survive by being
consolidated into episodic memory. Memories are shared by every MemoryManager of the same user and
data folder in this process (e.g. two browser tabs of one person), see `get_working_memory`.

Search: (0.7·tfidf + 0.3·keyword, or keyword alone) × time_decay × (0.8 + 0.4·importance), where
tfidf is the cosine of TF-IDF vectors (smoothed idf over the user's working memories and the query),
keyword is the share of query tokens found in the memory text, and time_decay falls linearly from 1
to 0.1 over the TTL (`memory.scoring`).
"""
from __future__ import annotations

import math
import threading
from collections import Counter
from datetime import datetime, timezone

from core.text import search_tokens
from memory.scoring import working_score, working_time_decay
from memory.types import MemoryItem


class WorkingMemory:
    def __init__(self, capacity: int = 50, ttl_minutes: int = 60):
        self.capacity = capacity
        self.ttl_minutes = ttl_minutes
        self._items: dict[str, MemoryItem] = {}
        self._lock = threading.RLock()

    # -- maintenance -----------------------------------------------------------------------------
    def _age_minutes(self, item: MemoryItem, now: datetime) -> float:
        return (now - item.timestamp).total_seconds() / 60.0

    def expire(self, now: datetime | None = None) -> list[str]:
        """Drop memories older than the TTL; returns their ids."""
        now = now or datetime.now(timezone.utc)
        with self._lock:
            gone = [i for i, it in self._items.items() if self._age_minutes(it, now) > self.ttl_minutes]
            for i in gone:
                del self._items[i]
        return gone

    def _evict_to(self, capacity: int) -> list[str]:
        with self._lock:
            if len(self._items) <= capacity:
                return []
            order = sorted(self._items.values(), key=lambda it: (it.importance, it.timestamp))
            gone = [it.id for it in order[:len(self._items) - capacity]]
            for i in gone:
                del self._items[i]
            return gone

    # -- CRUD ------------------------------------------------------------------------------------
    def add(self, item: MemoryItem) -> list[str]:
        """Add; returns ids evicted to stay within capacity (the least important, then oldest)."""
        with self._lock:
            self.expire()
            self._items[item.id] = item
            return self._evict_to(self.capacity)

    def get(self, memory_id: str) -> MemoryItem | None:
        with self._lock:
            self.expire()
            return self._items.get(memory_id)

    def replace(self, item: MemoryItem) -> None:
        with self._lock:
            self._items[item.id] = item

    def remove(self, memory_id: str) -> bool:
        with self._lock:
            return self._items.pop(memory_id, None) is not None

    def clear(self) -> int:
        with self._lock:
            n = len(self._items)
            self._items.clear()
            return n

    def items(self) -> list[MemoryItem]:
        """Live memories, newest first."""
        with self._lock:
            self.expire()
            return sorted(self._items.values(), key=lambda it: it.timestamp, reverse=True)

    def __len__(self) -> int:
        return len(self.items())

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 10, min_importance: float | None = None,
               since: datetime | None = None, until: datetime | None = None,
               now: datetime | None = None) -> list[MemoryItem]:
        now = now or datetime.now(timezone.utc)
        candidates = [it for it in self.items()
                      if (min_importance is None or it.importance >= min_importance)
                      and (since is None or it.timestamp >= since) and (until is None or it.timestamp <= until)]
        q_tokens = search_tokens(query)
        if not candidates or not q_tokens:
            return []
        doc_tokens = [search_tokens(it.content) for it in candidates]
        tfidf = tfidf_cosines(q_tokens, doc_tokens)
        use_tfidf = any(s > 0 for s in tfidf)
        q_unique = set(q_tokens)
        hits = []
        for it, toks, tf in zip(candidates, doc_tokens, tfidf):
            text = it.content.lower()
            tokset = set(toks)
            # Keyword: a query token counts when it is a token of the memory or a substring of it
            # (catches word forms and unsegmented CJK that TF-IDF's exact tokens miss).
            keyword = sum(1 for t in q_unique if t in tokset or t in text) / len(q_unique)
            decay = working_time_decay(self._age_minutes(it, now), self.ttl_minutes)
            score = working_score(tf if use_tfidf else None, keyword, decay, it.importance)
            if score <= 0:
                continue
            parts = {"tfidf": tf if use_tfidf else 0.0, "keyword": keyword, "time_decay": decay,
                     "importance": it.importance}
            hits.append(_with_score(it, score, parts))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]


def tfidf_cosines(query_tokens: list[str], docs_tokens: list[list[str]]) -> list[float]:
    """Cosine of TF-IDF vectors (raw tf, smoothed idf = ln((1+n)/(1+df)) + 1) of the query vs each doc."""
    n = len(docs_tokens) + 1
    df: Counter = Counter()
    for toks in [query_tokens, *docs_tokens]:
        df.update(set(toks))
    idf = {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}

    def vec(toks: list[str]) -> dict[str, float]:
        return {t: c * idf[t] for t, c in Counter(toks).items()}

    q = vec(query_tokens)
    q_norm = math.sqrt(sum(v * v for v in q.values())) or 1.0
    out = []
    for toks in docs_tokens:
        d = vec(toks)
        d_norm = math.sqrt(sum(v * v for v in d.values())) or 1.0
        out.append(sum(w * d.get(t, 0.0) for t, w in q.items()) / (q_norm * d_norm))
    return out


def _with_score(item: MemoryItem, score: float, parts: dict) -> MemoryItem:
    from dataclasses import replace
    return replace(item, metadata=dict(item.metadata), score=score, score_parts=parts)


_registry: dict[tuple[str, str], WorkingMemory] = {}
_registry_lock = threading.Lock()


def get_working_memory(data_dir_key: str, user_id: str, capacity: int, ttl_minutes: int) -> WorkingMemory:
    """The process-wide working memory of one user of one data folder."""
    with _registry_lock:
        wm = _registry.get((data_dir_key, user_id))
        if wm is None:
            wm = _registry[(data_dir_key, user_id)] = WorkingMemory(capacity, ttl_minutes)
        wm.capacity, wm.ttl_minutes = capacity, ttl_minutes
        return wm


def drop_working_memories(data_dir_key: str) -> None:
    """Forget every working memory of one data folder (what a restart does)."""
    with _registry_lock:
        for key in [k for k in _registry if k[0] == data_dir_key]:
            del _registry[key]

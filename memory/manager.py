"""MemoryManager: the typed API of one user's memory (add / search / get / update / remove / forget /
consolidate / summary / stats / clear_all), over the four memory types and their stores.

Every method works on `self.user_id` only. Rows live in one SQLite file per data folder
(`data_dir/memory/memories.sqlite3`, every query keyed by user), vectors in per-user Qdrant
collections, graph data keyed by user in the graph store; so no call through one user's manager can
read, change or delete another user's memories. Working memory lives in process (see
`memory.working`); everything else survives a restart.

Recency ("age" in the episodic / perceptual formula) is measured from the wall clock by default:
a memory's age is how long ago it happened. For imported history (or the LoCoMo evaluation, where
everything happened in 2023) every old memory then has the same recency floor (0.1) and ranking is
by relevance and importance. `recency_reference="newest"` measures age from the user's newest
memory instead (what was recent when the history was recorded); see `memory/README.md` for both
figures on LoCoMo.
"""
from __future__ import annotations

import logging
import math
import sqlite3
import threading
import uuid
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from core.errors import InvalidRequest
from core.settings import Settings, get_settings
from memory.episodic import EpisodicMemory
from memory.perceptual import PerceptualMemory, describe_file, modality_of
from memory.rollup import EPISODIC_CAP, ROLLUP_TARGET_SHARE, plan_rollup, summary_record
from memory.semantic import SemanticMemory
from memory.sqlite_store import get_document_store
from memory.types import (ClearResult, ConsolidateResult, ForgetResult, ForgetStrategy, MemoryItem,
                          MemoryNotFound, MemoryStats, MemorySummary, MemoryType, Promotion, to_utc)
from memory.vector_memory import SearchFilters
from memory.working import get_working_memory

log = logging.getLogger(__name__)

ALL_TYPES = list(MemoryType)
PERSISTENT_TYPES = [MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PERCEPTUAL]
MAX_CONTENT_CHARS = 100_000
MAX_QUERY_CHARS = 1000         # a memory search is a phrase or a question, not a pasted text
MAX_LIMIT = 1000
_ROLLUP_LOCK = threading.Lock()


_PROMOTION_NAMESPACE = uuid.UUID("5f0c4a53-3e2b-4d0e-9a51-6c1f2b8e7d90")


def promoted_id(source_id: str) -> str:
    """The id of the memory consolidated from `source_id`: the same in every manager and every run, so a
    promotion happens at most once per source memory (see MemoryManager.promote)."""
    return uuid.uuid5(_PROMOTION_NAMESPACE, f"consolidated:{source_id}").hex


def check_user_id(user_id) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidRequest("A user id is required: give the name of the person whose memory this is.")
    return user_id.strip()


def check_importance(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(float(value)):
        raise InvalidRequest(f"Importance must be a number from 0 to 1, not {value!r}.")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidRequest(f"Importance must be between 0 and 1; {value} is out of range.")
    return float(value)


def check_content(content) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidRequest("A memory needs some text: the content is empty.", key="err_memory_empty")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidRequest(f"A memory can hold at most {MAX_CONTENT_CHARS:,} characters; "
                             f"this one has {len(content):,}, so split it up.",
                             key="err_memory_too_long", n=MAX_CONTENT_CHARS)
    return content.strip()


def check_query_length(query: str) -> str:
    """A search typed by a person or an agent (recall, MemoryTool search): at most MAX_QUERY_CHARS."""
    if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"A memory search can be at most {MAX_QUERY_CHARS:,} characters; this one has "
                             f"{len(query):,}, so search for a shorter phrase.",
                             key="err_memory_search_too_long", n=MAX_QUERY_CHARS)
    return query


def check_metadata(metadata) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidRequest("Metadata must be a dictionary of names to values.")
    import json
    try:
        json.dumps(metadata)
    except (TypeError, ValueError):
        raise InvalidRequest("Metadata values must be plain data (text, numbers, lists, dictionaries).") from None
    return dict(metadata)


def check_limit(limit) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"The result limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}.")
    return limit


class MemoryManager:
    def __init__(self, settings: Settings | None = None, user_id: str | None = None, *,
                 recency_reference: str = "now", retrieval_mode: str = "hybrid", fusion: str | None = None,
                 episodic_cap: int = EPISODIC_CAP):
        """`episodic_cap`: episodic memories kept before the oldest everyday ones are rolled up into one
        summary per day (memory.rollup); not a setting, a smaller one is for tests and tools."""
        self.settings = settings or get_settings()
        self.user_id = check_user_id(user_id if user_id is not None else self.settings.default_user)
        if recency_reference not in ("now", "newest"):
            raise InvalidRequest("recency_reference must be 'now' or 'newest'.")
        if retrieval_mode not in ("hybrid", "dense"):
            raise InvalidRequest("retrieval_mode must be 'hybrid' or 'dense' for memory search.")
        if fusion not in (None, "convex", "rrf"):
            raise InvalidRequest("fusion must be 'convex' or 'rrf'.")
        if isinstance(episodic_cap, bool) or not isinstance(episodic_cap, int) or episodic_cap < 2:
            raise InvalidRequest(f"episodic_cap must be a whole number of at least 2, not {episodic_cap!r}.")
        self.recency_reference = recency_reference
        self.episodic_cap = episodic_cap
        self._no_rollup_below = 0          # past the cap, the count at which a rollup is worth planning again
        self.docs = get_document_store(self.settings.path("memory", "memories.sqlite3"))
        self.working = get_working_memory(str(self.settings.data_dir.resolve()), self.user_id,
                                          self.settings.working_memory_capacity,
                                          self.settings.working_memory_ttl_minutes)
        common = dict(candidates=self.settings.candidates, rrf_k=self.settings.rrf_k)
        self.episodic = EpisodicMemory(self.settings, self.user_id, self.docs, retrieval_mode=retrieval_mode,
                                       fusion=fusion, **common)
        # Notes are searched like episodes (dense + keywords): a learner recalls a note by the one code,
        # name or term in it, which barely moves its embedding among many similar notes.
        self.semantic = SemanticMemory(self.settings, self.user_id, self.docs, retrieval_mode=retrieval_mode,
                                       fusion=fusion, **common)
        self.perceptual = PerceptualMemory(self.settings, self.user_id, self.docs,
                                           retrieval_mode=retrieval_mode, fusion=fusion, **common)
        self._stores = {MemoryType.EPISODIC: self.episodic, MemoryType.SEMANTIC: self.semantic,
                        MemoryType.PERCEPTUAL: self.perceptual}

    # -- add -------------------------------------------------------------------------------------
    def _new_item(self, content, memory_type, importance, metadata, timestamp, session_id,
                  modality=None, file_path=None) -> MemoryItem:
        mtype = MemoryType.parse(memory_type)
        meta = check_metadata(metadata)
        if mtype is MemoryType.PERCEPTUAL:
            if file_path:
                meta.setdefault("source_path", str(file_path))
            meta["modality"] = modality_of(file_path, modality or meta.get("modality"))
            if (content is None or (isinstance(content, str) and not content.strip())) and file_path:
                content = describe_file(str(file_path))
        elif modality or file_path:
            raise InvalidRequest("Only perceptual memories take a modality or a file; "
                                 "use memory_type='perceptual'.")
        if session_id is not None and not isinstance(session_id, str):
            session_id = str(session_id)
        return MemoryItem(id=uuid.uuid4().hex, user_id=self.user_id, memory_type=mtype,
                          content=check_content(content), importance=check_importance(importance),
                          timestamp=to_utc(timestamp), metadata=meta, session_id=session_id or None)

    def add(self, content: str, memory_type: MemoryType | str = MemoryType.WORKING, importance: float = 0.5, *,
            metadata: dict | None = None, timestamp: datetime | str | None = None, session_id: str | None = None,
            modality: str | None = None, file_path: str | None = None) -> MemoryItem:
        """Remember `content`. `timestamp` is when it happened (default now; give it for imports).
        Perceptual memories take `modality` ("image", "audio", ...) and/or `file_path`; with no
        content, the file's metadata becomes the description."""
        item = self._new_item(content, memory_type, importance, metadata, timestamp, session_id, modality, file_path)
        self._insert([item])
        return item

    def add_many(self, records: list[dict], memory_type: MemoryType | str = MemoryType.EPISODIC) -> list[MemoryItem]:
        """Add many memories in batches (one embedding batch, one SQLite transaction and one vector
        upsert per type). Each record: {"content", optional "memory_type", "importance",
        "metadata", "timestamp", "session_id", "modality", "file_path"}. All are checked first:
        one bad record adds nothing."""
        if not isinstance(records, list):
            raise InvalidRequest("add_many takes a list of memories.")
        items = []
        for n, r in enumerate(records, start=1):
            if not isinstance(r, dict):
                raise InvalidRequest(f"Memory {n} of the batch is not a dictionary with a 'content'.")
            try:
                items.append(self._new_item(r.get("content"), r.get("memory_type", memory_type),
                                            r.get("importance", 0.5), r.get("metadata"), r.get("timestamp"),
                                            r.get("session_id"), r.get("modality"), r.get("file_path")))
            except InvalidRequest as exc:
                raise InvalidRequest(f"Memory {n} of the batch: {exc}") from None
        self._insert(items)
        return items

    def _insert(self, items: list[MemoryItem]) -> None:
        by_type: dict[MemoryType, list[MemoryItem]] = {}
        for it in items:
            by_type.setdefault(it.memory_type, []).append(it)
        for mtype, group in by_type.items():
            if mtype is MemoryType.WORKING:
                for it in group:
                    self.working.add(it)
            else:
                self._stores[mtype].add_many(group)
        if MemoryType.EPISODIC in by_type:
            self.roll_up_episodes()

    def roll_up_episodes(self) -> int:
        """Past the episodic cap, roll the oldest everyday episodes up into one summary per day (see
        memory.rollup). Returns how many episodic memories fewer there are."""
        if self.docs.counts(self.user_id).get(MemoryType.EPISODIC.value, 0) <= max(self.episodic_cap,
                                                                                   self._no_rollup_below):
            return 0
        with _ROLLUP_LOCK:      # two managers of one user (the app's, an agent's) must not roll up one day twice
            return self._roll_up_locked()

    def _roll_up_locked(self) -> int:
        total = self.docs.counts(self.user_id).get(MemoryType.EPISODIC.value, 0)
        if total <= max(self.episodic_cap, self._no_rollup_below):
            return 0
        excess = total - int(self.episodic_cap * ROLLUP_TARGET_SHARE)
        plans = plan_rollup(self.docs.list(self.user_id, types=[MemoryType.EPISODIC], order="timestamp ASC"), excess)
        if not plans:   # every episode is important: look again only after a tenth of the cap more
            self._no_rollup_below = total + max(1, self.episodic_cap // 10)
            log.warning("%s has %d episodic memories (cap %d), none of them everyday enough to roll up",
                        self.user_id, total, self.episodic_cap)
        for plan in plans:
            record = summary_record(plan)
            summary = self._new_item(record["content"], MemoryType.EPISODIC, record["importance"], record["metadata"],
                                     record["timestamp"], None)
            self.episodic.add_many([summary])        # the summary first: a crash between leaves both, loses nothing
            self._remove_items(plan.replaced)
        fewer = total - self.docs.counts(self.user_id).get(MemoryType.EPISODIC.value, 0)
        if plans:
            log.info("Rolled up %d days of episodes of %s: %d episodic memories fewer (cap %d)",
                     len(plans), self.user_id, fewer, self.episodic_cap)
        return fewer

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: str, *, memory_type: MemoryType | str | None = None,
               memory_types: list[MemoryType | str] | None = None, limit: int = 10,
               min_importance: float | None = None, since: datetime | str | None = None,
               until: datetime | str | None = None, session_id: str | None = None,
               modality: str | None = None) -> list[MemoryItem]:
        """The best memories for `query`, scored by each type's documented formula, best first.
        `since` / `until` bound when the memory happened; `min_importance` is a floor."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidRequest("Type something to search your memories for: the query is empty.",
                                 key="err_memory_search_empty")
        limit = check_limit(limit)
        types = self._types(memory_type, memory_types)
        if min_importance is not None:
            min_importance = check_importance(min_importance)
        since_dt, until_dt = to_utc(since, default_now=False), to_utc(until, default_now=False)
        if since_dt and until_dt and since_dt > until_dt:
            raise InvalidRequest("The time range is empty: 'since' is after 'until'.", key="err_time_range")
        filters = SearchFilters(since=since_dt.timestamp() if since_dt else None,
                                until=until_dt.timestamp() if until_dt else None,
                                min_importance=min_importance, session_id=session_id)
        query = query.strip()
        hits: list[MemoryItem] = []
        qvec = None
        for mtype in types:
            if mtype is MemoryType.WORKING:
                if session_id is None:
                    hits += self.working.search(query, limit=limit, min_importance=min_importance,
                                                since=since_dt, until=until_dt)
                continue
            if not self.docs.has_any(self.user_id, mtype):
                continue
            if qvec is None:
                qvec = self.episodic.embedder.embed_query(query)
            if mtype is MemoryType.SEMANTIC:
                hits += self.semantic.search(query, limit=limit, filters=filters, query_vec=qvec)
            elif mtype is MemoryType.EPISODIC:
                hits += self.episodic.search(query, limit=limit, filters=filters, query_vec=qvec,
                                             reference_time=self._reference_time(mtype))
            else:
                hits += self.perceptual.search(query, limit=limit, filters=filters, query_vec=qvec,
                                               reference_time=self._reference_time(mtype), modality=modality)
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]

    def _types(self, memory_type, memory_types) -> list[MemoryType]:
        if memory_type is not None and memory_types is not None:
            raise InvalidRequest("Give memory_type or memory_types, not both.")
        if memory_type is not None:
            return [MemoryType.parse(memory_type)]
        if memory_types is not None:
            if isinstance(memory_types, (str, MemoryType)):
                memory_types = [memory_types]
            parsed = list(dict.fromkeys(MemoryType.parse(t) for t in memory_types))
            if not parsed:
                raise InvalidRequest("memory_types is empty: name at least one memory type.")
            return parsed
        return list(ALL_TYPES)

    def _reference_time(self, mtype: MemoryType) -> float:
        now = datetime.now(timezone.utc).timestamp()
        if self.recency_reference == "newest":
            newest = self.docs.newest_timestamp(self.user_id, [mtype])
            return newest if newest is not None else now
        return now

    # -- get / update / remove -------------------------------------------------------------------
    def get(self, memory_id: str) -> MemoryItem | None:
        """This user's memory with that id, or None (another user's id is None too)."""
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidRequest("A memory id is required.")
        return self.working.get(memory_id) or self.docs.get(self.user_id, memory_id)

    def _require(self, memory_id: str) -> MemoryItem:
        item = self.get(memory_id)
        if item is None:
            raise MemoryNotFound(f"There is no memory '{memory_id}' for user '{self.user_id}'; "
                                 "it may have been removed or forgotten.", key="err_memory_not_found")
        return item

    def update(self, memory_id: str, *, content: str | None = None, importance: float | None = None,
               metadata: dict | None = None) -> MemoryItem:
        """Change a memory's content, importance and/or metadata (merged: given keys replace old ones).
        A content change re-embeds the memory and re-extracts its concepts."""
        item = self._require(memory_id)
        if content is None and importance is None and metadata is None:
            raise InvalidRequest("Nothing to update: give new content, importance or metadata.")
        new = replace(item, metadata=dict(item.metadata), score=None, score_parts={})
        if content is not None:
            new.content = check_content(content)
        if importance is not None:
            new.importance = check_importance(importance)
        if metadata is not None:
            new.metadata.update(check_metadata(metadata))
        if new.memory_type is MemoryType.WORKING:
            self.working.replace(new)
        elif content is not None and new.content != item.content:
            self._stores[new.memory_type].reindex(new)
        else:
            self.docs.update(new)
        return new

    def remove(self, memory_id: str) -> MemoryItem:
        """Delete a memory from every store (row, vector, graph links and orphaned entities)."""
        item = self._require(memory_id)
        self._remove_items([item])
        return item

    def _remove_items(self, items: list[MemoryItem]) -> list[str]:
        removed = []
        by_type: dict[MemoryType, list[MemoryItem]] = {}
        for it in items:
            by_type.setdefault(it.memory_type, []).append(it)
        for mtype, group in by_type.items():
            if mtype is MemoryType.WORKING:
                removed += [it.id for it in group if self.working.remove(it.id)]
            else:
                for i in range(0, len(group), 1000):
                    removed += self._stores[mtype].remove_many(group[i:i + 1000])
        return removed

    # -- forget / consolidate --------------------------------------------------------------------
    def forget(self, strategy: ForgetStrategy | str = ForgetStrategy.IMPORTANCE, *, threshold: float = 0.1,
               max_age_days: float = 30, capacity: int | None = None,
               memory_types: list[MemoryType | str] | None = None, dry_run: bool = False) -> ForgetResult:
        """Remove memories by rule: importance below `threshold`; older than `max_age_days` (by when
        they happened, against the clock); or beyond `capacity` per memory type (the least important,
        then the oldest, go first). `memory_types` limits which types are considered (default all).
        With `dry_run=True` nothing is removed: the result lists what would be."""
        strategy = ForgetStrategy.parse(strategy)
        types = self._types(None, memory_types)
        doomed: list[MemoryItem] = []
        if strategy is ForgetStrategy.IMPORTANCE:
            threshold = check_importance(threshold)
            for mtype in types:
                doomed += [it for it in self._all(mtype) if it.importance < threshold]
        elif strategy is ForgetStrategy.TIME:
            if isinstance(max_age_days, bool) or not isinstance(max_age_days, (int, float)) or max_age_days < 0:
                raise InvalidRequest(f"max_age_days must be a number of days ≥ 0, not {max_age_days!r}.")
            cutoff = datetime.now(timezone.utc) - timedelta(days=float(max_age_days))
            for mtype in types:
                doomed += [it for it in self._all(mtype) if it.timestamp < cutoff]
        else:
            capacity = self.settings.working_memory_capacity if capacity is None else capacity
            if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
                raise InvalidRequest(f"capacity must be a whole number ≥ 0, not {capacity!r}.")
            for mtype in types:
                items = sorted(self._all(mtype), key=lambda it: (-it.importance, -it.timestamp.timestamp()))
                doomed += items[capacity:]
        if dry_run:
            return ForgetResult(strategy, [it.id for it in doomed], dry_run=True)
        return ForgetResult(strategy, self._remove_items(doomed))

    def _all(self, mtype: MemoryType) -> list[MemoryItem]:
        if mtype is MemoryType.WORKING:
            return self.working.items()
        return self.docs.list(self.user_id, types=[mtype])

    def consolidate(self, *, working_threshold: float | None = None,
                    episodic_threshold: float | None = None) -> ConsolidateResult:
        """Promote important memories: working → episodic (importance ≥ 0.7 by default; the working
        copy is then dropped) and episodic → semantic (≥ 0.8; the episode stays, marked). Each new
        memory records `consolidated_from` / `consolidated_from_type`; a promoted episode records
        `consolidated_to`, so it is promoted once."""
        wt = check_importance(self.settings.consolidate_working_threshold if working_threshold is None
                              else working_threshold)
        et = check_importance(self.settings.consolidate_episodic_threshold if episodic_threshold is None
                              else episodic_threshold)
        promotions: list[Promotion] = []
        for it in [w for w in self.working.items() if w.importance >= wt]:
            new = self.promote(it, MemoryType.EPISODIC)
            self.working.remove(it.id)
            if new is not None:
                promotions.append(Promotion(it.id, MemoryType.WORKING, new.id, MemoryType.EPISODIC))
        for it in self.docs.list(self.user_id, types=[MemoryType.EPISODIC], min_importance=et):
            if it.metadata.get("consolidated_to"):
                continue
            new = self.promote(it, MemoryType.SEMANTIC)
            self.update(it.id, metadata={"consolidated_to": promoted_id(it.id)})
            if new is not None:
                promotions.append(Promotion(it.id, MemoryType.EPISODIC, new.id, MemoryType.SEMANTIC))
        return ConsolidateResult(promotions)

    def promote(self, source: MemoryItem, target_type: MemoryType | str) -> MemoryItem | None:
        """Copy `source` into `target_type` under the id `promoted_id(source.id)`, with its provenance in
        `consolidated_from` / `consolidated_from_type`. None when that copy exists already: another manager
        of this user promoted it at the same time, or an earlier run stored it and stopped before marking
        the source. The fixed id makes the second insert fail in SQLite before any vector or graph write."""
        copy_id = promoted_id(source.id)
        if self.docs.get(self.user_id, copy_id) is not None:
            return None
        meta = {k: v for k, v in source.metadata.items() if k not in ("consolidated_from", "consolidated_from_type")}
        meta.update(consolidated_from=source.id, consolidated_from_type=source.memory_type.value)
        session_id = source.session_id if MemoryType.parse(target_type) is MemoryType.EPISODIC else None
        new = replace(self._new_item(source.content, target_type, source.importance, meta, source.timestamp,
                                     session_id), id=copy_id)
        try:
            self._insert([new])
        except sqlite3.IntegrityError:
            if self.docs.get(self.user_id, copy_id) is None:
                raise
            return None                       # lost the race: the other manager's copy stands
        return new

    # -- overview --------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        stored = self.docs.counts(self.user_id)
        out = {t.value: stored.get(t.value, 0) for t in ALL_TYPES}
        out[MemoryType.WORKING.value] = len(self.working)
        return out

    def stats(self) -> MemoryStats:
        counts = self.counts()
        vectors = {t.value: self._stores[t].vector_count() for t in PERSISTENT_TYPES}
        return MemoryStats(user_id=self.user_id, counts=counts, total=sum(counts.values()), vectors=vectors,
                           graph=self.semantic.graph_stats(),
                           working_capacity=self.working.capacity, working_ttl_minutes=self.working.ttl_minutes)

    def summary(self, limit: int = 5) -> MemorySummary:
        limit = check_limit(limit)
        counts = self.counts()
        stored_recent = self.docs.list(self.user_id, order="timestamp DESC", limit=limit)
        recent = sorted(self.working.items() + stored_recent, key=lambda it: it.timestamp, reverse=True)[:limit]
        stored_important = self.docs.list(self.user_id, order="importance DESC, timestamp DESC", limit=limit)
        important = sorted(self.working.items() + stored_important,
                           key=lambda it: (it.importance, it.timestamp), reverse=True)[:limit]
        entities: list[str] = []
        if counts[MemoryType.SEMANTIC.value]:
            try:
                view = self.semantic.graph.view(self.user_id, limit=10)
                entities = [n["name"] for n in view.nodes]
            except Exception:  # noqa: BLE001 - a summary without concepts beats no summary
                log.warning("graph view unavailable for summary", exc_info=True)
        total = sum(counts.values())
        lines = [f"{total} memories for {self.user_id}: " +
                 ", ".join(f"{n} {t}" for t, n in counts.items()) + "."]
        if important:
            lines.append("Most important: " + "; ".join(_short(it.content) for it in important[:3]) + ".")
        if recent:
            lines.append("Most recent: " + "; ".join(_short(it.content) for it in recent[:3]) + ".")
        if entities:
            lines.append("Main concepts: " + ", ".join(entities[:8]) + ".")
        return MemorySummary(self.user_id, counts, recent, important, entities, "\n".join(lines))

    def list(self, memory_types: list[MemoryType | str] | None = None, *, since: datetime | str | None = None,
             until: datetime | str | None = None, limit: int | None = None) -> list[MemoryItem]:
        """This user's memories of these types (default all, working included), newest first, no search."""
        types = self._types(None, memory_types)
        s, u = to_utc(since, default_now=False), to_utc(until, default_now=False)
        stored = [t for t in types if t is not MemoryType.WORKING]
        items = self.docs.list(self.user_id, types=stored, since=s.timestamp() if s else None,
                               until=u.timestamp() if u else None, limit=limit) if stored else []
        if MemoryType.WORKING in types:
            items += [it for it in self.working.items()
                      if (s is None or it.timestamp >= s) and (u is None or it.timestamp <= u)]
            items.sort(key=lambda it: it.timestamp, reverse=True)
        return items[:limit] if limit is not None else items

    def timeline(self, *, session_id: str | None = None, since: datetime | str | None = None,
                 until: datetime | str | None = None, limit: int | None = None,
                 newest_first: bool = False) -> list[MemoryItem]:
        """Episodes in time order (optionally one session or a time range)."""
        s, u = to_utc(since, default_now=False), to_utc(until, default_now=False)
        return self.episodic.timeline(session_id=session_id, since=s.timestamp() if s else None,
                                      until=u.timestamp() if u else None, limit=limit, newest_first=newest_first)

    def sessions(self) -> list[dict]:
        return self.episodic.sessions()

    def clear_all(self) -> ClearResult:
        """Delete every memory of this user from every store. Other users are untouched."""
        removed = {MemoryType.WORKING.value: self.working.clear()}
        for mtype in PERSISTENT_TYPES:
            self._stores[mtype].clear()  # vectors (and graph) first: they are found through the rows
        counts = self.docs.clear_user(self.user_id)
        for mtype in PERSISTENT_TYPES:
            removed[mtype.value] = counts.get(mtype.value, 0)
        return ClearResult(removed)


def close_memory_stores(settings: Settings) -> None:
    """Close every store this data folder's memory opened (SQLite, Qdrant client, graph) and drop its
    working memories: what a process exit does. Managers made afterwards reopen them."""
    from core.vectors import close_vector_store
    from memory.semantic import close_graph_store
    from memory.sqlite_store import close_document_store
    from memory.working import drop_working_memories
    from memory.dense_index import drop_dense_indexes
    drop_dense_indexes(str(settings.data_dir.resolve()))
    close_vector_store(settings)
    close_graph_store(settings)
    close_document_store(settings.data_dir / "memory" / "memories.sqlite3")
    drop_working_memories(str(settings.data_dir.resolve()))


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"

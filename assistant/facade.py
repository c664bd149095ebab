"""PDFLearningAssistant: the one facade the UI and the CLI use, for ONE user.

It joins the document side (`rag.tool.RAGTool`) and the memory side (`memory.manager.MemoryManager`):
documents are loaded and asked about with citations; every event is remembered (the question in
working memory, the interaction in episodic memory, notes in semantic memory with their concept in
the graph); questions about the person's own past are answered from memory (`assistant.intent`).

Get instances from `assistant.registry.get_assistant(user_id)`: one per user, shared by that user's
browser tabs, never by two users. Writes take the instance's lock so two tabs of one person cannot
interleave half-done changes; long reads (retrieval, the LLM stream) run outside it.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from assistant import concepts
from assistant import history as H
from assistant.intent import IntentRouter
from assistant.pages import RenderedPage, best_page, render_page
from assistant.sections import CitedSection, cited_headings, cited_section, section_counts
from assistant.types import (AskResult, ConsolidatePreview, DocumentInfo, ForgetPreview, LoadResult, MemoryRef,
                             NoteResult, RecallFilters)
from core import backup as backups
from core.errors import AssistantError, DocumentError, InvalidRequest
from core.settings import Settings, get_settings
from rag.figures import memory_records
from rag.types import Citation, SourcesEvent

log = logging.getLogger(__name__)

MAX_NOTE_CHARS = 5000
GRAPH_AWAY_NOTICE = ("The note is saved and recall finds it, but the graph server is away, so its concepts "
                     "join the concept view when the server is back.")


def _note_text(content: str | None) -> str:
    """A note's text, trimmed; InvalidRequest when it is empty or too long (new notes and edits alike)."""
    content = (content or "").strip()
    if not content:
        raise InvalidRequest("The note is empty; write something first.", key="err_note_empty")
    if len(content) > MAX_NOTE_CHARS:
        raise InvalidRequest(f"A note can hold at most {MAX_NOTE_CHARS:,} characters; split this one up.",
                             key="err_note_too_long", n=MAX_NOTE_CHARS)
    return content


_routers: dict[str, IntentRouter] = {}
_routers_lock = threading.Lock()


def _router_for(embedder, llm) -> IntentRouter:
    """One router per embedding model and LLM (its example vectors are computed once per process)."""
    key = f"{embedder.model_id}|{getattr(llm, 'model', None)}|{id(llm) if llm else 0}"
    with _routers_lock:
        if key not in _routers:
            _routers[key] = IntentRouter(embedder, llm)
        return _routers[key]


class PDFLearningAssistant:
    def __init__(self, user_id: str, settings: Settings | None = None):
        from memory.manager import MemoryManager
        from rag.tool import RAGTool
        if not isinstance(user_id, str) or not user_id.strip():
            raise InvalidRequest("A user name is required.", key="err_user_required")
        self.user_id = user_id.strip()
        self.settings = settings or get_settings()
        self.rag = RAGTool(self.user_id, self.settings)
        self.memory = MemoryManager(self.settings, self.user_id)
        backups.schedule(self.settings.data_dir)     # the folder's databases: soon after start, then every 6 h
        self.router = _router_for(self.rag.embedder, self.rag.llm)
        self.lock = threading.RLock()
        self.default_session = uuid.uuid4().hex[:12]
        self.started_at = datetime.now(timezone.utc)
        self._concepts: dict[str, list[str]] = {}
        self._study = None

    @property
    def study(self):
        """This person's cards, reviews and quizzes (study.desk.StudyDesk)."""
        if self._study is None:
            from study.desk import StudyDesk
            self._study = StudyDesk(self.user_id, self.settings, self.rag, self.memory)
        return self._study

    def warm_up(self) -> None:
        """Load what the first question needs (intent examples, the spaCy pipeline, wordfreq's lists for glued
        names and slips: 1.4 s the first process question paid), e.g. at app start."""
        from wordfreq import zipf_frequency

        from core.text import compound_parts
        self.router.classify("What did I study yesterday?")
        compound_parts("leftpadding")
        zipf_frequency("渐变", "zh")         # a summary's section topics (rag.summary.section_topics)

    # == documents =================================================================================
    def load_document(self, path: str | Path, name: str | None = None, *, session_id: str | None = None,
                      progress=None) -> LoadResult:
        """Index one file and remember that it was loaded. Raises DocumentError (one sentence) for bad files.
        `progress(stage, done, total)` hears how far each stage is (see RAGTool.add_document).
        Converting and embedding (minutes for a book) run outside this person's lock, so their notes and
        other tabs are not held up; the index commits in one transaction of its own."""
        result = self.rag.add_document(path, name=name, progress=progress)
        loaded = LoadResult(**{**dataclasses.asdict(result), "seconds": round(result.seconds, 2)})
        if not result.pages:
            loaded.sections = self.section_counts([result.doc_id]).get(result.doc_id, 0)
        with self.lock:
            if not result.already_present:
                self._remember(f"Loaded the document '{result.name}' ({result.title}; {loaded.length}).",
                               "episodic", H.KIND_LOADED, session_id,
                               doc_id=result.doc_id, doc_name=result.name, pages=result.pages, chunks=result.chunks)
                self._remember_figures(result.doc_id, result.name)
            return loaded

    def _remember_figures(self, doc_id: str, doc_name: str) -> None:
        """A document's figures become perceptual memories, found by caption and the words in them."""
        records = memory_records(self.rag.figures(doc_id), doc_id, doc_name)
        if records:
            try:
                self.memory.add_many(records, "perceptual")
            except AssistantError:
                log.warning("the figures of %s could not be remembered", doc_name, exc_info=True)

    def _forget_figures(self, doc_id: str) -> None:
        for item in self.memory.list(["perceptual"]):
            if item.metadata.get("source") == "pdf_figure" and item.metadata.get("doc_id") == doc_id:
                self.memory.remove(item.id)

    def list_documents(self) -> list[DocumentInfo]:
        return [DocumentInfo(d.doc_id, d.name, d.title, d.pages, d.chunks,
                             datetime.fromtimestamp(d.created_at, tz=timezone.utc), d.size_bytes, d.source_format,
                             bool(d.file_path) and str(d.file_path).lower().endswith(".pdf"))
                for d in self.rag.list_documents()]

    def delete_document(self, doc_id: str, *, session_id: str | None = None) -> bool:
        """Remove a document everywhere: the memories that quote it (its figures; what answers quoted of
        it; the cards made from it), then the document itself (cached embeddings, rows, vectors, stored file: RAGTool.remove_document).
        False if it was not there. Memories go first: a crash midway leaves the document listed, and
        deleting it again finishes the job; the other way round, quotes of a gone document would stay."""
        with self.lock:
            record = self.rag.get_document(doc_id)
            if record is None:
                return False
            self._forget_figures(doc_id)
            self._forget_quotes(doc_id, record.name)
            self.study.forget_document(doc_id)
            removed = self.rag.remove_document(doc_id)
            self._concepts.pop(doc_id, None)
            if removed:
                self._remember(f"Removed the document '{record.name}'.", "episodic", H.KIND_REMOVED, session_id,
                               doc_id=doc_id, doc_name=record.name)
            return removed

    def _forget_quotes(self, doc_id: str, doc_name: str) -> int:
        """Answers remembered with a citation of the document (episodes, and their consolidated copies)
        lose the answer text and those citations; the question, the person's own words, stays. Returns
        how many memories changed. "Loaded / removed the document" records keep its name: they are the
        person's history, not its content."""
        changed = 0
        for item in self.memory.list(["episodic", "semantic"]):
            cited = item.metadata.get("citations") or []
            if not any(isinstance(c, dict) and c.get("doc_id") == doc_id for c in cited):
                continue
            labels = item.metadata.get("cited_labels") or []
            kept = [i for i, c in enumerate(cited) if not (isinstance(c, dict) and c.get("doc_id") == doc_id)]
            question = item.metadata.get("question") or item.content.split("\n", 1)[0].removeprefix("Asked: ")
            self.memory.update(item.id, content=f"Asked: {question}\nThe answer quoted '{doc_name}', which has "
                                                "since been removed.",
                               metadata={"citations": [cited[i] for i in kept], "answer": "",
                                         "cited_labels": [labels[i] for i in kept if i < len(labels)]})
            changed += 1
        return changed

    def render_source(self, citation: Citation, *, scale: float = 1.5) -> RenderedPage | CitedSection:
        """The cited page as an image with the cited passage highlighted; for a document without pages
        (Markdown, Word, HTML, text, a note) the cited section as text with the passage marked."""
        record = self.rag.get_document(citation.doc_id)
        if record is None:
            raise DocumentError("This document has been removed, so its pages cannot be shown.",
                                key="err_doc_removed_pages")
        if not record.file_path or not str(record.file_path).lower().endswith(".pdf"):
            return cited_section(self.rag.store, self.user_id, record, citation)
        if citation.page_start is None:
            raise DocumentError(f"This passage of '{record.name}' has no page number.",
                                key="err_passage_no_page", name=record.name)
        page = best_page(record.file_path, citation.page_start, citation.page_end or citation.page_start,
                         citation.quote)
        return render_page(record.file_path, page, citation.quote, scale=scale,
                           figures=self.rag.figures(citation.doc_id))

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]:
        """doc_id -> number of sections, for documents without pages (shown where a PDF shows pages)."""
        return section_counts(self.rag.store, self.user_id, doc_ids)

    def cited_headings(self, citations: list[Citation]) -> list[str]:
        """The short heading of the section each citation of a document without pages quotes ("" else)."""
        return cited_headings(self.rag.store, self.user_id, citations)

    # == a document's guide (assistant.guide) =======================================================
    def document_guide(self, doc_id: str):
        """The document's study guide: outline, each chapter's cited summary and key terms, and the questions
        the book answers (checked once, then kept)."""
        from assistant.guide import document_guide
        return document_guide(self.rag, doc_id)

    def document_guide_stages(self, doc_id: str):
        """The guide at once, then again as each chapter's questions are checked (assistant.guide.guide_stages)."""
        from assistant.guide import guide_stages
        return guide_stages(self.rag, doc_id)

    # == questions ================================================================================
    def ask(self, question: str, history: list[dict] | None = None, use_advanced_search: bool = False, *,
            mqe: bool | None = None, hyde: bool | None = None,
            session_id: str | None = None) -> Iterator[str | SourcesEvent | AskResult]:
        """Yield a SourcesEvent (the passages, at once), the answer's text as it is written, then the
        AskResult (always last). The whole trip is `assistant.ask.ask_question`.

        `history`: the conversation so far, [{"role": "user"|"assistant", "content": str}, ...].
        `use_advanced_search` turns on MQE and HyDE (when there is an LLM); `mqe` / `hyde` set them one by one."""
        from assistant.ask import ask_question
        yield from ask_question(self, question, history,
                                mqe=use_advanced_search if mqe is None else mqe,
                                hyde=use_advanced_search if hyde is None else hyde,
                                session_id=session_id or self.default_session)

    def ask_once(self, question: str, history: list[dict] | None = None, use_advanced_search: bool = False,
                 **kwargs) -> AskResult:
        """`ask` without streaming: the final AskResult."""
        final = None
        for item in self.ask(question, history, use_advanced_search, **kwargs):
            if isinstance(item, AskResult):
                final = item
        return final

    # == past conversations =======================================================================
    def conversations(self, limit: int = 20) -> list[dict]:
        """This user's past conversations (their `qa` episodes grouped by session), the most recently used
        first: {session_id, started, last, first_question, questions}."""
        return H.conversations(self._stored(["episodic"], kind=H.KIND_QA), limit)

    def conversation(self, session_id: str) -> list[dict]:
        """One of this user's conversations, oldest turn first: {question, answer, cited_labels}."""
        return H.turns([r for r in self._stored(["episodic"], kind=H.KIND_QA) if r.session_id == session_id])

    # == notes ====================================================================================
    def add_note(self, content: str, concept: str | None = None, *, doc_id: str | None = None,
                 page: int | None = None, quote: str | None = None, session_id: str | None = None) -> NoteResult:
        """Save a note in semantic memory; its concept becomes a graph node linked to the note's entities.
        A note made from a passage keeps its document, page and the quoted passage (it opens there later).
        The same note twice is refused, saying when the first was saved."""
        content = _note_text(content)
        concept = (concept or "").strip()
        if len(concept) > 80:
            raise InvalidRequest("A concept is a short name (at most 80 characters).", key="err_concept_too_long")
        kind = H.KIND_PREFERENCE if concept.lower() in H.PREFERENCE_CONCEPTS else H.KIND_NOTE
        meta = {"concept": concept} if concept else {}
        if doc_id:
            meta["doc_id"] = doc_id
            if page is not None:
                meta["page"] = int(page)
            if quote:
                meta["quote"] = quote.strip()[:MAX_NOTE_CHARS]
        with self.lock:
            same = self._same_note(content)
            if same is not None:
                saved = f"{same.timestamp.astimezone():%Y-%m-%d %H:%M}"
                raise InvalidRequest(f"You already have this note (saved {saved}).", key="err_note_duplicate",
                                     when=saved)
            key, aliases = concepts.note_concept_key(self, concept) if concept else ("", [])
            if key:
                meta["concept_key"] = key   # "SVM" and "支持向量机 (SVM)" name one node: which one is kept
            item = self._remember(content, "semantic", kind, session_id, **meta)
            linked = concepts.link_note(self, item.id, content, concept, key, aliases)
            return NoteResult(item.id, content, concept, linked, item.timestamp, notice=self._graph_notice())

    def _same_note(self, content: str) -> MemoryRef | None:
        key = " ".join(content.lower().split())
        return next((n for n in self.list_notes() if " ".join(n.content.lower().split()) == key), None)

    def edit_note(self, note_id: str, content: str) -> MemoryRef:
        """Change a note's text (its concept stays; it is re-embedded and its entities re-linked)."""
        content = _note_text(content)
        with self.lock:
            self._own_note(note_id)
            same = self._same_note(content)
            if same is not None and same.id != note_id:
                raise InvalidRequest("You already have a note with this text.", key="err_note_duplicate_text")
            self.memory.update(note_id, content=content)
            return self._own_note(note_id)

    def delete_note(self, note_id: str) -> bool:
        with self.lock:
            self._own_note(note_id)
            self.memory.remove(note_id)
            return True

    def _own_note(self, note_id: str) -> MemoryRef:
        note = next((n for n in self.list_notes() if n.id == note_id), None)
        if note is None:
            raise InvalidRequest("That note was not found; it may have been deleted.", key="err_note_not_found")
        return note

    def _graph_notice(self) -> str:
        """A note's graph writes wait in the outbox while the graph server is away (memory.graph.resilience):
        saved, but missing from the concept view until then, which the person must not find out by surprise."""
        return GRAPH_AWAY_NOTICE if self.memory.semantic.graph.pending_writes(self.user_id) else ""

    def list_notes(self) -> list[MemoryRef]:
        return [r for r in self._stored(["semantic"]) if r.kind in (H.KIND_NOTE, H.KIND_PREFERENCE)]

    def suggest_concepts(self, doc_id: str | None = None, limit: int = 15) -> list[str]:
        """Concept names to file a note under (assistant.concepts.suggest_concepts)."""
        return concepts.suggest_concepts(self, doc_id, limit)

    def _document_concepts(self, doc_id: str) -> list[str]:
        return concepts.document_concepts(self.rag, self.user_id, doc_id, self._concepts)

    def concept_details(self, key_or_name: str) -> concepts.ConceptDetails:
        """One concept's notes, study cards and the pages that mention it (assistant.concepts)."""
        return concepts.concept_details(self, key_or_name)

    def concept_graph(self, limit: int = 60):
        """The person's concepts and how they connect (memory.graph.GraphView; assistant.concepts)."""
        return concepts.concept_graph(self, limit)

    # == recall / maintenance =====================================================================
    def recall(self, query: str = "", filters: RecallFilters | None = None) -> list[MemoryRef]:
        """Search every memory type (or the filtered ones) for `query`; with no query, the newest first."""
        from memory.manager import check_query_length
        check_query_length(query or "")
        filters = filters or RecallFilters()
        types = filters.memory_types or ["working", "episodic", "semantic", "perceptual"]
        if filters.since and filters.until and filters.since > filters.until:
            raise InvalidRequest("The date range is empty: 'from' is after 'to'.", key="err_date_range")
        if query and query.strip():
            hits = self.memory.search(query.strip(), memory_types=types, limit=max(1, min(filters.limit, 200)),
                                      min_importance=filters.min_importance, since=filters.since,
                                      until=filters.until)
            return [H.to_ref(h) for h in hits]
        refs = self._stored([t for t in types if t != "working"], since=filters.since, until=filters.until)
        if "working" in types:
            refs += [H.to_ref(it) for it in self.memory.working.items()
                     if (filters.since is None or it.timestamp >= filters.since)
                     and (filters.until is None or it.timestamp <= filters.until)]
        if filters.min_importance is not None:
            refs = [r for r in refs if r.importance >= filters.min_importance]
        refs.sort(key=lambda r: r.timestamp, reverse=True)
        return refs[:filters.limit]

    def preview_forget(self, strategy: str = "importance_based", *, threshold: float = 0.1, max_age_days: float = 30,
                       capacity: int | None = None, memory_types: list[str] | None = None) -> ForgetPreview:
        """The memories `forget` with the same arguments would remove (nothing is removed)."""
        result = self.memory.forget(strategy, threshold=threshold, max_age_days=max_age_days, capacity=capacity,
                                    memory_types=memory_types, dry_run=True)
        doomed = set(result.removed_ids)
        return ForgetPreview(result.strategy.value,
                             [H.to_ref(it) for it in self.memory.list(memory_types) if it.id in doomed])

    def forget(self, strategy: str = "importance_based", *, threshold: float = 0.1, max_age_days: float = 30,
               capacity: int | None = None, memory_types: list[str] | None = None) -> int:
        with self.lock:
            result = self.memory.forget(strategy, threshold=threshold, max_age_days=max_age_days, capacity=capacity,
                                        memory_types=memory_types)
            return result.removed

    def preview_consolidate(self) -> ConsolidatePreview:
        """What `consolidate` would promote: working → episodic and episodic → semantic."""
        from memory.types import MemoryType
        wt, et = self.settings.consolidate_working_threshold, self.settings.consolidate_episodic_threshold
        # A working memory promoted to an episode is, when important enough, promoted again in the same run.
        out = [(H.to_ref(it), "episodic" if it.importance < et else "episodic → semantic")
               for it in self.memory.working.items() if it.importance >= wt]
        out += [(H.to_ref(it), "semantic")
                for it in self.memory.docs.list(self.user_id, types=[MemoryType.EPISODIC], min_importance=et)
                if not it.metadata.get("consolidated_to")]
        return ConsolidatePreview(out)

    def consolidate(self) -> int:
        """Run consolidation; returns the number of promotions (a memory promoted twice counts twice)."""
        with self.lock:
            return self.memory.consolidate().promoted

    # == overview =================================================================================
    def get_stats(self) -> dict:
        from assistant.report import overview
        return overview(self)

    def generate_report(self) -> dict:
        from assistant.report import build_report
        return build_report(self)

    # == helpers ==================================================================================
    def _remember(self, content: str, memory_type: str, kind: str, session_id: str | None, **metadata):
        return self.memory.add(content, memory_type, H.IMPORTANCE.get(kind, 0.5),
                               metadata={"kind": kind, **metadata}, session_id=session_id or self.default_session)

    def _stored(self, types: list[str], *, since: datetime | None = None, until: datetime | None = None,
                kind: str | None = None, limit: int | None = None) -> list[MemoryRef]:
        """This user's stored memories of these types, newest first (SQLite rows, no search)."""
        from memory.types import MemoryType
        if not types:
            return []
        items = self.memory.list([MemoryType.parse(t) for t in types], since=since, until=until, limit=limit)
        refs = [H.to_ref(it) for it in items]
        return [r for r in refs if r.kind == kind] if kind else refs

    def _activity(self) -> list[dict]:
        from assistant.report import activity
        return activity(self)

"""Typed results of the assistant facade: what the UI, the CLI and the tests receive."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

from rag.types import Citation, IngestResult


@dataclass
class LoadResult(IngestResult):
    """One file added (or found already there), with the sentence the UI shows for it."""
    sections: int = 0     # for a document without pages (Markdown, Word, a note): its heading sections

    @property
    def length(self) -> str:
        """"264 pages", or "12 sections" for a document without pages."""
        count, unit = (self.pages, "page") if self.pages else (self.sections, "section")
        return f"{count} {unit}{'' if count == 1 else 's'}"

    @property
    def message(self) -> str:
        if self.already_present:
            return f"'{self.name}' is already in your library ({self.length}); nothing was added."
        return f"Added '{self.name}': {self.length}, {self.chunks} passages in {self.seconds:.1f} s."


@dataclass
class DocumentInfo:
    doc_id: str
    name: str
    title: str
    pages: int
    chunks: int
    added_at: datetime
    size_bytes: int
    source_format: str
    has_pages: bool                   # the original is a PDF we can render

    def to_dict(self) -> dict:
        d = asdict(self)
        d["added_at"] = self.added_at.isoformat()
        return d


@dataclass
class MemoryRef:
    """A memory shown to the person or put into a prompt, labelled as memory (never as a document)."""
    id: str
    memory_type: str
    kind: str                         # note | qa | document_loaded | question | preference | ...
    content: str
    timestamp: datetime
    importance: float
    score: float | None = None
    metadata: dict = field(default_factory=dict)
    session_id: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["timestamp"] = self.timestamp.isoformat()
        return d


@dataclass
class AskResult:
    """The final item `ask` yields, after the streamed text."""
    question: str
    text: str
    route: str                        # "documents" | "memory"
    mode: str                         # "llm" | "extractive" | "none" | "memory"
    citations: list[Citation] = field(default_factory=list)   # document sources only
    memories: list[MemoryRef] = field(default_factory=list)   # memories used (context or answer)
    notice: str = ""                  # the notices below, joined (the CLI and stored memories read it)
    notices: list[str] = field(default_factory=list)          # each a core.errors.Notice, shown by ui.common.said
    search_query: str = ""            # what retrieval searched for (a follow-up is made standalone)
    intent_margin: float = 0.0
    period: str = ""                  # "yesterday", when a memory question named one
    seconds: float = 0.0
    refused: bool = False             # answered "not in your documents" (evidence too weak)
    related: list[Citation] = field(default_factory=list)     # closest passages shown when refused
    llm: str = "none"                 # the model that composed the answer, or "none"
    first_token_s: float | None = None   # seconds until the first text of the answer was yielded
    kind: str = ""                    # what the question asked for (rag.kinds), for a document question

    @property
    def source_labels(self) -> list[str]:
        return [c.label for c in self.citations]


@dataclass
class NoteResult:
    memory_id: str
    content: str
    concept: str
    linked_concepts: list[str]        # entities extracted from the note, linked to the concept
    created_at: datetime
    notice: str = ""                  # what the person should know: its concepts wait for the graph server


@dataclass
class RecallFilters:
    memory_types: list[str] | None = None      # None = all types
    since: datetime | None = None
    until: datetime | None = None
    min_importance: float | None = None
    limit: int = 20


@dataclass
class ForgetPreview:
    strategy: str
    memories: list[MemoryRef]


@dataclass
class ConsolidatePreview:
    promotions: list[tuple[MemoryRef, str]]   # (memory, target type)

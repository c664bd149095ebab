"""Typed models of the document pipeline: what conversion, chunking and retrieval hand each other."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# A citation mark "[n]" in an answer. Any number of digits: a passage that says "cite [1002]" must not leave a raw
# mark behind (a number with no source behind it is dropped).
CITATION_MARK = re.compile(r"\[(\d{1,6})\]")


@dataclass(frozen=True)
class Heading:
    """A heading recovered from a document: its level (1 = top), its title and where it starts."""
    level: int
    title: str
    char_offset: int  # offset of the heading line in ConvertedDocument.markdown


@dataclass(frozen=True)
class PageSpan:
    """Page `page` (1-based) covers markdown[char_start:char_end]."""
    page: int
    char_start: int
    char_end: int


@dataclass
class ConvertedDocument:
    """One file turned into Markdown, with where each page sits in it and the headings found.

    For formats without pages (Markdown, DOCX, HTML…) `pages` is empty and every chunk is page 1..1
    is NOT assumed: chunks of page-less documents carry page_start = page_end = None.
    Headings are also written into `markdown` as `#` lines so chunking sees them.
    """
    markdown: str
    title: str
    pages: list[PageSpan] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    page_count: int = 0
    source_format: str = ""  # "pdf", "md", "docx", ...
    warnings: list[str] = field(default_factory=list)  # e.g. "pages 3-5 have no text layer"
    ocr_pages: list[int] = field(default_factory=list)  # 1-based pages whose text was read by OCR (scans)
    # The OCR'd lines of those pages, {page: [{"text", "box": [left, bottom, right, top] in PDF points
    # (origin bottom left, as PDFium text rects), "conf"}]}: saved beside the stored PDF for highlighting.
    ocr_lines: dict[int, list[dict]] = field(default_factory=dict)


@dataclass
class Chunk:
    chunk_id: str          # f"{doc_id}:{ordinal}"
    doc_id: str
    ordinal: int
    text: str
    heading_path: list[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    token_count: int
    # Where pages begin inside `text`: (offset in text, page), first entry at 0. Empty if page-less.
    page_breaks: list[tuple[int, int]] = field(default_factory=list)
    # What a reader needs before `text` that lies elsewhere in the Markdown: when the chunk starts
    # inside a Markdown table, that table's caption and header rows. Not part of `text` (which stays
    # a contiguous slice of the Markdown); indexed with it and shown above it. "" if none.
    context_prefix: str = ""

    def pages_of_span(self, start: int, end: int) -> tuple[int | None, int | None]:
        """First and last page of text[start:end] (the chunk's own range when no page map is known)."""
        if not self.page_breaks:
            return self.page_start, self.page_end
        first = last = self.page_breaks[0][1]
        for offset, page in self.page_breaks:
            if offset <= start:
                first = page
            if offset < max(end, start + 1):
                last = page
        return first, last


@dataclass
class SearchHit:
    """A retrieved chunk with where it came from and why it ranked."""
    chunk: Chunk
    doc_name: str
    doc_title: str
    score: float                     # final score used for ordering (RRF or reranker)
    rank: int                        # 1-based
    sources: dict[str, int] = field(default_factory=dict)   # retriever -> its rank, e.g. {"dense": 3, "bm25": 1}

    @property
    def pages_label(self) -> str:
        c = self.chunk
        if c.page_start is None:
            return ""
        return f"p. {c.page_start}" if c.page_start == c.page_end else f"pp. {c.page_start}-{c.page_end}"


@dataclass
class Citation:
    n: int                           # the [n] used in the answer text
    doc_id: str
    doc_name: str
    page_start: int | None
    page_end: int | None
    chunk_id: str
    score: float
    quote: str                       # the passage (or sentence) the answer rests on
    support: float | None = None     # how well its best sentence answers the question (0-1)

    @property
    def strength(self) -> str:
        """Relevance as a plain word for people (never a raw fusion score)."""
        if self.support is None:
            return ""
        return "strong" if self.support >= 0.7 else "partial" if self.support >= 0.45 else "weak"

    @property
    def label(self) -> str:
        page = "" if self.page_start is None else (
            f" · p. {self.page_start}" if self.page_start == self.page_end else f" · pp. {self.page_start}-{self.page_end}")
        return f"[{self.n}] {self.doc_name}{page}"


@dataclass
class Answer:
    question: str
    text: str
    citations: list[Citation]
    mode: str                        # "llm" | "extractive" | "none"
    notice: str = ""                 # e.g. "No LLM is configured: this answer quotes the best passages."
    notices: list[str] = field(default_factory=list)   # the sentences of `notice`, each a core.errors.Notice
    queries: list[str] = field(default_factory=list)   # the expanded queries that were searched
    seconds: float = 0.0
    refused: bool = False            # "not in your documents": the evidence was too weak
    related: list[Citation] = field(default_factory=list)   # the closest passages, shown when refused
    llm: str = "none"                # the model that composed the text, or "none"
    checks: list = field(default_factory=list)   # rag.evidence.SentenceCheck per cited sentence (composed answers)
    kind: str = ""                   # what the question asked for (rag.kinds): lookup, explain, compare, summarize …


@dataclass
class SourcesEvent:
    """Yielded by the ask stream before any answer text: the passages the answer will rest on (or, when
    `related`, the closest passages of an answer that is not in the documents), shown at once."""
    citations: list[Citation]
    related: bool = False
    search_query: str = ""
    waiting_for: str = ""            # e.g. "the local model is answering another question" while queued (a Notice)
    composed: bool = False           # a model writes the answer: its sentences are checked once it is written


@dataclass
class IngestResult:
    doc_id: str
    name: str
    title: str
    pages: int
    chunks: int
    seconds: float
    already_present: bool = False
    warnings: list[str] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)

"""Typed models of the document pipeline: what conversion, chunking and retrieval hand each other."""
from __future__ import annotations

from dataclasses import dataclass, field


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

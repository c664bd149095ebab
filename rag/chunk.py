"""Heading-aware chunking: Markdown sections → token-sized chunks that carry their heading path and pages.

Sizes are in tokens as `core.text.count_tokens` counts them (a word, a punctuation mark or one CJK
character each). Chunks are cut at paragraph or sentence ends where one falls near the size limit, and
neighbouring chunks of one section share `overlap` tokens. Each chunk's text is a contiguous slice of
the document's Markdown, so its char offsets map straight onto the page map.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from core.text import token_spans
from rag.types import Chunk, ConvertedDocument, PageSpan

HEADING_LINE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# Where a cut reads naturally, best first: a blank line, a line end, a sentence end.
_BOUNDARIES = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?;:。！？；：])[\s\"')\]]"))


@dataclass
class Section:
    heading_path: list[str]
    start: int   # body start (after the heading line)
    end: int


def split_sections(markdown: str) -> list[Section]:
    """Sections between heading lines, each with the path of headings above it."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    pos = 0
    path: list[str] = []
    for m in HEADING_LINE.finditer(markdown):
        if markdown[pos:m.start()].strip():
            sections.append(Section(list(path), pos, m.start()))
        level, title = len(m.group(1)), m.group(2).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = [t for _, t in stack]
        pos = m.end()
    if markdown[pos:].strip():
        sections.append(Section(list(path), pos, len(markdown)))
    return sections


def _best_cut(text: str, lo: int, hi: int) -> int | None:
    """The last natural boundary in text[lo:hi], or None."""
    for pattern in _BOUNDARIES:
        last = None
        for m in pattern.finditer(text, lo, hi):
            last = m.end()
        if last is not None:
            return last
    return None


def _windows(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """(char_start, char_end) windows of at most `size` tokens over text[start:end]."""
    spans = [(s + start, e + start) for s, e in token_spans(text[start:end])]
    if not spans:
        return []
    windows = []
    first = 0
    while first < len(spans):
        last = min(first + size, len(spans))  # exclusive token index
        cut_char = spans[last - 1][1]
        if last < len(spans):
            # Prefer a natural boundary in the last 40% of the window.
            lo = spans[first + int(size * 0.6)][0] if first + int(size * 0.6) < last else spans[first][1]
            cut = _best_cut(text, lo, spans[last][0])
            if cut is not None:
                cut_char = cut
                last = bisect.bisect_left([s for s, _ in spans], cut_char, first + 1, last + 1)
                last = max(last, first + 1)
        windows.append((spans[first][0], max(cut_char, spans[last - 1][1])))
        if last >= len(spans):
            break
        first = _sentence_start(text, spans, max(last - overlap, first + 1), last)
    return windows


def _sentence_start(text: str, spans: list[tuple[int, int]], first: int, last: int) -> int:
    """Move an overlap start forward to the next sentence or line start, if one is in the overlap."""
    if first >= last:
        return first
    for pattern in _BOUNDARIES:
        m = pattern.search(text, spans[first][0], spans[last - 1][1])
        if m:
            return max(bisect.bisect_left([s for s, _ in spans], m.end(), first, last), first)
    return first


def page_range(pages: list[PageSpan], char_start: int, char_end: int) -> tuple[int | None, int | None]:
    """First and last page whose span overlaps [char_start, char_end)."""
    if not pages:
        return None, None
    starts = [p.char_start for p in pages]
    i = max(bisect.bisect_right(starts, char_start) - 1, 0)
    j = max(bisect.bisect_left(starts, max(char_end, char_start + 1)) - 1, i)
    return pages[i].page, pages[j].page


def page_breaks(pages: list[PageSpan], start: int, end: int) -> list[tuple[int, int]]:
    """(offset relative to `start`, page) for each page overlapping [start, end), the first at 0."""
    breaks = [(max(0, p.char_start - start), p.page) for p in pages
              if p.char_end > start and p.char_start < max(end, start + 1)]
    return breaks


def chunk_document(doc: ConvertedDocument, doc_id: str, *, size: int, overlap: int) -> list[Chunk]:
    if size < 10:
        raise ValueError("chunk size must be at least 10 tokens")
    overlap = max(0, min(overlap, size // 2))
    text = doc.markdown
    pieces: list[tuple[list[str], int, int]] = []
    for section in split_sections(text):
        for s, e in _windows(text, section.start, section.end, size, overlap):
            pieces.append((section.heading_path, s, e))
    pieces = _merge_small(text, pieces, size)
    chunks = []
    for ordinal, (path, s, e) in enumerate(pieces):
        page_start, page_end = page_range(doc.pages, s, e)
        body = text[s:e].strip()
        body_start = s + (len(text[s:e]) - len(text[s:e].lstrip()))
        chunks.append(Chunk(chunk_id=f"{doc_id}:{ordinal}", doc_id=doc_id, ordinal=ordinal, text=body,
                            heading_path=path, page_start=page_start, page_end=page_end,
                            char_start=s, char_end=e, token_count=len(token_spans(body)),
                            page_breaks=page_breaks(doc.pages, body_start, body_start + len(body))))
    return chunks


def _merge_small(text: str, pieces: list[tuple[list[str], int, int]], size: int):
    """Join runs of small neighbouring pieces (short sections) so no chunk is a lone heading's line.

    A merged chunk keeps the first piece's heading path; its text still includes the later headings.
    """
    merged: list[tuple[list[str], int, int]] = []
    tokens = [len(token_spans(text[s:e])) for _, s, e in pieces]
    current, current_tokens = None, 0
    for piece, n in zip(pieces, tokens):
        if current and current_tokens + n <= size and (current_tokens < size // 3 or n < size // 3) \
                and piece[1] >= current[2]:
            current = (current[0], current[1], piece[2])
            current_tokens += n
            continue
        if current:
            merged.append(current)
        current, current_tokens = piece, n
    if current:
        merged.append(current)
    return merged


def document_context(name: str, title: str) -> str:
    """How chunks name their document: the file name (people put company, year, course in it) and the
    title found inside, when that says something the name does not."""
    stem = re.sub(r"[_\-.]+", " ", name.rsplit(".", 1)[0]).strip()
    if not title or title.lower() == stem.lower():
        return stem or title
    return f"{stem} · {title}" if stem else title


def embedding_text(title: str, heading_path: list[str], text: str) -> str:
    """What the embedder and BM25 see: the chunk with its document title and section as context,
    so a chunk that never names its company or chapter can still be found by them."""
    context = " > ".join([title, *heading_path]) if title else " > ".join(heading_path)
    return f"{context}\n{text}" if context else text

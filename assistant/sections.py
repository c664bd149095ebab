"""The cited section of a document without pages (Markdown, Word, HTML, text, a pasted note).

A PDF source is shown as its page image (assistant.pages); these documents have no pages, so the
viewer shows the section the passage sits in: from its heading to the next heading of the same or
higher level, as text, the passage's word runs marked.

Where the text comes from: the stored chunks, not the stored file. Chunks are contiguous slices of
the document's Markdown with their offsets (rag.chunk), overlapping, so merged by offset they give
back the Markdown that was indexed and cited, exactly, with the cited chunk's place in it known —
for every format alike, for notes added with `add_text` (which have no file), in one SQL query.
Re-converting the stored file (MarkItDown) would take seconds for a large Word file on every click,
and a newer converter could shift the text the offsets point into. What chunks do not hold are the
heading lines between sections (chunking puts them in the heading path, not the text): those are
written back from the chunks' heading paths, at a level that reproduces the path (the title is
exact; "###" may come back as "##" where the level is not known). Everything else between chunks
is whitespace (every non-space character is a chunking token, and every token is in a chunk).

The same rebuilt Markdown gives each document's number of sections (rag.chunk.split_sections), which
the documents table shows instead of "0 pages". Rebuilt documents are cached per process, by doc_id
(a hash of the content) and the time it was added, so a cached text never goes stale.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from assistant.pages import MIN_RUN, _tokens, matching_runs
from core.errors import DocumentError
from rag.chunk import (FENCE_LINE, HEADING_LINE, Section, closes_fence, fenced_ranges, heading_matches, markdown_tables,
                       split_sections)
from rag.types import Chunk, Citation

SECTION_MAX_CHARS = 6000    # longer sections are shown as an excerpt around the passage
SHORT_HEADING = 48          # characters of a heading in a source's label
_CACHE_DOCS = 8


@dataclass(frozen=True)
class HeadingLine:
    start: int                 # the heading line in the rebuilt Markdown
    end: int
    level: int
    title: str
    path: tuple[str, ...]      # the headings above it and itself


@dataclass
class DocumentText:
    """A document's Markdown rebuilt from its chunks, and where each chunk's text sits in it."""
    markdown: str
    spans: dict[str, tuple[int, int]]
    headings: list[HeadingLine]
    sections: list[Section]


@dataclass
class CitedSection:
    """What the viewer shows for a source without pages: the section's Markdown (or an excerpt of a
    long one), the passage's word runs in it, and where the section is in the document."""
    doc_name: str
    heading_path: list[str]            # plain text, top heading first; [] before the first heading
    number: int                        # 1-based, of `count` sections (rag.chunk.split_sections)
    count: int
    body: str                          # Markdown; starts with the heading unless cut_before
    highlights: list[tuple[int, int]] = field(default_factory=list)   # character ranges of body
    heading_line: str = ""             # the section's heading line, shown above an excerpt (cut_before)
    cut_before: bool = False           # the excerpt starts after the section's heading
    cut_after: bool = False            # ...or ends before the section does

    @property
    def heading(self) -> str:
        """The heading path as a caption shows it ("2 Models › 2.3 Attention"), the last heading
        alone when the path is long."""
        full = " › ".join(self.heading_path)
        return full if len(full) <= 80 else short_heading(self.heading_path, 80)


def short_heading(path: list[str] | tuple[str, ...], limit: int = SHORT_HEADING) -> str:
    if not path:
        return ""
    title = path[-1]
    return title if len(title) <= limit else title[:limit - 1].rstrip() + "…"


def plain_heading(title: str) -> str:
    """A heading without Markdown decoration (links, emphasis, inline code), for captions and labels."""
    title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)
    title = re.sub(r"(\*\*|__|\*|_|`)(.+?)\1", r"\2", title)
    return " ".join(title.split())


# -- rebuilding the Markdown ------------------------------------------------------------------------------

def rebuild_markdown(chunks: list[Chunk]) -> DocumentText:
    """The document's Markdown from its chunks (see the module's docstring)."""
    parts: list[str] = []
    length = 0
    spans: dict[str, tuple[int, int]] = {}
    stack: list[tuple[int, str]] = []          # (level, title) of the headings written so far
    fence = _FenceTracker()                    # whether the text written so far ends inside fenced code
    covered = -1                               # original offset where the written text ends
    run_orig = run_out = 0                     # where the current gap-free run starts, originally and here

    def write(text: str) -> None:
        nonlocal length
        parts.append(text)
        length += len(text)

    for c in sorted(chunks, key=lambda c: (c.char_start, c.ordinal)):
        text = c.text
        if not text:
            continue
        start, end = c.char_start, c.char_start + len(text)   # chunk text is the stripped window: it starts at a token
        if start < covered:                                    # overlaps the text written before it
            at = run_out + max(start, run_orig) - run_orig
            spans[c.chunk_id] = (at, at + len(text))
            if end > covered:
                skip = covered - start
                write(text[skip:])
                _follow_headings(stack, text[skip:], fence)
                covered = end
            continue
        gap = start - max(covered, 0)
        headings = _headings_between(stack, c.heading_path)
        if headings:
            # Blank lines around them, unless the gap has no room for those (a "# comment" line in code).
            lines = sum(len(h) for h in headings)
            sep = "\n\n" if gap >= lines + 2 * len(headings) + (2 if parts else 0) else "\n"
            write((sep if parts else "") + sep.join(headings) + sep)
            fence.line_start = True
        elif parts:
            write("\n\n" if gap >= 2 else "\n" if gap == 1 else "")
            fence.line_start = fence.line_start if gap == 0 else True
        run_orig, run_out = start, length
        spans[c.chunk_id] = (length, length + len(text))
        write(text)
        _follow_headings(stack, text, fence)
        covered = end
    markdown = "".join(parts)
    return DocumentText(markdown, spans, heading_lines(markdown), split_sections(markdown))


def _headings_between(stack: list[tuple[int, str]], path: list[str]) -> list[str]:
    """The heading lines that lead from the headings written so far (`stack`, updated) to `path`."""
    titles = [title for _, title in stack]
    if titles == list(path):
        return []
    k = 0
    while k < min(len(titles), len(path)) and titles[k] == path[k]:
        k += 1
    if k == len(path) and path:      # back up to a heading already open: a new heading of that title
        k -= 1
    old = list(stack)
    del stack[k:]
    lines = []
    for i in range(k, len(path)):
        level = old[i][0] if i < len(old) else (stack[-1][0] + 1 if stack else 1)
        level = min(6, max(level, stack[-1][0] + 1 if stack else 1))
        stack.append((level, path[i]))
        lines.append(f"{'#' * level} {path[i]}")
    return lines


class _FenceTracker:
    """Reads the rebuilt Markdown as it is written: whether it is inside fenced code, and whether the next
    text starts a line. A chunk may start or end inside a code block, so this cannot be told per chunk."""

    def __init__(self):
        self.opener: str | None = None
        self.line_start = True

    def headings(self, text: str) -> list[tuple[int, str]]:
        """(level, title) of the heading lines in `text`, the next piece of the Markdown, outside code."""
        found = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            whole = self.line_start or i > 0
            if whole and (m := FENCE_LINE.match(line)):
                if self.opener is None:
                    self.opener = m.group(1)
                elif closes_fence(line, self.opener):
                    self.opener = None
            elif whole and self.opener is None and (h := HEADING_LINE.match(line)):
                found.append((len(h.group(1)), h.group(2).strip()))
        self.line_start = text.endswith("\n") or (not text and self.line_start)
        return found


def _follow_headings(stack: list[tuple[int, str]], text: str, fence: _FenceTracker) -> None:
    """Heading lines inside a chunk's new text (a chunk joining short sections holds them)."""
    for level, title in fence.headings(text):
        _push(stack, level, title)


def _push(stack: list[tuple[int, str]], level: int, title: str) -> None:
    while stack and stack[-1][0] >= level:
        stack.pop()
    stack.append((level, title))


def heading_lines(markdown: str) -> list[HeadingLine]:
    """Every heading line with its heading path (a "# comment" line in fenced code is no heading)."""
    out, stack = [], []
    for m in heading_matches(markdown):
        level, title = len(m.group(1)), m.group(2).strip()
        _push(stack, level, title)
        out.append(HeadingLine(m.start(), m.end(), level, title, tuple(t for _, t in stack)))
    return out


class DocumentTexts:
    """Rebuilt documents, a few kept per process, keyed by doc_id (a content hash) and when it was added."""

    def __init__(self, size: int = _CACHE_DOCS):
        self.size = size
        self._docs: OrderedDict[tuple, DocumentText] = OrderedDict()
        self._counts: dict[tuple, int] = {}
        self._lock = threading.Lock()

    def get(self, store, user_id: str, doc_id: str) -> DocumentText:
        key = self._key(store, user_id, doc_id)
        with self._lock:
            if key in self._docs:
                self._docs.move_to_end(key)
                return self._docs[key]
        chunks = store.chunks_of(user_id, doc_id) if key else []
        if not chunks:
            raise DocumentError("This document is no longer stored; upload it again to see its sections.",
                                key="err_sections_missing")
        doc = rebuild_markdown(chunks)
        with self._lock:
            self._docs[key] = doc
            self._counts[key] = len(doc.sections)
            while len(self._docs) > self.size:
                self._docs.popitem(last=False)
        return doc

    @staticmethod
    def _key(store, user_id: str, doc_id: str) -> tuple | None:
        """The document as stored now (removed and added again, e.g. with other chunk settings, it is
        another entry), or None when it is not stored."""
        record = store.get_document(user_id, doc_id)
        return (id(store), user_id, doc_id, record.created_at) if record else None

    def count(self, store, user_id: str, doc_id: str) -> int:
        key = self._key(store, user_id, doc_id)
        with self._lock:
            if key in self._counts:
                return self._counts[key]
        try:
            return len(self.get(store, user_id, doc_id).sections)
        except DocumentError:
            return 0


TEXTS = DocumentTexts()


def section_counts(store, user_id: str, doc_ids: list[str]) -> dict[str, int]:
    """doc_id -> its number of sections (headings-delimited, as chunking splits them)."""
    return {doc_id: TEXTS.count(store, user_id, doc_id) for doc_id in doc_ids}


# -- the cited section ------------------------------------------------------------------------------------

def passage_runs(text: str, passage: str) -> list[tuple[int, int]]:
    """Where the passage's words run in `text` (assistant.pages.matching_runs: line breaks, Markdown
    marks and CJK do not break a match); a passage of fewer than MIN_RUN words must match whole."""
    n = len(_tokens(passage))
    if n == 0:
        return []
    return matching_runs(text, passage, min_run=min(MIN_RUN, n))


def locate(doc: DocumentText, chunk_id: str, quote: str) -> list[tuple[int, int]]:
    """The passage's ranges in the rebuilt Markdown: its word runs inside the cited chunk; else
    anywhere (the chunk ids changed since it was cited); else the whole chunk."""
    span = doc.spans.get(chunk_id)
    if span is not None:
        runs = _outside_headings(doc, [(span[0] + s, span[0] + e)
                                       for s, e in passage_runs(doc.markdown[span[0]:span[1]], quote)])
        if runs:
            return runs
    runs = _outside_headings(doc, passage_runs(doc.markdown, quote))
    if runs:
        return runs
    return [span] if span is not None else []


def anchor(doc: DocumentText, chunk_id: str, quote: str) -> list[tuple[int, int]]:
    """The ranges of the quote's FIRST part: an extractive answer joins several sentences of one
    passage into its quote ("best … next best"), best first; the section shown is the best one's."""
    first = quote.split(" … ")[0]
    return locate(doc, chunk_id, first) if first != quote else []


def _outside_headings(doc: DocumentText, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs without heading lines: a heading's words next to the same words in its first line
    would join the run ("## 3 注意力机制" + "注意力机制让…"), but the passage is the text under it."""
    for h in doc.headings:
        runs = [part for s, e in runs
                for part in ((s, min(e, h.start)), (max(s, h.end), e)) if part[1] > part[0]]
    return [(s, e) for s, e in runs if doc.markdown[s:e].strip()]


def _heading_at(doc: DocumentText, pos: int) -> HeadingLine | None:
    before = [h for h in doc.headings if h.start <= pos]
    return before[-1] if before else None


def _section_end(doc: DocumentText, heading: HeadingLine | None) -> int:
    """Where the section under `heading` ends: at the next heading of the same or a higher level
    (any heading, for the text before the first one)."""
    for h in doc.headings:
        if heading is None or (h.start > heading.start and h.level <= heading.level):
            return h.start
    return len(doc.markdown)


def _section_number(doc: DocumentText, pos: int) -> int:
    number = 1
    for i, s in enumerate(doc.sections):
        if s.start <= pos or i == 0:
            number = i + 1
    return number


def section_of(doc: DocumentText, runs: list[tuple[int, int]], doc_name: str = "",
               max_chars: int = SECTION_MAX_CHARS, anchor: list[tuple[int, int]] | None = None) -> CitedSection:
    """The section holding the passage (`runs`, sorted ranges of doc.markdown; `anchor`, the part
    that chooses the section, if not all of it), capped to an excerpt of about `max_chars` around it.
    A passage that runs on past its section's end (a chunk joining short sections) takes the sections
    it reaches along; the runs outside what is shown are left out."""
    md = doc.markdown
    chooser = anchor or runs
    p0, p1 = (chooser[0][0], chooser[-1][1]) if chooser else (0, 0)
    heading = _heading_at(doc, p0)
    start = heading.start if heading else 0
    end = max(_section_end(doc, heading), _section_end(doc, _heading_at(doc, max(p0, p1 - 1))))
    lo, hi = start, end
    if end - start > max_chars:
        lo, hi = _excerpt(md, start, end, p0, p1, max_chars)
    heading_line = md[heading.start:heading.end] if heading and lo > heading.end else ""
    prefix, suffix = _block_context(md, start, lo, hi)
    body = prefix + md[lo:hi] + suffix
    shift = len(prefix) - lo
    highlights = [(max(s, lo) + shift, min(e, hi) + shift) for s, e in runs if e > lo and s < hi]
    return CitedSection(doc_name=doc_name,
                        heading_path=[plain_heading(t) for t in heading.path] if heading else [],
                        number=_section_number(doc, p0), count=len(doc.sections), body=body,
                        highlights=highlights, heading_line=heading_line, cut_before=lo > start,
                        cut_after=hi < end)


def _excerpt(md: str, start: int, end: int, p0: int, p1: int, max_chars: int) -> tuple[int, int]:
    """[lo, hi) of about max_chars around the passage [p0, p1), at paragraph (else line, sentence,
    word) boundaries within a quarter of max_chars."""
    spare = max(0, max_chars - (p1 - p0))
    lo = max(start, p0 - spare // 2)
    hi = min(end, lo + max(max_chars, p1 - p0))
    lo = max(start, min(lo, hi - max_chars))
    reach = max_chars // 4
    return _snap(md, lo, max(start, lo - reach), back=True), _snap(md, hi, min(end, hi + reach), back=False)


_BOUNDARY_SEPARATORS = ("\n\n", "\n", ". ", "。", " ")


def _snap(md: str, pos: int, limit: int, *, back: bool) -> int:
    """The nearest boundary from `pos` towards `limit` (a paragraph's, else a line's, a sentence's, a word's)."""
    if (back and pos <= limit) or (not back and pos >= limit):
        return limit
    for sep in _BOUNDARY_SEPARATORS:
        at = md.rfind(sep, limit, pos) if back else md.find(sep, pos, limit)
        if at >= 0:
            return at + len(sep) if back else (at + len(sep) if sep in (". ", "。") else at)
    return pos


def _block_context(md: str, start: int, lo: int, hi: int) -> tuple[str, str]:
    """What an excerpt md[lo:hi] of the section starting at `start` needs to render as it reads in
    the whole section: the fence line of a code block it starts inside (and a fence to close one it
    ends inside), the header of a table it starts inside."""
    prefix = suffix = ""
    for a, b, unclosed in fenced_ranges(md[start:hi]):
        if start + a < lo < start + b:
            line_end = md.find("\n", start + a, start + b)
            prefix = md[start + a:line_end if line_end >= 0 else start + b] + "\n"
        if unclosed:
            suffix = "\n" + unclosed
    if not prefix:
        for table in markdown_tables(md[start:hi]):
            t0, t1 = start + table.start, start + table.end
            if t0 < lo < t1:
                prefix = md[t0:lo] if lo <= t0 + len(table.header) + 1 else table.header + "\n"
                break
    return prefix, suffix


def cited_section(store, user_id: str, record, citation: Citation) -> CitedSection:
    """The section of the stored document `record` that `citation` quotes, its passage marked."""
    doc = TEXTS.get(store, user_id, record.doc_id)
    runs = locate(doc, citation.chunk_id, citation.quote or "")
    if not runs:
        raise DocumentError(f"This passage is no longer in '{record.name}'; ask again to cite it afresh.",
                            key="err_passage_gone", name=record.name)
    return section_of(doc, runs, record.name, anchor=anchor(doc, citation.chunk_id, citation.quote or ""))


def cited_headings(store, user_id: str, citations: list[Citation]) -> list[str]:
    """For each citation of a document without pages, the short heading of the section it quotes
    ("" for page citations and passages before the first heading)."""
    out = []
    for c in citations:
        if c.page_start is not None:
            out.append("")
            continue
        try:
            doc = TEXTS.get(store, user_id, c.doc_id)
        except DocumentError:
            out.append("")
            continue
        runs = anchor(doc, c.chunk_id, c.quote or "") or locate(doc, c.chunk_id, c.quote or "")
        # the longest run is the quote: a shorter one can be its words elsewhere ("the inside of a" in the
        # section before "The clip command cuts a picture to the inside of a path.")
        longest = max(runs, key=lambda r: r[1] - r[0]) if runs else None
        heading = _heading_at(doc, longest[0]) if longest else None
        out.append(short_heading([plain_heading(t) for t in heading.path]) if heading else "")
    return out

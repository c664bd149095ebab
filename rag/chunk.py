"""Heading-aware chunking: Markdown sections → token-sized chunks that carry their heading path and pages.

Sizes are in tokens as `core.text.count_tokens` counts them (a word, a punctuation mark or one CJK
character each). Chunks are cut at paragraph or sentence ends where one falls near the size limit, and
neighbouring chunks of one section share `overlap` tokens. Each chunk's text is a contiguous slice of
the document's Markdown, so its char offsets map straight onto the page map.

Markdown tables are cut only between rows, never between the header and the first row: a table that
fits in a chunk starts a chunk rather than being split, and a chunk that starts further down a longer
table carries the table's caption and header in `Chunk.context_prefix` (indexed and shown with the
text, though not part of it), so "Total revenue | $7,301.5" is never read without "| | 2017 | 2016 |".
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from core.text import detect_language, token_spans
from rag.types import Chunk, ConvertedDocument, PageSpan

# A CJK character counts as one token, as a word does, but says about half as much: Chinese sections get
# chunks 1.75x as long so a passage holds a whole thought (CMRC 2018: chunk hit@1 0.80 -> 0.84, hit@5
# 0.97 -> 0.99 going from 200 to 350). The multilingual embedder that reads them takes 512 tokens.
CJK_SCALE = 1.75
HEADING_LINE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
# Where a cut reads naturally, best first: a blank line, a line end, a sentence end.
_BOUNDARIES = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?;:。！？；：])[\s\"')\]]"))
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?$")
CAPTION_LINES = 3           # a caption is a title line or two ("CONSOLIDATED BALANCE SHEETS", "(In millions)")
CAPTION_MAX_CHARS = 200


def is_table_row(line: str) -> bool:
    """A Markdown table's row: a line in pipes."""
    return bool(_TABLE_ROW.match(line))


@dataclass
class TableSpan:
    """A Markdown table in the document: where it runs, where rows may be cut, what a later chunk needs."""
    start: int                 # the header row's first character
    end: int                   # after the last row
    cuts: list[int]            # row starts a chunk may begin at: from the second body row on
    header: str                # the header row(s) and the |---| rule
    caption: str               # the short paragraph right above it, "" if none
    caption_start: int         # where that caption starts (== start without one)


def markdown_tables(markdown: str) -> list[TableSpan]:
    """Every Markdown table: a `| … |` header row, a `|---|` rule, then `| … |` rows."""
    tables: list[TableSpan] = []
    lines = markdown.split("\n")
    starts = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    i = 0
    while i + 1 < len(lines):
        if not (_TABLE_ROW.match(lines[i]) and _TABLE_RULE.match(lines[i + 1])):
            i += 1
            continue
        j = i + 2
        while j < len(lines) and _TABLE_ROW.match(lines[j]):
            j += 1
        end = starts[j - 1] + len(lines[j - 1])
        caption, caption_start = _caption_before(lines, starts, i)
        tables.append(TableSpan(start=starts[i], end=end, cuts=starts[i + 3:j],
                                header=f"{lines[i]}\n{lines[i + 1]}", caption=caption,
                                caption_start=caption_start if caption else starts[i]))
        i = j
    return tables


def _caption_before(lines: list[str], starts: list[int], i: int) -> tuple[str, int]:
    """The lines right above the table at line i that read as its title ("CONSOLIDATED BALANCE SHEETS",
    "(In millions)", "The following table shows ...:"), up to CAPTION_LINES, stopping at a blank line,
    a heading (headings are in the heading path already), a table row or the end of a sentence."""
    k = i - 1
    if k >= 0 and not lines[k].strip():
        k -= 1                                    # one blank line between caption and table
    taken: list[int] = []
    while k >= 0 and len(taken) < CAPTION_LINES:
        line = lines[k].strip()
        if (not line or HEADING_LINE.match(lines[k]) or _TABLE_ROW.match(lines[k]) or len(line) > CAPTION_MAX_CHARS
                or line.endswith((".", ";", ",")) or (line.endswith(":") and taken)):
            break
        taken.append(k)
        k -= 1
    if not taken:
        return "", starts[i]
    return " ".join(lines[j].strip() for j in reversed(taken)), starts[taken[-1]]


class _TableCuts:
    """Where a chunk may begin or end, given the tables: anywhere outside a table, at a table's
    caption or header, and between body rows from the second one on (a chunk never ends after the
    header alone, nor in the middle of a row)."""

    def __init__(self, tables: list[TableSpan]):
        self.tables = tables
        self.starts = [t.start for t in tables]
        self.cuts = [set(t.cuts) for t in tables]

    def table_at(self, pos: int) -> int | None:
        """Index of the table that `pos` lies strictly inside (after its first character), or None."""
        k = bisect.bisect_left(self.starts, pos) - 1
        if k >= 0 and self.tables[k].start < pos < self.tables[k].end:
            return k
        return None

    def next_cut(self, k: int, pos: int) -> int:
        """The first place at or after `pos` where table k may be cut (its end, after the last row)."""
        return min((c for c in self.tables[k].cuts if c >= pos), default=self.tables[k].end)

    def allowed(self, pos: int) -> bool:
        k = self.table_at(pos)
        return k is None or pos in self.cuts[k]


@dataclass
class Section:
    heading_path: list[str]
    start: int   # body start (after the heading line)
    end: int


FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fenced_ranges(markdown: str) -> list[tuple[int, int, str | None]]:
    """(start, end, fence) of each fenced code block, from its opening fence line to its closing one;
    `fence` is the opening fence ("```") when the text ends before the block is closed, else None."""
    out, opener, opened, pos = [], None, 0, 0
    for line in markdown.split("\n"):
        m = FENCE_LINE.match(line)
        if m and opener is None:
            opener, opened = m.group(1), pos
        elif m and opener is not None and closes_fence(line, opener):
            out.append((opened, pos + len(line), None))
            opener = None
        pos += len(line) + 1
    if opener is not None:
        out.append((opened, len(markdown), opener))
    return out


def closes_fence(line: str, opener: str) -> bool:
    """Whether a fence line closes the block `opener` ("```", "~~~~") opened."""
    m = FENCE_LINE.match(line)
    return bool(m) and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener) and not line.strip(" `~")


def heading_matches(markdown: str) -> list[re.Match]:
    """The heading lines of the Markdown; a "# comment" line inside fenced code is code, not a heading."""
    fences = fenced_ranges(markdown)
    return [m for m in HEADING_LINE.finditer(markdown) if not any(a < m.start() < b for a, b, _ in fences)]


def split_sections(markdown: str) -> list[Section]:
    """Sections between heading lines, each with the path of headings above it."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    pos = 0
    path: list[str] = []
    for m in heading_matches(markdown):
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


def _best_cut(text: str, lo: int, hi: int, tables: _TableCuts | None = None) -> int | None:
    """The last natural boundary in text[lo:hi] that the tables allow, or None."""
    for pattern in _BOUNDARIES:
        last = None
        for m in pattern.finditer(text, lo, hi):
            if tables is None or tables.allowed(m.end()):
                last = m.end()
        if last is not None:
            return last
    return None


def _windows(text: str, start: int, end: int, size: int, overlap: int,
             tables: _TableCuts | None = None) -> list[tuple[int, int]]:
    """(char_start, char_end) windows of at most `size` tokens over text[start:end]."""
    spans = [(s + start, e + start) for s, e in token_spans(text[start:end])]
    if not spans:
        return []
    token_starts = [s for s, _ in spans]
    windows = []
    first = 0
    while first < len(spans):
        last = min(first + size, len(spans))  # exclusive token index
        cut_char = spans[last - 1][1]
        if last < len(spans):
            # Prefer a natural boundary in the last 40% of the window; in a table, any row boundary
            # in the window rather than a cut through a row.
            lo = spans[first + int(size * 0.6)][0] if first + int(size * 0.6) < last else spans[first][1]
            cut = _best_cut(text, lo, spans[last][0], tables)
            if cut is None and tables is not None and (k := tables.table_at(spans[last - 1][1])) is not None:
                # No row boundary in the window: an earlier one, else the window grows to the next
                # (a header and its first row never part, even when together they exceed `size`).
                cut = _best_cut(text, spans[first][1], spans[last][0], tables) or tables.next_cut(k, spans[last][0])
            if tables is not None:
                cut = _before_table(tables, spans, token_starts, first, cut, size)
            if cut is not None:
                cut_char = cut
                last = max(bisect.bisect_left(token_starts, cut_char, first + 1), first + 1)
        window = (spans[first][0], max(cut_char, spans[last - 1][1]))
        if not windows or window[1] > windows[-1][1]:   # else the previous window already holds it all
            windows.append(window)
        if last >= len(spans):
            break
        # A window cut short (before a table, or by a boundary) shares nothing with the next: stepping
        # back `overlap` tokens from its end would start the next window inside it again, one token
        # further each time ("as follows:", "follows:", ":" as chunks of their own).
        step_back = overlap if last - first > 2 * overlap else 0
        first = _sentence_start(text, spans, max(last - step_back, first + 1), last, tables)
    return windows


def _before_table(tables: _TableCuts, spans: list[tuple[int, int]], token_starts: list[int], first: int,
                  cut: int | None, size: int) -> int | None:
    """Move a cut that falls inside a table to before the table (its caption) when the whole table
    fits in the next chunk and this chunk keeps a fair share of the window: a table whole beats a
    table in two."""
    if cut is None or (k := tables.table_at(cut)) is None:
        return cut
    table = tables.tables[k]
    tokens = bisect.bisect_left(token_starts, table.end) - bisect.bisect_left(token_starts, table.caption_start)
    if tokens <= size and table.caption_start > spans[min(first + size // 4, len(spans) - 1)][0]:
        return table.caption_start
    return cut


def _sentence_start(text: str, spans: list[tuple[int, int]], first: int, last: int,
                    tables: _TableCuts | None = None) -> int:
    """Move an overlap start forward to the next sentence or line start, if one is in the overlap (and,
    in a table, the next row a chunk may start at; else no overlap there)."""
    if first >= last:
        return first
    token_starts = [s for s, _ in spans]
    for pattern in _BOUNDARIES:
        for m in pattern.finditer(text, spans[first][0], spans[last - 1][1]):
            if tables is None or tables.allowed(m.end()):
                return max(bisect.bisect_left(token_starts, m.end(), first, last), first)
    if tables is not None and not tables.allowed(spans[first][0]):
        return last
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
    tables = _TableCuts(markdown_tables(text))
    pieces: list[tuple[list[str], int, int]] = []
    for section in split_sections(text):
        scale = CJK_SCALE if detect_language(text[section.start:min(section.end, section.start + 3000)]) == "zh" else 1
        for s, e in _windows(text, section.start, section.end, round(size * scale), round(overlap * scale), tables):
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
                            page_breaks=page_breaks(doc.pages, body_start, body_start + len(body)),
                            context_prefix=_table_context(tables, body_start)))
    return chunks


def _table_context(tables: _TableCuts, start: int) -> str:
    """Caption and header of the table a chunk starts inside of (the caption alone when it starts
    at the header, having left the caption to the chunk before); "" elsewhere."""
    k = bisect.bisect_right(tables.starts, start) - 1
    if k < 0 or start >= tables.tables[k].end:
        return ""
    table = tables.tables[k]
    parts = [table.caption] if table.caption and table.caption_start < start else []
    if start > table.start:
        parts.append(table.header)
    return "\n\n".join(parts)


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


def index_fields(title: str, heading_path: list[str], text: str, prefix: str = "") -> tuple[str, str]:
    """(where, what) of a chunk: its document title and section path, and its text after its
    `context_prefix` (a table's caption and header), so rows are found by their years. BM25 weighs the
    first more (a section titled "Consolidated Balance Sheets" is what "balance sheet" asks for)."""
    where = " > ".join([title, *heading_path]) if title else " > ".join(heading_path)
    return where, (f"{prefix}\n{text}" if prefix else text)


def embedding_text(title: str, heading_path: list[str], text: str, prefix: str = "") -> str:
    """What the embedder sees: the chunk with its document title and section as context, so a chunk that
    never names its company or chapter can still be found (index_fields, joined)."""
    where, what = index_fields(title, heading_path, text, prefix)
    return f"{where}\n{what}" if where else what

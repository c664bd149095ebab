"""A document's outline: its heading tree, with the pages and chunks under each heading.

Chunks carry the path of headings above them (rag.chunk), in document order, so the tree is read off
the stored chunks: a node spans the chunks whose path starts with its own. A heading's number ("Chapter
4", "第 3 章", "2.3", "第二章") is parsed once here, so "summarize chapter 4" or "第三章讲了什么" can be
resolved against the book's own structure (rag.scope) rather than by similarity.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.types import Chunk

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}


def chinese_number(text: str) -> int | None:
    """"三" -> 3, "十二" -> 12, "二十" -> 20, "二十三" -> 23, "12" -> 12; None when it is not a number."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not text or any(ch not in _ZH_DIGITS and ch not in "十百" for ch in text):
        return None
    total, current = 0, 0
    for ch in text:
        if ch == "百":
            total += (current or 1) * 100
            current = 0
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        else:
            current = _ZH_DIGITS[ch]
    return total + current


# How a heading states its number, best first: "Chapter 4 …", "第 3 章 …" / "第三章 …", "Part II", or a leading
# "2.3" / "4 " / "4." numbering.
_CHAPTER_WORD = re.compile(r"^\s*(?:chapter|chap\.?|ch\.)\s*(\d+)\b", re.IGNORECASE)
_ZH_CHAPTER = re.compile(r"^\s*第\s*([0-9零〇一二两三四五六七八九十百]+)\s*章")
_LEADING_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)*)(?:\.|\s|、|$)")
# "附件 A" too (an attachment numbered as a chapter: "10 附件 A ——运行合同")
_APPENDIX = re.compile(r"^\s*(?:\d+\.?\s+(?=附件|附录|appendix))?(?:appendix|附录|附件)\s*"
                       r"([A-Z]\b|[A-Z](?=[^a-z])|[0-9]+|[一二三四五六七八九十]+)?", re.IGNORECASE)


def appendix_label(text: str) -> str | None:
    """"B" for "Appendix B Analysis of Algorithms" (and "AppendixB", "附录 B"), "2" for "附录二"; None when the
    heading is not an appendix, "" for an appendix without a label."""
    m = _APPENDIX.match(text)
    if not m:
        return None
    label = (m.group(1) or "").upper()
    if label and not label.isascii():
        label = str(chinese_number(label) or "")
    return label


def heading_number(title: str) -> tuple[str | None, bool]:
    """(its number as "4" or "2.3", whether the heading names itself a chapter) — (None, False) if none."""
    if m := _CHAPTER_WORD.match(title):
        return str(int(m.group(1))), True
    if m := _ZH_CHAPTER.match(title):
        n = chinese_number(m.group(1))
        return (str(n), True) if n is not None else (None, False)
    if m := _LEADING_NUMBER.match(title):
        return ".".join(str(int(p)) for p in m.group(1).split(".")), False
    return None, False


def heading_text(title: str) -> str:
    """The heading without its number: "Chapter 4 Case study: interface design" -> "Case study: interface
    design", "3.2 线性回归" -> "线性回归"."""
    for pattern in (_CHAPTER_WORD, _ZH_CHAPTER, _LEADING_NUMBER):
        if m := pattern.match(title):
            return title[m.end():].strip(" .:、-–—") or title
    return title


@dataclass
class OutlineNode:
    title: str
    path: tuple[str, ...]               # the headings above it and itself
    first: int                          # index of its first piece in Outline.pieces
    last: int                           # index of its last piece
    page_start: int | None = None
    page_end: int | None = None
    children: list["OutlineNode"] = field(default_factory=list)
    number: str | None = None           # "4", "2.3": as the heading states it
    says_chapter: bool = False          # the heading calls itself a chapter ("Chapter 4", "第 4 章")

    @property
    def level(self) -> int:
        return len(self.path)

    @property
    def pages_label(self) -> str:
        if self.page_start is None:
            return ""
        return f"p. {self.page_start}" if self.page_start == self.page_end else f"pp. {self.page_start}-{self.page_end}"

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class Outline:
    doc_id: str
    roots: list[OutlineNode]
    pieces: list[Chunk] = field(default_factory=list)   # the chunks cut at their headings; nodes index these

    def nodes(self) -> list[OutlineNode]:
        return [n for root in self.roots for n in root.walk()]

    def chapters(self) -> list[OutlineNode]:
        """The book's chapters: the headings that call themselves chapters, else the top-level numbered ones,
        else the top level."""
        nodes = self.nodes()
        named = [n for n in nodes if n.says_chapter]
        if named:
            return named
        numbered = [n for n in self.roots if n.number and "." not in n.number]
        if len(numbered) >= 2:
            return numbered
        # one title heading over everything (a Markdown file's "# Book"): its children are the chapters
        if len(self.roots) == 1 and self.roots[0].children:
            return self.roots[0].children
        return list(self.roots)

    def appendix(self, label: str) -> OutlineNode | None:
        """The appendix labelled so ("B", "2"): the outermost heading that says it, else the heading whose sections
        are numbered by the letter ("Analysis of Algorithms" over "B.1. Order of growth": a PDF's "Appendix B" line
        is often set apart from its title and lost)."""
        label = label.upper()
        said = next((n for n in self.nodes() if appendix_label(n.title) == label), None)
        if said is not None or not label.isalpha():
            return said
        numbered = re.compile(rf"^\s*{re.escape(label)}\.\d")
        return next((n for n in self.nodes() if n.children and all(numbered.match(c.title) for c in n.children[:2])),
                    None)

    def numbered(self, number: str) -> OutlineNode | None:
        """The node numbered so: a chapter for "4", a section for "2.3"."""
        if "." not in number:
            return next((n for n in self.chapters() if n.number == number), None)
        return next((n for n in self.nodes() if n.number == number), None)


def build_outline(doc_id: str, chunks: list[Chunk]) -> Outline:
    """The heading tree of a document from its chunks (in any order; read in ordinal order), cut at the
    headings inside them (`heading_pieces`)."""
    roots: list[OutlineNode] = []
    by_path: dict[tuple[str, ...], OutlineNode] = {}
    pieces = heading_pieces(chunks)
    for index, piece in enumerate(pieces):
        path = tuple(piece.heading_path)
        for depth in range(1, len(path) + 1):
            key = path[:depth]
            node = by_path.get(key)
            if node is None:
                number, says_chapter = heading_number(key[-1])
                node = OutlineNode(key[-1], key, index, index, number=number, says_chapter=says_chapter)
                by_path[key] = node
                parent = by_path.get(key[:-1]) if depth > 1 else None
                (parent.children if parent is not None else roots).append(node)
            node.last = index
            if piece.page_start is not None:
                node.page_start = piece.page_start if node.page_start is None else min(node.page_start, piece.page_start)
                node.page_end = max(node.page_end or piece.page_end, piece.page_end)
    return Outline(doc_id, roots, pieces)


def chunks_under(node: OutlineNode, outline: Outline) -> list[Chunk]:
    """The pieces a node spans, in order (a piece's chunk_id is its chunk's: see `parent_id`)."""
    return [p for p in outline.pieces[node.first:node.last + 1] if tuple(p.heading_path[:node.level]) == node.path]


def heading_pieces(chunks: list[Chunk]) -> list[Chunk]:
    """The chunks in order, each cut at the headings inside it, every piece under its own heading path: chunking
    merges short sections into one chunk whose path is only the first one's ("1.1 Values" holding "### 1.2
    Variables"). A piece keeps its chunk's id, so it is cited as that chunk."""
    return [piece for chunk in sorted(chunks, key=lambda c: c.ordinal) for piece in split_at_headings(chunk)]


def split_at_headings(chunk: Chunk) -> list[Chunk]:
    """The chunk as pieces that each lie under one heading path. A heading of level L keeps the first L-1
    headings of the path above it (our converters write a chapter as level 1); a "#" line in code is code."""
    from rag.chunk import heading_matches
    cuts = heading_matches(chunk.text)
    if not cuts:
        return [chunk]
    pieces, path, start = [], list(chunk.heading_path), 0
    for m in cuts + [None]:
        end = m.start() if m else len(chunk.text)
        if chunk.text[start:end].strip():
            pieces.append(_piece(chunk, start, end, path))
        if m:
            level = len(m.group(1))
            path = path[:level - 1] + [m.group(2).strip()]
            start = m.end()
    return pieces


def _piece(chunk: Chunk, start: int, end: int, path: list[str]) -> Chunk:
    breaks = [(max(offset - start, 0), page) for offset, page in chunk.page_breaks if offset < end]
    breaks = [b for i, b in enumerate(breaks) if i + 1 == len(breaks) or breaks[i + 1][0] > 0]
    first, last = chunk.pages_of_span(start, end)
    return Chunk(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, ordinal=chunk.ordinal, text=chunk.text[start:end],
                 heading_path=list(path), page_start=first, page_end=last, char_start=chunk.char_start + start,
                 char_end=chunk.char_start + end, token_count=0, page_breaks=breaks,
                 context_prefix=chunk.context_prefix if start == 0 else "")

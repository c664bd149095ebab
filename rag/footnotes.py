"""Footnotes a PDF's text layer leaves in the running text.

A page's footnotes come out at the bottom of its text, just before the next page begins, often in the middle
of a sentence the page break cut ("… the only difference between ordered" / "2 Note that tapply() also works …" /
"and unordered factors is …", An Introduction to R). A footnote is an aside: scored as evidence on its words
alone it led an answer ("can u show me the example of using tapply with a factor?" was answered by footnote 2,
not by the worked example it annotates). Footnotes are told by where they stand and how they begin: paragraphs
opening with a small number (or a circled one), the last ones before a page break.
"""
from __future__ import annotations

import re

# "2 Note that …", "12 See …", "① 参见 …": a number the body text carries as a superscript, then the note
_FOOTNOTE_START = re.compile(r"^(?:\d{1,2}\s+[A-Z][a-z]|[\u2460-\u2473]\s*\S)")
_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?!\s*\n))+")
FOOTNOTE_MIN_CHARS = 30       # "2 4" (a bar number under a music example) is not a note


def footnote_spans(text: str, page_breaks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The (start, end) offsets in a chunk's text of the footnote paragraphs: those opening like a footnote that,
    alone or with other such paragraphs, end a page (only white space between them and the next page's start)."""
    paragraphs = [(m.start() + len(m.group()) - len(m.group().lstrip()), m.end())
                  for m in _PARAGRAPH.finditer(text) if m.group().strip()]
    spans: list[tuple[int, int]] = []
    for offset, _page in page_breaks:
        before = [(s, e) for s, e in paragraphs if e <= offset]
        while before and not text[before[-1][1]:offset].strip():
            start, end = before.pop()
            body = text[start:end].rstrip()
            if len(body) < FOOTNOTE_MIN_CHARS or not _FOOTNOTE_START.match(body):
                break
            spans.append((start, end))
            offset = start
    return sorted(spans)


def in_footnote(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)

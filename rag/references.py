"""Is a chunk a list of references (a bibliography), not the book's own explanation?

A textbook's chapters often end in a reference list whose paper titles hold the very words a learner asks
with ("A statistical view of boosting", "logistic regression"): searched by words, it outranks the passage
that explains, and a model asked to answer from it writes a confident sentence out of a paper title. Such a
list is never evidence for an answer (rag.evidence.is_front_matter), whatever its heading — a PDF's headings
are guessed and a reference list often has none.
"""
from __future__ import annotations

import re

# An entry starts at "[12] " or a new line; an entry is a citation when it has a year and one of these marks of
# a publication, each one prose does not use ("volume 3", not "pricing, volume and cost"; "Press,", not "press").
# The marks are data: add one when a book's style is missed.
_ENTRY_START = re.compile(r"(?:^|\s)\[\d{1,3}\]\s|\n+")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
PUBLICATION_MARKS = re.compile(
    r"\b(?:in proceedings|proceedings of|journal of|conference on|transactions on|annals of|arxiv|preprint|"
    r"et al\.|isbn|doi:)|\bpp\.\s*\d|\bpages\s+\d+\s*[–-]\s*\d+|\bvol(?:ume)?\.?\s*\d+|\b\d+(?:st|nd|rd|th) ed(?:ition|\.)|"
    r"\b(?:press|publishers?)[,.]|\d+\s*\(\d+\)\s*:\s*\d+|出版社|学报|论文集",
    re.IGNORECASE)
MIN_CITATIONS = 3                # fewer is a passage that cites, not a list
MIN_CITED_SHARE = 0.6            # of the chunk's characters, in citation entries


def is_reference_list(text: str) -> bool:
    """Whether most of `text` is citation entries (at least MIN_CITATIONS of them)."""
    entries = [e.strip() for e in _ENTRY_START.split(text) if e and e.strip()]
    cited = [e for e in entries if _YEAR.search(e) and PUBLICATION_MARKS.search(e)]
    total = sum(len(e) for e in entries)
    return len(cited) >= MIN_CITATIONS and total > 0 and sum(len(e) for e in cited) >= MIN_CITED_SHARE * total

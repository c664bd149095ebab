"""Financial abbreviations a reader writes and a filing spells out.

"Did Pfizer grow its PPNE between FY20 and FY21?" — the balance sheet says "Property, plant and equipment,
net", never "PPNE"; "FY2021 COGS" is "Cost of sales" in Nike's income statement. Neither BM25 nor a small
embedder links the two, and a word no chunk contains also makes the question look unanswerable
(rag.evidence.unknown_words). So the searched text carries the spelled-out words instead: only
abbreviations whose long form is how statements and notes name the line, not ones documents use as
written (EBITDA, GAAP).
"""
from __future__ import annotations

import re

# (how a question writes it, what the documents write). Case matters where a short form is also a word.
_SPELLED_OUT: list[tuple[re.Pattern, str]] = [(re.compile(pattern), text) for pattern, text in (
    (r"\b(?:[Nn]et\s+)?PP\s?&\s?E\b|\bPPNE\b|\bPPE\b", "property, plant and equipment"),
    (r"\bCOGS\b", "cost of goods sold (cost of sales)"),
    (r"\b[Cc]ap[Ee]x\b|\bCAPEX\b", "capital expenditures (purchases of property and equipment)"),
    (r"\bSG\s?&\s?A\b", "selling, general and administrative expenses"),
    (r"\bD\s?&\s?A\b", "depreciation and amortization"),
    (r"\bR\s?&\s?D\b", "research and development"),
    (r"\bEPS\b", "earnings per share"),
    (r"\b[Yy]o[Yy]\b", "year over year"),
    (r"\bFCF\b", "free cash flow"),
    (r"\b[Tt]op[- ]line\b", "revenue"),            # idioms, not abbreviations, but the same gap
    (r"\b[Bb]ottom[- ]line\b", "net income"),
)]


def spell_out(text: str) -> str:
    """The text with each known financial abbreviation replaced by the words documents use for it."""
    for pattern, words in _SPELLED_OUT:
        text = pattern.sub(words, text)
    return text

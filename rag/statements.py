"""Financial statements a question names, matched to the section headings that hold them.

A reader says "balance sheet" or "P&L" where a filing heads the page CONSOLIDATED STATEMENTS OF FINANCIAL
POSITION or CONSOLIDATED STATEMENTS OF OPERATIONS: the same statement under names accounting uses
interchangeably (US GAAP and IFRS name each primary statement differently, and companies choose). Neither
BM25 nor a small embedder knows the names are one thing, so the right page loses to notes that repeat the
question's words. When a question names a statement, the retriever also ranks the chunks under a heading
of that statement, by the question's words (rag.retrieve).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from core.text import bm25_tokens


@dataclass(frozen=True)
class Statement:
    name: str
    asked: re.Pattern          # how a question names it
    headings: tuple[str, ...]  # how a heading names it (matched as phrases of stemmed words)
    not_headings: tuple[str, ...] = ()   # headings that use the name for something else

    def heading_phrases(self) -> list[list[str]]:
        return _phrases(self.headings)

    def excluded_phrases(self) -> list[list[str]]:
        return _phrases(self.not_headings)


@functools.lru_cache(maxsize=None)   # a few fixed tuples: tokenised once, not per hit or per question
def _phrases(texts: tuple[str, ...]) -> list[list[str]]:
    return [tokens for text in texts if (tokens := bm25_tokens(text))]


def _asked(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE)


STATEMENTS = (
    Statement("balance sheet",
              _asked(r"\bbalance[- ]sheets?\b|\bstatements? of (?:consolidated )?financial (?:position|condition)\b"
                     r"|资产负债表"),
              ("balance sheet", "statement of financial position", "statement of financial condition",
               "资产负债表"),
              not_headings=("off-balance sheet",)),
    Statement("income statement",
              _asked(r"\bincome statements?\b|\bstatements? of (?:consolidated )?(?:income|operations|earnings)\b"
                     r"|\bp\s?&\s?l\b|\bprofit (?:and|&) loss\b|利润表|损益表"),
              ("statement of income", "statement of operations", "statement of earnings", "income statement",
               "profit and loss", "利润表", "损益表")),
    Statement("cash flow statement",
              _asked(r"\bcash[- ]flows? statements?\b|\bstatements? of (?:consolidated )?cash[- ]flows?\b|现金流量表"),
              ("statement of cash flows", "cash flow statement", "现金流量表")),
)


def named_statements(question: str) -> list[Statement]:
    """The statements the question names, in the order of STATEMENTS."""
    return [s for s in STATEMENTS if s.asked.search(question)]


def _holds_phrase(tokens: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(tokens[i:i + n] == phrase for i in range(len(tokens) - n + 1))


def under_statement(heading_path: list[str], statements: list[Statement]) -> bool:
    """Whether a chunk with this section path sits under a heading of one of the statements (as
    DocumentStore.heading_search matches it: adjacent stemmed words, excluded names left out)."""
    tokens = bm25_tokens(" ".join(heading_path))
    return any(any(_holds_phrase(tokens, p) for p in s.heading_phrases())
               and not any(_holds_phrase(tokens, p) for p in s.excluded_phrases()) for s in statements)

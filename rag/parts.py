"""A question that asks two things at once: "How many airplanes would the AD affect, and what does the test
cost?", "哪个模块能把对象转成字符串，用到哪两个函数？".

One retrieval for the whole question finds the passage for its first part and rarely the other's, so the
answer stated half of what was asked. Each part is searched and judged on its own (RAGTool._parts) and the
answer starts with the best passage of each. The ways a learner joins two asks are data below, in English
and Chinese; tested in tests/test_kinds_and_scope.py.
"""
from __future__ import annotations

import re

from core.text import search_tokens

_ASK_EN = r"(?:what|which|how|who|whom|when|where|why|is|are|does|do|did|can|should)\b"
_ASK_ZH = r"什么|哪|多少|几|如何|怎么|怎样|为什么|为何|谁|何时|是否"

# Where a second ask begins: the break is dropped, the second part keeps its question word.
PART_BREAKS: list[re.Pattern] = [re.compile(p, re.IGNORECASE) for p in (
    rf",?\s+and\s+(?={_ASK_EN})",                          # "…, and which docket number should I quote?"
    rf"[;；]\s*(?=(?:and\s+)?{_ASK_EN})",
    r"(?<=[?？])\s+(?=\S)",                                # two questions in one message
    rf"[，,；;]\s*(?:以及|还有|并且|而且|另外|同时|那么)?(?=[^，,。；;]*?(?:{_ASK_ZH}))",
)]
MIN_PART_TERMS = 2          # a later part must name this many content words to be searched on its own
MAX_PARTS = 3
# A later part that points back at the first ("why it can be dangerous", "它为什么…", "哪一种最常用") is about the
# first's subject.
_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|which ones?)\b|"
                          r"它|这个|那个|这些|那些|这种|那种|其|哪一种|哪种|哪个|哪一个", re.IGNORECASE)


def question_parts(question: str) -> list[str]:
    """The question's asks, in order; [question] when it asks one thing (or a part would name too little)."""
    parts = [question.strip()]
    for pattern in PART_BREAKS:
        parts = [piece.strip(" ,，;；") for part in parts for piece in pattern.split(part)]
    parts = [p for p in parts if p]
    if len(parts) < 2 or len(parts) > MAX_PARTS or not search_tokens(parts[0]) or \
            any(len(search_tokens(p)) < MIN_PART_TERMS for p in parts[1:]):
        return [question]
    return parts


def part_query(part: str, first: str) -> str:
    """What to search for one part: a later part that names little or points back ("and which two functions go
    with it?", "why the book says it can be dangerous") is searched with the first part's words."""
    if part == first or (len(search_tokens(part)) >= 3 and not _POINTS_BACK.search(part)):
        return part
    return f"{first} {part}"

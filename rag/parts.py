"""A question that asks two things at once: "How many airplanes would the AD affect, and what does the test
cost?", "哪个模块能把对象转成字符串，用到哪两个函数？".

One retrieval for the whole question finds the passage for its first part and rarely the other's, so the
answer stated half of what was asked. Each part is searched and judged on its own (RAGTool._parts) and the
answer starts with the best passage of each. The ways a learner joins two asks are data below, in English
and Chinese; tested in tests/test_kinds_and_scope.py.
"""
from __future__ import annotations

import re

from core.text import STOPWORDS, search_tokens
from rag.compare import CLAUSE_OPENERS

_ASK_EN = r"(?:what|which|how|who|whom|when|where|why|is|are|does|do|did|can|should)\b"
_ASK_ZH = r"什么|哪|多少|几|如何|怎么|怎样|为什么|为何|谁|何时|是否"

# Words that make a part an ask: a question word, a question mark, a request ("summarize", "总结", "帮我") or an
# intent ("我想自己搭一个简单的 RAG，需要哪些模块？" asks how, and its second part is searched on its own).
# A part with none of them sets the subject of the ask after it ("这份 FAA 的适航指令草案，为什么要求…",
# "关于支持向量机，核函数有什么作用？"): it is joined to that ask, neither searched nor classified alone.
_REQUEST_EN = (r"(?:summari[sz]e|explain|describe|compare|contrast|show|give|list|tell|outline|define|walk|help|"
               r"find|name|state|please|want|need|would like)\b")
_REQUEST_ZH = (r"总结|概括|归纳|梳理|解释|讲讲|讲一下|说说|说明|介绍|比较|对比|区别|列出|列举|举例|举个|给出|告诉|帮我|请|"
               r"我想|想要|我要|想知道|想了解|需要")
_SAYS_AN_ASK = re.compile(rf"[?？]|\b{_ASK_EN}|{_ASK_ZH}|\b{_REQUEST_EN}|{_REQUEST_ZH}", re.IGNORECASE)


def asks_something(part: str) -> bool:
    return bool(_SAYS_AN_ASK.search(part))


def joined_subject_clauses(parts: list[str], separator: str = "，") -> list[str]:
    """Each part that asks nothing joined to the part after it (the last part stays whatever it is)."""
    joined: list[str] = []
    pending = ""
    for n, part in enumerate(parts):
        if n < len(parts) - 1 and not asks_something(part):
            pending = f"{pending}{part}{separator}"
            continue
        joined.append(f"{pending}{part}")
        pending = ""
    return joined


# Where a second ask begins: the break is dropped, the second part keeps its question word.
PART_BREAKS: list[re.Pattern] = [re.compile(p, re.IGNORECASE) for p in (
    rf",?\s+and\s+(?={_ASK_EN})",                          # "…, and which docket number should I quote?"
    rf"[;；]\s*(?=(?:and\s+)?{_ASK_EN})",
    r"(?<=[?？])\s+(?=\S)",                                # two questions in one message
    # "…isnt found vs when it exists …": two situations set against each other (rag.compare.compares_clauses)
    r"\s+(?:vs\.?|versus)\s+(?=(?:" + "|".join(w for w in CLAUSE_OPENERS if w.isascii()) + r")\b)",
    rf"[，,；;]\s*(?:以及|还有|并且|而且|另外|同时|那么)?(?=[^，,。；;]*?(?:{_ASK_ZH}))",
)]
MIN_PART_TERMS = 2          # a later part must name this many content words to be searched on its own
# Words that ask how without naming what: "表格里想合并几个单元格，…，要怎么写？" is one ask, and its last clause,
# searched alone, found any code at all.
_ASKING_WORDS = frozenset("要 想 该 应该 应当 得 能 能够 可以 怎么 怎样 如何 怎么样 什么 哪 哪些 多少 几 呢 吗 啊 吧 "
                          "写 做 弄 办 搞 用 实现 处理 操作 设置".split())


def content_terms(part: str) -> list[str]:
    """The part's search tokens that name something: not stopwords, not the words of asking."""
    return [t for t in search_tokens(part) if t not in STOPWORDS and t not in _ASKING_WORDS]
MAX_PARTS = 3
# A later part that points back at the first ("why it can be dangerous", "它为什么…", "哪一种最常用") is about the
# first's subject.
_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|which ones?)\b|"
                          r"它|这个|那个|这些|那些|这种|那种|其|哪一种|哪种|哪个|哪一个", re.IGNORECASE)


# "how do i find which package a file came from, and get that file back out of the .deb?": the second ask leaves out
# its "how do i" and starts with a verb. Only after a comma: "how do I read and write files" asks one thing.
_ASKS_HOW = re.compile(r"^\s*(how\s+(?:do|can|should|could|would)\s+(?:i|you|we|one)\s+|how\s+to\s+)", re.IGNORECASE)
_COMMA_AND = re.compile(r",\s*and\s+(?:then\s+|also\s+)?(?=[A-Za-z])", re.IGNORECASE)


# The same in Chinese: "如何找到文件来自哪个包，并且从.deb中提取该文件而不安装它？" (how the model translates the question above)
_ASKS_HOW_ZH = re.compile(r"如何|怎么|怎样")
_COMMA_AND_ZH = re.compile(r"[，,]\s*(?:并且|然后|以及|还要|并|再)(?![^，,。；;？?]*(?:" + _ASK_ZH + "))")


def _elided_hows(question: str) -> list[str]:
    """A how-question whose later ask, after ", and", is a verb in its base form (in Chinese, after "，并且" and the
    like): the asks, the later one with the first's "how do i" (如何) put back; [question] otherwise."""
    how_zh = _ASKS_HOW_ZH.search(question)
    joint_zh = _COMMA_AND_ZH.search(question, how_zh.end()) if how_zh else None
    if joint_zh:
        return [question[:joint_zh.start()], how_zh.group() + question[joint_zh.end():]]
    how = _ASKS_HOW.match(question)
    joint = _COMMA_AND.search(question) if how else None
    if joint is None:
        return [question]
    from core.nlp import english_tags
    rest = question[joint.end():]
    tags = english_tags(rest)
    if not tags or tags[0][1] != "VB":
        return [question]
    return [question[:joint.start()], how.group(1) + rest]


def question_parts(question: str) -> list[str]:
    """The question's asks, in order; [question] when it asks one thing (or a part would name too little)."""
    parts = _elided_hows(question.strip())
    for pattern in PART_BREAKS:
        parts = [piece.strip(" ,，;；") for part in parts for piece in pattern.split(part)]
    parts = joined_subject_clauses([p for p in parts if p])
    if len(parts) < 2 or len(parts) > MAX_PARTS or not search_tokens(parts[0]) or \
            any(len(content_terms(p)) < MIN_PART_TERMS for p in parts[1:]):
        return [question]
    return parts


def paired_parts(question: str, translation: str | None) -> tuple[list[str], list[str]]:
    """The question's asks and, when it was translated into the documents' language, the translation's asks, one
    for each of them: "how do i find which package a file came from, and get that file back out of the .deb?" over
    a Chinese book is two asks in Chinese too. A translation cut into another number of asks cannot be paired
    with the question's: then the question is one ask, searched with its whole translation. ([question], []) for
    a question asking one thing."""
    parts = question_parts(question)
    if not translation or len(parts) < 2:
        return parts, []
    translated = question_parts(translation)
    return (parts, translated) if len(translated) == len(parts) else ([question], [])


def part_query(part: str, first: str) -> str:
    """What to search for one part: a later part that names little or points back ("and which two functions go
    with it?", "why the book says it can be dangerous") is searched with the first part's words."""
    if part == first or (len(search_tokens(part)) >= 3 and not _POINTS_BACK.search(part)):
        return part
    return f"{first} {part}"

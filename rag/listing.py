"""A question asking for the parts of something the book gives a section to: "SLA 里一般都要写哪些内容", "what are the
types of errors?". The book's answer is that section's sub-headings ("4.1.5 服务层次协议（SLA）的内容": 简介, 服务时间,
可用性, 稳定性, 支持 …), which no single passage lists; the question is answered as a summary of that section
(rag.summary: each part in order with its key sentence).

A section is the one asked about when its title, less the words that only say "parts" (`LIST_TITLE_WORDS`), is named
by the question and names every topic word the question has (rag.evidence.names_a_topic); a bracketed alias names it
too ("服务层次协议（SLA）" is named by "SLA"). It must have at least MIN_PARTS sub-sections.
Tested in tests/test_kinds_and_scope.py.
"""
from __future__ import annotations

import re

from wordfreq import zipf_frequency

from core.text import STOPWORDS, search_tokens, stem
from rag.evidence import names_a_topic
from rag.outline import Outline, OutlineNode, heading_text

# What a learner says to ask for the parts of something (a phrase each; case is ignored)
LIST_ASKS: list[str] = [
    r"哪些", r"哪几[种类个项部点方]", r"有几[种类项部]", r"几种", r"(?:简单|简要)?地?列(?:一下|举|出)(?:就行|就好|即可|吧)?",
    r"包括什么", r"包含什么",
    r"都有啥", r"都有什么", r"由什么组成", r"由哪些",
    r"\bwhat are the (?:\w+ )?(?:kinds|types|parts|components|sections|elements|categories|contents|pieces)\b",
    r"\bwhich (?:kinds|types|parts|components|elements|categories)\b", r"\blist (?:the|all)\b",
    r"\bwhat (?:does|do) [\w\s\-]{1,40} (?:contain|include|consist of|cover)\b",
    r"\bwhat (?:goes|belongs) in(?:to)? (?:a|an|the)\b",
]
_LIST_ASK = re.compile("|".join(f"(?:{p})" for p in LIST_ASKS), re.IGNORECASE)
# Words of a title that only say it lists parts ("服务层次协议（SLA）的内容", "Types of errors")
LIST_TITLE_WORDS = frozenset("内容 类型 种类 分类 组成 部分 要素 构成 概述 简介 的 types type kinds kind parts part components "
                             "contents content elements categories overview".split())
MIN_PARTS = 3
# an abbreviation rarer than this names a topic though names_a_topic finds it too short to tell ("sla", "api")
RARE_ZIPF = 4.0
_ALIAS = re.compile(r"[（(]([^（）()]{1,30})[）)]")


def asks_for_parts(question: str) -> bool:
    """Whether the question asks for a list of the parts of something (`LIST_ASKS`)."""
    return bool(_LIST_ASK.search(question))


def _words(text: str) -> set[str]:
    return {stem(t) for t in search_tokens(text) if t not in STOPWORDS and t not in LIST_TITLE_WORDS}


def _title_names(title: str) -> list[set[str]]:
    """The title's words without the list words, and each bracketed alias's words ("服务层次协议（SLA）的内容":
    {服务, 层次, 协议, …} and {sla})."""
    text = heading_text(title)
    names = [_words(_ALIAS.sub(" ", text))] + [_words(alias) for alias in _ALIAS.findall(text)]
    return [name for name in names if name]


def listed_section(question: str, outlines: dict[str, Outline]) -> tuple[str, OutlineNode] | None:
    """(doc_id, node) of the section whose parts the question asks for, or None (`asks_for_parts` first)."""
    if not asks_for_parts(question):
        return None
    asked = _words(_LIST_ASK.sub(" ", question))
    topic = {w for w in asked if names_a_topic(w) or _rare_short_word(w)}
    if not topic:
        return None
    found: list[tuple[int, str, OutlineNode]] = []
    for doc_id, outline in outlines.items():
        for node in outline.nodes():
            if len(node.children) < MIN_PARTS:
                continue
            for name in _title_names(node.title):
                # the title is named by the question, and names all the question is about
                if name <= asked and topic <= name:
                    found.append((len(name), doc_id, node))
                    break
    if not found:
        return None
    best = max(found, key=lambda f: f[0])
    if sum(1 for f in found if f[0] == best[0]) > 1:
        return None         # two sections fit as well: which one is asked about is not clear
    return best[1], best[2]


def _rare_short_word(word: str) -> bool:
    """An abbreviation or short term ("sla", "api"), which names_a_topic leaves out as too short to tell."""
    return word.isascii() and word.isalnum() and 2 <= len(word) < 4 and zipf_frequency(word, "en") < RARE_ZIPF

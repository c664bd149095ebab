"""Where a question asks to look: the whole library, one document, a chapter or section, a page range.

"Summarize chapter 4", "第三章主要讲了什么", "the hypothesis-testing chapter", "the section on costs",
"pages 10-20": the scope is read from the question (`read_scope`, patterns below: a small grammar, tested),
then resolved against each document's own outline (rag.outline) — a chapter is found by its number or by
its title, never by passage similarity — and the document the question names, if it names one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from core.text import CJK_CHAR, detect_language, search_tokens, stem
from rag.outline import Outline, OutlineNode, chinese_number, heading_number, heading_text

_NUM = r"[0-9零〇一二两三四五六七八九十百]+"
_ORDINALS = {w: i for i, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
                                        "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
                                        "nineteenth twentieth".split(), start=1)}
_TOPIC_END = (r"(?=\s*(?:[?？。.,，;；!！]|$|\b(?:and|in|of|from|cover|covers|teach|teaches|say|says|discuss|"
              r"discusses|explain|explains|talk|talks|describe|describes|introduce|introduces|is|are|was|were|"
              r"do|does|mean|means|include|includes)\b))")

# (what it names, pattern). Group "n" is a number, "a"/"b" a page range, "topic" the words naming a chapter
# or section by its subject. Earlier patterns win where two overlap.
SCOPE_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("section", re.compile(r"\b(?:section|sect\.|§)\s*(?P<n>\d+(?:\.\d+)+)", re.IGNORECASE)),
    ("section", re.compile(r"第?\s*(?P<n>\d+(?:\.\d+)+)\s*(?:节|小节)")),
    ("chapter", re.compile(r"\b(?:chapter|chap\.?|ch\.)\s*(?P<n>\d+)\b(?:\s*\((?P<title>[^)]{3,40})\)|\s+(?:on|about)\s+"
                           r"(?P<title2>[\w\s\-]{3,40}?)(?=[?.,!]|$))?", re.IGNORECASE)),
    ("chapter", re.compile(r"\bthe\s+(?P<n>" + "|".join(_ORDINALS) + r")\s+chapter\b", re.IGNORECASE)),
    ("chapter", re.compile(r"第\s*(?P<n>" + _NUM + r")\s*章(?:[《“「]?(?!主要|讲|说|的|这|里|中|有|包括|介绍)(?P<title>[\u4e00-\u9fffA-Za-z\-]{2,12}?)[》”」]?"
                           r"(?=主要|讲|说|的|这|里|中|有|包括|介绍|，|,|。|？|\?|\s|$))?")),
    ("section", re.compile(r"\bsection\s*(?P<n>\d+)\b", re.IGNORECASE)),
    ("appendix", re.compile(r"\bappendix\s*(?P<n>[A-Z]|\d+)\b", re.IGNORECASE)),
    ("appendix", re.compile(r"附录\s*(?P<n>[A-Za-z](?![A-Za-z])|\d+|[一二三四五六七八九十]+)")),
    ("appendix", re.compile(r"附件\s*(?P<n>[A-Za-z](?![A-Za-z]))")),
    ("pages", re.compile(r"\bp(?:ages?|p?\.)\s*(?P<a>\d+)\s*(?:-|–|—|to|through|and)\s*(?P<b>\d+)", re.IGNORECASE)),
    ("pages", re.compile(r"第\s*(?P<a>\d+)\s*(?:-|–|—|到|至)\s*(?P<b>\d+)\s*页")),
    ("pages", re.compile(r"\bpage\s*(?P<a>\d+)\b", re.IGNORECASE)),
    ("pages", re.compile(r"第\s*(?P<a>\d+)\s*页")),
    # a chapter or section called by its title in quotes ("the “Windows notes” chapter", "“有关 Windows 平台的说明”那一章")
    ("chapter", re.compile(r"[“「『《\"](?P<topic>[^”」』》\"\n]{2,60})[”」』》\"]\s*(?:这|那)?一?(?:章|chapter\b)", re.IGNORECASE)),
    ("section", re.compile(r"[“「『《\"](?P<topic>[^”」』》\"\n]{2,60})[”」』》\"]\s*(?:这|那)?一?(?:小?节|section\b)", re.IGNORECASE)),
    ("chapter", re.compile(r"\bchapter\s+(?:called\s+|titled\s+|named\s+)?[“\"](?P<topic>[^”\"\n]{2,60})[”\"]", re.IGNORECASE)),
    ("section", re.compile(r"\bsection\s+(?:called\s+|titled\s+|named\s+)?[“\"](?P<topic>[^”\"\n]{2,60})[”\"]", re.IGNORECASE)),
    ("chapter", re.compile(r"(?:\b(?:the|this|that)|['’]s|s['’])\s+(?:chapter|unit|lesson)\s+(?:on|about|covering|called|"
                           r"titled|named|that covers|dealing with)\s+(?P<topic>.+?)" + _TOPIC_END, re.IGNORECASE)),
    ("section", re.compile(r"(?:\b(?:the|this|that)|['’]s|s['’])\s+(?:section|part|subsection)\s+(?:on|about|covering|called|"
                           r"titled|named|that covers|dealing with)\s+(?P<topic>.+?)" + _TOPIC_END, re.IGNORECASE)),
    ("chapter", re.compile(r"(?:\b(?:the|this|that)|['’]s|s['’])\s+(?P<topic>[\w'’-]+(?:\s+[\w'’-]+){0,3}?)\s+chapter\b",
                           re.IGNORECASE)),
    ("section", re.compile(r"(?:\b(?:the|this|that)|['’]s|s['’])\s+(?P<topic>[\w'’-]+(?:\s+[\w'’-]+){0,3}?)\s+section\b",
                           re.IGNORECASE)),
    ("chapter", re.compile(r"(?:关于|讲|介绍)(?P<topic>[^，。？！、\s]{2,16}?)的?(?:那一?章|这一?章|一章|章节)")),
    ("chapter", re.compile(r"(?P<topic>[^，。？！、\s的]{2,12}?)(?:这|那)一章")),
    ("section", re.compile(r"(?:关于|讲|介绍)(?P<topic>[^，。？！、\s]{2,16}?)的?(?:那一?节|这一?节|一节|小节)")),
]

# "the book", "这本书": the whole of one document
_WHOLE_DOCUMENT = re.compile(r"\b(?:the|this|that)\s+(?:whole\s+|entire\s+)?(?:book|document|paper|text|pdf|"
                             r"file|report|notice|rule|article)\b|全书|整本书|这本书|本书|这份文档|这篇文档|这篇论文|"
                             r"整个文档|这份文件", re.IGNORECASE)
# Words in a topic phrase that do not name the topic ("the main chapter")
_TOPIC_NOISE = {"main", "first", "last", "next", "previous", "same", "whole", "entire", "this", "that", "following",
                "above", "current", "book", "book's", "books", "主要", "这", "那"}


@dataclass
class ScopeRequest:
    """What a question says about where to look."""
    unit: str | None = None            # "chapter" | "section" | "appendix" | "pages" | None
    number: str | None = None          # "4", "2.3"; an appendix's label: "B", "2"
    pages: tuple[int, int] | None = None
    topic: str = ""                    # "dictionaries" in "the chapter on dictionaries"
    title: str = ""                    # what a numbered chapter is said to be about ("第9章聚类": 聚类)
    whole_document: bool = False       # "the book", "全书"
    phrase: str = ""                   # the words that said it (left out of what is searched)

    @property
    def named(self) -> bool:
        return bool(self.unit or self.whole_document)


def read_scope(question: str) -> ScopeRequest:
    """The scope the question states, if any (`SCOPE_PATTERNS`)."""
    for unit, pattern in SCOPE_PATTERNS:
        m = pattern.search(question)
        if not m:
            continue
        groups = m.groupdict()
        if groups.get("topic") is not None:
            topic = _clean_topic(groups["topic"])
            if not topic:
                continue
            return ScopeRequest(unit=unit, topic=topic, phrase=m.group(),
                                whole_document=bool(_WHOLE_DOCUMENT.search(question)))
        if unit == "pages":
            a = int(groups["a"])
            b = int(groups.get("b") or a)
            return ScopeRequest(unit="pages", pages=(min(a, b), max(a, b)), phrase=m.group())
        raw = groups["n"]
        if unit == "appendix":
            label = raw.upper() if raw.isascii() else str(chinese_number(raw))
            return ScopeRequest(unit=unit, number=label, phrase=m.group())
        number = str(_ORDINALS[raw.lower()]) if raw.lower() in _ORDINALS else \
            (raw if "." in raw else str(chinese_number(raw)))
        if number == "None":
            continue
        title = _clean_topic(groups.get("title") or groups.get("title2") or "")
        return ScopeRequest(unit=unit, number=number, phrase=m.group(), title=title)
    if m := _WHOLE_DOCUMENT.search(question):
        return ScopeRequest(whole_document=True, phrase=m.group())
    return ScopeRequest()


def _clean_topic(topic: str) -> str:
    # "the pumpkin book's SVM chapter": what follows the owner names the chapter
    topic = re.split(r"['’]s\s+|s['’]\s+", topic)[-1]
    words = [w for w in re.split(r"\s+", topic.strip(" '\"“”‘’")) if w and w.lower() not in _TOPIC_NOISE]
    text = " ".join(words)
    return text if len(text) >= 2 else ""


@dataclass
class Scope:
    """A resolved scope: one document, and within it a node of its outline or a page range (or all of it)."""
    doc_id: str
    doc_name: str
    node: OutlineNode | None = None
    pages: tuple[int, int] | None = None
    alternatives: list[str] = field(default_factory=list)   # other documents with such a chapter, by name

    @property
    def label(self) -> str:
        if self.node is not None:
            pages = f" ({self.node.pages_label})" if self.node.pages_label else ""
            return f"{self.node.title}{pages}"
        if self.pages is not None:
            a, b = self.pages
            return f"p. {a}" if a == b else f"pp. {a}-{b}"
        return self.doc_name


def topic_match(topic: str, node: OutlineNode) -> float:
    """How well a topic phrase names a heading: the share of the topic's words (stems; Chinese by
    characters) found in the heading's text."""
    title = heading_text(node.title).lower()
    if CJK_CHAR.search(topic):
        chars = [ch for ch in topic if CJK_CHAR.match(ch)]
        return sum(1 for ch in chars if ch in title) / len(chars) if chars else 0.0
    words = [stem(w) for w in search_tokens(topic)]
    title_words = {stem(w) for w in search_tokens(title)}
    if not words:
        return 0.0
    return sum(1 for w in words if w in title_words or any(t.startswith(w) or w.startswith(t) for t in title_words
                                                             if len(t) >= 4 and len(w) >= 4)) / len(words)


TOPIC_MIN_MATCH = 0.5
# A heading is a thing's own title when it is the thing's name and at most this much more ("Display statement"
# for "display", "2.10.1 Primary" for "primary"); "Restart upsd" is not upsdrvctl's, "J.6 Second major version"
# not "secondary"'s.
TITLE_EXTRA_WORDS = 1
TITLE_EXTRA_CHARS_ZH = 2


# a heading joining two things ("Lists and tuples", "决策树与随机森林") is the title of neither
_JOINS = re.compile(r"\s(?:and|or|vs\.?|versus)\s|&|[和与及、/]", re.IGNORECASE)


def title_extra(name: str, node: OutlineNode) -> int | None:
    """How much more than the name a heading says when it is the title of the thing named: the name's words
    (stems, whole words only; Chinese as written) and at most TITLE_EXTRA_WORDS (TITLE_EXTRA_CHARS_ZH
    characters) more; None when it is not its title. A textbook's section "Tuples" opens with what a tuple is."""
    title = heading_text(node.title).strip().lower()
    name = name.strip().lower()
    if not name or not title or (_JOINS.search(title) and not _JOINS.search(name)):
        return None
    if CJK_CHAR.search(name):
        compact, wanted = re.sub(r"\s+", "", title), re.sub(r"\s+", "", name)
        extra = len(compact) - len(wanted)
        return extra if wanted in compact and extra <= TITLE_EXTRA_CHARS_ZH else None
    wanted = {stem(w) for w in search_tokens(name)}
    have = {stem(w) for w in search_tokens(title)}
    extra = len(have - wanted)
    return extra if wanted and wanted <= have and extra <= TITLE_EXTRA_WORDS else None


def titled_by(name: str, node: OutlineNode) -> bool:
    """Whether the heading is the title of the thing named (`title_extra`)."""
    return title_extra(name, node) is not None


def _named_share(topic: str, node: OutlineNode) -> float:
    """How much of a heading's text the topic phrase names: `topic_match` read the other way."""
    title = heading_text(node.title)
    return topic_match(title, OutlineNode(topic, (topic,), 0, 0))


# A topic in one language, headings in the other ("the chapter on support vector machines" of a Chinese book):
# given (topic, headings), the heading it names or None (RAGTool.topic_across: the topic translated, or the
# multilingual embedder's clear favourite)
TopicAcross = Callable[[str, list[OutlineNode]], "OutlineNode | None"]


def headings_language(nodes: list[OutlineNode]) -> str:
    """"zh" when most of these headings are written in Chinese, else "en"."""
    chinese = sum(1 for n in nodes if CJK_CHAR.search(heading_text(n.title)))
    return "zh" if chinese * 2 > len(nodes) else "en"


def in_other_script(topic: str, nodes: list[OutlineNode]) -> bool:
    """Whether the topic is written in the other script than most of these headings."""
    return bool(nodes) and bool(CJK_CHAR.search(topic)) != (headings_language(nodes) == "zh")


def resolve_scope(request: ScopeRequest, outlines: dict[str, Outline], names: dict[str, str], *,
                  question: str = "", named_docs: list[str] | None = None,
                  languages: dict[str, str] | None = None, topic_across: TopicAcross | None = None) -> Scope | None:
    """The scope in these documents (`outlines` and `names` by doc_id): the document the question names
    first, then one in the question's language, then the first that has such a chapter. None when no
    document has it (the caller says so) or the question names no scope. "The book" is a scope only when it
    is clear which book: the one named, or the only one. A topic in the other language than a document's
    headings is matched by `topic_across`."""
    if not request.named or not outlines:
        return None
    order = _document_order(list(outlines), named_docs or [], question, languages or {})
    found: list[Scope] = []
    loose: list[tuple[float, Scope]] = []
    for doc_id in order:
        outline = outlines[doc_id]
        node, pages = None, None
        if request.unit in ("chapter", "section") and request.number:
            node = outline.numbered(request.number)
            if node is None and request.unit == "section":
                node = next((n for n in outline.nodes() if n.number == request.number), None)
            if node is not None and not _title_fits(request.title, node):
                # "第9章聚类" of a book whose chapter 9 is about word play: not that chapter. Words that only partly
                # fit ("第五章自己动手写的那个 LLaMA2" of "第五章 动手搭建大模型") may be the reader's own: kept in reserve
                if topic_match(request.title, node) > 0:
                    loose.append((topic_match(request.title, node), Scope(doc_id, names.get(doc_id, doc_id), node=node)))
                node = None
        elif request.unit in ("chapter", "section") and request.topic:
            pool = outline.chapters() if request.unit == "chapter" else outline.nodes()
            # ties go to the heading the topic names most of ("the section on tuples": "Tuples", not the chapter
            # "Lists and tuples"), then to the higher level
            scored = sorted(((topic_match(request.topic, n), _named_share(request.topic, n), -n.level, n)
                             for n in pool), key=lambda t: t[:3], reverse=True)
            if scored and scored[0][0] >= TOPIC_MIN_MATCH:
                node = scored[0][3]
            elif topic_across is not None and in_other_script(request.topic, pool):
                node = topic_across(request.topic, pool)
        elif request.unit == "appendix":
            node = outline.appendix(request.number)
        elif request.unit == "pages":
            pages = request.pages
        whole = request.whole_document and not request.unit and (doc_id in (named_docs or []) or len(outlines) == 1)
        if node is not None or pages is not None or whole:
            found.append(Scope(doc_id, names.get(doc_id, doc_id), node=node, pages=pages))
        if request.unit == "pages" and found:
            break
    if not found and loose:
        found = [max(loose, key=lambda pair: pair[0])[1]]
    if not found:
        return None
    if request.unit == "chapter" and request.number:
        # "chapter 14" is the heading that calls itself a chapter ("Chapter 14 Files") before one that only starts
        # with the number ("14 CFR Part 39"); a document the question names stays first
        found.sort(key=lambda s: (s.doc_id not in (named_docs or []),
                                  not (s.node is not None and heading_number(s.node.title)[1])))
    best = found[0]
    best.alternatives = [s.doc_name for s in found[1:] if s.node is not None][:3]
    return best


def _title_fits(title: str, node: OutlineNode) -> bool:
    """A subject said with a chapter's number fits the chapter's title, when the two can be compared (the same
    script; across languages the number alone decides)."""
    if not title or bool(CJK_CHAR.search(title)) != bool(CJK_CHAR.search(heading_text(node.title))):
        return True
    return topic_match(title, node) >= TOPIC_MIN_MATCH


def _document_order(doc_ids: list[str], named: list[str], question: str, languages: dict[str, str]) -> list[str]:
    """Named documents first, then those in the question's language, then the rest (their order kept)."""
    lang = detect_language(question) if question else None
    return sorted(doc_ids, key=lambda d: (d not in named, languages.get(d) != lang if lang else False))

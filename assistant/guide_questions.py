"""The questions a document's guide suggests for a chapter: ones the book answers, in the book's language.

They are made from what the guide already found in the chapter — its key terms ("What is a tuple?"), two
terms it defines side by side ("What is the difference between list and tuple?"), its sections ("Summarize
section 2.1") — with the phrasings below. The phrasings are data: a language is a row of `PHRASINGS`, and
each phrasing is one the answer path reads the way it is meant (rag.plan: a definition, a comparison, a
section's summary). Candidates are only proposals: assistant.guide asks each one and keeps those answered.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

# kind -> template. "define": {term} (a thing); "define_word": {term} (a word the book defines as a quality or an
# action: "deterministic: Pertaining to …", "encode: To represent …"); "compare": {a}, {b}; "section": {number} (a numbered section);
# "section_named": {name} (a section without a number, found by its title: rag.scope's "the section on …");
# "chapter": {number} (the chapter itself, when its heading numbers it; else it is named as a section is).
# A numbered chapter or section names its document ({doc}: document_label): every book has a chapter 2.
PHRASINGS: dict[str, dict[str, str]] = {
    "en": {
        "define": "What is {term}?",
        "define_word": "What does {term} mean?",
        "compare": "What is the difference between {a} and {b}?",
        "section": "Summarize section {number} of {doc}",
        "section_named": "What does the section on {name} say?",
        "chapter": "Summarize chapter {number} of {doc}",
    },
    "zh": {
        "define": "什么是{term}？",
        "define_word": "{term}是什么意思？",
        "compare": "{a}和{b}有什么区别？",
        "section": "总结《{doc}》第{number}节",
        "section_named": "关于{name}的那一节讲了什么？",
        "chapter": "总结《{doc}》第{number}章",
    },
}
# Cached checks are kept under this: a changed phrasing table checks its questions again.
PHRASINGS_VERSION = hashlib.sha1(json.dumps(PHRASINGS, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:8]

MAX_DEFINITIONS = 2        # "What is X?" questions per chapter, its first (best) key terms
# How a definition of a quality or an action starts: its term is asked about as a word ("What does
# deterministic mean?"), not as a thing ("What is a deterministic?")
WORD_SENSE_OPENINGS = ("pertaining to", "relating to", "related to", "describing", "to ")
# Two definitions must share this much of their words (Jaccard, the terms left out) for their terms to be
# compared: "list" / "tuple" (both "a sequence of values") 0.67; "keyword argument" / "interface" share a word
# or two of twenty, and a learner would not ask for that difference
MIN_PAIR_OVERLAP = 0.25
MAX_CANDIDATES = 7         # proposed per chapter; the guide keeps at most MAX_SUGGESTED of those answered
MAX_SUGGESTED = 5


@dataclass(frozen=True)
class SectionRef:
    """A section of a chapter, as a question can name it."""
    number: str | None          # "2.1" as the heading states it
    name: str                   # its heading without the number


def phrasings(language: str) -> dict[str, str]:
    return PHRASINGS["zh" if language == "zh" else "en"]


def english_term(term: str) -> str:
    """A term as the object of "What is …?": "a tuple", "an assignment", "tuples" stays plural, a name that
    starts with a capital (a proper name, "Python") or holds several words stays bare."""
    if not term or term[0].isupper() or " " in term or not re.fullmatch(r"[a-z][\w\-]*", term):
        return term
    if term.endswith("s") and not term.endswith("ss"):
        return term
    return ("an " if term[0] in "aeiou" else "a ") + term


def compared_pair(definitions: list[tuple[str, str]]) -> tuple[str, str] | None:
    """Two key terms worth setting side by side, from (term, the sentence defining it): of the siblings (kinds
    of one thing, `_siblings`), the pair whose definitions share the most words besides the terms ("list" and
    "tuple": both "a sequence of values"); None when no two share at least MIN_PAIR_OVERLAP of their words."""
    from rag.evidence import terms_of
    words = [(term, set(terms_of(sentence)) - set(terms_of(term))) for term, sentence in definitions]
    kinds = {term: genus(sentence) for term, sentence in definitions}
    best, pair = 0.0, None
    for i, (a, wa) in enumerate(words):
        for b, wb in words[i + 1:]:
            shared = len(wa & wb) / (len(wa | wb) or 1)
            if shared >= MIN_PAIR_OVERLAP and shared > best and _siblings(a, b, kinds):
                best, pair = shared, (a, b)
    return pair


# Where the noun an English definition starts with ends: "A path| that starts …", "A function| that does not …",
# "A variable| defined inside …", "A sequence| of values"
_GENUS_END = re.compile(r"\b(?:that|which|who|whose|where|when|of|in|for|to|with|between|by|from|on|as|and|or)\b|"
                        r"\b\w+(?:ed|ing)\b|[,.;:(]")


def genus(definition: str) -> str | None:
    """The kind of thing an English definition says its term is ("A relative path: A path that starts …" ->
    "path"); None for a Chinese one or a definition that does not start with "a"/"an"/"the"."""
    m = re.match(r"\s*(?:an?|the|one of the)\s+(.*)", definition, re.IGNORECASE)
    if not m:
        return None
    head = _GENUS_END.split(m.group(1), maxsplit=1)[0].split()
    return head[-1].lower().rstrip("s") if head else None


def _siblings(a: str, b: str, kinds: dict[str, str | None]) -> bool:
    """Two terms a learner would set side by side: kinds of one thing ("relative path" and "absolute path",
    "pure function" and "modifier": both functions), or, where the definitions do not say their kind (Chinese),
    any two."""
    if kinds.get(a) is None and kinds.get(b) is None:
        return True
    shares_a_word = bool(set(a.lower().split()) & set(b.lower().split()))
    return shares_a_word or (kinds.get(a) is not None and kinds.get(a) == kinds.get(b))


MAX_LABEL_CHARS = 40


def document_label(name: str, title: str) -> str:
    """How a question names the document: its title when it has a short one ("Think Python"), else its file
    name without the extension and separators ("pumpkin book 1.9.9")."""
    title = " ".join((title or "").split())
    if 2 <= len(title) <= MAX_LABEL_CHARS:
        return title
    return re.sub(r"[_\-]+", " ", name.rsplit(".", 1)[0]).strip() or name


def defines_a_word(definition: str) -> bool:
    """The definition is of a quality or an action (WORD_SENSE_OPENINGS), not of a thing."""
    return definition.strip().lower().startswith(WORD_SENSE_OPENINGS)


def candidate_questions(language: str, terms: list[str], sections: list[SectionRef],
                        pair: tuple[str, str] | None = None, chapter: SectionRef | None = None,
                        document: str = "", definitions: dict[str, str] | None = None) -> list[str]:
    """The questions to try for a chapter, best first: the chapter summarized (what a student asks first), its
    first key terms defined, a pair of them compared, then its sections summarized; each question once."""
    table = phrasings(language)
    zh = language == "zh"
    out: list[str] = []
    if chapter is not None:
        if chapter.number and "." not in chapter.number:
            out.append(table["chapter"].format(number=chapter.number, doc=document))
        elif chapter.name:
            out.append(table["section_named"].format(name=chapter.name))
    for term in terms[:MAX_DEFINITIONS]:
        if defines_a_word((definitions or {}).get(term, "")):
            out.append(table["define_word"].format(term=term))
        else:
            out.append(table["define"].format(term=term if zh else english_term(term)))
    if pair:
        out.append(table["compare"].format(a=pair[0], b=pair[1]))
    for section in sections:
        if section.number and "." in section.number:
            out.append(table["section"].format(number=section.number, doc=document))
        elif section.name:
            out.append(table["section_named"].format(name=section.name))
    return list(dict.fromkeys(out))[:MAX_CANDIDATES]

"""Key terms of a document and the sentences that define them: glossary entries, definitions, heading terms.

A book names its key terms in three ways, best first: a glossary ("tuple: An immutable sequence of
elements."), a sentence that defines a term ("A tuple is a sequence of values", "X is called Y",
"版本空间是指…", "…称为过拟合"), and a heading that names a term ("Tuples", "2.3 性能度量") with a sentence
about it ("Tuples are immutable"). Cloze cards (study.cloze) and summaries' key terms (rag.summary) read them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import CJK_CHAR, _jieba_module, detect_language
from rag.evidence import FRONT_MATTER, split_units
from rag.types import Chunk

# "A list is a sequence", "Tuples are immutable", "Recursion is when…": the subject of a definition
_EN_DEFINED = re.compile(
    r"^(?:(?:an?|the)\s+)?(?P<term>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,3}?)\s+"
    r"(?:is|are)\s+(?:an?\b|the\b|called\s+\w|defined\b|used\s+to\b|one\s+of\b)", re.IGNORECASE)
# "is called a memo.", "is known as infinite recursion, and": the name up to the punctuation, at most 3 words
_EN_CALLED = re.compile(r"\b(?:is|are)\s+(?:called|known\s+as|named)\s+(?:an?\s+|the\s+)?"
                        r"(?:“(?P<quoted>[^”]{2,40})”|\"(?P<quoted2>[^\"]{2,40})\"|"
                        r"(?P<term>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,2})(?=\s*[,.;:)]))", re.IGNORECASE)
_EN_MEANS = re.compile(r"^(?:(?:an?|the)\s+)?(?:term\s+|word\s+)?[\"“']?(?P<term>[A-Za-z][\w\-]*(?:\s+[A-Za-z]"
                       r"[\w\-]*){0,2}?)[\"”']?\s+(?:means|refers\s+to|stands\s+for)\b", re.IGNORECASE)
_ZH_TERM = r"[\u4e00-\u9fffA-Za-z0-9\-]{2,12}"
_ZH_DEFINED = re.compile(rf"^(?:[^，。；]{{0,12}}，)?[“\"「]?(?P<term>{_ZH_TERM})[”\"」]?(?:（[^）]{{0,30}}）)?"
                         r"(?:是指|指的是|是一种|是一类|是一个|定义为|被称为|又称)")
_ZH_COLON = re.compile(r"^(?P<term>(?:(?!的|是|时|需要|之间|如何|怎样|对比)[\u4e00-\u9fffA-Za-z0-9\-]){2,8})[：:]")            # "经验误差：学习器在训练集上的误差"
_ZH_CALLED = re.compile(rf"(?:称为|称之为|叫做|称作|简称)[“\"「]?(?P<term>{_ZH_TERM})[”\"」]?")

# words that are never the thing a card should ask about
_EN_NOT_TERMS = {
    "it", "this", "that", "these", "those", "there", "here", "which", "what", "one", "they", "he", "she", "we",
    "you", "i", "its", "result", "example", "following", "figure", "table", "chapter", "section", "exercise",
    "book", "reader", "answer", "problem", "way", "thing", "case", "part", "idea", "goal", "reason", "point",
    "first", "second", "third", "fourth", "fifth", "final", "former", "latter", "used", "next", "last", "other",
    "another", "each", "all", "some", "most", "many", "such",
    "output", "value", "code", "program", "same", "difference", "rest", "purpose", "solution", "also", "not",
    "sometimes", "often", "usually", "generally", "typically", "perhaps", "whenever", "because", "if", "when", "while", "since", "although", "so", "but", "and", "or", "then", "now",
}
_ZH_NOT_TERMS = re.compile(r"^(这|那|其|它|他|她|我们|你|本|此|该|上述|下面|以下|如下|因此|所以|但是|然而|也|都|就|即|"
                           r"目的|原因|问题|结果|例如|比如|一个|一种|第)")
_GLOSSARY = re.compile(r"^(glossary|terms|key terms|vocabulary|术语|术语表|词汇表|名词解释)$", re.IGNORECASE)
_GLOSSARY_ENTRY = re.compile(r"^(?P<term>[A-Za-z\u4e00-\u9fff][\w\-\s\u4e00-\u9fff]{1,38}?)\s*[:：]\s*(?P<text>\S.*)$")
EN_MIN_WORDS, _EN_MAX_CHARS = 7, 320
ZH_MIN_CHARS, _ZH_MAX_CHARS = 14, 120



GLOSSARY, DEFINITION, HEADING_TERM = 3, 2, 1     # how a key term was found, best first


@dataclass
class KeyTerm:
    term: str
    sentence: str       # the sentence as the document has it ("term: text" for a glossary entry)
    chunk: Chunk
    page: int | None
    priority: int       # GLOSSARY, DEFINITION or HEADING_TERM
    position: int       # order in the document, to keep the source's order among equals
    text: str = ""      # a glossary entry's text without its term


def tidy(text: str) -> str:
    """The sentence as a reader should see it: PDF line breaks inside Chinese text leave spaces between
    characters ("我们将所 有能够")."""
    return re.sub(r"(?<=[\u4e00-\u9fff，。；：“”（）])\s+(?=[\u4e00-\u9fff，。；：“”（）])", "", text.strip())


def heading_terms(chunks: list[Chunk]) -> list[str]:
    """Short headings that name a term ("Tuples", "2.3 性能度量" -> "性能度量"), not ones that say something
    ("Tuples are immutable") or number a chapter."""
    terms: dict[str, None] = {}
    for chunk in chunks:
        for title in chunk.heading_path:
            name = re.sub(r"^[\d.\s第章节]+", "", title).strip(" #*:：")
            if not name or FRONT_MATTER.match(name) or re.search(r"\d|\b(is|are|and|or)\b|的是|是", name):
                continue
            if CJK_CHAR.search(name):
                if 2 <= len(name) <= 8 and not _ZH_NOT_TERMS.match(name):
                    terms[name] = None
            elif 1 <= len(name.split()) <= 3 and name.lower() not in _EN_NOT_TERMS and len(name) >= 3:
                terms[name] = None
    return list(terms)


def key_terms(chunks: list[Chunk], extra_terms: list[str] | None = None) -> list[KeyTerm]:
    """Every key term of these chunks with its sentence, best first (glossary, definitions, then heading terms),
    in document order among equals; one per sentence (overlapping chunks do not repeat one) and one per term."""
    terms = [t for t in dict.fromkeys(heading_terms(chunks) + list(extra_terms or [])) if t]
    seen_sentences: set[str] = set()
    out: list[KeyTerm] = []
    for chunk in chunks:
        if chunk.heading_path and FRONT_MATTER.match(chunk.heading_path[-1].strip("# ")):
            continue
        out += glossary_entries(chunk, seen_sentences)
        for unit in split_units(chunk.text, chunk.context_prefix):
            sentence = tidy(unit.text)
            if unit.kind != "sentence" or sentence in seen_sentences or not whole_sentence(sentence):
                continue
            found = defined_term(sentence)
            priority = DEFINITION
            if not found:
                found, priority = heading_term(sentence, terms), HEADING_TERM
            if not found:
                continue
            seen_sentences.add(sentence)
            page = chunk.pages_of_span(unit.start, unit.end)[0]
            out.append(KeyTerm(found, sentence, chunk, page, priority, chunk.char_start + unit.start))
    out.sort(key=lambda k: (-k.priority, k.position))
    return out


def one_per_term(found: list, term=lambda k: k.term) -> list:
    """The first (best) of each term: "tuple" from the glossary and again from "A tuple is a sequence of
    values" is one term. `term(item)` reads an item's term."""
    seen, out = set(), []
    for k in found:
        key = re.sub(r"(es|s)$", "", term(k).lower().strip())
        if key not in seen:
            seen.add(key)
            out.append(k)
    return out


def glossary_entries(chunk: Chunk, seen: set[str]) -> list[KeyTerm]:
    """"tuple: An immutable sequence of elements." lines under a Glossary heading, continuation lines
    joined: the author's own list of key terms, the best cloze source a book has."""
    glossary = next((i for i, h in enumerate(chunk.heading_path)
                     if _GLOSSARY.match(re.sub(r"^[\d.\s]+", "", h).strip(" #*"))), None)
    in_glossary, entries = glossary is not None, []
    pos = 0
    for line in chunk.text.split("\n"):
        here, pos = pos, pos + len(line) + 1
        title = re.sub(r"^#+\s*[\d.\s]*", "", line).strip() if line.lstrip().startswith("#") else None
        if title is not None:
            in_glossary = bool(_GLOSSARY.match(title))
            continue
        if not in_glossary or not line.strip():
            continue
        m = _GLOSSARY_ENTRY.match(line.strip())
        if m:
            entries.append([m.group("term").strip(), m.group("text").strip(), here])
        elif entries:
            entries[-1][1] += " " + line.strip()
    out = []
    for term, text, offset in entries:
        sentence = f"{term}: {text}"
        if term.lower() in _EN_NOT_TERMS or sentence in seen or len(text) < 12 or len(sentence) > _EN_MAX_CHARS:
            continue
        seen.add(sentence)
        page = chunk.pages_of_span(offset, offset + len(term))[0]
        out.append(KeyTerm(term, sentence, chunk, page, GLOSSARY, chunk.char_start + offset, text=text))
    return out


def whole_sentence(sentence: str) -> bool:
    """A complete, card-sized sentence: starts like a sentence, ends with a full stop, not a question,
    not an exercise, not a line of the table of contents."""
    if "?" in sentence or "？" in sentence or re.search(r"(\.\s?){4,}|…{2,}", sentence):
        return False
    if detect_language(sentence) == "zh":
        cjk = len(CJK_CHAR.findall(sentence))
        return ZH_MIN_CHARS <= cjk and len(sentence) <= _ZH_MAX_CHARS and sentence.endswith(("。", "；", "！"))
    if not re.match(r"^[\"“(]?[A-Z]", sentence) or not sentence.endswith((".", "!")):
        return False
    return len(sentence.split()) >= EN_MIN_WORDS and len(sentence) <= _EN_MAX_CHARS \
        and not re.match(r"^(exercise|write|modify|rewrite|as an exercise)\b", sentence, re.IGNORECASE)


def defined_term(sentence: str) -> str | None:
    if detect_language(sentence) == "zh":
        for pattern in (_ZH_COLON, _ZH_DEFINED, _ZH_CALLED):
            m = pattern.search(sentence)
            if m and not _ZH_NOT_TERMS.match(m.group("term")) and zh_term_ok(m.group("term")):
                return m.group("term")
        return None
    for pattern in (_EN_CALLED, _EN_MEANS, _EN_DEFINED):
        m = pattern.search(sentence)
        term = m and next((g for g in (m.groupdict().get("quoted"), m.groupdict().get("quoted2"), m.group("term")) if g), None)
        if term and en_term_ok(term):
            return term.strip()
    return None


# jieba's tags of words that never end a term: adverbs, pronouns, conjunctions, prepositions, particles
# ("通常这", "由于每个字符都", "涌现能力可以", "是不相关的"); nor start one, but for a one-character adverb or
# particle that is a prefix ("正空间", "过拟合"); a term never holds 是 or 的 as a word ("是指模型输入的",
# "利普希茨常数的实数"): the pattern ran past the name into the sentence
_ZH_EDGE_TAGS = ("d", "r", "c", "p", "u")
_ZH_PREFIX_TAGS = ("d", "u")
_ZH_INNER_WORDS = {"是", "的", "即", "就", "都", "也"}
# what a colon follows that is not a term ("注意：", "提示：")
_ZH_NOTE_WORDS = {"注意", "提示", "说明", "备注", "注", "例如", "比如", "其中", "总结", "小结"}


def zh_term_ok(term: str) -> bool:
    """A Chinese name a definition pattern found is a term, not a stretch of the sentence around it."""
    import jieba.posseg
    _jieba_module()                  # jieba's dictionary built once, quietly
    if term in _ZH_NOTE_WORDS:
        return False
    words = [(w.word, w.flag) for w in jieba.posseg.cut(term)]
    if not words or any(word in _ZH_INNER_WORDS for word, _ in words):
        return False
    (first, first_tag), (_, last_tag) = words[0], words[-1]
    starts_badly = first_tag.startswith(_ZH_EDGE_TAGS) and not (len(first) == 1 and first_tag.startswith(_ZH_PREFIX_TAGS))
    return not (starts_badly or last_tag.startswith(_ZH_EDGE_TAGS))


def en_term_ok(term: str) -> bool:
    words = term.lower().split()
    return bool(words) and words[0] not in _EN_NOT_TERMS and words[-1] not in _EN_NOT_TERMS \
        and len(term) >= 3 and not any(w in {"is", "are", "was", "be", "can", "will"} for w in words)


def heading_term(sentence: str, terms: list[str]) -> str | None:
    """A heading term the sentence is about: its subject, near the start, followed by is/are/是."""
    for term in sorted(terms, key=len, reverse=True):
        if CJK_CHAR.search(term):
            at = sentence.find(term)
            if 0 <= at <= 8 and re.match(r"[”\"」]?(是|表示)", sentence[at + len(term):]):
                return term
            continue
        m = re.search(rf"\b{re.escape(term)}(?:s|es)?\b(?=\s+(?:is|are)\b)", sentence, re.IGNORECASE)
        if m and len(sentence[:m.start()].split()) <= 3:
            return m.group()
    return None

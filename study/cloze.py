"""Cards without an LLM: a key sentence of the document with its term blanked out (a cloze card).

A key sentence is one that defines something ("A tuple is a sequence of values", "X is called Y",
"版本空间是指…", "…称为过拟合") or that states something about a term the document's headings name.
The card's answer is the term; its front is the rest of the sentence, word for word, so the card says
nothing the document does not."""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import CJK_CHAR
from rag.terms import EN_MIN_WORDS, GLOSSARY, ZH_MIN_CHARS, key_terms, one_per_term
from rag.types import Chunk
from study.types import BLANK


@dataclass
class ClozeCandidate:
    front: str          # the sentence with the term blanked out
    back: str           # the term
    sentence: str       # the sentence as the document has it
    chunk: Chunk
    page: int | None
    priority: int       # 3 = a glossary entry, 2 = a sentence defining the term, 1 = one about a heading term
    position: int       # order in the document, to keep the source's order among equals


def key_sentence_cards(chunks: list[Chunk], extra_terms: list[str] | None = None) -> list[ClozeCandidate]:
    """Every cloze candidate in these chunks, best first (glossary entries, definitions, then heading terms), in
    document order among equals; one per sentence and one per term (rag.terms.key_terms)."""
    out: list[ClozeCandidate] = []
    for k in key_terms(chunks, extra_terms):
        if k.priority == GLOSSARY:
            hidden = re.sub(rf"\b{re.escape(k.term)}(?:s|es)?\b", BLANK, k.text, flags=re.IGNORECASE) \
                if not CJK_CHAR.search(k.term) else k.text.replace(k.term, BLANK)
            front = f"{BLANK}: {hidden}"
        else:
            front = _blank(k.sentence, k.term)
        if front is not None:
            out.append(ClozeCandidate(front, k.term, k.sentence, k.chunk, k.page, k.priority, k.position))
    return one_per_term(out, term=lambda c: c.back)


def _blank(sentence: str, term: str) -> str | None:
    """The sentence with every occurrence of the term blanked (one left in would give the answer away);
    None when too little is left to ask a question."""
    if CJK_CHAR.search(term):
        front = sentence.replace(term, BLANK)
        left = len(CJK_CHAR.findall(front))
        return front if left >= ZH_MIN_CHARS - 4 else None
    pattern = re.compile(rf"\b{re.escape(term)}(?:s|es)?\b", re.IGNORECASE)
    front = pattern.sub(BLANK, sentence)
    left = len(re.findall(r"[A-Za-z]+", front))
    return front if front != sentence and left >= EN_MIN_WORDS - 2 else None

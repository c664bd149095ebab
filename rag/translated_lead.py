"""The book's answer in the reader's language, when it is in the other one.

An English question about a Chinese book (or the reverse) is answered with the book's own sentences; when the
model's opening in the reader's language is left out by the support check, the reader gets only the other
language. Then the answer's first passage is translated by the model and shown *as a translation* of its cited
passage ("Translated from [1]: …"), above the book's words under "From the book", and only when the translation
holds (`translation_holds`: the passage's numbers, and its meaning by the multilingual embedder).
"""
from __future__ import annotations

import re

import numpy as np

from core.text import CJK_CHAR, detect_language
from rag import prompts
from rag.answer import BOOK_HEADING, BOOK_HEADING_ZH
from rag.evidence import embedder_for
from rag.support import negation_count, numbers_in
from rag.types import CITATION_MARK

# Enough of the answer's first paragraph to carry its point: a small model translates a sentence or two faithfully,
# a long paragraph less so, and the translation is read before the book's words.
MAX_LEAD_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")
_MARKUP = re.compile(r"\*\*|^>\s*|`", re.MULTILINE)


# code is in no reader's language: a Chinese answer that quotes `solve(x=a,b, f(x))` is still Chinese
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def needs_translation(question: str, text: str) -> bool:
    """The answer's words, its code left out, are in another language than the question's: the book's words, or a
    small model's asked in Chinese about an English book (u5e-021 "sumalt 是干嘛用的？" was answered in English)."""
    prose = _CODE.sub(" ", text)
    return bool(prose.strip()) and detect_language(prose) != detect_language(question)


def lead_to_translate(book_text: str) -> tuple[str, int] | None:
    """The answer's first paragraph without its markup, cut after whole sentences to MAX_LEAD_CHARS, and the
    citation number it carries; None when it cites nothing (a translation is shown only as one of a cited passage)."""
    first = next((p for p in book_text.split("\n\n") if CITATION_MARK.search(p)), None)
    if first is None or first.lstrip().startswith("```"):
        return None
    n = int(CITATION_MARK.search(first).group(1))
    plain = " ".join(_MARKUP.sub("", CITATION_MARK.sub("", first)).split())
    lead = ""
    for sentence in _SENTENCE_END.split(plain):
        if lead and len(lead) + len(sentence) > MAX_LEAD_CHARS:
            break
        # Chinese sentences join without a space, others with one
        lead = f"{lead} {sentence}".strip() if lead and not CJK_CHAR.match(lead[-1]) and lead[-1] not in "。！？；" \
            else lead + sentence
    lead = lead[:MAX_LEAD_CHARS]
    return (lead, n) if lead else None


# A translation's closeness to its passage on the embedder's cross-language scale (core.embeddings
# CROSS_LANGUAGE_CALIBRATION: 0 = unrelated, 1 = the gold passage of a question). For 过拟合是指…导致泛化性能下降:
# faithful English renderings 0.90-0.95, unrelated sentences 0.60-0.61 (tests/test_support.py). Closeness does not
# read meaning errors (the same definition of underfitting 0.78, reversed 0.86): the translation is shown as one,
# with the book's sentence under it. Read on the same-language scale, as rag.support reads a composed sentence
# across languages, the faithful ones scored 0.26-0.35 and were all rejected.
TRANSLATION_CLOSE = 0.75


def translation_holds(translation: str, source: str, embedders) -> bool:
    """The translation gives only the source's numbers, as many negations as it has, and means what it does
    (multilingual embedder); False when no embedder knows both languages (nothing shown is better than a
    translation nobody checked)."""
    digits = {n for n in numbers_in(translation) if n.isdigit()}
    if digits - numbers_in(source):
        return False
    # the small model's worst slips reverse a sentence: 不超过两倍 ("at most twice") became "exceeds … by two
    # times", 甚至能主动思考最优方案 "even if it's not always the best choice"; a faithful rendering that words a
    # negation away ("难以" as "hard to") is lost too, and the book's words answer alone
    if negation_count(translation) != negation_count(source):
        return False
    chosen = embedder_for(embedders, translation, source)
    calibration = getattr(chosen, "cross_calibration", None)
    if chosen is None or calibration is None:
        return False
    vectors = chosen.embed([translation, source], kind="document")
    unrelated, close = calibration
    return float(np.clip((float(vectors[0] @ vectors[1]) - unrelated) / (close - unrelated), 0, 1)) >= TRANSLATION_CLOSE


def cleaned_translation(reply: str) -> str:
    """The model's reply as one plain line: no quotes around it, no citation marks of its own."""
    line = " ".join(reply.strip().strip('"“”').split())
    return CITATION_MARK.sub("", line).strip()


def with_translated_lead(text: str, translation: str, n: int, zh: bool, *, book_words: bool = True) -> str:
    """The translation as one, then the text it was made from: the book's words under their heading (in the
    reader's language), or, with `book_words` False, a model's checked sentences as they were."""
    lead = (prompts.TRANSLATED_LEAD_ZH if zh else prompts.TRANSLATED_LEAD).format(n=n, text=translation)
    under = f"{BOOK_HEADING_ZH if zh else BOOK_HEADING}\n\n{text}" if book_words else text
    return f"{lead}\n\n{under}"

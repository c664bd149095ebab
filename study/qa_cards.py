"""Question/answer cards written by the LLM (the local model counts), in the passage's language, each
kept only when one place of the passage backs its answer (`rag.evidence.sentence_support`, lexical +
embedding) and holds most of its question's terms (`backing`)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from core.errors import AssistantError
from core.text import detect_language
from rag.evidence import SUPPORTED, embedder_for, sentence_support, split_units, terms_of
from rag.terms import tidy

log = logging.getLogger(__name__)

CARD_PROMPT = {
    "en": ("You write flashcards for a student. From the passage, write {n} question-and-answer pairs that test "
           "its key facts or definitions. Each answer is short and uses the passage's own words. Write each pair "
           "on two lines:\nQ: <question>\nA: <answer>\nWrite nothing else."),
    "zh": ("你为学生编写学习卡片。根据下面的段落，写出{n}组问答，考查段落中的关键事实或定义。答案简短，尽量使用段落原文。"
           "每组写成两行：\nQ: <问题>\nA: <答案>\n不要写其他内容。"),
}
_PAIR = re.compile(r"^\s*(?:Q|问)[:：]\s*(?P<q>.+?)\s*\n\s*(?:A|答)[:：]\s*(?P<a>.+?)\s*$", re.MULTILINE)
MAX_PASSAGE_CHARS = 1200


QUESTION_COVERED = 0.5     # share of the question's terms the backing sentences must hold


@dataclass
class QACandidate:
    question: str
    answer: str
    support: float
    sentence: str             # the passage's sentence that backs the answer (the card's highlighted quote)


def write_cards(llm, passage: str, *, n: int = 2, max_tokens: int = 200) -> list[tuple[str, str]]:
    """The (question, answer) pairs the LLM wrote for a passage; [] when it wrote none readable."""
    language = detect_language(passage)
    messages = [{"role": "system", "content": CARD_PROMPT[language].format(n=n)},
                {"role": "user", "content": tidy(passage)[:MAX_PASSAGE_CHARS]}]
    try:
        reply = llm.complete(messages, max_tokens=max_tokens, temperature=0.2)
    except AssistantError:
        log.warning("the LLM could not write cards", exc_info=True)
        raise
    return [(m.group("q").strip(), m.group("a").strip()) for m in _PAIR.finditer(reply or "")]


def checked_cards(pairs: list[tuple[str, str]], passage: str, embedders) -> tuple[list[QACandidate], int]:
    """The pairs worth keeping and how many were dropped because the passage does not back the answer
    (or the question gives it away, or is not a question)."""
    kept, dropped = [], 0
    windows = sentence_windows(passage)
    for question, answer in pairs:
        if not answer or not question or answer.lower() in question.lower() or len(answer) > 300 \
                or not question.rstrip().endswith(("?", "？")) or not has_words(answer):   # "0", "yes": nothing to check
            dropped += 1
            continue
        support, sentence = backing(question, answer, windows, embedders)
        if support < SUPPORTED:
            dropped += 1
            continue
        kept.append(QACandidate(question, answer, round(support, 3), sentence))
    return kept, dropped


def has_words(answer: str) -> bool:
    """An answer a page can back: some term that is not a bare number ("0", "yes" and "2" are not)."""
    return any(not term.isdigit() and len(term) > 1 for term in terms_of(answer))


def sentence_windows(passage: str) -> list[list[str]]:
    """Each sentence with its neighbours: an answer may join two sentences of the passage."""
    units = [u.text for u in split_units(passage)] or [passage]
    return [units[max(0, i - 1):i + 2] for i in range(len(units))]


def backing(question: str, answer: str, windows: list[list[str]], embedders) -> tuple[float, str]:
    """How well the passage backs the card, 0..1, and the sentence that does it. The answer must be backed
    by one place of the passage (a sentence and its neighbours, not words gathered from the whole page),
    and that place must also hold most of the question's terms: a true sentence put under a question
    about something else ("How are rows compared in a SQL database?" over the tuple page) is not backed.
    Lexical, so a wrong card whose every word is on the page still passes (docs/EVALUATION.md, card quality)."""
    q_terms, a_terms = set(terms_of(question)), set(terms_of(answer))
    best = (0.0, "")
    for units in windows:
        window = " ".join(units)
        w_terms = set(terms_of(window))
        if q_terms and len(q_terms & w_terms) / len(q_terms) < QUESTION_COVERED:
            continue
        embedder = embedder_for(embedders, answer, window[:400])
        score = sentence_support(answer, window, embedder)
        if score > best[0]:
            sentence = max(units, key=lambda u: len(a_terms & set(terms_of(u))))   # the one to highlight
            best = (score, sentence)
    return best

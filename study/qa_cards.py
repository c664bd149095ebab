"""Question/answer cards written by the LLM (the local model counts), in the passage's language, each
kept only when the passage supports its answer (`rag.evidence.sentence_support`, lexical + embedding)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from core.errors import AssistantError
from core.text import detect_language
from rag.evidence import SUPPORTED, embedder_for, sentence_support, terms_of
from study.cloze import tidy

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


@dataclass
class QACandidate:
    question: str
    answer: str
    support: float


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
    for question, answer in pairs:
        if not answer or not question or answer.lower() in question.lower() or len(answer) > 300 \
                or not question.rstrip().endswith(("?", "？")) or not terms_of(answer):   # "0", "yes": nothing to check
            dropped += 1
            continue
        support = answer_support(answer, passage, embedders)
        if support < SUPPORTED:
            dropped += 1
            continue
        kept.append(QACandidate(question, answer, round(support, 3)))
    return kept, dropped


def answer_support(answer: str, passage: str, embedders) -> float:
    """How much of the answer the passage backs, 0..1. The answer alone is judged: its question repeats
    the passage's words and would lift any answer."""
    embedder = embedder_for(embedders, answer, passage[:400])
    return sentence_support(answer, passage, embedder)

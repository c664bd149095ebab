"""A quiz over a set of cards: multiple choice (the right answer among other cards' answers) or short
answer (graded against the reference by words and meaning)."""
from __future__ import annotations

import random

import numpy as np

from core.text import detect_language
from rag.evidence import embedder_for, terms_of
from study.types import Card, QuizGrade, QuizQuestion
from study.types import normal_text as _normal

CHOICES = 4
# a short answer counts when most of the reference's words are in it, or it means the same
LEXICAL_PASS = 0.75
MEANING_PASS = 0.8
MEANING_MIN_TERMS = 4     # meaning is judged only for sentence-like references


def make_quiz(cards: list[Card], *, mode: str = "choice", size: int = 10, seed: int | None = None,
              pool: list[Card] | None = None) -> list[QuizQuestion]:
    """Up to `size` questions on `cards`; multiple choice takes its wrong options from the answers of
    `pool` (default: the same cards) in the card's language; a card without enough of them is asked as
    a short answer."""
    rng = random.Random(seed)
    chosen = rng.sample(cards, min(size, len(cards)))
    out = []
    for card in chosen:
        distractors = _distractors(card, pool or cards, rng) if mode == "choice" else []
        if mode == "choice" and len(distractors) == CHOICES - 1:
            options = distractors + [card.back]
            rng.shuffle(options)
            out.append(QuizQuestion(card.card_id, card.front, "choice", options, card.back, card.doc_name, card.page))
        else:
            out.append(QuizQuestion(card.card_id, card.front, "short", [], card.back, card.doc_name, card.page))
    return out


def _distractors(card: Card, cards: list[Card], rng: random.Random) -> list[str]:
    """Other cards' answers in the card's language and of its kind, unlike its own answer, closest in
    length first (a one-word answer among sentences gives itself away)."""
    own = _normal(card.back)
    pool = {c.back for c in cards if c.card_id != card.card_id and c.language == card.language and c.kind == card.kind
            and _normal(c.back) != own and own not in _normal(c.back) and _normal(c.back) not in own}
    ranked = sorted(pool, key=lambda b: (abs(len(b) - len(card.back)), rng.random()))
    return ranked[:CHOICES - 1]


def grade(question: QuizQuestion, given: str, embedders=None) -> QuizGrade:
    """Multiple choice: the chosen option is the answer. Short answer: the reference's words are (mostly)
    there, or the embedder finds the two mean the same."""
    given = (given or "").strip()
    if question.mode == "choice":
        ok = _normal(given) == _normal(question.answer)
        return QuizGrade(question.card_id, ok, 1.0 if ok else 0.0, question.answer)
    score = short_answer_score(given, question.answer, embedders)
    return QuizGrade(question.card_id, score >= 1.0, round(min(score, 1.0), 3), question.answer)


def short_answer_score(given: str, reference: str, embedders=None) -> float:
    """1.0 or more = correct. Words first (the share of the reference's terms the answer has, scaled so
    LEXICAL_PASS reaches 1.0), then meaning (cosine scaled so MEANING_PASS reaches 1.0)."""
    if not given:
        return 0.0
    if _normal(given) == _normal(reference):
        return 1.0
    ref_terms = set(terms_of(reference))
    lexical = len(ref_terms & set(terms_of(given))) / len(ref_terms) if ref_terms else 0.0
    score = lexical / LEXICAL_PASS
    # a term ("tuple") is right or wrong by its words: "list" is close in meaning and still wrong
    if len(ref_terms) < MEANING_MIN_TERMS or embedders is None:
        return score
    embedder = embedder_for(embedders, given, reference)
    if embedder is not None and detect_language(given) == detect_language(reference):
        vectors = embedder.embed([given, reference], kind="document")
        cosine = float(np.dot(vectors[0], vectors[1]))
        score = max(score, embedder.relatedness(cosine) / MEANING_PASS)
    return score

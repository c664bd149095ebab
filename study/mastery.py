"""What the person knows and what they have not studied yet, from their cards, reviews, quizzes,
questions and notes.

- mastery per concept: the FSRS chance of recall of its reviewed cards, blended with quiz accuracy;
  strong (≥ 0.8), learning, weak (< 0.6, or forgotten since it was learned), or new (never tested).
- coverage per document chapter: which pages were studied (a card, a cited answer, a note on them).
- what to review next: due cards first, then the weakest concepts' cards."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone

from study import schedule
from study.types import SECTION_JOIN, Card

STRONG, WEAK = 0.8, 0.6


@dataclass
class ConceptMastery:
    concept: str
    cards: int
    reviews: int
    quiz_answers: int
    score: float | None          # 0..1; None = never reviewed or quizzed
    level: str                   # strong | learning | weak | new


@dataclass
class ChapterCoverage:
    doc_id: str
    doc_name: str
    chapter: str
    first_page: int | None
    last_page: int | None
    studied_pages: list[int] = field(default_factory=list)

    @property
    def pages(self) -> int:
        if self.first_page is None or self.last_page is None:
            return 0
        return self.last_page - self.first_page + 1

    @property
    def studied(self) -> bool:
        return bool(self.studied_pages)


def concept_of(card: Card) -> str:
    return card.concept or (card.section.split(SECTION_JOIN)[-1] if card.section else "") or card.doc_name or "—"


def mastery(cards: list[Card], quiz_answers: list[tuple[str, bool, float]], now: datetime | None = None) -> list[ConceptMastery]:
    """Per concept, weakest first (new ones last)."""
    now = now or datetime.now(timezone.utc)
    quiz: dict[str, list[bool]] = defaultdict(list)
    for card_id, correct, _score in quiz_answers:
        quiz[card_id].append(correct)
    groups: dict[str, list[Card]] = defaultdict(list)
    for card in cards:
        groups[concept_of(card)].append(card)
    out = []
    for concept, group in groups.items():
        score, level = blend(group, quiz, now)
        out.append(ConceptMastery(concept, len(group), sum(c.reviews for c in group),
                                  sum(len(quiz[c.card_id]) for c in group), score, level))
    order = {"weak": 0, "learning": 1, "strong": 2, "new": 3}
    return sorted(out, key=lambda m: (order[m.level], m.score if m.score is not None else 1.0, m.concept))


def blend(group: list[Card], quiz: dict[str, list[bool]], now: datetime) -> tuple[float | None, str]:
    """How well a group of cards is known, 0..1 (None = never reviewed or quizzed), and its level: the FSRS
    chance of recall of its reviewed cards and its quiz accuracy, averaged; weak below WEAK or once forgotten."""
    recall = [r for r in (schedule.retrievability(c, now) for c in group) if r is not None]
    answers = [ok for c in group for ok in quiz.get(c.card_id, [])]
    parts = []
    if recall:
        parts.append(sum(recall) / len(recall))
    if answers:
        parts.append(sum(answers) / len(answers))
    score = sum(parts) / len(parts) if parts else None
    lapsed = any(c.lapses for c in group)
    level = ("new" if score is None else "weak" if score < WEAK or lapsed else
             "strong" if score >= STRONG else "learning")
    return (round(score, 3) if score is not None else None), level


def coverage(chapters: list[tuple[str, str, str, int | None, int | None]], studied: dict[str, set[int]]) -> list[ChapterCoverage]:
    """`chapters`: (doc_id, doc_name, chapter, first page, last page); `studied`: doc_id -> pages studied."""
    out = []
    for doc_id, doc_name, chapter, first, last in chapters:
        pages = sorted(p for p in studied.get(doc_id, set()) if first is not None and last is not None and first <= p <= last)
        out.append(ChapterCoverage(doc_id, doc_name, chapter, first, last, pages))
    return out


def review_next(due: list[Card], weak: list[ConceptMastery], cards: list[Card], limit: int = 10) -> list[Card]:
    """Due cards first (most overdue first), then cards of the weakest concepts."""
    chosen = list(due[:limit])
    weak_names = [m.concept for m in weak if m.level in ("weak", "learning")]
    for name in weak_names:
        for card in cards:
            if len(chosen) >= limit:
                return chosen
            if concept_of(card) == name and card not in chosen:
                chosen.append(card)
    return chosen

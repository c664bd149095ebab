"""Where the person stands in each chapter of a document: pages studied, questions asked, cards made and due,
quiz accuracy and mastery — the path the study guide shows beside its outline and the report's per-chapter view.

A chapter is an outline chapter (rag.outline, as the guide shows it). A card belongs to the chapter its heading
path starts with (a card made from pages or a note has no path: its page decides); a question counts once for
each chapter it was answered from (by cited page, or by the cited passage's headings in a document without
pages). Mastery is study.mastery.blend over the chapter's cards, so a chapter and a concept are judged alike.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime

from rag.outline import Outline, OutlineNode
from study.mastery import blend, concept_of
from study.types import SECTION_JOIN, Card


@dataclass
class ChapterStanding:
    title: str
    number: str | None
    first_page: int | None
    last_page: int | None
    pages: int                 # the chapter's pages (0 for a document without pages)
    pages_studied: int         # of them: made cards from, answered from, or noted
    questions: int             # questions answered from the chapter
    cards: int
    due: int                   # of its cards, due now
    quiz_answered: int
    quiz_correct: int
    score: float | None        # study.mastery.blend: None = nothing reviewed or quizzed yet
    level: str                 # new | weak | learning | strong
    # the concepts the chapter's cards are about, most cards first: [{"concept", "key", "cards", "due"}]; the
    # guide puts each beside the key term it is (by `key`, memory.graph's normalised name)
    concepts: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Cited:
    """One place a question was answered from."""
    page: int | None
    heading_path: tuple[str, ...] = ()


def cited_headings(outline: Outline, citation: dict) -> tuple[str, ...]:
    """The headings a stored citation of a document without pages lies under: those of the piece of its chunk
    that holds the start of its quote (a chunk may run across a chapter's end, under its first section's
    headings), else those of the chunk's first piece."""
    pieces = [p for p in outline.pieces if p.chunk_id == citation.get("chunk_id")]
    start = " ".join((citation.get("quote_start") or "").split())[:40]
    holding = [p for p in pieces if start and start in " ".join(p.text.split())]
    chosen = holding or pieces
    return tuple(chosen[0].heading_path) if chosen else ()


def chapter_index(nodes: list[OutlineNode], heading_path: tuple[str, ...] | list[str],
                  page: int | None) -> int | None:
    """The chapter a place belongs to: the one whose headings its path starts with, else the one whose pages
    hold its page; None when neither says."""
    path = tuple(heading_path)
    for i, node in enumerate(nodes):
        if path[:len(node.path)] == node.path:
            return i
    if page is not None:
        for i, node in enumerate(nodes):
            if node.page_start is not None and node.page_end is not None and node.page_start <= page <= node.page_end:
                return i
    return None


def card_path(card: Card) -> tuple[str, ...]:
    return tuple(card.section.split(SECTION_JOIN)) if card.section else ()


def standings(nodes: list[OutlineNode], cards: list[Card], quiz_answers: list[tuple[str, bool, float]],
              questions: list[list[Cited]], studied_pages: set[int], due_ids: set[str],
              now: datetime) -> list[ChapterStanding]:
    """One standing per chapter in `nodes`, from the document's cards, the quiz answers, the places each
    question was answered from, the pages studied and the ids of the cards due now."""
    quiz: dict[str, list[bool]] = defaultdict(list)
    for card_id, correct, _score in quiz_answers:
        quiz[card_id].append(correct)
    cards_of: dict[int, list[Card]] = defaultdict(list)
    for card in cards:
        i = chapter_index(nodes, card_path(card), card.page)
        if i is not None:
            cards_of[i].append(card)
    asked: dict[int, int] = defaultdict(int)
    for places in questions:
        for i in {chapter_index(nodes, place.heading_path, place.page) for place in places} - {None}:
            asked[i] += 1
    out = []
    for i, node in enumerate(nodes):
        group = cards_of[i]
        answers = [ok for c in group for ok in quiz.get(c.card_id, [])]
        score, level = blend(group, quiz, now)
        paged = node.page_start is not None and node.page_end is not None
        pages = node.page_end - node.page_start + 1 if paged else 0
        studied = sum(1 for p in studied_pages if paged and node.page_start <= p <= node.page_end)
        out.append(ChapterStanding(node.title, node.number, node.page_start, node.page_end, pages, studied, asked[i],
                                   len(group), sum(1 for c in group if c.card_id in due_ids), len(answers),
                                   sum(answers), score, level, concepts_of(group, due_ids)))
    return out


def concepts_of(cards: list[Card], due_ids: set[str]) -> list[dict]:
    """The concepts `cards` are about (study.mastery.concept_of; spellings of one name joined by
    memory.graph's key), with how many cards each has and how many are due, most cards first."""
    from memory.graph.base import normalise_key
    groups: dict[str, list[Card]] = defaultdict(list)
    names: dict[str, str] = {}
    for card in cards:
        name = concept_of(card)
        key = normalise_key(name)
        groups[key].append(card)
        names.setdefault(key, name)
    return [{"concept": names[key], "key": key, "cards": len(group),
             "due": sum(1 for c in group if c.card_id in due_ids)}
            for key, group in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]

"""Typed models of the study features."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from datetime import datetime

CLOZE = "cloze"     # a key sentence with its term blanked out; made without an LLM
QA = "qa"           # a question and its answer, written by the LLM (or by the person)
BLANK = "[...]"

# where a card came from
FROM_SECTION = "section"
FROM_PAGES = "pages"
FROM_NOTE = "note"
FROM_TURN = "turn"
FROM_IMPORT = "import"
FROM_PERSON = "person"

GRADES = {"again": 1, "hard": 2, "good": 3, "easy": 4}   # FSRS ratings
SECTION_JOIN = " › "    # a card's section is its passage's heading path, chapter first


def normal_text(text: str) -> str:
    """A card side as compared for sameness: width-folded, lower-case, punctuation and spacing ignored."""
    return re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).lower()).strip()


@dataclass
class Card:
    card_id: str
    user_id: str
    kind: str                     # CLOZE | QA
    front: str
    back: str
    language: str                 # "en" | "zh"
    source_kind: str              # FROM_*
    doc_id: str | None = None
    doc_name: str = ""
    page: int | None = None       # 1-based; None for page-less documents and notes
    quote: str = ""               # the passage sentence(s) the card was made from
    concept: str = ""             # the heading or defined term the card is about
    section: str = ""             # the heading path, chapter first, joined by " › "
    source_ref: str = ""          # note id / memory id / chunk id it came from
    created: datetime | None = None
    updated: datetime | None = None
    due: datetime | None = None
    state: str = "{}"             # fsrs.Card as JSON
    reviews: int = 0
    lapses: int = 0

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("created", "updated", "due"):
            d[key] = d[key].isoformat() if d[key] else None
        return d


@dataclass
class ReviewResult:
    card: Card
    grade: str
    due: datetime                  # when FSRS wants to see the card again
    interval_days: float
    retrievability: float | None   # chance of recall at the moment of review, before it


@dataclass
class QuizQuestion:
    card_id: str
    prompt: str
    mode: str                      # "choice" | "short"
    choices: list[str] = field(default_factory=list)
    answer: str = ""
    doc_name: str = ""
    page: int | None = None


@dataclass
class QuizGrade:
    card_id: str
    correct: bool
    score: float                   # 0..1, how close the given answer was
    expected: str


@dataclass
class MakeResult:
    """What making cards did: the cards kept, and what was dropped and why (so nothing is silent)."""
    cards: list[Card]
    candidates: int = 0
    unsupported: int = 0           # the passage does not back the answer
    duplicates: int = 0            # already a card (this run or before)
    notice: str = ""

"""When to see a card again: FSRS (the `fsrs` package, the algorithm Anki ships), not our own rules.

Fuzzing is off so that the dates a person sees are the ones FSRS computes and a test can predict;
with a learner's deck of tens of cards there is no review pile-up for fuzz to spread."""
from __future__ import annotations

from datetime import datetime, timezone

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State

from study.types import GRADES, Card

SCHEDULER = Scheduler(enable_fuzzing=False)


def new_state(now: datetime | None = None) -> tuple[str, datetime]:
    """A new card's FSRS state (JSON) and due date: due at once."""
    card = FsrsCard(due=now or datetime.now(timezone.utc))
    return card.to_json(), card.due


def review(card: Card, grade: str, now: datetime | None = None) -> tuple[float | None, float]:
    """Apply a grade ("again" | "hard" | "good" | "easy") to `card` in place: its state, due date and
    counters. Returns (retrievability before the review, or None for a new card; interval in days)."""
    rating = Rating(GRADES[grade])
    now = now or datetime.now(timezone.utc)
    state = _fsrs_state(card) or FsrsCard(due=now)
    before = SCHEDULER.get_card_retrievability(state, now) if state.last_review else None
    state, _log = SCHEDULER.review_card(state, rating, now)
    card.state, card.due, card.updated = state.to_json(), state.due, now
    card.reviews += 1
    if rating == Rating.Again and state.state == State.Relearning:   # forgotten after it was learned
        card.lapses += 1
    return before, (state.due - now).total_seconds() / 86400


def retrievability(card: Card, now: datetime | None = None) -> float | None:
    """The chance the person recalls the card now (FSRS's forgetting curve); None before any review."""
    state = _fsrs_state(card)
    if state is None or not state.last_review:
        return None
    return SCHEDULER.get_card_retrievability(state, now or datetime.now(timezone.utc))


def _fsrs_state(card: Card) -> FsrsCard | None:
    """The card's stored FSRS state; None for a card stored without one (an empty "{}")."""
    return FsrsCard.from_json(card.state) if card.state and card.state != "{}" else None

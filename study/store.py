"""The cards' SQLite file (`data_dir/study/cards.sqlite3`, WAL): cards with their FSRS state, every
review, every quiz answer. Every query carries the user id, so one person never reads another's cards."""
from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path

from core.sqlite import CARDS, open_database
from core.registry import ProcessRegistry
from study.types import Card

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cards (
    user_id TEXT NOT NULL, card_id TEXT NOT NULL, kind TEXT NOT NULL, front TEXT NOT NULL, back TEXT NOT NULL,
    language TEXT NOT NULL, source_kind TEXT NOT NULL, doc_id TEXT, doc_name TEXT, page INTEGER,
    quote TEXT, concept TEXT, section TEXT, source_ref TEXT, created REAL NOT NULL, updated REAL NOT NULL,
    due REAL NOT NULL, state TEXT NOT NULL, reviews INTEGER NOT NULL DEFAULT 0, lapses INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, card_id));
CREATE INDEX IF NOT EXISTS cards_due ON cards (user_id, due);
CREATE INDEX IF NOT EXISTS cards_doc ON cards (user_id, doc_id);
CREATE TABLE IF NOT EXISTS reviews (
    user_id TEXT NOT NULL, card_id TEXT NOT NULL, rating INTEGER NOT NULL, reviewed_at REAL NOT NULL,
    retrievability REAL, interval_days REAL);
CREATE INDEX IF NOT EXISTS reviews_card ON reviews (user_id, card_id, reviewed_at);
CREATE TABLE IF NOT EXISTS quiz_answers (
    user_id TEXT NOT NULL, card_id TEXT NOT NULL, mode TEXT NOT NULL, correct INTEGER NOT NULL,
    score REAL NOT NULL, answered_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS quiz_card ON quiz_answers (user_id, card_id);
"""

_COLUMNS = ("user_id, card_id, kind, front, back, language, source_kind, doc_id, doc_name, page, quote, concept, "
            "section, source_ref, created, updated, due, state, reviews, lapses")


def _ts(moment: datetime | None) -> float:
    return (moment or datetime.now(timezone.utc)).timestamp()


def _dt(value: float | None) -> datetime | None:
    return datetime.fromtimestamp(value, timezone.utc) if value is not None else None


def _row(card: Card) -> tuple:
    return (card.user_id, card.card_id, card.kind, card.front, card.back, card.language, card.source_kind,
            card.doc_id, card.doc_name, card.page, card.quote, card.concept, card.section, card.source_ref,
            _ts(card.created), _ts(card.updated), _ts(card.due), card.state, card.reviews, card.lapses)


def _card(r: tuple) -> Card:
    return Card(user_id=r[0], card_id=r[1], kind=r[2], front=r[3], back=r[4], language=r[5], source_kind=r[6],
                doc_id=r[7], doc_name=r[8] or "", page=r[9], quote=r[10] or "", concept=r[11] or "",
                section=r[12] or "", source_ref=r[13] or "", created=_dt(r[14]), updated=_dt(r[15]),
                due=_dt(r[16]), state=r[17], reviews=r[18], lapses=r[19])


class CardStore:
    """Cards, reviews and quiz answers of every user, always read and written with a user id."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._conn = open_database(self.path, _SCHEMA, kind=CARDS, unavailable=(
            f"Cannot open the cards database {self.path}; check the data folder is writable."))
        self._lock = threading.RLock()

    def _query(self, sql: str, params=()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def add_many(self, cards: list[Card]) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(f"INSERT INTO cards ({_COLUMNS}) VALUES ({','.join('?' * 20)})",
                                       [_row(c) for c in cards])
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def save(self, card: Card) -> None:
        """Write the card's text and schedule back (after an edit or a review)."""
        with self._lock:
            self._conn.execute(
                "UPDATE cards SET front=?, back=?, concept=?, updated=?, due=?, state=?, reviews=?, lapses=? "
                "WHERE user_id=? AND card_id=?",
                (card.front, card.back, card.concept, _ts(card.updated), _ts(card.due), card.state, card.reviews,
                 card.lapses, card.user_id, card.card_id))

    def record_review(self, card: Card, rating: int, reviewed_at: datetime, retrievability: float | None,
                      interval_days: float) -> None:
        """The card's new schedule and the review that made it, in one transaction."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self.save(card)
                self._conn.execute("INSERT INTO reviews VALUES (?, ?, ?, ?, ?, ?)",
                                   (card.user_id, card.card_id, rating, _ts(reviewed_at), retrievability,
                                    interval_days))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def record_quiz(self, user_id: str, card_id: str, mode: str, correct: bool, score: float,
                    answered_at: datetime | None = None) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO quiz_answers VALUES (?, ?, ?, ?, ?, ?)",
                               (user_id, card_id, mode, int(correct), score, _ts(answered_at)))

    def get(self, user_id: str, card_id: str) -> Card | None:
        rows = self._query(f"SELECT {_COLUMNS} FROM cards WHERE user_id=? AND card_id=?", (user_id, card_id))
        return _card(rows[0]) if rows else None

    def list(self, user_id: str, *, doc_id: str | None = None) -> list[Card]:
        sql, params = f"SELECT {_COLUMNS} FROM cards WHERE user_id=?", [user_id]
        if doc_id:
            sql, params = sql + " AND doc_id=?", params + [doc_id]
        return [_card(r) for r in self._query(sql + " ORDER BY created, rowid", params)]

    def due(self, user_id: str, now: datetime, limit: int = 100) -> list[Card]:
        rows = self._query(f"SELECT {_COLUMNS} FROM cards WHERE user_id=? AND due<=? ORDER BY due LIMIT ?",
                           (user_id, _ts(now), limit))
        return [_card(r) for r in rows]

    def count_due(self, user_id: str, now: datetime) -> int:
        return self._query("SELECT count(*) FROM cards WHERE user_id=? AND due<=?", (user_id, _ts(now)))[0][0]

    def reviews(self, user_id: str) -> list[tuple[str, int, datetime]]:
        """(card id, rating, when) of every review, oldest first."""
        return [(r[0], r[1], _dt(r[2])) for r in self._query(
            "SELECT card_id, rating, reviewed_at FROM reviews WHERE user_id=? ORDER BY reviewed_at", (user_id,))]

    def quiz_answers(self, user_id: str) -> list[tuple[str, bool, float]]:
        return [(r[0], bool(r[1]), r[2]) for r in self._query(
            "SELECT card_id, correct, score FROM quiz_answers WHERE user_id=? ORDER BY answered_at", (user_id,))]

    def delete(self, user_id: str, card_ids: list[str]) -> int:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                n = 0
                for card_id in card_ids:
                    n += self._conn.execute("DELETE FROM cards WHERE user_id=? AND card_id=?",
                                            (user_id, card_id)).rowcount
                    for table in ("reviews", "quiz_answers"):
                        self._conn.execute(f"DELETE FROM {table} WHERE user_id=? AND card_id=?", (user_id, card_id))
                self._conn.execute("COMMIT")
                return n
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def ids_of_document(self, user_id: str, doc_id: str) -> list[str]:
        return [r[0] for r in self._query("SELECT card_id FROM cards WHERE user_id=? AND doc_id=?", (user_id, doc_id))]

    def clear_user(self, user_id: str) -> int:
        return self.delete(user_id, [r[0] for r in self._query("SELECT card_id FROM cards WHERE user_id=?",
                                                               (user_id,))])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


_stores: ProcessRegistry[CardStore] = ProcessRegistry()


def get_card_store(data_dir: Path) -> CardStore:
    """One store (one connection) per data folder per process."""
    path = Path(data_dir).resolve() / "study" / "cards.sqlite3"
    return _stores.get(str(path), lambda: CardStore(path))


def close_card_stores() -> None:
    _stores.close_all()

"""StudyDesk: one person's cards — making them from what they studied, reviewing them on the FSRS
schedule, quizzing, moving decks in and out. The facade hands it out as `assistant.study`; it reads
documents through the person's RAGTool and notes/turns through their MemoryManager, never another's."""
from __future__ import annotations

import logging
import re
import unicodedata
import uuid
from datetime import datetime
from pathlib import Path

from core.errors import AssistantError, InvalidRequest
from core.text import detect_language
from rag.outline import heading_pieces
from rag.terms import tidy
from rag.types import Chunk
from study import clock, exchange, qa_cards, schedule
from study.cloze import ClozeCandidate, key_sentence_cards
from study.quiz import grade, make_quiz
from study.store import get_card_store
from study.types import (CLOZE, FROM_IMPORT, FROM_NOTE, FROM_PAGES, FROM_PERSON, FROM_SECTION, FROM_TURN, GRADES, QA,
                         SECTION_JOIN, Card, MakeResult, QuizGrade, QuizQuestion, ReviewResult)
from study.types import normal_text as _key

log = logging.getLogger(__name__)

MAX_CARDS_PER_RUN = 30
LLM_PASSAGES_PER_RUN = 4        # the local model writes ~2 cards in 5-15 s a passage on 2 cores
MAX_CARD_CHARS = 2000
MAX_PAGES_PER_RUN = 60
IMPORT_BATCH = 500              # cards written per transaction when a deck file is imported


class StudyDesk:
    def __init__(self, user_id: str, settings, rag, memory):
        self.user_id, self.settings, self.rag, self.memory = user_id, settings, rag, memory
        self.store = get_card_store(settings.data_dir)

    def _now(self, now: datetime | None) -> datetime:
        return now or clock.now(self.settings)

    # == what can be studied =========================================================================
    def chapters(self, doc_id: str) -> list[str]:
        """What "make cards from a chapter" offers: the document's top-level headings in order, then the chapters
        of its guide's outline that are not among them (a Markdown book's "# Title" over its chapters)."""
        seen: dict[str, None] = {}
        for chunk in self._chunks(doc_id):
            if chunk.heading_path:
                seen.setdefault(chunk.heading_path[0], None)
        for node in self.rag.document_outline(doc_id).outline.chapters():
            seen.setdefault(node.title, None)
        return list(seen)

    def _chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks cut at every heading inside them, each piece with its own heading path
        (chunking merges short sections into one chunk, whose path is only the first one's)."""
        if self.rag.get_document(doc_id) is None:
            raise InvalidRequest("That document is not in your library; choose one from the list.", key="err_card_doc_unknown")
        return heading_pieces(self.rag.store.chunks_of(self.user_id, doc_id))

    # == making cards ================================================================================
    def cards_from_section(self, doc_id: str, heading: str, *, use_llm: bool | None = None,
                           now: datetime | None = None) -> MakeResult:
        chunks = [c for c in self._chunks(doc_id) if heading in c.heading_path]
        if not chunks:
            raise InvalidRequest("That section was not found in the document; choose one from the list.", key="err_card_section_unknown")
        return self._from_chunks(doc_id, chunks, FROM_SECTION, heading, use_llm, now)

    def cards_from_pages(self, doc_id: str, first: int, last: int, *, use_llm: bool | None = None,
                         now: datetime | None = None) -> MakeResult:
        if first < 1 or last < first:
            raise InvalidRequest("Give a first page of 1 or more and a last page not before it.", key="err_card_page_range")
        if last - first + 1 > MAX_PAGES_PER_RUN:
            raise InvalidRequest(f"Make cards from at most {MAX_PAGES_PER_RUN} pages at a time.", key="err_card_too_many_pages", n=MAX_PAGES_PER_RUN)
        chunks = [c for c in self._chunks(doc_id) if c.page_start is not None
                  and c.page_start <= last and (c.page_end or c.page_start) >= first]
        if not chunks:
            raise InvalidRequest("Those pages hold no text to make cards from.", key="err_card_no_text")
        return self._from_chunks(doc_id, chunks, FROM_PAGES, f"{first}-{last}", use_llm, now,
                                 pages=(first, last))

    def _from_chunks(self, doc_id: str, chunks: list[Chunk], source_kind: str, source_ref: str,
                     use_llm: bool | None, now: datetime | None, pages: tuple[int, int] | None = None) -> MakeResult:
        record = self.rag.get_document(doc_id)
        candidates = key_sentence_cards(chunks, self._person_concepts())
        if pages:
            candidates = [c for c in candidates if c.page is None or pages[0] <= c.page <= pages[1]]
        cards = [self._cloze_card(c, record.name, source_kind, source_ref) for c in candidates]
        unsupported, notice = 0, ""
        llm = self.rag.llm if use_llm is not False else None
        if use_llm and llm is None:
            notice = "No language model is available, so the cards are fill-in-the-blank sentences from the document."
        if llm is not None:
            made, unsupported, notice = self._llm_cards(llm, chunks, candidates, record.name, source_kind, source_ref)
            cards = cards + made      # the document's own sentences first: an LLM card asking the same goes
        return self._keep(cards, len(cards) + unsupported, unsupported, notice, now)

    def _cloze_card(self, c: ClozeCandidate, doc_name: str, source_kind: str, source_ref: str) -> Card:
        return self._card(CLOZE, c.front, c.back, source_kind, doc_id=c.chunk.doc_id, doc_name=doc_name,
                          page=c.page, quote=c.sentence, concept=c.back,
                          section=SECTION_JOIN.join(c.chunk.heading_path), source_ref=source_ref)

    def _llm_cards(self, llm, chunks: list[Chunk], candidates: list[ClozeCandidate], doc_name: str,
                   source_kind: str, source_ref: str) -> tuple[list[Card], int, str]:
        """QA cards from the passages richest in key sentences (the LLM is slow on a laptop: a few only)."""
        richness: dict[str, int] = {}
        for c in candidates:
            richness[c.chunk.chunk_id] = richness.get(c.chunk.chunk_id, 0) + c.priority
        ranked = sorted(chunks, key=lambda ch: (-richness.get(ch.chunk_id, 0), ch.ordinal))[:LLM_PASSAGES_PER_RUN]
        cards, dropped = [], 0
        for chunk in sorted(ranked, key=lambda ch: ch.ordinal):
            passage = tidy(chunk.text)
            try:
                pairs = qa_cards.write_cards(llm, passage)
            except AssistantError:
                return cards, dropped, ("The language model did not answer, so the cards made are "
                                        "fill-in-the-blank sentences from the document.")
            kept, n_dropped = qa_cards.checked_cards(pairs, passage, self.rag.dense)
            dropped += n_dropped
            for qa in kept:
                cards.append(self._card(QA, qa.question, qa.answer, source_kind, doc_id=chunk.doc_id, doc_name=doc_name,
                                        page=chunk.page_start, quote=qa.sentence[:300],
                                        section=SECTION_JOIN.join(chunk.heading_path),
                                        source_ref=source_ref))
        return cards, dropped, ""

    def cards_from_note(self, note_id: str, *, now: datetime | None = None) -> MakeResult:
        item = self.memory.get(note_id)
        if item is None or item.metadata.get("kind") not in ("note", "preference"):
            raise InvalidRequest("That note was not found; choose one of your notes.", key="err_card_note_unknown")
        concept = item.metadata.get("concept") or ""
        text = item.content.strip()
        doc_id = item.metadata.get("doc_id")
        record = self.rag.get_document(doc_id) if doc_id else None
        extra = {"doc_id": doc_id if record else None, "doc_name": record.name if record else "",
                 "page": item.metadata.get("page"), "source_ref": note_id}
        found = key_sentence_cards([_note_chunk(text, doc_id or "note")], [concept] if concept else [])
        cards = [self._card(CLOZE, c.front, c.back, FROM_NOTE, quote=c.sentence, concept=c.back, **extra)
                 for c in found]
        if concept and not any(_key(c.back) == _key(concept) for c in cards):
            question = (f"你的笔记里关于「{concept}」写了什么？" if detect_language(text + concept) == "zh"
                        else f"What do your notes say about {concept}?")
            cards.insert(0, self._card(QA, question, text, FROM_NOTE, quote=text, concept=concept, **extra))
        if not cards:
            raise InvalidRequest("Give the note a concept (or write it as a definition) to make a card from it.", key="err_card_note_no_concept")
        return self._keep(cards, len(cards), 0, "", now)

    def cards_from_turn(self, memory_id: str, *, now: datetime | None = None) -> MakeResult:
        """A card from a question the person asked and the answer they were given (with its first source)."""
        item = self.memory.get(memory_id)
        meta = item.metadata if item else {}
        if item is None or meta.get("kind") != "qa" or meta.get("refused") or not meta.get("answer"):
            raise InvalidRequest("That question has no answer from your documents to make a card from.", key="err_card_no_answer")
        answer = _plain_answer(meta["answer"])
        cited = (meta.get("citations") or [{}])[0]
        card = self._card(QA, meta.get("question", ""), answer, FROM_TURN, doc_id=cited.get("doc_id"),
                          doc_name=cited.get("doc_name", ""), page=cited.get("page_start"), quote=answer[:300],
                          source_ref=memory_id)
        return self._keep([card], 1, 0, "", now)

    def add_card(self, front: str, back: str, *, now: datetime | None = None) -> Card:
        """A card the person writes themself."""
        result = self._keep([self._card(QA, front, back, FROM_PERSON)], 1, 0, "", now)
        if not result.cards:
            raise InvalidRequest("You already have this card.", key="err_card_duplicate")
        return result.cards[0]

    def import_file(self, path: Path, *, now: datetime | None = None) -> exchange.ImportResult:
        """Every valid card of a deck file, added (due now) — no cap, no dropping by meaning: a deck someone
        made is theirs. Skipped: a card the deck already has, or one an earlier row of the file has (the
        same front and back, ignoring case, width and spacing). Refused rows come back with line and reason."""
        deck = exchange.read_cards_file(Path(path))
        moment = self._now(now)
        seen = {_same_card(c.front, c.back) for c in self.store.list(self.user_id)}
        in_file: set[tuple[str, str]] = set()
        result = exchange.ImportResult([], deck.rows, refused=list(deck.refused))
        for r in deck.cards:
            key = _same_card(r["front"], r["back"])
            if key in seen:
                if key in in_file:
                    result.repeated += 1
                else:
                    result.in_deck += 1
                continue
            seen.add(key)
            in_file.add(key)
            card = self._card(r["kind"], r["front"], r["back"], FROM_IMPORT, doc_name=r["document"],
                              page=r["page"], quote=r["quote"])
            card.state, card.due = schedule.new_state(moment)
            card.created = card.updated = moment
            result.cards.append(card)
        for start in range(0, len(result.cards), IMPORT_BATCH):      # short write transactions
            self.store.add_many(result.cards[start:start + IMPORT_BATCH])
        result.total = len(self.store.list(self.user_id))
        return result

    def _card(self, kind: str, front: str, back: str, source_kind: str, **fields) -> Card:
        front, back = front.strip()[:MAX_CARD_CHARS], back.strip()[:MAX_CARD_CHARS]
        return Card(card_id=uuid.uuid4().hex, user_id=self.user_id, kind=kind, front=front, back=back,
                    language=detect_language(front + " " + back), source_kind=source_kind, **fields)

    def _keep(self, cards: list[Card], candidates: int, unsupported: int, notice: str,
              now: datetime | None) -> MakeResult:
        """Store the new cards (due now), skipping ones the person already has; at most MAX_CARDS_PER_RUN."""
        deck = self.store.list(self.user_id)
        existing = {_key(c.front) for c in deck}
        kept, duplicates = [], 0
        moment = self._now(now)
        for card in cards:
            key = _key(card.front)
            if not card.front or not card.back or key in existing:
                duplicates += 1
                continue
            existing.add(key)
            card.state, card.due = schedule.new_state(moment)
            card.created = card.updated = moment
            kept.append(card)
            if len(kept) == MAX_CARDS_PER_RUN:
                break
        kept, near = self._without_near_duplicates(kept, deck)
        duplicates += near
        if kept:
            self.store.add_many(kept)
        if not kept and not notice:
            notice = ("You already have cards for all of this." if duplicates else
                      "No key sentences (definitions, named terms) were found there; try a chapter or more pages.")
        return MakeResult(kept, candidates, unsupported, duplicates, notice)

    def _without_near_duplicates(self, new: list[Card], deck: list[Card]) -> tuple[list[Card], int]:
        """Drop a new card that asks what an earlier card (of this run, or already in the deck for the same
        document) asks, by meaning (study.quality.near_duplicates)."""
        from study.quality import near_duplicates
        if not new:
            return new, 0
        doc_ids = {c.doc_id for c in new}
        earlier = [c for c in deck if c.doc_id in doc_ids]
        order = {c.card_id: i for i, c in enumerate(earlier + new)}
        drop = {max(a, b, key=lambda c: order[c.card_id]).card_id
                for a, b in near_duplicates(earlier + new, self.rag.dense)}
        kept = [c for c in new if c.card_id not in drop]
        return kept, len(new) - len(kept)

    def _person_concepts(self) -> list[str]:
        """The person's own concept names (from their notes) count as terms worth a card."""
        try:
            return [n["name"] for n in self.memory.semantic.graph.view(self.user_id, limit=60).nodes
                    if n.get("label") == "CONCEPT"]
        except AssistantError:
            return []

    # == the deck ====================================================================================
    def cards(self, doc_id: str | None = None) -> list[Card]:
        return self.store.list(self.user_id, doc_id=doc_id)

    def card(self, card_id: str) -> Card:
        card = self.store.get(self.user_id, card_id)
        if card is None:
            raise InvalidRequest("That card was not found; it may have been deleted.", key="err_card_not_found")
        return card

    def edit_card(self, card_id: str, front: str, back: str, *, now: datetime | None = None) -> Card:
        front, back = (front or "").strip(), (back or "").strip()
        if not front or not back:
            raise InvalidRequest("A card needs a front and a back.", key="err_card_sides")
        if len(front) > MAX_CARD_CHARS or len(back) > MAX_CARD_CHARS:
            raise InvalidRequest(f"A card side holds at most {MAX_CARD_CHARS:,} characters.", key="err_card_side_too_long", n=MAX_CARD_CHARS)
        card = self.card(card_id)
        card.front, card.back, card.updated = front, back, self._now(now)
        self.store.save(card)
        return card

    def delete_cards(self, card_ids: list[str]) -> int:
        return self.store.delete(self.user_id, card_ids)

    def forget_document(self, doc_id: str) -> int:
        """A deleted document takes its cards with it: they quote it."""
        return self.store.delete(self.user_id, self.store.ids_of_document(self.user_id, doc_id))

    def clear(self) -> int:
        return self.store.clear_user(self.user_id)

    # == review ======================================================================================
    def due(self, now: datetime | None = None, limit: int = 100) -> list[Card]:
        return self.store.due(self.user_id, self._now(now), limit)

    def due_count(self, now: datetime | None = None) -> int:
        return self.store.count_due(self.user_id, self._now(now))

    def review(self, card_id: str, grade_name: str, now: datetime | None = None) -> ReviewResult:
        grade_name = (grade_name or "").strip().lower()
        if grade_name not in GRADES:
            raise InvalidRequest("Grade a card Again, Hard, Good or Easy.", key="err_card_grade")
        card = self.card(card_id)
        moment = self._now(now)
        before, interval = schedule.review(card, grade_name, moment)
        self.store.record_review(card, GRADES[grade_name], moment, before, interval)
        return ReviewResult(card, grade_name, card.due, interval, before)

    # == quiz ========================================================================================
    def quiz(self, doc_id: str | None = None, *, heading: str | None = None, mode: str = "choice", size: int = 10,
             seed: int | None = None) -> list[QuizQuestion]:
        if mode not in ("choice", "short"):
            raise InvalidRequest("A quiz is multiple choice or short answer.", key="err_quiz_kind")
        everything = self.cards()
        cards = [c for c in everything if not doc_id or c.doc_id == doc_id]
        if heading:
            cards = [c for c in cards if heading in c.section.split(SECTION_JOIN)]
        if not cards:
            raise InvalidRequest("There are no cards to quiz you on yet; make some from a chapter first.", key="err_quiz_no_cards")
        # wrong options come from all the person's cards: a chapter alone often has too few answers
        return make_quiz(cards, mode=mode, size=max(1, min(size, 50)), seed=seed, pool=everything)

    def answer(self, question: QuizQuestion, given: str, *, now: datetime | None = None) -> QuizGrade:
        result = grade(question, given, self.rag.dense)
        self.store.record_quiz(self.user_id, question.card_id, question.mode, result.correct, result.score, self._now(now))
        return result

    # == mastery, coverage =========================================================================
    def chapter_pages(self, doc_id: str) -> list[tuple[str, int | None, int | None]]:
        """(chapter, first page, last page) of each top-level heading, in order."""
        spans: dict[str, list[int]] = {}
        for piece in self._chunks(doc_id):
            chapter = piece.heading_path[0] if piece.heading_path else ""
            pages = [p for p in (piece.page_start, piece.page_end) if p is not None]
            if chapter and pages:
                spans.setdefault(chapter, []).extend(pages)
        return [(c, min(p), max(p)) for c, p in spans.items()]

    def studied_pages(self) -> dict[str, set[int]]:
        """doc_id -> the pages the person studied: made cards from, was answered from, or noted."""
        pages: dict[str, set[int]] = {}
        for card in self.cards():
            if card.doc_id and card.page:
                pages.setdefault(card.doc_id, set()).add(card.page)
        from memory.types import MemoryType
        for item in self.memory.list([MemoryType.EPISODIC, MemoryType.SEMANTIC]):
            for c in item.metadata.get("citations") or []:
                if isinstance(c, dict) and c.get("doc_id") and c.get("page_start"):
                    last = c.get("page_end") or c["page_start"]
                    pages.setdefault(c["doc_id"], set()).update(range(int(c["page_start"]), int(last) + 1))
            if item.metadata.get("doc_id") and item.metadata.get("page"):
                pages.setdefault(item.metadata["doc_id"], set()).add(int(item.metadata["page"]))
        return pages

    def path(self, doc_id: str, now: datetime | None = None) -> list:
        """Where the person stands in each of the document's chapters (study.path.ChapterStanding), in the
        order the guide lists them."""
        if self.rag.get_document(doc_id) is None:
            raise InvalidRequest("That document is not in your library; choose one from the list.", key="err_card_doc_unknown")
        return self._path(doc_id, self._now(now), self.cards(doc_id), self.store.quiz_answers(self.user_id),
                          self._answered_questions(), self.studied_pages())

    def _answered_questions(self) -> list:
        """The person's answered (not refused) questions, as stored: their citations place them in chapters."""
        from memory.types import MemoryType
        return [item for item in self.memory.list([MemoryType.EPISODIC])
                if item.metadata.get("kind") == "qa" and not item.metadata.get("refused")]

    def _path(self, doc_id: str, moment: datetime, cards: list[Card], answers: list, asked: list,
              studied: dict[str, set[int]]) -> list:
        """`path` from what the caller has read already (the report reads it once for every document)."""
        from study.path import Cited, cited_headings, standings
        outline = self.rag.document_outline(doc_id)
        questions = []
        for item in asked:
            places = [Cited(c.get("page_start"), () if c.get("page_start") else cited_headings(outline.outline, c))
                      for c in item.metadata.get("citations") or [] if isinstance(c, dict) and c.get("doc_id") == doc_id]
            if places:
                questions.append(places)
        due = {c.card_id for c in cards if c.due is not None and c.due <= moment}
        return standings(outline.outline.chapters(), cards, answers, questions, studied.get(doc_id, set()), due, moment)

    def progress(self, now: datetime | None = None) -> dict:
        """The study part of the learning report: plain data (see docs/report.schema.json, "study")."""
        from study.mastery import coverage, mastery, review_next
        moment = self._now(now)
        cards = self.cards()
        answers = self.store.quiz_answers(self.user_id)
        concepts = mastery(cards, answers, moment)
        chapters = [(d.doc_id, d.name, c, first, last) for d in self.rag.list_documents()
                    for c, first, last in self.chapter_pages(d.doc_id)]
        studied = self.studied_pages()
        covered = coverage(chapters, studied)
        asked = self._answered_questions()
        due = self.due(moment)
        return {
            "cards": len(cards), "due_now": len(due), "reviews": len(self.store.reviews(self.user_id)),
            "quiz": {"answered": len(answers), "correct": sum(1 for _, ok, _ in answers if ok)},
            "mastery": [{"concept": m.concept, "level": m.level, "score": m.score, "cards": m.cards,
                         "reviews": m.reviews, "quiz_answers": m.quiz_answers} for m in concepts],
            "coverage": [{"doc_id": c.doc_id, "doc_name": c.doc_name, "chapter": c.chapter, "first_page": c.first_page,
                          "last_page": c.last_page, "pages": c.pages, "studied_pages": len(c.studied_pages),
                          "studied": c.studied} for c in covered],
            "chapters": [{"doc_id": d.doc_id, "doc_name": d.name, **standing.to_dict()}
                         for d in self.rag.list_documents()
                         for standing in self._path(d.doc_id, moment, [c for c in cards if c.doc_id == d.doc_id],
                                                    answers, asked, studied)],
            "review_next": [{"card_id": c.card_id, "front": c.front, "concept": c.concept, "doc_name": c.doc_name,
                             "page": c.page, "due": c.due.isoformat() if c.due else None}
                            for c in review_next(due, concepts, cards)],
        }

    # == decks in and out ============================================================================
    def export(self, folder: Path, fmt: str, *, doc_id: str | None = None) -> Path:
        cards = self.cards(doc_id)
        if not cards:
            raise InvalidRequest("There are no cards to export yet.", key="err_export_no_cards")
        folder.mkdir(parents=True, exist_ok=True)
        record = self.rag.get_document(doc_id) if doc_id else None
        name = record.name if record else "all cards"
        stem = re.sub(r"[^\w\-]+", "_", f"cards_{name}")[:80]
        if fmt == "apkg":
            return exchange.write_apkg(cards, folder / f"{stem}.apkg", f"PDF learning assistant::{name}")
        if fmt == "csv":
            return exchange.write_csv(cards, folder / f"{stem}.csv")
        raise InvalidRequest("Export as Anki (.apkg) or CSV.", key="err_export_format")


_HEADING_LINE = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _same_card(front: str, back: str) -> tuple[str, str]:
    """Two cards are the same card when both sides are, ignoring case, character width and spacing (not
    punctuation: "f(x) = x + 1" and "f(x) = x - 1" are two cards)."""
    def side(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return side(front), side(back)


def _note_chunk(text: str, doc_id: str) -> Chunk:
    return Chunk(chunk_id=f"{doc_id}:note", doc_id=doc_id, ordinal=0, text=text, heading_path=[], page_start=None,
                 page_end=None, char_start=0, char_end=len(text), token_count=0)


def _plain_answer(text: str) -> str:
    """An answer as stored in memory, without its citation marks, quote markup and the bold of its short
    answer (a card's back is plain text)."""
    text = re.sub(r"\[\d{1,3}\]|\*\*", "", text)
    text = re.sub(r"^[>\s]+", "", text, flags=re.MULTILINE)
    return re.sub(r"[ \t]+", " ", text).strip()

"""Study features against the real stores: cards made from a generated PDF, a note and an answered
question; FSRS review state that survives a restart; quizzes; Anki/CSV export and import; one
person never sees another's cards; a deleted document takes its cards along."""
from __future__ import annotations

import csv
import dataclasses
import sqlite3
import zipfile
from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler

from assistant.registry import get_assistant
from core.errors import InvalidRequest
from core.settings import Settings
from rag.types import Chunk
from study.cloze import key_sentence_cards
from study.quality import measure
from study.mastery import concept_of
from study.store import close_card_stores, get_card_store
from study.types import BLANK, CLOZE, QA
from tests.browser.pdfgen import make_pdf

START = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)

BOOK = [
    ["# Chapter 1 Tuples",
     "A tuple is a sequence of values that cannot be changed after it is made.",
     "Tuples are compared element by element, starting with the first one.",
     "The values stored in a tuple can be any type, and they are indexed by integers."],
    ["# Chapter 2 Dictionaries",
     "A dictionary is a mapping from keys to values in a Python program.",
     "A previously computed value that is stored for later use is called a memo.",
     "A hash is a function that takes a value of any kind and returns an integer."],
    ["# 2.9 Glossary",
     "lookup: A dictionary operation that takes a key and finds the corresponding value.",
     "implementation: A way of performing a computation in a program."],
]


@pytest.fixture
def library(settings, tmp_path):
    path = tmp_path / "book.pdf"
    path.write_bytes(make_pdf(BOOK))
    alice = get_assistant("alice", settings)
    alice.load_document(path)
    return alice, alice.list_documents()[0]


def _chunk(text: str, heading: list[str], page: int = 1) -> Chunk:
    return Chunk(chunk_id="d:0", doc_id="d", ordinal=0, text=text, heading_path=heading, page_start=page,
                 page_end=page, char_start=0, char_end=len(text), token_count=0)


def test_cloze_cards_blank_the_defined_term_in_english_and_chinese():
    english = key_sentence_cards([_chunk(
        "A tuple is a sequence of values. It is common to use tuples as keys. This is called a “sanity check” because it finds insane results.\n\n"
        "Exercise 1. Write a function that is a sorted list of words.", ["Chapter 12 Tuples"])])
    assert sorted((c.back, c.front) for c in english) == [
        ("sanity check", f"This is called a “{BLANK}” because it finds insane results."), ("tuple", f"A {BLANK} is a sequence of values.")]
    assert all(c.back.lower() not in c.front.lower() for c in english)

    glossary = key_sentence_cards([_chunk("## 12.9 Glossary\n\ntuple: An immutable sequence of elements.\n"
                                          "gather: The operation of assembling a variable-length\nargument tuple.\n",
                                          ["Chapter 12 Tuples"])])
    assert [(c.back, c.front) for c in glossary] == [
        ("tuple", f"{BLANK}: An immutable sequence of elements."),
        ("gather", f"{BLANK}: The operation of assembling a variable-length argument tuple.")]
    chinese = key_sentence_cards([_chunk(
        "版本空间是指所有能够拟合训练集的模型构成的集合。这是一个很长的句子但是没有定义任何东西的内容。"
        "学习器在新样本上的误差，我们称为“泛化误差”。", ["第2章 模型评估与选择"])])
    assert {c.back for c in chinese} == {"版本空间", "泛化误差"}
    assert all(BLANK in c.front and c.back not in c.front for c in chinese)


def test_cards_from_a_chapter_are_sourced_supported_and_not_repeated(library):
    alice, doc = library
    desk = alice.study
    chapters = desk.chapters(doc.doc_id)
    assert "Chapter 2 Dictionaries" in chapters
    made = desk.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START)
    answers = {c.back for c in made.cards}
    assert answers == {"dictionary", "memo", "hash"}, answers
    glossary = desk.cards_from_section(doc.doc_id, "2.9 Glossary", now=START).cards   # its own heading here
    assert {c.back: c.page for c in glossary} == {"lookup": 3, "implementation": 3}
    for card in made.cards + glossary:
        assert card.kind == CLOZE and BLANK in card.front and card.doc_id == doc.doc_id
        assert card.page in (2, 3) and card.back in card.quote and card.due == START
    figures = measure(desk, made.cards + glossary)
    assert figures["supported"] == 1.0 and figures["near_duplicate_share"] == 0.0, figures
    assert figures["languages"] == {"en": 5}
    # the measure can fail: a wrong answer is unsupported by its page, the same answer twice a duplicate
    wrong = [dataclasses.replace(made.cards[0], back="banana"), dataclasses.replace(made.cards[1], back=glossary[0].back)]
    bad = measure(desk, wrong + glossary)
    assert bad["supported"] < 1.0 and bad["near_duplicate_share"] > 0.0, bad

    again = desk.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START)
    assert again.cards == [] and again.duplicates >= len(made.cards) and "already" in again.notice
    pages = desk.cards_from_pages(doc.doc_id, 1, 1, now=START)
    assert {c.back for c in pages.cards} >= {"tuple"} and all(c.page == 1 for c in pages.cards)
    with pytest.raises(InvalidRequest):
        desk.cards_from_section(doc.doc_id, "Chapter 9 Nowhere")
    with pytest.raises(InvalidRequest):
        desk.cards_from_pages(doc.doc_id, 3, 1)


def test_review_follows_fsrs_and_survives_a_restart(library, settings):
    alice, doc = library
    card = alice.study.cards_from_section(doc.doc_id, "Chapter 1 Tuples", now=START).cards[0]
    reference, scheduler = FsrsCard(due=START), Scheduler(enable_fuzzing=False)
    moment = START
    for grade, rating in [("good", Rating.Good), ("good", Rating.Good), ("again", Rating.Again), ("easy", Rating.Easy)]:
        result = alice.study.review(card.card_id, grade, moment)
        reference, _ = scheduler.review_card(reference, rating, moment)
        assert result.due == reference.due
        moment = reference.due            # the person comes back exactly when the card is due
    assert alice.study.due_count(moment - timedelta(seconds=1)) < alice.study.due_count(START + timedelta(days=400))

    with pytest.raises(InvalidRequest):
        alice.study.review(card.card_id, "perfect", moment)
    close_card_stores()                   # a restart: a new connection reads the file afresh
    store = get_card_store(settings.data_dir)
    again = store.get("alice", card.card_id)
    assert again.due == reference.due and again.reviews == 4 and again.lapses == 1
    assert FsrsCard.from_json(again.state).stability == reference.stability
    assert [r[1] for r in store.reviews("alice")] == [3, 3, 1, 4]


def test_a_second_user_sees_none_of_the_first_users_cards(library, settings):
    alice, doc = library
    card = alice.study.cards_from_section(doc.doc_id, "Chapter 1 Tuples", now=START).cards[0]
    bob = get_assistant("bob", settings).study
    assert bob.cards() == [] and bob.due(START + timedelta(days=1)) == [] and bob.due_count(START) == 0
    for attempt in (lambda: bob.card(card.card_id), lambda: bob.review(card.card_id, "good"),
                    lambda: bob.edit_card(card.card_id, "x", "y"), lambda: bob.cards_from_section(doc.doc_id, "Chapter 1 Tuples")):
        with pytest.raises(InvalidRequest):
            attempt()
    assert bob.delete_cards([card.card_id]) == 0 and alice.study.card(card.card_id).front == card.front
    with pytest.raises(InvalidRequest):
        bob.quiz()


def test_quiz_multiple_choice_and_short_answers_are_graded(library):
    alice, doc = library
    desk = alice.study
    assert len(desk.cards_from_pages(doc.doc_id, 2, 3, now=START).cards) == 5
    questions = desk.quiz(doc.doc_id, mode="choice", size=4, seed=3)
    assert len(questions) == 4
    for q in questions:
        assert q.mode == "choice" and len(q.choices) == 4 and q.answer in q.choices and len(set(q.choices)) == 4
    wrong = next(c for c in questions[0].choices if c != questions[0].answer)
    assert desk.answer(questions[0], questions[0].answer).correct
    assert not desk.answer(questions[1], next(c for c in questions[1].choices if c != questions[1].answer)).correct
    assert wrong != questions[0].answer

    short = desk.quiz(doc.doc_id, mode="short", size=5, seed=3)
    memo = next((q for q in short if q.answer == "memo"), None) or short[0]
    assert desk.answer(memo, memo.answer.upper()).correct
    assert not desk.answer(memo, "a completely different thing").correct
    assert len(desk.store.quiz_answers("alice")) == 4
    chapter = desk.quiz(doc.doc_id, heading="Chapter 2 Dictionaries", mode="short", size=10)
    assert sorted(q.answer for q in chapter) == ["dictionary", "hash", "memo"]
    with pytest.raises(InvalidRequest, match="no cards"):
        desk.quiz(doc.doc_id, heading="Chapter 1 Tuples")


def test_short_answers_in_a_sentence_are_judged_by_meaning(library):
    from study.quiz import short_answer_score
    alice, _ = library
    reference = "A value stored so that it does not have to be computed again later"
    assert short_answer_score("a value kept so it need not be computed again", reference, alice.rag.dense) >= 1.0
    assert short_answer_score("the capital city of France", reference, alice.rag.dense) < 1.0
    assert short_answer_score("list", "tuple", alice.rag.dense) < 1.0     # close in meaning, still wrong


def test_export_to_anki_and_csv_and_import_back(library, settings, tmp_path):
    alice, doc = library
    made = alice.study.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START).cards
    apkg = alice.study.export(tmp_path / "out", "apkg")
    with zipfile.ZipFile(apkg) as z:
        (tmp_path / "col.anki2").write_bytes(z.read("collection.anki2"))
    rows = sqlite3.connect(tmp_path / "col.anki2").execute("SELECT flds FROM notes").fetchall()
    assert len(rows) == len(made)
    assert any("{{c1::memo}}" in r[0] and "book.pdf, p. 2" in r[0] for r in rows)

    exported = alice.study.export(tmp_path / "out", "csv")
    with open(exported, encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert {r["back"] for r in table} == {c.back for c in made} and {r["page"] for r in table} <= {"2", "3"}

    carol = get_assistant("carol", settings).study
    imported = carol.import_file(exported, now=START)
    assert {c.back for c in imported.cards} == {c.back for c in made}
    assert all(c.doc_name == "book.pdf" and c.page in (2, 3) for c in imported.cards)
    assert carol.import_file(exported, now=START).cards == []      # the same deck twice adds nothing


def test_anki_plain_text_export_is_imported(settings, tmp_path):
    anki = tmp_path / "anki.txt"
    anki.write_text("#separator:tab\n#html:true\n#tags column:3\n"
                    "What does <b>FSRS</b> schedule?\tReviews<br>of cards\tstudy\n"
                    "The {{c1::hippocampus}} consolidates memories.\t\tbio\n"
                    "only a front\n", encoding="utf-8")
    made = get_assistant("dave", settings).study.import_file(anki, now=START)
    cards = {c.front: c for c in made.cards}
    assert cards["What does FSRS schedule?"].back == "Reviews\nof cards"
    cloze = cards[f"The {BLANK} consolidates memories."]
    assert cloze.back == "hippocampus" and cloze.kind == CLOZE
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InvalidRequest, match="No cards"):
        get_assistant("dave", settings).study.import_file(empty)


def test_cards_from_a_note_and_from_an_answer(library):
    alice, doc = library
    note = alice.add_note("A memo is a computed value kept for later use so it is not computed again.",
                          "memoization", doc_id=doc.doc_id)
    from_note = alice.study.cards_from_note(note.memory_id, now=START)
    assert from_note.cards and all(c.source_ref == note.memory_id and c.doc_id == doc.doc_id for c in from_note.cards)
    assert any(c.kind == QA and "memoization" in c.front and c.back.startswith("A memo") for c in from_note.cards)

    alice.ask_once("What is a hash?")
    turn = next(r for r in alice.recall("") if r.kind == "qa" and r.metadata.get("answer"))
    card = alice.study.cards_from_turn(turn.id, now=START).cards[0]
    assert card.front == "What is a hash?" and "integer" in card.back and card.page == 2
    assert "[1]" not in card.back and "**" not in card.back       # plain text, not the chat's Markdown
    with pytest.raises(InvalidRequest):
        alice.study.cards_from_note(turn.id)


def test_edit_delete_and_a_deleted_document_takes_its_cards(library):
    alice, doc = library
    cards = alice.study.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START).cards
    edited = alice.study.edit_card(cards[0].card_id, "Which word means a stored result?", "memo")
    assert alice.study.card(cards[0].card_id).front == edited.front
    with pytest.raises(InvalidRequest):
        alice.study.edit_card(cards[0].card_id, "", "memo")
    assert alice.study.delete_cards([cards[1].card_id]) == 1
    own = alice.study.add_card("What is my own question?", "my own answer")
    assert alice.delete_document(doc.doc_id)
    left = alice.study.cards()
    assert [c.card_id for c in left] == [own.card_id]


def test_mastery_coverage_and_review_next_reach_the_report(library):
    from assistant.report import build_report, validate_report
    alice, doc = library
    cards = {c.back: c for c in alice.study.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START).cards}
    day = START
    for _ in range(3):                      # "memo" learned well; "hash" learned, then forgotten
        for back in ("memo", "hash"):
            day = max(day, alice.study.card(cards[back].card_id).due)
            alice.study.review(cards[back].card_id, "good", day)
    alice.study.review(cards["hash"].card_id, "again", day)
    question = next(q for q in alice.study.quiz(doc.doc_id, mode="short", size=3, seed=1) if q.answer == "dictionary")
    alice.study.answer(question, "a list")

    report = build_report(alice)
    validate_report(report)
    study = report["study"]
    levels = {m["concept"]: m["level"] for m in study["mastery"]}
    assert levels == {"hash": "weak", "dictionary": "weak", "memo": "strong"}, study["mastery"]
    assert study["quiz"] == {"answered": 1, "correct": 0} and study["reviews"] == 7 and study["cards"] == 3
    chapters = {c["chapter"]: c for c in study["coverage"]}
    assert chapters["Chapter 2 Dictionaries"]["studied"] and chapters["Chapter 2 Dictionaries"]["studied_pages"] == 1
    assert not chapters["Chapter 1 Tuples"]["studied"] and chapters["Chapter 1 Tuples"]["pages"] == 1
    assert study["review_next"] and study["review_next"][0]["concept"] in ("hash", "dictionary")


def test_llm_cards_are_kept_only_when_the_passage_backs_them(llm_settings, fake_llm, tmp_path):
    """The LLM boundary is a real OpenAI-compatible server on loopback (tests/llm_server.py)."""
    path = tmp_path / "book.pdf"
    path.write_bytes(make_pdf(BOOK))
    erin = get_assistant("erin", llm_settings)
    erin.load_document(path)
    doc = erin.list_documents()[0]
    fake_llm.answer = ("Q: How are tuples compared?\nA: Element by element, starting with the first one.\n"
                       "Q: What is the capital of France?\nA: Paris, on the Seine.\n"
                       "Q: Which sequence of values cannot be changed after it is made?\nA: tuple\n"
                       "Q: How many tuples are on the page?\nA: 0\n"
                       "Q: How are rows compared in a SQL database?\nA: Element by element, starting with the first one.\n"
                       "Tuples are great.\nA: yes\n")
    made = erin.study.cards_from_section(doc.doc_id, "Chapter 1 Tuples", now=START)
    assert [(c.kind, c.back) for c in made.cards] == [
        (CLOZE, "tuple"), (QA, "Element by element, starting with the first one.")]
    qa = made.cards[1]
    assert qa.front == "How are tuples compared?" and qa.page == 1 and qa.quote.startswith("Tuples are compared")
    # Paris, "0": nothing on the page backs them; the SQL question: its answer is on the page, but where the
    # page says it, it is not about rows or SQL; "tuple": the cloze card asks it
    assert made.unsupported == 3 and made.duplicates == 1

    fake_llm.mode = "error"
    fallback = erin.study.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START)
    assert fallback.cards and all(c.kind == CLOZE for c in fallback.cards) and "did not answer" in fallback.notice


def test_notes_keep_their_page_refuse_duplicates_and_can_be_edited_and_deleted(library, settings):
    alice, doc = library
    quote = "A previously computed value that is stored for later use is called a memo."
    note = alice.add_note("Memos save recomputation.", "memo", doc_id=doc.doc_id, page=2, quote=quote)
    stored = next(n for n in alice.list_notes() if n.id == note.memory_id)
    assert stored.metadata["page"] == 2 and stored.metadata["quote"] == quote and stored.metadata["doc_id"] == doc.doc_id
    with pytest.raises(InvalidRequest, match="already have this note"):
        alice.add_note("  memos SAVE   recomputation. ", "memo")
    edited = alice.edit_note(note.memory_id, "Memos save recomputing values already computed.")
    assert edited.content.startswith("Memos save recomputing") and edited.metadata["page"] == 2
    assert [n.content for n in alice.recall("recomputing values")][:1] == [edited.content]
    bob = get_assistant("bob", settings)
    for attempt in (lambda: bob.edit_note(note.memory_id, "mine now"), lambda: bob.delete_note(note.memory_id)):
        with pytest.raises(InvalidRequest):
            attempt()
    assert alice.delete_note(note.memory_id) and all(n.id != note.memory_id for n in alice.list_notes())
    with pytest.raises(InvalidRequest):
        alice.edit_note(note.memory_id, "gone")


def test_the_local_model_writes_question_cards_the_chapter_backs(tmp_path, local_model_dir):
    """The packaged local model writes question/answer cards for a chapter; each one kept quotes the sentence
    of the chapter that backs it (the browser review flow runs without a model: this is the model's part)."""
    s = Settings(_env_file=None, data_dir=tmp_path / "data", llm_backend="local", llm_model_dir=local_model_dir)
    path = tmp_path / "book.pdf"
    path.write_bytes(make_pdf(BOOK))
    alice = get_assistant("alice", s)
    alice.load_document(path)
    doc = alice.list_documents()[0]
    # the model samples (temperature 0.2): a card it writes may fail the check, so each chapter gets its turn
    made = [alice.study.cards_from_section(doc.doc_id, heading, now=START)
            for heading in ("Chapter 1 Tuples", "Chapter 2 Dictionaries")]
    written = [c for m in made for c in m.cards if c.kind == QA]
    assert written, [(m.notice, m.unsupported, [c.front for c in m.cards]) for m in made]
    book = " ".join(line for page in BOOK for line in page)
    for card in written:
        assert card.front.rstrip().endswith("?") and card.back and card.quote in book


def test_each_chapter_shows_where_the_person_stands(library):
    """The path through a book (study.path): a chapter's pages studied, questions answered from it, its cards and
    those due, quiz answers and mastery move with what the person does in that chapter, and no other."""
    from assistant.report import build_report, validate_report
    alice, doc = library
    desk = alice.study
    before = {s.title: s for s in desk.path(doc.doc_id, START)}
    assert list(before) == ["Chapter 1 Tuples", "Chapter 2 Dictionaries"]
    assert all((s.cards, s.questions, s.pages_studied, s.quiz_answered, s.level) == (0, 0, 0, 0, "new")
               for s in before.values())

    made = desk.cards_from_section(doc.doc_id, "Chapter 2 Dictionaries", now=START).cards
    answer = list(alice.ask("What is a memo?"))[-1]
    assert not answer.refused and answer.citations[0].page_start == 2
    desk.review(made[0].card_id, "good", START)
    quiz = desk.quiz(doc.doc_id, mode="short", size=1, seed=1)
    desk.answer(quiz[0], quiz[0].answer)

    after = {s.title: s for s in desk.path(doc.doc_id, START + timedelta(minutes=1))}
    second = after["Chapter 2 Dictionaries"]
    assert second.cards == len(made) >= 2 and second.questions == 1 and second.pages_studied == 1 == second.pages
    assert second.quiz_answered == second.quiz_correct == 1
    assert second.score is not None and second.level in ("learning", "strong")
    assert second.due == len(made) - 1                     # the reviewed card waits for its next day
    first = after["Chapter 1 Tuples"]
    assert (first.cards, first.questions, first.pages_studied, first.quiz_answered, first.level) == (0, 0, 0, 0, "new")
    # the chapter's cards by concept (what the guide shows beside its key terms), every card counted once
    assert sum(c["cards"] for c in second.concepts) == len(made) and first.concepts == []
    assert sum(c["due"] for c in second.concepts) == second.due
    assert {c["concept"] for c in second.concepts} == {concept_of(c) for c in made}

    report = build_report(alice)
    validate_report(report)
    rows = [r for r in report["study"]["chapters"] if r["doc_id"] == doc.doc_id]
    assert [r["title"] for r in rows] == ["Chapter 1 Tuples", "Chapter 2 Dictionaries"]
    assert rows[1]["questions"] == 1 and rows[1]["cards"] == len(made) and rows[0]["level"] == "new"
    assert [(c["concept"], c["cards"]) for c in rows[1]["concepts"]] == [(c["concept"], c["cards"]) for c in second.concepts]


def test_a_book_under_one_title_offers_its_guide_chapters_for_cards(settings, tmp_path):
    """A Markdown book's "# Title" is its only top-level heading: its guide's chapters are offered too, so "Study
    this chapter" in the guide and "make cards from a chapter" in Review name the same chapters."""
    from tests.test_shapes import BOOK as MARKDOWN_BOOK
    path = tmp_path / "python.md"
    path.write_text(MARKDOWN_BOOK, encoding="utf-8")
    alice = get_assistant("alice", settings)
    alice.load_document(path)
    doc = alice.list_documents()[0]
    chapters = alice.study.chapters(doc.doc_id)
    assert chapters == ["Learning Python", "Chapter 1 Values and variables", "Chapter 2 Lists and tuples",
                        "Chapter 3 Files"]
    made = alice.study.cards_from_section(doc.doc_id, "Chapter 2 Lists and tuples", now=START)
    assert made.cards and all("Chapter 2 Lists and tuples" in c.section for c in made.cards)
    quiz = alice.study.quiz(doc.doc_id, heading="Chapter 2 Lists and tuples", size=3, seed=1)
    assert quiz and {q.card_id for q in quiz} <= {c.card_id for c in made.cards}

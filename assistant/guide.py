"""A document's study guide: its outline, a cited summary and the key terms of each chapter, and questions the
book answers.

Everything is read off what the answer path already has: the heading tree (rag.outline), each chapter's digest
(rag.summary, cached per process by RAGTool.digest) shown as a summary answer (rag.shapes), the digest's key
terms with the sentence that defines each. Suggested questions (assistant.guide_questions) are asked through
the normal answer path with no model — the way every learner can be answered — and only those not refused are
kept; the checked questions are kept in the document store's summaries table, so a guide opened again is built
without asking anything.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from assistant.guide_questions import (MAX_SUGGESTED, PHRASINGS_VERSION, SectionRef, candidate_questions,
                                      compared_pair, document_label)
from core.errors import DocumentError
from rag.outline import Outline, OutlineNode, chunks_under, heading_text
from rag.scope import Scope
from rag.shapes import summary_answer
from rag.summary import skipped_section
from rag.types import Citation

log = logging.getLogger(__name__)


@dataclass
class GuideSection:
    title: str                          # the heading as the book writes it ("2.1 Lists")
    number: str | None
    page_start: int | None
    page_end: int | None
    place: Citation | None = None       # its first passage: what opens its page (or, without pages, the section)


@dataclass
class GuideTerm:
    term: str
    definition: str                     # the book's sentence that defines it
    page: int | None


@dataclass
class GuideChapter:
    title: str
    number: str | None
    page_start: int | None
    page_end: int | None
    sections: list[GuideSection]
    summary: str                        # each section's key sentence, cited [n] (Markdown, the book's own words)
    citations: list[Citation]
    terms: list[GuideTerm]
    questions: list[str] | None = None  # checked suggested questions; None while not yet checked
    place: Citation | None = None       # its first passage, as a section's


@dataclass
class DocumentGuide:
    doc_id: str
    name: str
    title: str
    language: str                       # "en" | "zh": the document's, which its questions are in
    chapters: list[GuideChapter] = field(default_factory=list)

    @property
    def checked(self) -> bool:
        return all(c.questions is not None for c in self.chapters)


def guide_stages(rag, doc_id: str) -> Iterator[DocumentGuide]:
    """The guide at once (the questions already checked, from the store), then again after each chapter whose
    questions had to be checked: a first open shows the outline and summaries while the questions are asked."""
    record = rag.get_document(doc_id)
    if record is None:
        raise DocumentError("This document has been removed, so it has no guide.", key="err_doc_removed_guide")
    outline = rag.document_outline(doc_id)
    zh = outline.language == "zh"
    method = _cache_method(outline.language, rag.settings.answer_min_support)
    guide = DocumentGuide(doc_id, record.name, record.title, outline.language)
    nodes = outline.outline.chapters()
    for node in nodes:
        guide.chapters.append(_chapter(rag, record, node, zh, outline.outline))
    pending = []
    for node, chapter in zip(nodes, guide.chapters):
        chapter.questions = _cached_questions(rag, doc_id, node, method)
        if chapter.questions is None:
            pending.append((node, chapter))
    yield guide
    if not pending:
        return
    checker = rag.without_model()
    for node, chapter in pending:
        chapter.questions = _checked_questions(checker, chapter, node, outline.language, record)
        rag.store.put_summary(rag.user_id, doc_id, _cache_scope(node), method,
                              json.dumps(chapter.questions, ensure_ascii=False))
        yield guide


def document_guide(rag, doc_id: str) -> DocumentGuide:
    """The whole guide, every chapter's questions checked."""
    guide = None
    for guide in guide_stages(rag, doc_id):
        pass
    return guide


def _chapter(rag, record, node: OutlineNode, zh: bool, outline: Outline) -> GuideChapter:
    digest = rag.digest(Scope(record.doc_id, record.name, node=node), record)
    # the key terms are shown as a glossary of their own, not as the summary's last line
    answer = summary_answer("", dataclasses.replace(digest, terms=[]), record.name, record.title, zh=zh)
    head, _, body = answer.text.partition("\n\n")
    terms = [GuideTerm(term, _definition(term, sentence.text), sentence.page) for term, sentence in digest.terms]
    sections = [GuideSection(child.title, child.number, child.page_start, child.page_end,
                             _place(child, outline, record)) for child in node.children]
    return GuideChapter(node.title, node.number, node.page_start, node.page_end, sections, body or head,
                        answer.citations, terms, place=_place(node, outline, record))


# How much of a heading's first passage stands for it: enough to find it again on its page or in its section.
PLACE_QUOTE_CHARS = 160


def _place(node: OutlineNode, outline: Outline, record) -> Citation | None:
    """The first passage under a heading as a citation, so that the guide's outline opens where it starts."""
    for piece in chunks_under(node, outline):
        text = " ".join(piece.text.split())
        if text:
            return Citation(n=0, doc_id=record.doc_id, doc_name=record.name, page_start=piece.page_start,
                            page_end=piece.page_start, chunk_id=piece.chunk_id, score=0.0,
                            quote=text[:PLACE_QUOTE_CHARS])
    return None


def _definition(term: str, sentence: str) -> str:
    """The sentence that defines a term, without the term in front of it when a glossary wrote it so
    ("tuple: An immutable sequence" -> "An immutable sequence"): the guide shows the term beside it."""
    head = f"{term}:"
    return sentence[len(head):].strip() if sentence.startswith(head) and sentence[len(head):].strip() else sentence


def _section_refs(node: OutlineNode) -> list[SectionRef]:
    """The chapter's sections a question may name: not its exercises, glossary or references."""
    return [SectionRef(child.number, heading_text(child.title)) for child in node.children
            if not skipped_section(child.title)]


def _checked_questions(checker, chapter: GuideChapter, node: OutlineNode, language: str, record) -> list[str]:
    """The chapter's candidate questions that the answer path (no model) answers from this document (the
    record's), at most MAX_SUGGESTED."""
    kept = []
    pair = compared_pair([(t.term, t.definition) for t in chapter.terms])
    for question in candidate_questions(language, [t.term for t in chapter.terms], _section_refs(node), pair,
                                        SectionRef(node.number, heading_text(node.title)),
                                        document_label(record.name, record.title),
                                        {t.term: t.definition for t in chapter.terms}):
        answer = checker.ask(question, mqe=False, hyde=False)
        if answer is not None and not answer.refused and any(c.doc_id == record.doc_id for c in answer.citations):
            kept.append(question)
        else:
            log.info("guide: %r is refused or answered from another document, not suggested", question)
        if len(kept) >= MAX_SUGGESTED:
            break
    return kept


def _cache_scope(node: OutlineNode) -> str:
    return json.dumps({"guide_questions": list(node.path)}, ensure_ascii=False)


def _cache_method(language: str, min_support: float) -> str:
    """What a check depends on: the phrasings, the language, and how much support an answer needs."""
    return f"guide-questions:{PHRASINGS_VERSION}:{language}:{min_support}"


def _cached_questions(rag, doc_id: str, node: OutlineNode, method: str) -> list[str] | None:
    text = rag.store.get_summary(rag.user_id, doc_id, _cache_scope(node), method)
    return json.loads(text) if text is not None else None

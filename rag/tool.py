"""RAGTool: the document side of the assistant for one user — ingest, list, remove, search, ask.

Typed methods do the work; `execute(action, **kwargs)` is the thin dispatcher agents call.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import re
import shutil
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from core.embeddings import get_embedder, get_multilingual_embedder
from core.errors import AssistantError, DocumentError, InvalidRequest, LLMError, Notice
from core.llm import get_judge, get_llm
from core.nlp import has_verb, names_a_compound
from core.registry import ProcessRegistry
from core.settings import Settings, get_settings
from core.text import (CJK_CHAR, chinese_slip_for, clean_document_name, could_be_a_slip, detect_language,
                       other_language_words, search_tokens, with_words_replaced, written_in)
from core.vectors import get_vector_store
from rag import prompts
from rag.answer import (Source, add_book_answer, add_supporting_quote, attribute_uncited, citation_for,
                        drop_unsupported, evidence_citations, extractive_answer, focused_sources, has_words, refusal,
                        says_not_found, stream_composed_answer, whole_chunk_sources, without_echo)
from rag.compare import comparison_sides, sets_against, side_context, states_the_difference
from rag.abbreviations import spell_out
from rag.focus import search_focus
from rag.evidence import (Evidence, QuestionTerms, discount_document_names, discount_statement_names, in_entry_of,
                          evidence_strength, off_in_history, paragraph_span, question_weights, score_evidence,
                          split_units, unit_heading_paths, units_after, unknown_words)
from rag.chunk import chunk_document, document_context, embedding_text
from rag.dense import DenseSpaces, Progress
from rag.figures import extract_figures, figures_dir, load_figures, remove_figures, save_figures
from rag.ocr import remove_ocr_lines, save_ocr_lines
from rag.reconcile import ReconcileReport, process_identity, reconcile_once
from rag.outline import Outline, OutlineNode, build_outline, chunks_under, heading_text
from rag.parts import paired_parts, part_query
from rag.plan import QuestionPlan, plan_question
from rag.retrieve import RAG_COLLECTION, RetrievalOptions, RetrievalResult, Retriever, document_scores
from rag.scope import TOPIC_MIN_MATCH, Scope, headings_language, title_extra, topic_match
from rag.shapes import Shape, compare_answer, hit_of, shape_of, summary_answer
from rag.worked import opens_with, widened
from rag.store import MAX_COUNTED_TERMS, DocumentRecord, DocumentStore
from rag.summary import Digest, digest_chapters, digest_chunks, digest_node
from rag.syntax import writes_symbols
from rag.support import check as support_check
from rag.translated_lead import (cleaned_translation, lead_to_translate, needs_translation, translation_holds,
                                 with_translated_lead)
from rag.types import CITATION_MARK, Answer, Chunk, ConvertedDocument, IngestResult, SearchHit, SourcesEvent

log = logging.getLogger(__name__)

_doc_stores: ProcessRegistry[DocumentStore] = ProcessRegistry()


@dataclasses.dataclass
class DocumentOutline:
    """A document's outline (rag.outline), its language and its chunks, read once per process."""
    outline: Outline
    language: str
    chunks: list[Chunk]
    digests: dict = dataclasses.field(default_factory=dict)   # scope (node path, pages) -> its Digest (rag.summary)


OUTLINES_KEPT = 16
# a comparison's side titling more sections than this is a common word of the library's headings, not one place
TITLED_SECTIONS_MAX = 3
_outlines: OrderedDict[tuple, DocumentOutline] = OrderedDict()
_outlines_lock = threading.Lock()


def _mentions(text: str, side: str, every_word: bool = False) -> bool:
    """Whether a unit names one side of a comparison (a Chinese side by its characters, an English one by its
    words' stems, in a text of either language: "Layer Norm" in a Chinese sentence). Named literally only: a unit
    in another language taken as naming any side let an English code line lead a Chinese comparison; a side's
    own retrieval still finds it when nothing else does. `every_word`: stopwords count too, for sides told apart
    only by them ("Architecture: any" does not name "Architecture: all")."""
    if re.search(r"[\u4e00-\u9fff]", side):      # spaces aside: a book writes "选项 1" where a learner types 选项1
        return _WHITESPACE.sub("", side) in _WHITESPACE.sub("", text)
    words = search_tokens(side, keep_stopwords=every_word)
    found = set(search_tokens(text, keep_stopwords=every_word))
    stems = {w.rstrip("s") for w in found}
    return bool(words) and all(w in found or w.rstrip("s") in stems for w in words)


def _names_in_passing(text: str, side: str) -> bool:
    """Whether a unit names a side (`_mentions`), or its name without the kind of thing it is ("center 环境" in
    "center 等环境 会在上下文产生一个额外间距"): in a sentence naming every side, the book may put words between or
    leave the kind out, which a side's own passage, where "center" alone may be a table's word, may not."""
    if _mentions(text, side):
        return True
    named = _NAME_AND_KIND.match(side.strip())
    return bool(named and re.search(rf"(?<!\w){re.escape(named['name'])}(?!\w)", text))


def _pair_names_all(evidence: Evidence, names: list[tuple[str, ...]]) -> bool:
    """Whether the unit and the sentence after it in the same paragraph name one side each, together every side, and
    one of them sets them against each other (rag.compare.sets_against)."""
    def named(sentence: str) -> set[int]:
        return {k for k, side in enumerate(names) if any(_names_in_passing(sentence, n) for n in side)}

    if evidence.unit.kind != "sentence":
        return False
    first = evidence.unit.text
    in_first = named(first)
    if not in_first or len(in_first) == len(names):     # names no side, or every side on its own
        return False
    text = evidence.hit.chunk.text
    following = units_after(evidence.unit, text, evidence.hit.chunk.context_prefix)[:1]
    if not following or following[0].kind != "sentence" or "\n\n" in text[evidence.unit.end:following[0].start]:
        return False
    second = following[0].text
    in_second = named(second)
    return len(in_first | in_second) == len(names) > len(in_second) and (sets_against(first) or sets_against(second))


# A side's sentence that opens with its name says what the side is or does ("瘦客户端的主要优点是…"); one naming it further
# in may be about something else ("It should be run immediately after upsdrvctl …" is about upsd). Among the units
# scored within this much of the side's best, the first opening with its name goes first.
SIDE_OPENING_MARGIN = 0.1
_LABEL_OPENING = re.compile(r"^[^:：。.!?]{1,40}[:：]\s")      # a glossary entry's "term: …"


def _opening_with_name_first(named: list[Evidence], names: list[str], others: list[str]) -> list[Evidence]:
    """A sentence about the side only: not one naming another side too ("XeTEX 和 LuaTEX 可以使用…"), nor a glossary
    entry ("prototype and patch: A development plan …"), which the entries' own rule places."""
    def opens_with_the_side(text: str) -> bool:       # "瘦客户端服务器…" names a server, not 瘦客户端
        return any(opens_with(text, (name,)) and not names_a_compound(text, name) for name in names)

    def about_the_side(e: Evidence) -> bool:
        text = e.unit.text
        return e.unit.kind == "sentence" and opens_with_the_side(text) and not _LABEL_OPENING.match(text) and \
            not any(_mentions(text, other) for other in others)
    if not named or opens_with_the_side(named[0].unit.text):
        return named
    best = named[0].score
    opening = next((e for e in named if e.score >= best - SIDE_OPENING_MARGIN and about_the_side(e)), None)
    return named if opening is None else [opening] + [e for e in named if e is not opening]


def _entry_names(evidence: Evidence, side: str) -> bool:
    """Whether the unit belongs to the entry of a side written in symbols that explains it in more than one sentence:
    "When the expansion occurs within double quotes, it expands to a single word" in the paragraph "* ($*) Expands to
    the positional parameters …". A one-line entry of a summary list (":= expression specifies a value assigned to
    the parameter;") glosses the side; the section explaining it ("The assign (:=) attribute …") says more."""
    text = evidence.hit.chunk.text
    if not in_entry_of(text, evidence.unit.start, side):
        return False
    begin, end = paragraph_span(text, evidence.unit.start)
    return len(split_units(text[begin:end])) > 1


_WORDS_ONLY = re.compile(r"[\w\s\-]+")
_WHITESPACE = re.compile(r"\s+")
# a comparison side that is a name in Latin letters and the kind of thing it is: "center 环境", "\centering 命令"
_NAME_AND_KIND = re.compile(r"^(?P<name>[A-Za-z\\][\w\\\-.]*)\s*(?:环境|命令|宏包|函数|选项|参数|变量|文件|模式|语句|"
                            r"程序|工具|软件包|包|类|方法|属性)$")


class SideEvidence(NamedTuple):
    """A comparison's evidence: each side's own (searched on its own), in the question's order, and the units of the
    question's evidence that name every side."""
    each: tuple[list[Evidence], ...]
    naming_all: list[Evidence]


_translations: OrderedDict[tuple[str, str], str | None] = OrderedDict()
# Raw cosines of a topic and headings across languages run close (multilingual-e5-small: "support vector machines"
# 0.84 to 支持向量机, 0.80 to the next); the right heading led by >= 0.02 in 13 of 24 topics tried on the pumpkin
# book and Think Python, a wrong one never did
TOPIC_ACROSS_MARGIN = 0.02
QUOTED_WORDS_FOR_TRANSLATION = 2   # quoted words of the other language, held only by its books, that make a question
MAX_QUOTED_WORDS_READ = 6          # about such a book (the first few looked up)
MAX_TRANSLATED_WORDS = 3           # unknown words translated one by one (a model call each)
EARLY_SOURCES = 5                  # passages shown while a question waits for the model to translate it
PART_KINDS = ("lookup", "explain", "why", "howto", "example")   # kinds whose two asks are answered part by part


def _without_scope_phrase(question: str, plan: QuestionPlan) -> str:
    """The question without the chapter, section or pages it names by number once they are found ("the DocWhile
    example in chapter 8" is searched there): passages inside say "DocWhile", not "chapter 8", and the phrase's words
    would count against them. A scope named by its subject keeps its words, which say what is asked."""
    phrase = plan.request.phrase.strip()
    if plan.scope is None or not phrase or plan.request.topic or phrase not in question:
        return question
    rest = re.sub(r"\s+", " ", question.replace(phrase, " ")).strip(" ,，")
    return rest if search_tokens(rest) else question


def _first_line(reply: str) -> str:
    """A one-term reply without its quotes, full stop or anything after its first line."""
    lines = reply.strip().strip('"“”。.').splitlines()
    return lines[0].strip() if lines else ""


def _best_of(*lists: list[Evidence]) -> list[Evidence]:
    """Units scored twice (for the question and for its translation), each at its better score, best first."""
    best: dict[tuple[str, int], Evidence] = {}
    for evidence in lists:
        for ev in evidence:
            key = (ev.hit.chunk.chunk_id, ev.unit.start)
            if key not in best or ev.score > best[key].score:
                best[key] = ev
    return sorted(best.values(), key=lambda ev: -ev.score)


def _interleaved(*lists: list[Evidence]) -> list[Evidence]:
    """The lists' items taken in turns, each unit once: a comparison's sources show both sides."""
    out, seen = [], set()
    for group in zip(*[lst + [None] * (max(map(len, lists)) - len(lst)) for lst in lists]):
        for ev in group:
            if ev is not None and (ev.hit.chunk.chunk_id, ev.unit.start) not in seen:
                seen.add((ev.hit.chunk.chunk_id, ev.unit.start))
                out.append(ev)
    return out


def _checked_text(text: str, passages: dict[int, str], embedder, judge, notices: list, zh: bool) -> str:
    """A composed text with the sentences their cited passages do not back left out (rag.support)."""
    kept, dropped = [], 0
    for sentence in re.split(r"(?<=[.!?。！？])\s*", text):
        cited = [int(n) for n in CITATION_MARK.findall(sentence) if int(n) in passages]
        claim = CITATION_MARK.sub("", sentence).strip()
        if not claim:
            continue
        if cited and any(support_check(claim, passages[n], embedder, judge).supported for n in cited):
            kept.append(sentence.strip())
        else:
            dropped += 1
    if dropped:
        notices.append(Notice(prompts.DROPPED_NOTICE_ZH.format(n=dropped) if zh else
                              prompts.DROPPED_NOTICE.format(n=dropped), key="notice_dropped", n=dropped))
    return " ".join(kept)


def _shaped_extractive(question: str, evidence: list[Evidence], shape: Shape) -> Answer:
    """The document's own sentences in the shape's layout (rag.answer.extractive_answer)."""
    return extractive_answer(question, evidence, max_quotes=shape.max_quotes, budget=shape.budget,
                             lead_sentences=shape.lead_sentences, worked_chars=shape.worked_chars,
                             from_opening=shape.kind == "example", from_first_step=shape.from_first_step)


def searched_text(question: str) -> str:
    """What retrieval and the evidence check read: the question without instructions about the answer's form
    ("round to two decimal places", rag.focus), its financial abbreviations spelled out (rag.abbreviations)."""
    return spell_out(search_focus(question))


def get_document_store(settings: Settings) -> DocumentStore:
    path = settings.data_dir.resolve() / "documents.sqlite"
    return _doc_stores.get(str(path), lambda: DocumentStore(path))


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:24]


def remove_stored_file(path: str | Path) -> None:
    """A stored document file and what was saved beside it (OCR lines, figures)."""
    Path(path).unlink(missing_ok=True)
    remove_ocr_lines(path)
    remove_figures(figures_dir(path))


# A packaged local model's overview over a summary's sections: its sentences cite nothing and the support check
# left out every one (0 of 13 learner-set summaries and 0 of 10 in bench/answer.py kept a sentence), so the person
# watched 3-5 s of text appear and vanish. A summary is then the sections in the book's own words; an endpoint's
# overview, which cites, is still written and checked.
LOCAL_MODEL_OVERVIEWS = False


class RAGTool:
    def __init__(self, user_id: str = "default", settings: Settings | None = None):
        if not user_id or not str(user_id).strip():
            raise InvalidRequest("A user id is required.")
        self.user_id = str(user_id)
        self.settings = settings or get_settings()
        # The vector store first: in local mode it takes the data folder's process lock, so a second process is
        # refused in one sentence before it touches SQLite (a first process stopped mid-write holds that lock).
        self.vectors = get_vector_store(self.settings)
        self.store = get_document_store(self.settings)
        self.embedder = get_embedder(self.settings)
        self.dense = DenseSpaces(self.vectors, self.user_id, RAG_COLLECTION, self.embedder,
                                 get_multilingual_embedder(self.settings))
        self.llm = get_llm(self.settings)
        self._terms: dict[tuple[str, str], tuple[str, ...]] = {}   # (word, language): the model's ways to write it
        # by question: its unknown words this library holds in the other language, and those it does not
        self.word_lookups: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._judge: list = []          # the support judge (core.llm.get_judge), made on the first composed answer
        self.retriever = Retriever(self.settings, self.store, self.dense, self.llm)
        self.collection = self.dense.main.collection
        self.files_dir = self.settings.data_dir / "files" / self.collection
        # What a crash left (rag.reconcile), removed before this user's first search; None: done before.
        self.reconciled: ReconcileReport | None = reconcile_once(self.store, self.dense, self.files_dir,
                                                                 self.user_id)

    # -- documents -----------------------------------------------------------------------------
    def add_document(self, path: str | Path, name: str | None = None,
                     progress: Progress | None = None) -> IngestResult:
        """Convert, chunk, embed and index one file. The same content twice is stored once.
        `progress(stage, done, total)` hears of each stage as it goes (e.g. "embed", 128, 752)."""
        from rag.convert import convert_file  # heavy imports (MarkItDown) only when ingesting
        path = Path(path)
        name = clean_document_name(name, fallback=path.name)
        if not path.is_file():
            raise DocumentError(f"'{name}' was not found; check the path and try again.",
                                key="err_file_not_found", name=name)
        size = path.stat().st_size
        if size > self.settings.max_upload_mb * 1024 * 1024:
            raise DocumentError(f"'{name}' is {size / 2**20:.0f} MB, over the {self.settings.max_upload_mb} MB limit; "
                                "split it into parts and upload those.",
                                key="err_file_too_large", name=name, mb=f"{size / 2**20:.0f}",
                                limit=self.settings.max_upload_mb)
        started = time.perf_counter()
        doc_id = file_digest(path)
        existing = self.store.get_document(self.user_id, doc_id)
        if existing:
            return IngestResult(doc_id, existing.name, existing.title, existing.pages, existing.chunks,
                                time.perf_counter() - started, already_present=True, warnings=existing.warnings)
        stages: dict[str, float] = {}
        t = time.perf_counter()
        try:
            converted = convert_file(path, progress=progress, ocr_max_pages=self.settings.ocr_max_pages,
                                     settings=self.settings)
        except AssistantError:
            raise
        except Exception as exc:  # noqa: BLE001 - a converter bug must not crash the app
            log.exception("converting %s failed", path)
            raise DocumentError(f"'{name}' could not be read ({type(exc).__name__}); the file may be damaged.",
                                key="err_file_unreadable", name=name) from exc
        stages["convert"] = time.perf_counter() - t
        source_format = converted.source_format or path.suffix.lstrip(".").lower()
        return self._index(doc_id, name, converted, source_format, size, started, stages, source_file=path,
                           progress=progress)

    def add_text(self, text: str, title: str = "note", name: str | None = None) -> IngestResult:
        """Index Markdown / plain text given directly (e.g. pasted notes)."""
        if not text or not text.strip():
            raise InvalidRequest("The text is empty; there is nothing to add.", key="err_text_empty")
        started = time.perf_counter()
        doc_id = hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
        name = clean_document_name(name, fallback=f"{title}.md")
        existing = self.store.get_document(self.user_id, doc_id)
        if existing:
            return IngestResult(doc_id, existing.name, existing.title, existing.pages, existing.chunks,
                                time.perf_counter() - started, already_present=True)
        converted = ConvertedDocument(markdown=text, title=title, source_format="text")
        return self._index(doc_id, name, converted, "text", len(text.encode("utf-8")), started, {})

    def _index(self, doc_id: str, name: str, converted: ConvertedDocument, source_format: str, size: int,
               started: float, stages: dict[str, float], source_file: Path | None = None,
               progress: Progress | None = None) -> IngestResult:
        t = time.perf_counter()
        chunks = chunk_document(converted, doc_id, size=self.settings.chunk_size, overlap=self.settings.chunk_overlap)
        stages["chunk"] = time.perf_counter() - t
        if not chunks:
            raise DocumentError(f"'{name}' contains no text to index; if it is a scan, use a PDF with a text layer.",
                                key="err_no_text_to_index", name=name)
        title = converted.title or Path(name).stem
        context = document_context(name, title)
        index_texts = [embedding_text(context, c.heading_path, c.text, c.context_prefix) for c in chunks]
        # Registered before any file or vector is written, cleared with the rows' commit: until then
        # rag.reconcile keeps what this ingest writes while its process lives, and removes it after a crash.
        ingest_id = self.store.begin_ingest(self.user_id, doc_id, process_identity())
        try:
            return self._write(ingest_id, doc_id, name, title, converted, source_format, size, chunks, index_texts,
                               started, stages, source_file, progress)
        finally:
            self.store.end_ingest(ingest_id)

    def _write(self, ingest_id: str, doc_id: str, name: str, title: str, converted: ConvertedDocument,
               source_format: str, size: int, chunks: list, index_texts: list[str], started: float,
               stages: dict[str, float], source_file: Path | None, progress: Progress | None) -> IngestResult:
        """Stored file and figures, then vectors, then the rows in one transaction (last: the document
        exists from then on); on failure, whatever was written is removed."""
        t = time.perf_counter()
        stored_file = None
        if source_file is not None:
            stored_file = self.settings.path("files", self.collection, f"{doc_id}{source_file.suffix.lower()}")
            shutil.copyfile(source_file, stored_file)
            save_ocr_lines(stored_file, converted.ocr_lines)   # to highlight quotes on scanned pages
            if source_format == "pdf":
                self._save_figures(stored_file, doc_id, name, progress)
        stages["store_file_and_figures"] = time.perf_counter() - t
        t = time.perf_counter()
        ids = [c.chunk_id for c in chunks]
        written: list = []
        try:
            self.dense.index(ids, index_texts, [{"doc_id": doc_id, "page_start": c.page_start, "page_end": c.page_end}
                                                for c in chunks], progress, written=written)
            stages["embed"] = time.perf_counter() - t
            t = time.perf_counter()
            record = DocumentRecord(doc_id, name, title, str(stored_file) if stored_file else None, source_format,
                                    converted.page_count, len(chunks), size, converted.warnings, time.time())
            self.store.add_document(self.user_id, record, chunks, ingest_id=ingest_id)
        except sqlite3.IntegrityError:
            # The same document was ingested concurrently; that copy won, ours must leave no trace.
            # (Point ids are derived from chunk ids, so its vectors are the ones we just wrote again.)
            existing = self.store.get_document(self.user_id, doc_id)
            return IngestResult(doc_id, name, title, existing.pages if existing else converted.page_count,
                                len(chunks), time.perf_counter() - started, already_present=True)
        except Exception:
            log.exception("indexing %s failed; rolling back", name)
            # A concurrent ingest of the same file may have committed meanwhile: its vectors and stored
            # file are the very ones written here (same ids, same path), so they stay.
            if self.store.get_document(self.user_id, doc_id) is None:
                self.dense.remove(written)
                if stored_file:
                    remove_stored_file(stored_file)
            raise
        stages["index"] = time.perf_counter() - t
        return IngestResult(doc_id, name, title, converted.page_count, len(chunks), time.perf_counter() - started,
                            warnings=converted.warnings, stage_seconds=stages)

    def _save_figures(self, stored_pdf: Path, doc_id: str, name: str, progress: Progress | None) -> None:
        """Figures of the PDF (image, caption, the words in it) beside the stored file; a figure that
        cannot be read costs that figure, never the document."""
        try:
            save_figures(figures_dir(stored_pdf), doc_id, extract_figures(stored_pdf, progress=progress))
        except Exception:  # noqa: BLE001
            log.exception("extracting the figures of %s failed; the document is indexed without them", name)

    def figures(self, doc_id: str) -> list[dict]:
        """The saved figures of a PDF document ({"page", "caption", "label", "text", "bbox", "path", …})."""
        record = self.store.get_document(self.user_id, doc_id)
        if record is None or not record.file_path:
            return []
        return load_figures(figures_dir(record.file_path))

    def list_documents(self) -> list[DocumentRecord]:
        return self.store.list_documents(self.user_id)

    def get_document(self, doc_id: str) -> DocumentRecord | None:
        return self.store.get_document(self.user_id, doc_id)

    def remove_document(self, doc_id: str) -> bool:
        """Remove a document: its cached embeddings, then its rows and BM25 entries (one transaction: from
        then on it is gone for every reader), then its vectors and stored file (+ OCR lines, figures).
        A crash midway leaves only orphans, which rag.reconcile removes. False if it was not there."""
        record = self.store.get_document(self.user_id, doc_id)
        if record is None:
            return False
        # The cache is keyed by text, so it can only be cleaned while the chunks are known, and cleaning
        # it early is harmless: the document still works, its vectors are in Qdrant.
        self.dense.forget_cached(self._embedded_texts(record))
        if not self.store.remove_document(self.user_id, doc_id):
            return False
        self.dense.delete_document(doc_id)
        if record.file_path:
            remove_stored_file(record.file_path)
        return True

    def _embedded_texts(self, record: DocumentRecord) -> list[str]:
        """Every text of the document an embedder may have cached: each chunk as indexed, and its answer
        units (rag.evidence embeds them, with and without the chunk's table context)."""
        context = document_context(record.name, record.title)
        texts: list[str] = []
        for chunk in self.store.chunks_of(self.user_id, record.doc_id):
            texts.append(embedding_text(context, chunk.heading_path, chunk.text, chunk.context_prefix))
            texts += [u.text[:1000] for u in split_units(chunk.text, chunk.context_prefix)]
            texts += [u.text[:1000] for u in split_units(chunk.text)]
        return list(dict.fromkeys(texts))

    def clear(self) -> int:
        """Remove every document of this user, in `remove_document`'s order. Returns how many there were."""
        docs = self.store.list_documents(self.user_id)
        for doc in docs:
            self.dense.forget_cached(self._embedded_texts(doc))
        self.store.clear_user(self.user_id)
        self.dense.drop()
        shutil.rmtree(self.files_dir, ignore_errors=True)
        return len(docs)

    def reindex(self, progress: Progress | None = None) -> int:
        """Embed every stored chunk again with the configured embedders (after a model change).
        The chunks and BM25 index stay as they are. Returns the number of chunks embedded."""
        docs = self.store.list_documents(self.user_id)
        ids, texts, payloads = [], [], []
        for doc in docs:
            context = document_context(doc.name, doc.title)
            for chunk in self.store.chunks_of(self.user_id, doc.doc_id):
                ids.append(chunk.chunk_id)
                texts.append(embedding_text(context, chunk.heading_path, chunk.text, chunk.context_prefix))
                payloads.append({"doc_id": doc.doc_id, "page_start": chunk.page_start, "page_end": chunk.page_end})
        self.dense.drop()
        self.dense.index(ids, texts, payloads, progress)
        return len(ids)

    def stats(self) -> dict:
        docs = self.store.list_documents(self.user_id)
        return {"user_id": self.user_id, "documents": len(docs), "pages": sum(d.pages for d in docs),
                "chunks": self.store.count_chunks(self.user_id), "vectors": self.dense.count(),
                "embedding_model": ", ".join(self.dense.model_ids()), "llm": self.llm.model if self.llm else None,
                "retrieval_mode": self.settings.retrieval_mode, "reranker": self.settings.reranker_model}

    def without_model(self) -> "RAGTool":
        """This tool answering as it does with no model (extractive answers, no query expansion): what every
        learner can be answered, whichever model is set. Shares the stores; `self` when there is no model."""
        if self.llm is None:
            return self
        twin = copy.copy(self)
        twin.llm, twin._judge = None, [None]
        twin.retriever = copy.copy(self.retriever)
        twin.retriever.llm = None
        return twin

    @property
    def judge(self):
        """The LLM that judges whether a passage states a composed sentence, or None (rag.support)."""
        if not self._judge:
            self._judge.append(get_judge(self.settings, self.llm) if self.llm is not None else None)
        return self._judge[0]

    @property
    def translator(self):
        """The LLM that puts a question into its books' language: the judge when there is one (the packaged 1.5B
        model kept "表格里想合并几个单元格，…，要怎么写？" a question, "How can you merge cells…?", where the 0.5B answered
        it or wrote "in Think Python" into it), else the answering model."""
        return self.judge or self.llm

    # -- retrieval and answers --------------------------------------------------------------------
    def retrieve(self, query: str, **options) -> RetrievalResult:
        if not query or not query.strip():
            raise InvalidRequest("The question is empty; type a question first.", key="err_question_empty")
        options = RetrievalOptions.from_settings(self.settings, **options)
        return self.retriever.search(self.user_id, searched_text(query), options)

    def search(self, query: str, **options) -> list[SearchHit]:
        return self.retrieve(query, **options).hits

    def question_terms(self, question: str) -> QuestionTerms:
        """The question's focus and how many of this person's chunks hold each of its words (0 for none),
        read once per question for the evidence weights and the unknown words."""
        focus = searched_text(question)
        terms = list(dict.fromkeys(search_tokens(focus)))[:MAX_COUNTED_TERMS]
        n_chunks, found = self.store.term_document_counts(self.user_id, terms)
        return QuestionTerms(focus, {t: found.get(t, 0) for t in terms}, n_chunks)

    def evidence(self, question: str, hits: list[SearchHit], terms: QuestionTerms | None = None,
                 kind: str | None = None) -> list[Evidence]:
        """The units of the hits scored as answers to the question (rag.evidence), best first; `kind` (rag.kinds)
        says what the question looks for beside its words (a reason, code, an example)."""
        focus, df, n_chunks = terms or self.question_terms(question)
        weights = discount_statement_names(discount_document_names(question_weights(focus, df, n_chunks), hits), focus)
        return score_evidence(focus, hits, self.dense, weights, kind=kind)

    def respelled(self, question: str) -> str:
        """The question with each English word that no chunk holds but is one letter off a word of the library
        written as the library writes it ("explain the recyling thing" -> "recycling"): a reader's slip is
        neither searched as written nor refused as an unknown word."""
        # English hardly uses a slip, so that test goes first: most questions then need no lookup of the index
        rare = [w for w in dict.fromkeys(search_tokens(question)) if w.isascii() and w.isalpha() and could_be_a_slip(w)]
        _, found = self.store.term_document_counts(self.user_id, rare) if rare else (0, {})
        for word in [w for w in rare if not found.get(w)]:
            alike = self.store.spelled_alike(self.user_id, word)
            if alike:
                log.info("read %r as %r (no chunk holds the first; the second is one letter off)", word, alike)
                question = re.sub(rf"\b{re.escape(word)}\b", alike, question, flags=re.IGNORECASE)
        return self._chinese_sides_respelled(question)

    def _chinese_sides_respelled(self, question: str) -> str:
        """The question with each Chinese side of a comparison that no chunk holds written as the library writes the
        term one character off it ("硬链接和软连接有什么区别" -> 软链接): a side is searched by its own words, so a slip
        there finds nothing of its own. Other words are left as typed (jieba cuts a slip into words the book has).
        The library is one text (its chunks a line each), so each lookup is one scan, not one per chunk."""
        sides = [s for s in comparison_sides(question) or () if CJK_CHAR.search(s)]
        if not sides:
            return question
        library = "\n".join(c.text for d in self.store.list_documents(self.user_id)
                             for c in self.document_outline(d.doc_id).chunks)
        for side in sides:
            alike = chinese_slip_for(side, [library])
            if alike:
                log.info("read the side %r as %r (no chunk holds the first; the second is one character off)",
                         side, alike)
                question = question.replace(side, alike)
        return question

    def unknown_words(self, question: str, terms: QuestionTerms | None = None) -> list[str]:
        """Words of the question that none of this person's chunks contains (rag.evidence.unknown_words)."""
        return unknown_words(*(terms or self.question_terms(question)))

    # -- what a question asks for (rag.plan) ------------------------------------------------------
    def document_outline(self, doc_id: str) -> DocumentOutline:
        """A document's outline, language and chunks, read once per process (a doc_id is a content hash)."""
        with _outlines_lock:
            key = (self.user_id, doc_id, str(self.settings.data_dir))
            cached = _outlines.get(key)
            if cached is None:
                chunks = self.store.chunks_of(self.user_id, doc_id)
                sample = " ".join(c.text[:300] for c in chunks[:: max(1, len(chunks) // 12)][:12])
                cached = DocumentOutline(build_outline(doc_id, chunks), detect_language(sample), chunks)
                _outlines[key] = cached
                while len(_outlines) > OUTLINES_KEPT:
                    _outlines.pop(next(iter(_outlines)))
            return cached

    def named_documents(self, question: str, docs: list[DocumentRecord]) -> list[str]:
        """The documents the question names by file name or title ("the pumpkin book", "Think Python")."""
        scores = document_scores(question, {d.doc_id: document_context(d.name, d.title) for d in docs})
        best = max(scores.values(), default=0.0)
        return [d for d, score in scores.items() if best > 0 and score >= 0.75 * best] if len(docs) > 1 else []

    def plan(self, question: str, docs: list[DocumentRecord] | None = None) -> QuestionPlan:
        docs = self.store.list_documents(self.user_id) if docs is None else docs
        outlines = {d.doc_id: self.document_outline(d.doc_id) for d in docs}
        return plan_question(searched_text(question), {d: o.outline for d, o in outlines.items()},
                             {d.doc_id: d.name for d in docs}, {d: o.language for d, o in outlines.items()},
                             self.named_documents(question, docs), topic_across=self.topic_across)

    def topic_across(self, topic: str, headings: list[OutlineNode]) -> OutlineNode | None:
        """The heading a topic in the other language names ("support vector machines" among 第 6 章 支持向量机 …):
        with a model, the topic translated and matched by its words; else (or when that finds none) the heading
        the multilingual embedder ranks first by a clear margin (TOPIC_ACROSS_MARGIN), never a near tie."""
        language = headings_language(headings)
        if self.llm is not None:
            translated = self._translated_words([topic], language, in_library=False).get(topic)
            if translated:
                scored = sorted(((topic_match(translated, n), -n.level, n) for n in headings), key=lambda t: t[:2],
                                reverse=True)
                if scored and scored[0][0] >= TOPIC_MIN_MATCH:
                    return scored[0][2]
        embedder = get_multilingual_embedder(self.settings)
        if embedder is None or not headings:
            return None
        titles = embedder.embed([heading_text(n.title) for n in headings], kind="document")
        cosines = titles @ embedder.embed_query(topic)
        order = sorted(range(len(headings)), key=lambda i: -cosines[i])
        margin = cosines[order[0]] - (cosines[order[1]] if len(order) > 1 else 0.0)
        return headings[order[0]] if margin >= TOPIC_ACROSS_MARGIN else None

    def scope_chunks(self, scope: Scope) -> list[Chunk]:
        chunks = self.document_outline(scope.doc_id).chunks
        if scope.node is not None:
            return chunks_under(scope.node, self.document_outline(scope.doc_id).outline)
        if scope.pages is not None:
            a, b = scope.pages
            return [c for c in chunks if c.page_start is not None and c.page_start <= b and (c.page_end or a) >= a]
        return chunks

    # -- answers ------------------------------------------------------------------------------------
    def ask_stream(self, question: str, *, history: list[dict] | None = None, memory_context: str | None = None,
                   own_words: frozenset[str] | None = None, **options) -> Iterator[str | SourcesEvent | Answer]:
        """Yield a SourcesEvent (the passages, at once), then the answer's text as it is written, then
        the final Answer (always last). The question's plan (rag.plan) picks the answer's shape: a summary of
        the chapter it names, a comparison, an explanation … Weak evidence gives "not in your documents" with
        related passages; no LLM gives the extractive answer; an LLM composes one whose cited sentences are
        then checked (rag.support), those their passage does not back left out."""
        started = time.perf_counter()
        docs = self.store.list_documents(self.user_id)
        if not docs:
            yield Answer(question=question, text=prompts.NO_DOCUMENTS, citations=[], mode="none")
            return
        question = self.respelled(question)
        plan = self.plan(question, docs)
        notices: list = []
        queries: list[str] = [question]
        if plan.missing_scope:
            answer = self._scope_not_found(question, plan, docs)
            yield SourcesEvent([], related=True, search_query=question)
            yield answer.text
        elif plan.summarizes:
            answer = yield from self._summary(question, plan, notices)
        else:
            answer = yield from self._answer(question, plan, docs, history, memory_context, notices, queries, options,
                                             own_words)
        answer.kind = plan.kind
        answer.notices = list(dict.fromkeys(n for n in notices if n))   # each a Notice: the UI translates it
        answer.notice = " ".join(answer.notices)
        answer.queries = queries
        answer.seconds = time.perf_counter() - started
        yield answer

    def _answer(self, question, plan: QuestionPlan, docs: list[DocumentRecord], history, memory_context, notices,
                queries, options, own_words=None) -> Iterator:
        """Retrieval (within the scope the question names), evidence, then the answer in the plan's shape."""
        within = frozenset(c.chunk_id for c in self.scope_chunks(plan.scope)) if plan.scope else None   # pieces' chunks
        # a side or part of a question naming a book is looked for in that book ("random forests" in the pumpkin
        # book, not Think Python's random module), as the whole question's answer is (RetrievalResult.focus)
        pieces_within = within if within is not None or not plan.documents else frozenset(
            c.chunk_id for d in plan.documents for c in self.document_outline(d).chunks)
        # a question about a document in another language is searched in that language too; in a library of
        # both languages, only when its own language answers too weakly: the two languages' scores do not
        # compare ("Explain what recursion is." went to the pumpkin book's 递归返回, where every character of 递归
        # matches, not to Think Python's chapter on it), and the translation costs the model a prompt
        # a question that quotes the other language's words ("…为什么要求 operational readiness flight？") is about a
        # document in that language, named or not
        # and a library with no book in the question's language is always searched in the books' one: the
        # question's own words meet nothing there, and a wordless unit the embedder finds close would pass
        all_other = self._all_in_other_language(plan, docs)
        named = bool(plan.scope or plan.documents) or self._quotes_other_books(question, plan, docs) or all_other
        terms = self.question_terms(_without_scope_phrase(question, plan))
        unknown = [w for w in self.unknown_words(question, terms) if own_words is None or w in own_words]
        # a translation is a model call: while the model answers others, or whenever every book is in the other
        # language (the judge model translates, seconds), the passages found as asked are shown first
        # (`_queued_sources`), and those of the translated search replace them
        shown_early = False
        if named and self.llm is not None and (self._model_waiting() or all_other):
            early = self._queued_sources(question, self._searched(question, plan, terms, within, None, options)[1])
            if early is not None:
                shown_early = True
                yield early
        translation = self._translation(question, plan, unknown=unknown) if named else None
        result, evidence = self._searched(question, plan, terms, within, translation, options)
        if not translation and evidence_strength(evidence, unknown) < self.settings.answer_min_support:
            # also when the book it seemed to name is in its own language ("the machine learning notes" named
            # "Learning Python" by a shared word): the other language's books may be the ones that answer
            if not shown_early and self.llm is not None and self._model_waiting() and \
                    (early := self._queued_sources(question, evidence)) is not None:
                yield early
            translation = self._translation(question, plan, anywhere=True, unknown=unknown)
            if translation:
                result, evidence = self._searched(question, plan, terms, within, translation, options)
        # a word the other language's books hold, translated, is not unknown ("overfitting": 过拟合); one they do not
        # hold either is unknown whatever language the best passage is in
        resolved, unresolved = self.word_lookups.get(question, ((), ())) if translation else ((), ())
        unknown = [w for w in unknown if w not in resolved]
        if translation and all_other:
            # no book is in the question's language, so none holds its words: only the translation's own words
            # can be unknown ("how do i make a table cell span several columns" was refused for "several",
            # "columns", "rows" over a Chinese book that says 跨越多栏)
            unknown = [w for w in unknown if w in self.unknown_words(translation)]
        hits = result.answering_hits
        queries[:] = result.queries
        notices.extend(result.warnings)
        if translation and hits:     # units in the other language, judged by their words
            evidence = _best_of(evidence, self.evidence(translation, hits, kind=plan.kind))
        sides = self._sides(plan, evidence, pieces_within, options, translation) if plan.sides else None
        # across languages each part is also asked as the translation words it (rag.parts.paired_parts)
        parts, translated_parts = paired_parts(question, translation) \
            if sides is None and plan.kind in PART_KINDS else ([question], [])
        strength = evidence_strength(evidence, unknown, looked_up_across=any(w in unresolved for w in unknown))
        if len(parts) > 1 and evidence:
            # each ask judged on its own: "the default padding in a table cell? and where does the text sit" is
            # answered when one of its asks is, though no passage holds the words of both
            evidence, heads = self._parts(parts, plan, evidence, pieces_within, options, translated_parts)
            strength = max([strength] + [evidence_strength([head], unknown) for head in heads])
        if sides is not None:
            # a side's best unit, wherever it stands: a titled section's opening leads its side without being it
            strength = max(strength, min(evidence_strength(sorted(side, key=lambda e: -e.score))
                                         for side in sides.each))
        shape = shape_of(plan.kind)
        if shape.worked_chars and evidence:      # an example goes on past its chunk: read it to the end
            evidence = self._widened(evidence, first_steps=shape.from_first_step)
        if strength < self.settings.answer_min_support and plan.scope is not None and plan.request.topic and \
                not plan.request.number and not shown_early:
            # a section named by its subject is a guess at where to look ("typing them into the data section" is
            # no request to look in chapter 5, "Model data"): before declining, the whole library is asked
            return (yield from self._answer(question, dataclasses.replace(plan, scope=None), docs, history,
                                            memory_context, notices, queries, options, own_words))
        if strength < self.settings.answer_min_support:
            answer = refusal(question, evidence, hits, unknown_words=unknown, untranslated=all_other and not translation)
            yield SourcesEvent(answer.related, related=True, search_query=question)
            yield answer.text
            return answer
        if self.llm is None:
            answer = self._book_answer(question, plan, evidence, sides, parts, shape)
            notices.insert(0, prompts.EXTRACTIVE_NOTICE)
            yield SourcesEvent(answer.citations, search_query=question)
            yield answer.text
            return answer
        book = self._book_answer(question, plan, evidence, sides, parts, shape) if shape.kind != "lookup" else None
        if sides is not None:   # the model reads both sides' best passages, and the quotes under it show both
            evidence = _interleaved(sides.naming_all, *sides.each, evidence)
        return (yield from self._composed(question, hits, evidence, history, memory_context, notices, shape, book))

    def _searched(self, question: str, plan: QuestionPlan, terms, within, translation: str | None, options):
        """The retrieval (of the question and its translation, if any) and its evidence judged by the question."""
        result = self.retrieve(question, within=within, also=(translation,) if translation else (), **options)
        hits = result.answering_hits
        return result, self.evidence(question, hits, terms, kind=plan.kind) if hits else []

    def _book_answer(self, question, plan: QuestionPlan, evidence: list[Evidence], sides, parts: list[str],
                     shape: Shape) -> Answer:
        """The answer in the plan's shape from the document's own sentences (rag.shapes): the whole answer
        without a model, and what follows a model's opening with one."""
        answer = None
        if sides is not None:
            answer = compare_answer(question, plan.sides, tuple(self._widened(side, 1) for side in sides.each),
                                    self._widened(sides.naming_all, 1), zh=plan.language == "zh",
                                    side_chars=shape.worked_chars)
        if answer is None and len(parts) > 1:   # each part's best unit, however its score compares, then the rest
            answer = extractive_answer(question, evidence, max_quotes=max(len(parts), shape.max_quotes),
                                       min_relative=0.0, budget=shape.budget, worked_chars=shape.worked_chars,
                                       from_first_step=shape.from_first_step)
        return answer or _shaped_extractive(question, evidence, shape)

    def _widened(self, evidence: list[Evidence], chunks: int = 6, first_steps: bool = False) -> list[Evidence]:
        """The evidence of the best `chunks` chunks read on to their section's end (rag.worked), from the
        document outlines' cached chunk lists; with `first_steps`, a later numbered step's chunk begun where its
        step 1 is."""
        return widened(evidence, lambda doc_id: self.document_outline(doc_id).chunks, chunks_widened=chunks,
                       first_steps=first_steps)

    def _translation(self, question: str, plan: QuestionPlan, *, anywhere: bool = False,
                     unknown: list[str] = ()) -> str | None:
        """The question in the language of the documents it is about, when they are in another one (an English
        question about a Chinese book): searched too, and the other language's passages judged by it. Its words
        no chunk holds (`unknown`) are also translated one by one (a small model keeps "hallucination" in English
        inside a sentence) and put in where this library holds their translation (`word_lookups`). Only with
        a model; None otherwise or when it fails."""
        if self.llm is None:
            return None
        everywhere = tuple(d.doc_id for d in self.store.list_documents(self.user_id))
        named = everywhere if anywhere else (plan.scope.doc_id,) if plan.scope else plan.documents or everywhere
        languages = {self.document_outline(doc_id).language for doc_id in named}
        other = sorted(languages - {plan.language})
        if not other:
            return None
        key = (question, other[0])
        if key in _translations:          # the sentence's translation: the same for everyone
            translated = _translations[key]
        else:
            try:
                text = self.translator.complete(prompts.translation_messages(question, other[0]), max_tokens=80,
                                         temperature=0.0).strip().strip('"“”').splitlines()[0].strip()
            except (LLMError, IndexError):
                log.warning("translating the question failed; searching it as asked", exc_info=True)
                return None
            translated = text if text and written_in(text, other[0], question) else None
            log.debug("the question in %s: %r (model wrote %r)", other[0], translated, text)
            _translations[key] = translated
            while len(_translations) > 256:
                _translations.popitem(last=False)
        words = self._translated_words(unknown, other[0])     # what this person's library holds
        if words:
            translated = with_words_replaced(translated or question, words)
        self.word_lookups[question] = (frozenset(words), frozenset(unknown[:MAX_TRANSLATED_WORDS]) - set(words))
        while len(self.word_lookups) > 256:
            self.word_lookups.pop(next(iter(self.word_lookups)))
        return translated

    def _model_waiting(self) -> int:
        """Answers the model is writing or has queued now (0 for an endpoint, which queues on its side)."""
        return getattr(self.llm, "waiting", lambda: 0)() if self.llm is not None else 0

    def _queued_sources(self, question: str, evidence: list[Evidence]) -> SourcesEvent | None:
        """The passages a question finds as asked, shown at once with the queue's notice while the model is busy:
        its translation waits for the model's turn, its passages do not (None when there are none)."""
        early = evidence_citations(evidence, EARLY_SOURCES)
        return SourcesEvent(early, search_query=question, waiting_for=self._queue_notice()) if early else None

    def _queue_notice(self):
        """"Your answer is queued …" while the model answers others, else ""."""
        waiting = self._model_waiting()
        return Notice(prompts.QUEUED.format(n=waiting), key="notice_queued", n=waiting) if waiting else ""

    def _all_in_other_language(self, plan: QuestionPlan, docs: list[DocumentRecord]) -> bool:
        """Whether the person's documents are all in a language other than the question's."""
        return bool(docs) and all(self.document_outline(d.doc_id).language != plan.language for d in docs)

    def _quotes_other_books(self, question: str, plan: QuestionPlan, docs: list[DocumentRecord]) -> bool:
        """Whether the question quotes words of the other language that only its books hold ("…为什么要求
        operational readiness flight？" over the FAA notice): at least QUOTED_WORDS_FOR_TRANSLATION of them that no
        book in the question's language contains. "BERT 做 MLM 的时候…" quotes words its Chinese book uses too: no."""
        words = list(dict.fromkeys(other_language_words(question)))[:MAX_QUOTED_WORDS_READ]
        if len(words) < QUOTED_WORDS_FOR_TRANSLATION:
            return False
        own = [d.doc_id for d in docs if self.document_outline(d.doc_id).language == plan.language]
        if len(own) == len(docs):
            return False                  # no book in the other language
        absent = [w for w in words if not own or not self.store.bm25_search(self.user_id, w, 1, doc_ids=own)]
        return len(absent) >= QUOTED_WORDS_FOR_TRANSLATION

    def _translated_words(self, words: list[str], language: str, *, in_library: bool = True) -> dict[str, str]:
        """Each word (at most MAX_TRANSLATED_WORDS) in `language` as the model writes it, kept when a chunk of this
        library holds the translation (`in_library`): a word the other language's books use is found, not called
        unknown."""
        out = {}
        for word in words[:MAX_TRANSLATED_WORDS]:
            terms = self._terms.get((word, language))
            if terms is None:
                try:
                    replies = self.llm.term_candidates(prompts.term_translation_messages(word, language), language)
                except LLMError:
                    log.warning("translating %r failed", word, exc_info=True)
                    continue
                terms = tuple(t for t in (_first_line(r) for r in replies) if t and written_in(t, language, word))
                self._terms[(word, language)] = terms
                while len(self._terms) > 1024:
                    self._terms.pop(next(iter(self._terms)))
            for term in terms:            # the model's likeliest first; with a library, the first it holds
                if not in_library:
                    out[word] = term
                    break
                _, found = self.store.term_document_counts(self.user_id, search_tokens(term))
                if found and all(found.get(t) for t in search_tokens(term)):
                    out[word] = term
                    break
        return out

    def _parts(self, parts: list[str], plan: QuestionPlan, evidence: list[Evidence], within,
               options, translated: list[str] = ()) -> tuple[list[Evidence], list[Evidence]]:
        """For a question asking several things (rag.parts): the best unit of each part, searched and judged on
        its own, first; then the rest of the whole question's evidence. Also the parts' best units alone.
        `translated`: the same parts in the documents' language (the translation's parts), searched and judged too."""
        heads = []
        for k, part in enumerate(parts):
            also = (part_query(translated[k], translated[0]),) if translated else ()
            hits = self.retrieve(part_query(part, parts[0]), within=within, also=also, **options).answering_hits
            found = self.evidence(part, hits, kind=plan.kind) if hits else []
            if also and hits:
                found = _best_of(found, self.evidence(translated[k], hits, kind=plan.kind))
            if found:
                heads.append(found[0])
        return _interleaved(heads + evidence), heads

    def _sides(self, plan: QuestionPlan, evidence: list[Evidence], within, options, translation=None) -> SideEvidence:
        """For a comparison: each side's best evidence, searched on its own, and the units naming all. With the
        question translated into the documents' language (`_translation`), each side is also asked in it:
        "random forests" is found as 随机森林."""
        translated = comparison_sides(translation) if translation else None
        if translated and len(translated) != len(plan.sides):
            translated = None       # the translation lists other things: its sides cannot be paired with ours
        out = []
        # sides whose words differ only in stopwords ("Architecture: any", "Architecture: all") are named by every word
        content = [frozenset(search_tokens(side)) for side in plan.sides]
        every_word = [content.count(words) > 1 for words in content]
        # each side is asked about where the question is ("when i declare a param": "What is := (declare param)?")
        context = side_context(plan.question)
        if context:     # a word no page holds places nothing ("包该", jieba's cut of "宏包该放哪")
            _, found = self.store.term_document_counts(self.user_id, context)
            context = [word for word in context if found.get(word)]
        # sides written as words may be the titles of their sections; a side in code ("( list )" vs "{ list; }") is
        # syntax, which a heading's word ("Lists of Commands") does not name
        named_in_words = all(_WORDS_ONLY.fullmatch(side) for side in plan.sides)
        doc_ids = [record.doc_id for record in self.store.list_documents(self.user_id)] if named_in_words else []
        for k, side in enumerate(plan.sides):
            if plan.language == "zh":
                asked = f"什么是{side}（{'、'.join(context)}）？" if context else f"什么是{side}？"
            else:
                asked = f"What is {side} ({' '.join(context)})?" if context else f"What is {side}?"
            names = [side]
            also: tuple[str, ...] = ()
            if translated:
                names.append(translated[k])
                also = (f"What is {translated[k]}?" if plan.language == "zh" else f"什么是{translated[k]}？",)
            hits = self.retrieve(asked, within=within, also=also, **options).answering_hits
            found = self.evidence(asked, hits, kind="explain") if hits else []
            if also and hits:
                found = _best_of(found, self.evidence(also[0], hits, kind="explain"))
            own = self._titled_section(side, asked, within, options, doc_ids) if named_in_words else []
            # a side in symbols ("$*", "[[ ]]") is told first by its entry, then where its syntax is written
            in_entry = [e for e in found if any(_entry_names(e, name) for name in names)]
            named = in_entry + [e for e in found if e not in in_entry and any(
                _mentions(e.unit.text, name, every_word[k]) or writes_symbols(e.unit.text, name) for name in names)]
            named = _opening_with_name_first(named or found, names, [o for o in plan.sides if o != side])
            out.append(own + [e for e in named if e not in own])
        # a unit naming both sides, in the question's words or the translation's ("“算法”是指从数据中学得“模型”的具体方法"
        # for an English question on "algorithm" and "model")
        names = [(side, translated[k]) if translated else (side,) for k, side in enumerate(plan.sides)]
        # a unit that ends by introducing what follows ("TEXMF = {$TEXMFVAR,$TEXMFHOME,!!$TEXMFLOCAL} 比如我们可以用它来设置
        # TEX 的输入路径：") sets nothing side by side on its own, nor does a line without a verb ("References: man pages:
        # upsdrvctl(8), upsdrvsvcctl(8)") or the manual's history of itself
        # so does one naming a side that says how the pair differs ("两者最明显的区别是通过网络安装得到的…")
        naming_all = [e for e in evidence if (all(any(_names_in_passing(e.unit.text, n) for n in side)
                                                  for side in names) or
                                              states_the_difference(e.unit.text) and
                                              any(_mentions(e.unit.text, n) for side in names for n in side))
                      and not e.unit.text.rstrip().endswith((":", "：")) and has_verb(e.unit.text)]
        # or two sentences in a row that name one side each and set them against each other ("\include 在读入之前会
        # 另起一页。有的时候我们并不需要这样，而是用 \input 命令…"): the first leads, the answer goes on into the second
        pairs = [e for e in evidence if e not in naming_all and _pair_names_all(e, names)]
        naming_all += pairs
        paths = unit_heading_paths([(e.n, e.hit, e.unit) for e in naming_all])     # of these few units only
        naming_all = [e for e in naming_all if not off_in_history(paths[(id(e.hit), e.unit.start)], plan.question)]
        # one that sets the sides against each other before one that says the same of both ("使用 \include 和 \input
        # 命令载入的文件名最好不要加空格")
        set_apart = {id(e) for e in pairs}
        naming_all.sort(key=lambda e: not (id(e) in set_apart or sets_against(e.unit.text)))
        return SideEvidence(tuple(out), naming_all)

    def _titled_section(self, side: str, asked: str, within, options, doc_ids: list[str]) -> list[Evidence]:
        """The opening of the section titled by a comparison's side ("2.10.1 Primary" for "primary", "Tuples" for
        "tuple"), then that section's best units for the side's question: a book says what a thing is where it
        names a section after it, and the opening need not repeat the name ("The monitored UPS … this system can
        manage the UPS"). Empty when no heading (or more than TITLED_SECTIONS_MAX) is the side's title."""
        titled = []     # (extra words, pieces): the closest titles only ("Tuples" before "Tuple methods")
        for doc_id in doc_ids:
            outline = self.document_outline(doc_id).outline
            for node in outline.nodes():
                extra = title_extra(side, node)
                if extra is not None:
                    pieces = [p for p in chunks_under(node, outline) if within is None or p.chunk_id in within]
                    if pieces:
                        titled.append((extra, pieces))
        closest = min((extra for extra, _ in titled), default=None)
        sections = [pieces for extra, pieces in titled if extra == closest]
        if not sections or len(sections) > TITLED_SECTIONS_MAX:
            return []
        hits = self.retrieve(asked, within=frozenset(p.chunk_id for pieces in sections for p in pieces),
                             **options).answering_hits
        found = self.evidence(asked, hits, kind="explain") if hits else []

        def span(ev: Evidence):     # the piece of a titled section the unit lies in, if any
            at = ev.hit.chunk.char_start + ev.unit.start
            return next(((k, p.char_start) for k, pieces in enumerate(sections) for p in pieces
                         if p.chunk_id == ev.hit.chunk.chunk_id and p.char_start <= at < p.char_end), None)
        inside = [(span(e), e) for e in found]
        inside = [(where, e) for where, e in inside if where is not None]
        if not inside:
            return []
        opening = min(inside, key=lambda pair: (pair[0][0], pair[1].hit.chunk.char_start + pair[1].unit.start))[1]
        return [opening] + [e for _, e in inside if e is not opening]

    def _scope_not_found(self, question: str, plan: QuestionPlan, docs: list[DocumentRecord]) -> Answer:
        """One sentence: the chapter (section, pages) asked for is in no document, and what the documents have."""
        zh = plan.language == "zh"
        have = []
        for d in docs:
            numbers = [n.number for n in self.document_outline(d.doc_id).outline.chapters() if n.number]
            if numbers:
                one = numbers[0] == numbers[-1]
                template = (prompts.CHAPTER_HAS_ZH if one else prompts.CHAPTERS_HAVE_ZH) if zh else \
                    (prompts.CHAPTER_HAS if one else prompts.CHAPTERS_HAVE)
                have.append(template.format(doc=d.name, first=numbers[0], last=numbers[-1]))
        what = plan.request.phrase.strip()
        text = (prompts.SCOPE_NOT_FOUND_ZH if zh else prompts.SCOPE_NOT_FOUND).format(what=what)
        if have:
            text += ("" if zh else " ") + ("；" if zh else "; ").join(have) + ("。" if zh else ".")
        return Answer(question=question, text=text, citations=[], mode="none", refused=True)

    def _summary(self, question: str, plan: QuestionPlan, notices: list) -> Iterator:
        """The scope's sections in order, each with its key sentence (rag.summary), a model's overview on top
        when there is a model (cached: asking again is instant). Never refused: the scope exists."""
        scope = plan.scope
        record = self.store.get_document(self.user_id, scope.doc_id)
        digest = self.digest(scope, record)
        zh = plan.language == "zh"
        base = summary_answer(question, digest, record.name, record.title, zh=zh)
        yield SourcesEvent(base.citations, search_query=question)
        head, _, rest = base.text.partition("\n\n")
        yield head
        overview = ""
        if self.llm is None:
            notices.insert(0, prompts.EXTRACTIVE_NOTICE)
        elif digest.sections and (LOCAL_MODEL_OVERVIEWS or not getattr(self.llm, "is_local", False)):
            overview = yield from self._overview(question, scope, base, self.document_outline(scope.doc_id).chunks,
                                                 record, zh, notices)
        yield "\n\n" + rest
        text = "\n\n".join(x for x in (head, overview, rest) if x)
        return Answer(question=question, text=text, citations=base.citations, mode="llm" if overview else "extractive",
                      llm=self.llm.model if overview else "none")

    def digest(self, scope: Scope, record: DocumentRecord) -> Digest:
        """The scope's digest (rag.summary), kept with the document's outline: asking again is instant."""
        outline = self.document_outline(scope.doc_id)
        key = (scope.node.path if scope.node else None, scope.pages)
        digest = outline.digests.get(key)
        if digest is None:
            if scope.node is not None:
                digest = digest_node(scope.node, outline.outline)
            elif scope.pages is not None:
                digest = digest_chunks(scope.label, self.scope_chunks(scope))
            else:
                digest = digest_chapters(record.title or record.name, outline.outline)
            outline.digests[key] = digest      # the same digest if two threads make it at once
        return digest

    def _overview(self, question, scope: Scope, base: Answer, chunks, record, zh: bool, notices) -> Iterator:
        """A model's two or three sentences over the summary's cited lines, each sentence checked; kept per scope
        and model in the store. Returns the overview ('' when the model gives nothing that holds)."""
        key = json.dumps({"path": list(scope.node.path) if scope.node else None, "pages": scope.pages,
                          "lang": "zh" if zh else "en"}, ensure_ascii=False)
        method = f"overview:{self.llm.model}"
        cached = self.store.get_summary(self.user_id, scope.doc_id, key, method)
        if cached is not None:
            if cached:
                yield "\n\n" + cached
            return cached
        by_id = {c.chunk_id: c for c in chunks}   # the chunks the summary's pieces are cut from
        sources = [Source(c.n, hit_of(by_id[c.chunk_id], record.name, record.title), c.quote, 1.0)
                   for c in base.citations if c.chunk_id in by_id]
        shape = shape_of("summarize")
        try:
            yield "\n\n"
            composed = None
            for item in stream_composed_answer(scope.label, sources, self.llm, system=prompts.ANSWER_SYSTEM_LOCAL,
                                               max_tokens=shape.max_tokens, bare_labels=True,
                                               instruction=shape.instruction_for(zh), renumber_citations=False):
                if isinstance(item, Answer):
                    composed = item
                else:
                    yield item
        except LLMError as exc:
            log.warning("the overview of %s failed: %s", scope.label, exc)
            return ""
        kept = _checked_text(composed.text, {s.n: s.text for s in sources}, self.dense, self.judge, notices, zh)
        self.store.put_summary(self.user_id, scope.doc_id, key, method, kept)
        return kept

    def _composed(self, question, hits, evidence, history, memory_context, notices, shape: Shape,
                  book: Answer | None = None) -> Iterator:
        """The LLM's answer over the passages (a few focused excerpts for a local model, whole chunks
        for an endpoint); the extractive answer if the model fails; a refusal if it finds nothing. `book`: the
        answer in the question's shape from the document's own words, shown under the model's opening (or
        instead of it when the model fails); without it, the best quotes the model did not say."""
        local = getattr(self.llm, "is_local", False)
        if local:
            sources = focused_sources(evidence, self.settings.llm_context_tokens)
            system, max_tokens = prompts.ANSWER_SYSTEM_LOCAL, min(self.settings.llm_local_max_tokens, shape.max_tokens)
        else:
            sources = whole_chunk_sources(hits, self.settings.context_tokens, evidence)
            system, max_tokens = prompts.ANSWER_SYSTEM, self.settings.llm_max_tokens
        yield SourcesEvent([citation_for(s.n, s.hit, quote=s.text, support=s.support) for s in sources],
                           search_query=question, composed=True, waiting_for=self._queue_notice())
        zh = detect_language(question) == "zh"
        emitted = False
        try:
            answer = None
            for item in stream_composed_answer(question, sources, self.llm, system=system, history=history,
                                               memory_context=memory_context, max_tokens=max_tokens,
                                               bare_labels=local, instruction=shape.instruction_for(zh)):
                if isinstance(item, Answer):
                    answer = item
                else:
                    emitted = True
                    yield item
        except LLMError as exc:
            notices.append(Notice(prompts.LLM_FAILED_NOTICE_ZH, key="notice_llm_failed_general") if zh else
                           Notice(prompts.LLM_FAILED_NOTICE.format(error=exc), key="notice_llm_failed",
                                  error=Notice.of(exc)))
            return (yield from self._extractive_instead(question, evidence, emitted, shape, book))
        if answer.text and not has_words(answer.text):   # a small model may write only "[1] [2] [3]"
            notices.append(Notice(prompts.LLM_FAILED_NOTICE_ZH if zh else prompts.LLM_NO_ANSWER_NOTICE,
                                  key="notice_llm_failed_general"))
            return (yield from self._extractive_instead(question, evidence, emitted, shape, book, translate=True))
        if says_not_found(answer.text) or not answer.text:
            refused = refusal(question, evidence, hits)
            refused.llm = answer.llm
            return refused
        answer.text = without_echo(answer.text, shape.instruction_for(zh), question)
        log.debug("the model wrote: %r", answer.text)
        attribute_uncited(answer, sources, self.dense)
        answer.checks = drop_unsupported(answer, self.dense, self.judge, given=[s.text for s in sources])
        for check in answer.checks:
            log.debug("%s (%.2f): %r", "kept" if check.supported else "dropped", check.score, check.sentence)
        dropped = sum(1 for c in answer.checks if not c.supported)
        if not has_words(answer.text):      # nothing the model wrote holds: the passages answer instead
            notice = Notice(prompts.ALL_UNSUPPORTED_NOTICE_ZH if zh else prompts.ALL_UNSUPPORTED_NOTICE,
                            key="notice_all_unsupported")
            notices.append(notice)
            instead = yield from self._extractive_instead(question, evidence, True, shape, book, translate=True)
            if instead.llm != "none":        # its first passage is shown translated: say so
                notices[notices.index(notice)] = Notice(
                    prompts.ALL_UNSUPPORTED_TRANSLATED_NOTICE_ZH if zh else prompts.ALL_UNSUPPORTED_TRANSLATED_NOTICE,
                    key="notice_all_unsupported")
            return instead
        # the model answered in the book's language, not the reader's: its first paragraph, translated, goes first
        self._in_readers_language(question, answer, book_words=False)
        quoted = add_book_answer(answer, book, zh=zh) if book is not None else \
            add_supporting_quote(answer, evidence, budget=shape.budget, worked_chars=shape.worked_chars)
        if quoted:
            yield quoted
        if not answer.citations:   # nothing the model wrote is backed by a source: the sources still show
            answer.citations = [citation_for(s.n, s.hit, quote=s.text, support=s.support) for s in sources]
        if dropped:
            notices.append(Notice(prompts.DROPPED_NOTICE_ZH.format(n=dropped) if zh else
                                  prompts.DROPPED_NOTICE.format(n=dropped), key="notice_dropped", n=dropped))
        return answer

    def _extractive_instead(self, question: str, evidence: list[Evidence], emitted: bool, shape: Shape,
                            book: Answer | None = None, *, translate: bool = False) -> Iterator:
        """The extractive answer after whatever the model streamed, when the model gave nothing to read; with
        `translate` (the model works, its sentences did not hold), its first passage in the reader's language."""
        if emitted:
            yield "\n\n"
        answer = book or _shaped_extractive(question, evidence, shape)
        if translate:
            self._in_readers_language(question, answer)
        yield answer.text
        return answer

    def _in_readers_language(self, question: str, answer: Answer, *, book_words: bool = True) -> None:
        """An answer in the other language's words gets its first passage translated above them, shown as a
        translation and kept only when it holds against that passage (rag.translated_lead.translation_holds:
        numbers, negations, meaning); left as it was when there is nothing to translate or it does not hold.
        `book_words` False: the answer is the model's checked sentences, not the book's (no heading over them)."""
        if self.llm is None or not needs_translation(question, answer.text):
            return
        lead = lead_to_translate(answer.text)
        if lead is None:
            return
        source, n = lead
        language = detect_language(question)
        try:
            reply = self.llm.complete(prompts.quote_translation_messages(source, language), max_tokens=160,
                                      temperature=0.0)
        except LLMError:
            log.warning("translating the answer's first passage failed", exc_info=True)
            return
        translation = cleaned_translation(reply)
        if not translation or detect_language(translation) != language or \
                not translation_holds(translation, source, self.dense):
            log.info("the translation of the answer's first passage was not shown: %r", translation[:200])
            return
        answer.text = with_translated_lead(answer.text, translation, n, language == "zh", book_words=book_words)
        answer.llm = self.llm.model

    def ask(self, question: str, **kwargs) -> Answer:
        final = None
        for item in self.ask_stream(question, **kwargs):
            if isinstance(item, Answer):
                final = item
        return final

    # -- the agent-facing dispatcher ----------------------------------------------------------------
    ACTIONS = ("add_document", "add_text", "search", "ask", "stats", "list", "remove", "clear")

    def execute(self, action: str, **kwargs) -> dict | list:
        """Run one action and return plain data (dicts/lists) an agent can read."""
        handlers = {
            "add_document": lambda: self.add_document(kwargs["path"], kwargs.get("name")),
            "add_text": lambda: self.add_text(kwargs["text"], kwargs.get("title", "note")),
            "search": lambda: self.search(kwargs["query"], **_options(kwargs)),
            "ask": lambda: self.ask(kwargs["question"], **_options(kwargs)),
            "stats": self.stats,
            "list": self.list_documents,
            "remove": lambda: {"removed": self.remove_document(kwargs["doc_id"])},
            "clear": lambda: {"removed_documents": self.clear()},
        }
        if action not in handlers:
            raise InvalidRequest(f"Unknown action '{action}'; use one of: {', '.join(self.ACTIONS)}.")
        try:
            result = handlers[action]()
        except KeyError as exc:
            raise InvalidRequest(f"The action '{action}' needs the argument {exc.args[0]!r}.") from exc
        return _plain(result)


def _options(kwargs: dict) -> dict:
    keys = ("mode", "top_k", "mqe", "hyde", "rerank", "candidates")
    return {k: kwargs[k] for k in keys if k in kwargs}


def _plain(value):
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value

"""Hybrid retrieval: dense (Qdrant) + BM25 (SQLite FTS5) per query, fused with RRF, optionally expanded
with MQE / HyDE through the LLM and reranked with a cross-encoder."""
from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass, field

from core.errors import LLMError, Notice
from core.llm import LLMClient
from core.settings import Settings
from core.text import CJK_CHAR, KIND_WORDS, detect_language, is_period, period_parts, search_tokens, with_fiscal_years
from rag import prompts
from rag.chunk import document_context, embedding_text, is_table_row
from rag.dense import DenseSpaces
from rag.statements import named_statements
from rag.store import DocumentStore
from rag.syntax import ranked_by_syntax, syntax_patterns
from rag.types import SearchHit

log = logging.getLogger(__name__)

RAG_COLLECTION = "rag"
SYNTAX_CANDIDATES = 400     # chunks holding a quoted syntax's symbols read to rank by its pattern (rag.syntax)
SYNTAX_WEIGHT = 1.0         # its list counts as a word search's does


def reciprocal_rank_fusion(rankings: dict[str, list[str]], k: int = 60,
                           weights: dict[str, float] | None = None) -> list[tuple[str, float, dict[str, int]]]:
    """Fuse ranked id lists: score(id) = Σ w_list / (k + rank), w = 1 unless given.
    Returns (id, score, {list name: rank}) best first."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ids in rankings.items():
        weight = (weights or {}).get(name, 1.0)
        for rank, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            ranks.setdefault(item, {})[name] = rank
    return [(i, scores[i], ranks[i]) for i in sorted(scores, key=lambda i: -scores[i])]


_PER_QUERY_LIST = re.compile(r"(?:dense|bm25)(\d+)")   # the lists of query i: dense{i}, bm25{i}


def fusion_per_language(rankings: dict[str, list[str]], translations: int, k: int = 60,
                        weights: dict[str, float] | None = None) -> list[tuple[str, float, dict[str, int]]]:
    """Fused lists of a question searched with its translations (`options.also`, queries 1..translations): the
    lists of each query fused on their own, and each chunk at its better fused score. Summed across languages, a
    Chinese chunk that only the Chinese query's words find (幻觉) lost to chunks that both the English and the
    Chinese queries half-match ("Happy-LLM" in image links). Lists tied to no query (the scope's chunks, HyDE)
    count in every query's fusion."""
    def query_of(name: str) -> int | None:
        per_query = _PER_QUERY_LIST.fullmatch(name)
        if per_query:
            index = int(per_query.group(1))
            return index if 1 <= index <= translations else 0      # MQE's rewrites count with the question
        return 0 if name.endswith("_focus") or name == "statement" else None
    shared = {n: ids for n, ids in rankings.items() if query_of(n) is None}
    best: dict[str, tuple[float, dict[str, int]]] = {}
    for query in range(translations + 1):
        own = {n: ids for n, ids in rankings.items() if query_of(n) == query}
        for cid, score, ranks in reciprocal_rank_fusion({**own, **shared}, k=k, weights=weights):
            if cid not in best or score > best[cid][0]:
                best[cid] = (score, ranks)
    return [(cid, score, ranks) for cid, (score, ranks) in sorted(best.items(), key=lambda t: -t[1][0])]


@dataclass
class RetrievalOptions:
    mode: str = "hybrid"             # hybrid | dense | bm25
    top_k: int = 8
    mqe: bool = False
    hyde: bool = False
    rerank: bool = False
    candidates: int = 50
    within: frozenset[str] | None = None   # only these chunk ids (a chapter or pages the question names)
    also: tuple[str, ...] = ()             # more queries searched with the question (its translation)

    @classmethod
    def from_settings(cls, s: Settings, **overrides) -> "RetrievalOptions":
        base = dict(mode=s.retrieval_mode, top_k=s.top_k, mqe=s.use_mqe, hyde=s.use_hyde,
                    rerank=bool(s.reranker_model), candidates=s.candidates)
        base.update({k: v for k, v in overrides.items() if v is not None})
        if base.get("within") is not None:
            base["within"] = frozenset(base["within"])
        base["also"] = tuple(base.get("also") or ())
        if base["mode"] not in ("hybrid", "dense", "bm25"):
            raise ValueError(f"unknown retrieval mode {base['mode']!r}; use hybrid, dense or bm25")
        return cls(**base)


@dataclass
class RetrievalResult:
    hits: list[SearchHit]
    queries: list[str]
    warnings: list[str] = field(default_factory=list)
    focus: list[str] = field(default_factory=list)   # ids of the documents the question names, if any

    @property
    def answering_hits(self) -> list[SearchHit]:
        """The hits an answer may quote: those of the documents the question names ("What drove JnJ's gross
        margin?" is not answered from Boeing's filing), or all of them when it names none or none was found."""
        named = [hit for hit in self.hits if hit.chunk.doc_id in self.focus]
        return named or self.hits


def expand_queries(question: str, llm: LLMClient, *, n: int) -> list[str]:
    """MQE: the question plus up to n rewrites in the question's language."""
    text = llm.complete([{"role": "user", "content": prompts.MQE.format(n=n, question=question)}],
                        max_tokens=200, temperature=0.7)
    rewrites = [line.strip(" -*•\t0123456789.)") for line in text.splitlines()]
    rewrites = [r for r in rewrites if len(r) > 3 and r.lower() != question.lower()]
    return rewrites[:n]


def hypothetical_passage(question: str, llm: LLMClient) -> str:
    """HyDE: a passage that would answer the question, embedded instead of the question."""
    return llm.complete([{"role": "user", "content": prompts.HYDE.format(question=question)}],
                        max_tokens=250, temperature=0.3).strip()


class Reranker:
    """A sentence-transformers CrossEncoder, loaded once per model name."""
    _cache: dict[str, "Reranker"] = {}
    _cache_lock = threading.Lock()

    def __init__(self, model: str):
        from sentence_transformers import CrossEncoder
        self._model = CrossEncoder(model, device="cpu")
        self._lock = threading.Lock()

    @classmethod
    def get(cls, model: str) -> "Reranker":
        with cls._cache_lock:
            if model not in cls._cache:
                cls._cache[model] = cls(model)
            return cls._cache[model]

    def scores(self, query: str, texts: list[str]) -> list[float]:
        with self._lock:
            return [float(s) for s in self._model.predict([(query, t) for t in texts], show_progress_bar=False)]


def document_scores(question: str, profiles: dict[str, str]) -> dict[str, float]:
    """How strongly the question names each document (its file name and title), IDF-weighted.

    Terms match exactly or, for terms of 4+ characters, by containment, so "Activision" finds
    ACTIVISIONBLIZZARD_2019_10K.pdf and "FY2019" finds its 2019. A term every document shares
    (e.g. "10k") weighs little. Documents the question does not name score 0.
    """
    query_terms = {t for t in search_tokens(question) if not CJK_CHAR.match(t)}
    # "FY2023" is also the year 2023, and "Q22023" (written together) the quarter q2 of 2023
    period_words = set(with_fiscal_years(sorted(query_terms)))
    doc_terms = {doc_id: _naming_terms(text) for doc_id, text in profiles.items()}
    df: dict[str, int] = {}
    for terms in doc_terms.values():
        for term in terms:
            df[term] = df.get(term, 0) + 1
    n = len(profiles)

    def named(term: str) -> float:
        """How much of the term the question says: 1 when whole, else the share of its letters covered by
        question words inside it ("American" covers 8 of AMERICANWATERWORKS's 18, "American Express" all of
        AMERICANEXPRESS's), so the company named in full outranks one that merely shares a word."""
        if term in query_terms:
            return 1.0
        if CJK_CHAR.match(term):
            return 1.0 if term in question else 0.0
        if len(term) < 4:
            return 0.0
        if (period := period_parts(term)) and set(period) <= period_words:
            return 1.0   # "Q2 of FY2023" names the 2023Q2 filing
        if any(len(q) >= 4 and term in q for q in query_terms):
            return 1.0
        inside = [q for q in query_terms if q in term]
        if not any(len(q) >= 4 for q in inside):
            return 0.0
        return min(1.0, sum(len(q) for q in inside) / len(term))

    # "AMEX", "JnJ": a short form of a document's whole name counts as the name, as rare as the documents
    # it fits are few.
    abbreviated: dict[str, float] = {}
    abbreviations = _abbreviations(question)
    sequences = {d: _name_sequences(text) for d, text in profiles.items()} if abbreviations else {}
    for abbreviation in abbreviations:
        fitting = [d for d, parts in sequences.items() if any(_abbreviates(abbreviation, words) for words in parts)]
        # Its other documents too: JOHNSON_JOHNSON_2023Q2_EARNINGS.pdf is titled "PRELIM 2Q23 Press Release"
        # but shares the file name words of JOHNSON_JOHNSON_2022_10K.pdf ("JOHNSON & JOHNSON").
        names = {tuple(sequences[d][0]) for d in fitting}
        fitting += [d for d, parts in sequences.items() if d not in fitting and tuple(parts[0]) in names]
        for doc_id in fitting:
            abbreviated[doc_id] = abbreviated.get(doc_id, 0.0) + math.log(1 + n / len(fitting))

    def score(doc_id: str, terms: set[str]) -> float:
        matched = {t: c for t in terms if (c := named(t)) > 0}
        # One name written two ways counts once: "CVS Health" matches the file's CVSHEALTH and the title's
        # CVS and HEALTH, and a filing with a title must not outweigh its sibling without one.
        matched = {t: c for t, c in matched.items() if not any(t != u and t in u for u in matched)}
        if doc_id not in abbreviated and all(is_period(t) for t in matched):
            return 0.0   # a year or a period of one tells filings apart but names none ("as of 2022")
        return sum(c * math.log(1 + n / df[t]) for t, c in matched.items()) + abbreviated.get(doc_id, 0.0)

    return {doc_id: score(doc_id, terms) for doc_id, terms in doc_terms.items()}


# A short form written with capitals, as people write them: "AMEX", "JnJ", "J&J" (not "and", not "FY2019").
_ABBREVIATION = re.compile(r"(?<![\w&])[A-Za-z][A-Za-z&]{1,7}(?![\w&])")
_CONNECTORS = ("&", "and")


def _abbreviations(question: str) -> set[str]:
    return {m.group().lower() for m in _ABBREVIATION.finditer(question)
            if sum(c.isupper() for c in m.group()) >= 2}


def _name_sequences(profile: str) -> list[list[str]]:
    """Each part of a document's profile (file name, title) as its words in order, without numbers, kind
    words and legal forms: "American Express Company" -> [american, express]; "&" and "and" kept."""
    sequences = []
    for part in profile.split(" · "):
        words = [w for w in re.findall(r"[a-z0-9]+|&", part.lower())
                 if not any(ch.isdigit() for ch in w) and w not in KIND_WORDS and w != "the"]
        sequences.append(words)
    return sequences


def _abbreviates(abbreviation: str, words: list[str]) -> bool:
    """Whether the abbreviation spells the whole name from the start of each word: "amex" = AMerican
    EXpress, "jnj" = Johnson aNd Johnson. Every word gives a letter or more; a connector may give none. A name
    written as one word is also named by its start: "jpm" = JPMORGAN (as a ticker often is)."""
    if len(abbreviation) >= 3 and words and len(words[0]) >= len(abbreviation) + 3 and \
            words[0].startswith(abbreviation):
        return True
    if sum(w not in _CONNECTORS for w in words) < 2:
        return False

    def spells(i: int, j: int) -> bool:
        if j == len(words):
            return i == len(abbreviation)
        word = words[j]
        parts = ["", "&", "n", "and"] if word in _CONNECTORS else [word[:k] for k in range(1, len(word) + 1)]
        return any(abbreviation.startswith(part, i) and spells(i + len(part), j + 1) for part in parts)

    return spells(0, 0)


def _naming_terms(profile: str) -> set[str]:
    """What in a document's name and title can name it: its words, and each run of 2+ CJK characters as
    a whole. Chinese words of a title (设计, 工作) are ordinary words far more often than names, so a
    Chinese title names its document only when the question contains the whole run ("硕塞", not "塞").
    Kind words (book, notes, chapter) and short numbers (a version's "1.9.9", a chapter's "9") name no
    document; a year ("2019") still does."""
    cjk_runs = set(re.findall(f"{CJK_CHAR.pattern}{{2,}}", profile))
    words = {t for t in search_tokens(profile) if not CJK_CHAR.match(t)}
    return {t for t in words if t not in KIND_WORDS and not (t.isdigit() and len(t) < 4)} | cjk_runs


def focus_documents(scores: dict[str, float], *, max_docs: int = 3) -> list[str]:
    """The documents a question clearly names: near the best score, and the best must rest on a term
    at most half of the documents share. Empty when the question names none (or there are few docs)."""
    n = len(scores)
    best = max(scores.values(), default=0.0)
    if n < 3 or best < math.log(1 + 2):
        return []
    ranked = sorted((d for d, s in scores.items() if s >= 0.75 * best), key=lambda d: -scores[d])
    return ranked[:max_docs] if len(ranked) < n / 2 else []


def _ordinal(chunk_id: str) -> int:
    """A chunk id is "<doc id>:<ordinal>"."""
    tail = chunk_id.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def spread_pages(fused: list, chunks: dict, per_page: int) -> list:
    """The fused list with at most `per_page` chunks of any one page before other pages' chunks: a
    page's table split into five chunks should not fill the five places a person looks at (and the
    citations are pages). The chunks held back keep their order after the others."""
    kept, held, seen = [], [], {}
    for item in fused:
        chunk = chunks.get(item[0])
        page = (chunk.doc_id, chunk.page_start) if chunk is not None and chunk.page_start is not None else item[0]
        seen[page] = seen.get(page, 0) + 1
        cap = min(per_page, TABLE_PIECES_PER_PAGE) if chunk is not None and is_table_piece(chunk.text) else per_page
        (kept if seen[page] <= cap else held).append(item)
    return kept + held


# A filing's page is one wide table cut into chunks; a textbook's page holds several passages. Two chunks a page
# (CHUNKS_PER_PAGE=2, for textbooks) let a statement's second piece take a place another page needed: FinanceBench
# hit@5 0.655 -> 0.586. A page's later chunk that is a piece of a table waits behind other pages: 0.621, and the
# sixteen textbook sets' gold ranks are all as before (docs/EVALUATION.md, twenty-third session).
TABLE_PIECES_PER_PAGE = 1
TABLE_PIECE_ROWS = 3


def is_table_piece(text: str) -> bool:
    """Whether a chunk holds a piece of a Markdown table: at least TABLE_PIECE_ROWS lines in pipes."""
    return sum(1 for line in text.split("\n") if is_table_row(line)) >= TABLE_PIECE_ROWS


class Retriever:
    def __init__(self, settings: Settings, store: DocumentStore, dense: DenseSpaces, llm: LLMClient | None):
        self.settings, self.store, self.dense, self.llm = settings, store, dense, llm

    def search(self, user_id: str, question: str, options: RetrievalOptions) -> RetrievalResult:
        warnings: list[str] = []
        queries, hyde_text = self._expand(question, options, warnings)
        docs = self._doc_index(user_id)
        focus = focus_documents(document_scores(
            question, {d: document_context(name, title) for d, (name, title) in docs.items()}))
        rankings = self._rankings(user_id, queries, hyde_text, options, focus)
        if options.within is not None:
            rankings = {name: [cid for cid in ids if cid in options.within] for name, ids in rankings.items()}
            # every chunk of a small scope stays a candidate, in its order, after those the retrievers found
            rankings["scope"] = sorted(options.within, key=_ordinal)[:options.candidates]

        # An embedder that does not know the question's language ranks at random; let it only break ties.
        dense_weight = self.settings.dense_weight if self.dense.knows(detect_language(question)) \
            else self.settings.foreign_dense_weight
        weights = {name: dense_weight if name.startswith(("dense", "hyde")) else self.settings.bm25_weight
                   for name in rankings}
        for name in ("dense_focus", "bm25_focus"):
            if name in rankings:
                weights[name] = weights.get(name, 1.0) * self.settings.focus_weight
        if "syntax" in weights:
            weights["syntax"] = self.settings.bm25_weight * SYNTAX_WEIGHT
        if "statement" in weights:
            weights["statement"] = self.settings.statement_weight
        if "scope" in weights:
            weights["scope"] = 0.1
        # with no translation (`also` empty) this is reciprocal rank fusion of all the lists
        fused = fusion_per_language(rankings, len(options.also), k=self.settings.rrf_k, weights=weights)
        pool_size = max(options.top_k, self.settings.rerank_candidates if options.rerank else options.top_k)
        chunks = {}
        if self.settings.chunks_per_page:
            chunks = self.store.get_chunks(user_id, [cid for cid, _, _ in fused[:max(pool_size * 4, 40)]])
            fused = spread_pages(fused, chunks, self.settings.chunks_per_page)
        pool = fused[:pool_size]
        missing = [cid for cid, _, _ in pool if cid not in chunks]   # read once: the spread read most of them
        if missing:
            chunks = {**chunks, **self.store.get_chunks(user_id, missing)}
        scored = [p for p in pool if p[0] in chunks]   # vectors of a just-removed document may linger
        if options.rerank and self.settings.reranker_model and scored:
            scored = self._rerank(question, scored, chunks, docs)
        hits = []
        for rank, (cid, score, ranks) in enumerate(scored[:options.top_k], start=1):
            chunk = chunks[cid]
            name, title = docs.get(chunk.doc_id, (chunk.doc_id, chunk.doc_id))
            hits.append(SearchHit(chunk=chunk, doc_name=name, doc_title=title, score=score, rank=rank,
                                  sources=ranks))
        return RetrievalResult(hits=hits, queries=queries + ([f"HyDE: {hyde_text}"] if hyde_text else []),
                               warnings=warnings, focus=focus)

    def _expand(self, question: str, options: RetrievalOptions, warnings: list[str]) -> tuple[list[str], str | None]:
        """The queries to search (the question first, then MQE rewrites) and the HyDE passage, if asked."""
        queries, hyde_text = [question, *options.also], None
        if (options.mqe or options.hyde) and self.llm is None:
            warnings.append(Notice("Query expansion (MQE/HyDE) needs a language model; searched with the question "
                                   "only.", key="notice_expansion_needs_llm"))
        elif options.mqe or options.hyde:
            try:
                if options.mqe:
                    queries += expand_queries(question, self.llm, n=self.settings.mqe_queries)
                if options.hyde:
                    hyde_text = hypothetical_passage(question, self.llm)
            except LLMError as exc:
                warnings.append(Notice(f"Query expansion was skipped: {exc}", key="notice_expansion_skipped",
                                       error=Notice.of(exc)))
        return queries, hyde_text

    def _rankings(self, user_id: str, queries: list[str], hyde_text: str | None, options: RetrievalOptions,
                  focus: list[str]) -> dict[str, list[str]]:
        """One ranked chunk-id list per retriever and query. When the question names documents, the
        question is also searched within them ("…_focus" lists), so a generic question about a named
        filing is not drowned by the other filings' similar pages."""
        rankings: dict[str, list[str]] = {}
        if options.mode in ("hybrid", "dense"):
            dense_texts = queries + ([hyde_text] if hyde_text else [])
            # Over-fetch the question's list and filter here: local Qdrant's payload filter costs ~150 ms
            # at 20k points, and gave the same FinanceBench figures as this.
            limit = options.candidates * (8 if focus or options.within is not None else 1)
            found_lists = self.dense.search(dense_texts, limit, detect_language(queries[0]))
            for i, found in enumerate(found_lists):
                name = "hyde" if hyde_text and i == len(dense_texts) - 1 else f"dense{i}"
                rankings[name] = [h.id for h in found[:options.candidates]]
                if focus and i == 0:
                    rankings["dense_focus"] = [h.id for h in found if h.payload.get("doc_id") in focus
                                               ][:options.candidates]
        if options.mode in ("hybrid", "bm25"):
            scope_docs = sorted({cid.rsplit(":", 1)[0] for cid in options.within}) if options.within is not None else None
            for i, q in enumerate(queries):
                rankings[f"bm25{i}"] = [cid for cid, _ in self.store.bm25_search(
                    user_id, q, options.candidates * (8 if scope_docs else 1), doc_ids=scope_docs,
                    heading_weight=self.settings.bm25_heading_weight,
                    word_prefix=self.settings.bm25_word_prefix)]
            if focus:
                rankings["bm25_focus"] = [cid for cid, _ in self.store.bm25_search(
                    user_id, queries[0], options.candidates, doc_ids=focus,
                    heading_weight=self.settings.bm25_heading_weight,
                    word_prefix=self.settings.bm25_word_prefix)]
            syntax = syntax_patterns(queries[0])
            if syntax:      # "{1..$n}", "$* vs $@": the chunks that write the syntax the question quotes
                texts: dict[str, str] = {}
                for quoted in syntax:
                    texts.update(self.store.texts_holding(user_id, quoted.literal, SYNTAX_CANDIDATES, scope_docs))
                rankings["syntax"] = ranked_by_syntax(texts, syntax)[:options.candidates]
            statements = named_statements(queries[0]) if self.settings.statement_weight else []
            if statements:   # "on the balance sheet": the chunks under that statement's heading
                rankings["statement"] = [cid for cid, _ in self.store.heading_search(
                    user_id, queries[0], [p for s in statements for p in s.heading_phrases()], options.candidates,
                    doc_ids=focus or None, excluded=[p for s in statements for p in s.excluded_phrases()])]
        return rankings

    def _rerank(self, question: str, scored: list, chunks: dict, docs: dict) -> list:
        texts = [self._context_text(chunks[cid], docs) for cid, _, _ in scored]
        rerank_scores = Reranker.get(self.settings.reranker_model).scores(question, texts)
        reranked = sorted(((cid, s, dict(ranks)) for (cid, _, ranks), s in zip(scored, rerank_scores)),
                          key=lambda t: -t[1])
        for rank, (_, _, ranks) in enumerate(reranked, start=1):
            ranks["rerank"] = rank
        return reranked

    def _doc_index(self, user_id: str) -> dict[str, tuple[str, str]]:
        return {d.doc_id: (d.name, d.title) for d in self.store.list_documents(user_id)}

    @staticmethod
    def _context_text(chunk, docs) -> str:
        name, title = docs.get(chunk.doc_id, ("", ""))
        return embedding_text(document_context(name, title), chunk.heading_path, chunk.text, chunk.context_prefix)

"""Hybrid retrieval: dense (Qdrant) + BM25 (SQLite FTS5) per query, fused with RRF, optionally expanded
with MQE / HyDE through the LLM and reranked with a cross-encoder."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from core.embeddings import Embedder
from core.errors import LLMError
from core.llm import LLMClient
from core.settings import Settings
from core.text import detect_language
from core.vectors import VectorStore, collection_name
from rag import prompts
from rag.store import DocumentStore
from rag.types import SearchHit

log = logging.getLogger(__name__)

RAG_COLLECTION = "rag"


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


@dataclass
class RetrievalOptions:
    mode: str = "hybrid"             # hybrid | dense | bm25
    top_k: int = 8
    mqe: bool = False
    hyde: bool = False
    rerank: bool = False
    candidates: int = 50

    @classmethod
    def from_settings(cls, s: Settings, **overrides) -> "RetrievalOptions":
        base = dict(mode=s.retrieval_mode, top_k=s.top_k, mqe=s.use_mqe, hyde=s.use_hyde,
                    rerank=bool(s.reranker_model), candidates=s.candidates)
        base.update({k: v for k, v in overrides.items() if v is not None})
        if base["mode"] not in ("hybrid", "dense", "bm25"):
            raise ValueError(f"unknown retrieval mode {base['mode']!r}; use hybrid, dense or bm25")
        return cls(**base)


@dataclass
class RetrievalResult:
    hits: list[SearchHit]
    queries: list[str]
    warnings: list[str] = field(default_factory=list)


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


class Retriever:
    def __init__(self, settings: Settings, store: DocumentStore, vectors: VectorStore, embedder: Embedder,
                 llm: LLMClient | None):
        self.settings, self.store, self.vectors, self.embedder, self.llm = settings, store, vectors, embedder, llm

    def search(self, user_id: str, question: str, options: RetrievalOptions) -> RetrievalResult:
        warnings: list[str] = []
        queries = [question]
        hyde_text = None
        if (options.mqe or options.hyde) and self.llm is None:
            warnings.append("Query expansion (MQE/HyDE) needs a language model; searched with the question only.")
        elif options.mqe or options.hyde:
            try:
                if options.mqe:
                    queries += expand_queries(question, self.llm, n=self.settings.mqe_queries)
                if options.hyde:
                    hyde_text = hypothetical_passage(question, self.llm)
            except LLMError as exc:
                warnings.append(f"Query expansion was skipped: {exc}")

        rankings: dict[str, list[str]] = {}
        collection = collection_name(RAG_COLLECTION, user_id)
        if options.mode in ("hybrid", "dense"):
            dense_texts = queries + ([hyde_text] if hyde_text else [])
            vectors = self.embedder.embed(dense_texts, kind="query")
            for i, vector in enumerate(vectors):
                name = "hyde" if hyde_text and i == len(dense_texts) - 1 else f"dense{i}"
                rankings[name] = [h.id for h in self.vectors.search(collection, vector, options.candidates)]
        if options.mode in ("hybrid", "bm25"):
            for i, q in enumerate(queries):
                rankings[f"bm25{i}"] = [cid for cid, _ in self.store.bm25_search(user_id, q, options.candidates)]

        # An embedder that does not know the question's language ranks at random; let it only break ties.
        dense_weight = 1.0 if self.embedder.supports(detect_language(question)) else self.settings.foreign_dense_weight
        weights = {name: dense_weight for name in rankings if name.startswith(("dense", "hyde"))}
        fused = reciprocal_rank_fusion(rankings, k=self.settings.rrf_k, weights=weights)
        pool = fused[:max(options.top_k, self.settings.rerank_candidates if options.rerank else options.top_k)]
        chunks = self.store.get_chunks(user_id, [cid for cid, _, _ in pool])
        pool = [p for p in pool if p[0] in chunks]   # vectors of a just-removed document may linger
        scored = [(cid, score, ranks) for cid, score, ranks in pool]
        if options.rerank and self.settings.reranker_model and scored:
            docs = self._doc_index(user_id)
            texts = [self._context_text(chunks[cid], docs) for cid, _, _ in scored]
            rerank_scores = Reranker.get(self.settings.reranker_model).scores(question, texts)
            scored = sorted(((cid, s, {**ranks, "rerank": 0}) for (cid, _, ranks), s in zip(scored, rerank_scores)),
                            key=lambda t: -t[1])
            for rank, (_, _, ranks) in enumerate(scored, start=1):
                ranks["rerank"] = rank
        docs = self._doc_index(user_id)
        hits = []
        for rank, (cid, score, ranks) in enumerate(scored[:options.top_k], start=1):
            chunk = chunks[cid]
            name, title = docs.get(chunk.doc_id, (chunk.doc_id, chunk.doc_id))
            hits.append(SearchHit(chunk=chunk, doc_name=name, doc_title=title, score=score, rank=rank,
                                  sources=ranks))
        return RetrievalResult(hits=hits, queries=queries + ([f"HyDE: {hyde_text}"] if hyde_text else []),
                               warnings=warnings)

    def _doc_index(self, user_id: str) -> dict[str, tuple[str, str]]:
        return {d.doc_id: (d.name, d.title) for d in self.store.list_documents(user_id)}

    @staticmethod
    def _context_text(chunk, docs) -> str:
        from rag.chunk import document_context, embedding_text
        name, title = docs.get(chunk.doc_id, ("", ""))
        return embedding_text(document_context(name, title), chunk.heading_path, chunk.text)

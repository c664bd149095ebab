"""A user's dense vector spaces: which embedder indexes which chunk, and where its vectors live.

The default embedder (MiniLM) is fast but knows English only; the multilingual one (multilingual-e5)
knows Chinese and cross-language meaning but is ~2x slower per chunk on 2 cores. So each chunk is
embedded once, by the cheapest embedder that knows its language: English chunks by the default
embedder, the rest (Chinese) by the multilingual one, each space in its own collection. A question is
searched in every space that holds vectors, and the lists are fused by the retriever. An English book
costs what it always did; a Chinese one gets vectors that mean something.

The multilingual space stores a chunk as its sentence windows (about WINDOW_CHARS characters, each
with the chunk's document and section line) and a chunk scores as its best window: a question asked in
one's own words matches one or two sentences of a passage, and a whole chunk's averaged vector blurs
them (zh_paraphrase, dense only: gold page in the top 5 for 0.65 of questions by chunk vectors, 0.75 by
best window).

Each collection records the model that wrote it (core.vectors), and the windowed space its window size
too, so a changed model is refused, never mixed; `python -m rag reindex` re-embeds.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


from core.embeddings import Embedder, background_work
from core.text import detect_language
from core.vectors import VectorHit, VectorStore, collection_name

# chunks per embedding call: the model is held per batch, and a question waiting goes next (core.embeddings.
# QuestionsFirstLock), so a smaller batch is a shorter wait for the passages (64: p95 3.9 s with an ingest and the
# local model busy)
EMBED_BATCH = 16

Progress = Callable[[str, int, int], None]

WINDOWS_FETCHED = 4     # windows searched per chunk wanted (a chunk's windows often rank close together)
WINDOW_CHARS = 80       # a window of the multilingual space: whole sentences up to about this many characters
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;\n])")


def sentence_windows(text: str, size: int = WINDOW_CHARS) -> list[str]:
    """An embedding text (rag.chunk.embedding_text: its first line names document and section) cut into
    windows of whole sentences, each window under that first line. A text of one window stays as it is."""
    header, newline, body = text.partition("\n")
    if not newline:
        header, body = "", text
    windows, current = [], ""
    for sentence in (s for s in _SENTENCE_END.split(body) if s.strip()):
        if current and len(current) + len(sentence) > size:
            windows.append(current)
            current = ""
        current += sentence
    if current:
        windows.append(current)
    if len(windows) <= 1:
        return [text]
    return [f"{header}\n{w}" if header else w for w in windows]


def _relatedness(embedder: Embedder, cosine: float, cross: bool) -> float:
    """A hit's calibrated score. Across languages (an English question, the multilingual space's chunks) the
    midpoint of the same-language and cross-language scales: that space's Chinese chunks often quote English
    words ("at least one event in class S"), which lift their cosine with an English question to the same-
    language range, and on the cross-language scale alone they outranked every English passage."""
    if not cross:
        return embedder.relatedness(cosine)
    return (embedder.relatedness(cosine) + embedder.relatedness(cosine, cross_language=True)) / 2


@dataclass
class DenseSpace:
    name: str              # "main" or "multilingual"
    embedder: Embedder
    collection: str
    windowed: bool = False   # a chunk stored as its sentence windows (points "<chunk id>#<n>")

    @property
    def model_record(self) -> str:
        """What the collection records as the model that wrote it."""
        return f"{self.embedder.model_id}+windows{WINDOW_CHARS}" if self.windowed else self.embedder.model_id


class DenseSpaces:
    def __init__(self, vectors: VectorStore, user_id: str, purpose: str, embedder: Embedder,
                 multilingual: Embedder | None):
        self.vectors = vectors
        self.main = DenseSpace("main", embedder, collection_name(purpose, user_id))
        # No second space when the default embedder already knows every language.
        self.multilingual = (DenseSpace("multilingual", multilingual, collection_name(f"{purpose}_ml", user_id),
                                        windowed=True)
                             if multilingual is not None and embedder.languages is not None else None)

    @property
    def spaces(self) -> list[DenseSpace]:
        return [self.main] + ([self.multilingual] if self.multilingual else [])

    def space_for(self, text: str) -> DenseSpace:
        """The space a chunk's vectors go to: the default embedder's unless it does not know the language."""
        if self.multilingual and not self.main.embedder.supports(detect_language(text)):
            return self.multilingual
        return self.main

    def index(self, ids: list[str], texts: list[str], payloads: list[dict], progress: Progress | None = None,
              written: list[tuple[DenseSpace, list[str]]] | None = None) -> list[tuple[DenseSpace, list[str]]]:
        """Embed and store every text in its space, in batches (progress: "embed", done, total).
        Returns what was written per space, so a failed ingest can remove exactly that; pass `written`
        to have it filled as batches land, so a failure midway still knows what to remove."""
        groups: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            groups.setdefault(self.space_for(text).name, []).append(i)
        written = [] if written is None else written
        done, total = 0, len(texts)
        for space in self.spaces:
            members = groups.get(space.name, [])
            if not members:
                continue
            self.vectors.ensure_collection(space.collection, space.embedder.dim, space.model_record)
            ids_written: list[str] = []
            written.append((space, ids_written))
            for start in range(0, len(members), EMBED_BATCH):
                batch = members[start:start + EMBED_BATCH]
                point_ids, point_texts, point_payloads = self._points(space, [ids[i] for i in batch],
                                                                      [texts[i] for i in batch],
                                                                      [payloads[i] for i in batch])
                with background_work():
                    vectors = space.embedder.embed(point_texts, kind="document")
                self.vectors.upsert(space.collection, point_ids, vectors, point_payloads)
                ids_written.extend(point_ids)
                done += len(batch)
                if progress:
                    progress("embed", done, total)
        return written

    @staticmethod
    def _points(space: DenseSpace, ids: list[str], texts: list[str], payloads: list[dict]
                ) -> tuple[list[str], list[str], list[dict]]:
        """The points a batch of chunks becomes in this space: one per chunk, or one per sentence window."""
        if not space.windowed:
            return ids, texts, payloads
        point_ids, point_texts, point_payloads = [], [], []
        for chunk_id, text, payload in zip(ids, texts, payloads):
            for n, window in enumerate(sentence_windows(text)):
                point_ids.append(f"{chunk_id}#{n}")
                point_texts.append(window)
                point_payloads.append({**payload, "chunk": chunk_id, "window": n})
        return point_ids, point_texts, point_payloads

    def remove(self, written: list[tuple[DenseSpace, list[str]]]) -> None:
        for space, ids in written:
            if ids:
                self.vectors.delete(space.collection, ids=ids)

    def delete_document(self, doc_id: str) -> None:
        for space in self.spaces:
            self.vectors.delete(space.collection, where={"doc_id": doc_id})

    def forget_cached(self, texts: list[str]) -> int:
        """Drop these texts' vectors from every space's embedding cache (core.embeddings.CachedEmbedder,
        keyed by text); returns the cache rows removed."""
        return sum(space.embedder.forget(texts) for space in self.spaces)

    def drop(self) -> None:
        for space in self.spaces:
            self.vectors.drop_collection(space.collection)

    def count(self) -> int:
        """Chunks with vectors (a windowed chunk counts once: its first window)."""
        return sum(self.chunks_in(space) for space in self.spaces)

    def chunks_in(self, space: DenseSpace, doc_id: str | None = None) -> int:
        """Chunks with vectors in one space, of one document or all."""
        where = {**({"doc_id": doc_id} if doc_id else {}), **({"window": 0} if space.windowed else {})}
        return self.vectors.count(space.collection, where=where or None)

    def searchable(self) -> list[DenseSpace]:
        """The spaces that hold vectors (a question is not embedded for an empty space)."""
        return [s for s in self.spaces if self.vectors.exists(s.collection)]

    def search(self, texts: list[str], limit: int, language: str) -> list[list[VectorHit]]:
        """For each query text, the best `limit` chunks over every space, as ONE list ordered by each
        model's calibrated relatedness (Embedder.relatedness): a rank-1 chunk of a space is not good by
        being first there. A space whose embedder does not know the question's language ranks at random
        for it, so its scores count half. Hit scores are the calibrated ones."""
        merged: list[list[VectorHit]] = [[] for _ in texts]
        for space in self.searchable():
            embedder = space.embedder
            self.vectors.check_model(space.collection, space.model_record, embedder.dim)
            trust = 1.0 if embedder.supports(language) else 0.5
            # The multilingual space holds the text the default embedder does not know, so a question in a
            # language the default one knows (English) meets it across languages, where cosines run lower.
            cross = space is self.multilingual and self.main.embedder.supports(language)
            for i, vector in enumerate(embedder.embed(texts, kind="query")):
                merged[i] += [VectorHit(h.id, trust * _relatedness(embedder, h.score, cross), h.payload)
                              for h in self._search_chunks(space, vector, limit)]
        return [sorted(hits, key=lambda h: -h.score)[:limit] for hits in merged]

    def _search_chunks(self, space: DenseSpace, vector, limit: int) -> list[VectorHit]:
        """The best `limit` chunks of a space; a windowed chunk scores as its best window."""
        if not space.windowed:
            return self.vectors.search(space.collection, vector, limit)
        best: dict[str, VectorHit] = {}
        for hit in self.vectors.search(space.collection, vector, limit * WINDOWS_FETCHED):
            chunk_id = hit.payload.get("chunk", hit.id)
            if chunk_id not in best:                         # hits come best first
                best[chunk_id] = VectorHit(chunk_id, hit.score, hit.payload)
        return list(best.values())[:limit]

    def for_languages(self, languages: set[str]) -> Embedder | None:
        """The embedder that knows all these languages: the default one first (None when neither does)."""
        return next((space.embedder for space in self.spaces
                     if all(space.embedder.supports(lang) for lang in languages)), None)

    def knows(self, language: str) -> bool:
        """Some embedder here knows this language (else dense search only breaks ties)."""
        return any(space.embedder.supports(language) for space in self.spaces)

    def model_ids(self) -> list[str]:
        return [s.embedder.model_id for s in self.spaces]

"""Turning retrieved chunks into an answer: pack whole chunks into a token budget, label them [n],
stream the LLM's cited answer — or, with no LLM, quote the best sentences with the same citations."""
from __future__ import annotations

import re
from collections.abc import Iterator

from core.llm import LLMClient
from core.text import count_tokens, search_tokens
from rag import prompts
from rag.types import Answer, Citation, SearchHit

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n{2,}|(?<=[。！？])")
_CITE = re.compile(r"\[(\d{1,3})\]")


def pack_context(hits: list[SearchHit], budget_tokens: int) -> list[tuple[int, SearchHit]]:
    """Whole chunks, best first, until the budget is spent (the first always fits). Returns (n, hit)."""
    packed, used = [], 0
    for hit in hits:
        cost = hit.chunk.token_count + 12  # the source label
        if packed and used + cost > budget_tokens:
            continue
        packed.append((len(packed) + 1, hit))
        used += cost
    return packed


def source_label(n: int, hit: SearchHit) -> str:
    section = " > ".join(hit.chunk.heading_path[-2:])
    parts = [f"[{n}] {hit.doc_name}", hit.pages_label, section]
    return " · ".join(p for p in parts if p)


def build_messages(question: str, packed: list[tuple[int, SearchHit]], *, history: list[dict] | None = None,
                   memory_context: str | None = None) -> list[dict]:
    context = "\n\n".join(f"{source_label(n, h)}\n{h.chunk.text}" for n, h in packed)
    messages = [{"role": "system", "content": prompts.ANSWER_SYSTEM}]
    if memory_context:
        messages.append({"role": "system", "content": prompts.MEMORY_CONTEXT.format(memory=memory_context)})
    for turn in (history or [])[-6:]:
        if turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str):
            messages.append({"role": turn["role"], "content": turn["content"]})
    messages.append({"role": "user", "content": prompts.ANSWER_USER.format(context=context, question=question)})
    return messages


def citation_for(n: int, hit: SearchHit, quote: str | None = None) -> Citation:
    """A citation of the hit; when quoting part of it, the pages are those of the quoted part."""
    page_start, page_end = hit.chunk.page_start, hit.chunk.page_end
    if quote is not None and (at := hit.chunk.text.find(quote)) >= 0:
        page_start, page_end = hit.chunk.pages_of_span(at, at + len(quote))
    return Citation(n=n, doc_id=hit.chunk.doc_id, doc_name=hit.doc_name, page_start=page_start,
                    page_end=page_end, chunk_id=hit.chunk.chunk_id, score=round(hit.score, 4),
                    quote=quote if quote is not None else hit.chunk.text)


def cited_sources(text: str, packed: list[tuple[int, SearchHit]]) -> list[Citation]:
    """Citations the answer actually uses, in order of first use; all sources if it cites none."""
    by_n = dict(packed)
    used = [int(m) for m in dict.fromkeys(_CITE.findall(text)) if int(m) in by_n]
    return [citation_for(n, by_n[n]) for n in (used or [n for n, _ in packed])]


def stream_llm_answer(question: str, hits: list[SearchHit], llm: LLMClient, *, budget_tokens: int,
                      history: list[dict] | None = None, memory_context: str | None = None) -> Iterator[str | Answer]:
    """Yield text pieces as the LLM writes, then the final Answer. LLMError propagates to the caller."""
    packed = pack_context(hits, budget_tokens)
    pieces: list[str] = []
    for piece in llm.stream(build_messages(question, packed, history=history, memory_context=memory_context)):
        pieces.append(piece)
        yield piece
    text = "".join(pieces).strip()
    yield Answer(question=question, text=text, citations=cited_sources(text, packed), mode="llm")


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and len(s.strip()) > 1]


def extractive_answer(question: str, hits: list[SearchHit], *, max_sentences: int = 3,
                      from_chunks: int = 4) -> Answer:
    """The best sentences of the top chunks, each cited. Sentence score = share of the question's terms
    it contains, nudged by its chunk's rank so the best chunk wins ties."""
    terms = set(search_tokens(question))
    candidates = []
    for n, hit in enumerate(hits[:from_chunks], start=1):
        for position, sentence in enumerate(split_sentences(hit.chunk.text)):
            if count_tokens(sentence) < 4:
                continue
            words = set(search_tokens(sentence))
            overlap = len(terms & words) / (len(terms) or 1)
            candidates.append((overlap + 0.15 / n - 0.001 * position, n, position, sentence, hit))
    candidates.sort(key=lambda c: -c[0])
    # A sentence sharing no word with the question only pads the answer (unless nothing matches at all).
    relevant = [c for c in candidates if c[0] > 0.15 / c[1]]
    candidates = relevant or candidates[:1]
    chosen = sorted(candidates[:max_sentences], key=lambda c: (c[1], c[2]))  # document order reads better
    if not chosen:
        chosen = [(0, n, 0, hit.chunk.text[:400], hit) for n, hit in enumerate(hits[:1], start=1)]
    lines = [f"> {sentence} [{n}]" for _, n, _, sentence, _ in chosen]
    citations: dict[int, Citation] = {}
    for _, n, _, sentence, hit in chosen:
        if n not in citations:
            citations[n] = citation_for(n, hit, quote=sentence)
        else:   # a second sentence of the same source widens its page range if need be
            extra = citation_for(n, hit, quote=sentence)
            c = citations[n]
            c.quote += " … " + sentence
            if c.page_start is not None and extra.page_start is not None:
                c.page_start, c.page_end = min(c.page_start, extra.page_start), max(c.page_end, extra.page_end)
    return Answer(question=question, text="\n".join(lines), citations=list(citations.values()),
                  mode="extractive", notice=prompts.EXTRACTIVE_NOTICE)

"""The assistant's own records in memory: what kinds it writes and how it reads them back.

Every memory the assistant writes carries `metadata["kind"]`:
- `document_loaded` / `document_removed` (episodic): the library changed.
- `question` (working): the question in play.
- `qa` (episodic): a question, the answer's start, its route and the cited pages.
- `note` (semantic): a note the person wrote, with its `concept`; `preference` is a note on how they
  like to learn ("answer briefly"), always offered to the answer prompt.
"""
from __future__ import annotations

from datetime import datetime

from core.text import count_tokens
from assistant.types import MemoryRef

KIND_LOADED = "document_loaded"
KIND_REMOVED = "document_removed"
KIND_QUESTION = "question"
KIND_QA = "qa"
KIND_NOTE = "note"
KIND_PREFERENCE = "preference"
PREFERENCE_CONCEPTS = {"preference", "preferences", "偏好", "学习偏好"}

IMPORTANCE = {KIND_LOADED: 0.6, KIND_REMOVED: 0.4, KIND_QUESTION: 0.5, KIND_QA: 0.6, KIND_NOTE: 0.8,
              KIND_PREFERENCE: 0.9}

MEMORY_CONTEXT_TOKENS = 400   # budget of remembered notes / past questions in a document answer's prompt
ITEM_TOKENS = 80              # one memory's share of it, at most
MIN_COSINE = 0.35             # a memory this far from the question is not offered to the prompt


def to_ref(item) -> MemoryRef:
    """A memory.types.MemoryItem as the assistant shows it."""
    return MemoryRef(id=item.id, memory_type=item.memory_type.value, kind=str(item.metadata.get("kind", "")),
                     content=item.content, timestamp=item.timestamp, importance=item.importance,
                     score=item.score, metadata=dict(item.metadata), session_id=item.session_id)


def cosine_of(item) -> float:
    """The query similarity of a search hit, whatever its memory type's score parts call it."""
    parts = item.score_parts or {}
    for key in ("cosine", "vector", "tfidf"):
        if key in parts:
            return float(parts[key])
    return 0.0


def local_time(moment: datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def describe(ref: MemoryRef) -> str:
    """One line a person (or a prompt) reads: when, what kind, what."""
    meta = ref.metadata
    when = local_time(ref.timestamp)
    if ref.kind == KIND_QA:
        pages = "; ".join(meta.get("cited_labels", [])[:3])
        return f"{when} · asked: {meta.get('question', ref.content)}" + (f" (sources: {pages})" if pages else "")
    if ref.kind == KIND_LOADED:
        return f"{when} · loaded the document '{meta.get('doc_name', '')}' ({meta.get('pages', 0)} pages)"
    if ref.kind == KIND_REMOVED:
        return f"{when} · removed the document '{meta.get('doc_name', '')}'"
    if ref.kind in (KIND_NOTE, KIND_PREFERENCE):
        concept = meta.get("concept")
        return f"{when} · note" + (f" on '{concept}'" if concept else "") + f": {ref.content}"
    if ref.kind == KIND_QUESTION:
        return f"{when} · question in progress: {ref.content}"
    return f"{when} · {ref.memory_type}: {ref.content}"


def clip_tokens(text: str, limit: int) -> str:
    words = text.split()
    if count_tokens(text) <= limit:
        return text
    out: list[str] = []
    for w in words:
        if count_tokens(" ".join(out + [w])) > limit:
            break
        out.append(w)
    return " ".join(out) + " …" if out else text[:limit * 2] + " …"


def pack_memories(refs: list[MemoryRef], budget: int = MEMORY_CONTEXT_TOKENS) -> tuple[str, list[MemoryRef]]:
    """The memory block of a prompt (one labelled line each, best first) within the token budget."""
    lines, used, kept = [], 0, []
    for ref in refs:
        line = "- " + clip_tokens(describe(ref), ITEM_TOKENS)
        cost = count_tokens(line)
        if used + cost > budget:
            continue
        lines.append(line)
        kept.append(ref)
        used += cost
    return "\n".join(lines), kept


NOT_FOUND = "Not found in the documents."


def conversations(qa_refs: list[MemoryRef], limit: int = 20) -> list[dict]:
    """`qa` memories grouped by session, the most recently used conversation first:
    {session_id, started, last, first_question, questions}. Memories without a session are left out."""
    groups: dict[str, list[MemoryRef]] = {}
    for ref in qa_refs:
        if ref.session_id:
            groups.setdefault(ref.session_id, []).append(ref)
    out = []
    for session_id, refs in groups.items():
        refs.sort(key=lambda r: r.timestamp)
        out.append({"session_id": session_id, "started": refs[0].timestamp, "last": refs[-1].timestamp,
                    "first_question": refs[0].metadata.get("question", refs[0].content), "questions": len(refs)})
    out.sort(key=lambda c: c["last"], reverse=True)
    return out[:limit]


def turns(qa_refs: list[MemoryRef]) -> list[dict]:
    """A conversation's `qa` memories as its turns, oldest first: {question, answer, cited_labels}."""
    return [{"question": r.metadata.get("question", r.content),
             "answer": NOT_FOUND if r.metadata.get("refused") else (r.metadata.get("answer") or ""),
             "cited_labels": list(r.metadata.get("cited_labels", []))}
            for r in sorted(qa_refs, key=lambda r: r.timestamp)]

"""The learning report: structured data (never pre-rendered text), valid against docs/report.schema.json;
and the overview figures it starts with (also the Reports tab's metrics line)."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from assistant import history as H
from memory.rollup import ROLLUP_KIND

SCHEMA_VERSION = "1.3"   # 1.1: "study" (cards, mastery, coverage, what to review next); 1.2: study.chapters;
# 1.3: each chapter's concepts (its cards by concept)
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "docs" / "report.schema.json"


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(timezone.utc).isoformat() if moment else None


def rolled_up_questions(ref) -> int:
    """Questions a day's summary of old episodes replaced (memory.rollup keeps their count); 0 for others."""
    return int(ref.metadata.get("questions", 0) or 0) if ref.kind == ROLLUP_KIND else 0


def activity(assistant) -> list[dict]:
    """Per local day: documents loaded, questions asked, notes written."""
    days: dict[str, Counter] = {}
    for ref in assistant._stored(["episodic", "semantic"]):
        if ref.kind == ROLLUP_KIND:     # a rolled-up day: its questions are a count in its summary
            day = ref.metadata.get("day") or ref.timestamp.astimezone().date().isoformat()
            days.setdefault(day, Counter())["questions"] += rolled_up_questions(ref)
            continue
        key = {H.KIND_LOADED: "documents", H.KIND_QA: "questions", H.KIND_NOTE: "notes",
               H.KIND_PREFERENCE: "notes"}.get(ref.kind)
        if key:
            days.setdefault(ref.timestamp.astimezone().date().isoformat(), Counter())[key] += 1
    return [{"date": d, "documents": c["documents"], "questions": c["questions"], "notes": c["notes"]}
            for d, c in sorted(days.items())]


def overview(assistant, *, days: list[dict] | None = None, graph=None) -> dict:
    """The person's totals: documents, questions, notes, concepts, memories, active days. `days` (activity)
    and `graph` (the concept graph) when the caller has them already: the report needs both itself."""
    docs = assistant.list_documents()
    episodes = assistant._stored(["episodic"])
    qa = [r for r in episodes if r.kind == H.KIND_QA]
    graph = graph if graph is not None else assistant.concept_graph(limit=500)
    counts = assistant.memory.counts()
    days = days if days is not None else activity(assistant)
    return {
        "user_id": assistant.user_id,
        "documents": len(docs),
        "pages": sum(d.pages for d in docs),
        "chunks": sum(d.chunks for d in docs),
        "questions": len(qa) + sum(rolled_up_questions(r) for r in episodes),
        "questions_from_memory": sum(1 for r in qa if r.metadata.get("route") == "memory"),
        "notes": len(assistant.list_notes()),
        "concepts": len(graph.nodes),
        "concept_links": len(graph.edges),
        "memories": counts,
        "memories_total": sum(counts.values()),
        "sessions": len(assistant.memory.sessions()),
        "active_days": len(days),
        "first_activity": min((a["date"] for a in days), default=None),
        "last_activity": max((a["date"] for a in days), default=None),
        "llm_configured": assistant.settings.llm_configured,
    }


def build_report(assistant) -> dict:
    """Everything the person did and learned, as plain JSON-ready data."""
    s = assistant.settings
    docs = assistant.list_documents()
    qa = sorted(assistant._stored(["episodic"], kind=H.KIND_QA), key=lambda r: r.timestamp)
    per_doc: dict[str, int] = {}
    questions = []
    for ref in qa:
        citations = [{"doc_id": c.get("doc_id"), "doc_name": c.get("doc_name"), "page_start": c.get("page_start"),
                      "page_end": c.get("page_end"), "score": c.get("score")}
                     for c in ref.metadata.get("citations", [])]
        for doc_id in {c["doc_id"] for c in citations}:
            per_doc[doc_id] = per_doc.get(doc_id, 0) + 1
        questions.append({"asked_at": _iso(ref.timestamp), "question": ref.metadata.get("question", ref.content),
                          "route": ref.metadata.get("route", "documents"), "mode": ref.metadata.get("mode", ""),
                          "session_id": ref.session_id, "citations": citations})
    notes = [{"id": r.id, "created_at": _iso(r.timestamp), "content": r.content,
              "concept": r.metadata.get("concept") or None, "kind": r.kind}
             for r in sorted(assistant.list_notes(), key=lambda r: r.timestamp)]
    graph = assistant.concept_graph(limit=500)
    days = activity(assistant)
    stats = assistant.memory.stats()
    sessions = [{"session_id": x["session_id"], "memories": x["count"], "start": _iso(x["start"]),
                 "end": _iso(x["end"])} for x in assistant.memory.sessions()]
    llm = assistant.rag.llm
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": datetime.now(timezone.utc).isoformat(),
        "user": {"id": assistant.user_id, "sessions": sessions},
        "summary": overview(assistant, days=days, graph=graph),
        "documents": [{"doc_id": d.doc_id, "name": d.name, "title": d.title, "pages": d.pages, "chunks": d.chunks,
                       "added_at": _iso(d.added_at), "format": d.source_format,
                       "questions": per_doc.get(d.doc_id, 0)} for d in docs],
        "questions": questions,
        "notes": notes,
        "concepts": {"nodes": [{"key": n["key"], "name": n["name"], "label": n["label"],
                                "memories": int(n.get("memories", 0))} for n in graph.nodes],
                     "edges": [{"source": e["source"], "target": e["target"], "type": e["type"],
                                "weight": int(e.get("weight", 1))} for e in graph.edges]},
        "activity": days,
        "memory": {"counts": stats.counts, "total": stats.total, "vectors": stats.vectors, "graph": stats.graph,
                   "working_capacity": stats.working_capacity, "working_ttl_minutes": stats.working_ttl_minutes},
        "retrieval": {"mode": s.retrieval_mode, "top_k": s.top_k, "candidates": s.candidates, "rrf_k": s.rrf_k,
                      "embedding_model": assistant.rag.embedder.model_id, "reranker": s.reranker_model,
                      "llm_configured": s.llm_configured, "llm_model": llm.model if llm else None,
                      "mqe_default": s.use_mqe, "hyde_default": s.use_hyde, "chunk_size": s.chunk_size,
                      "chunk_overlap": s.chunk_overlap, "context_tokens": s.context_tokens,
                      "memory_context_tokens": H.MEMORY_CONTEXT_TOKENS},
        "study": assistant.study.progress(),
    }


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_report(report: dict) -> None:
    """Raise jsonschema.ValidationError if the report does not match the published schema."""
    import jsonschema
    jsonschema.Draft202012Validator(load_schema(), format_checker=jsonschema.FormatChecker()).validate(report)


def write_report(report: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    return path

"""Retrieval (and answer) evaluation on a folder with docs/ and questions.jsonl (format in shared EVAL.md).

    python -m rag.eval DIR [--mode hybrid|dense|bm25] [--mqe] [--hyde] [--rerank MODEL] [--limit N] [--type KIND]
    python -m rag.eval DIR --answers [--llm none|auto|local|openai] [--answers-out FILE.jsonl] ...

Ingests every file of DIR/docs into ONE fresh knowledge base in a temporary data folder, searches each
question, and prints as its LAST line one JSON object with hit@1/5/10, mrr@10, timings and the options.

With --answers it then asks every question through the UI's code path (`assistant.PDFLearningAssistant.ask`,
one instance, no history) and adds the answer metrics to that line: evidence_in_answer, cited_gold,
refused_unanswerable, refused_answerable, answer_chars_p50, answer_s_p50, first_token_s_p50, llm,
n_answerable, n_unanswerable. A question with "gold": [] is unanswerable. Learner questions (with `points`,
`type`, `lang`) add point_recall, full_answers, by_type and by_lang (rag.answer_metrics).

How an answer is judged (details in rag.answer_metrics):
- evidence_in_answer: the answer text (AskResult.text, without the source list) contains a gold `text`,
  case-, width- and whitespace-folded, with numbers compared as numbers ("3,000" = "3000",
  "7,301.5" = "$7301.5", "15 %" = "15%", but "7,301" is not inside "7,301.5"). When no gold item has a
  `text`, the gold `answer` is used instead: if it has numbers, the answer text must hold every one of
  them (as numbers; long free-text answers such as FinanceBench's sentences are never repeated word for
  word), otherwise it must contain the whole folded `answer`.
- cited_gold: a citation comes from a gold document and its pages hold the gold page, or its quote
  contains the gold text.
- refused_*: AskResult.refused ("not in your documents").
- a share whose denominator is empty (e.g. the answerable shares of a set of unanswerable questions
  only) is null.
- answer_s / first_token_s: seconds until the final AskResult / the first non-empty text piece (the
  whole answer's time when no text piece came before it), measured around `ask` here. The questions'
  vectors cached by the retrieval pass are dropped first, so each answer embeds its question as the
  UI's first asking of it would.
--answers-out FILE writes one JSON line per question (answer, citations, hits, seconds) to read failures.
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

from core.errors import AssistantError
from core.settings import Settings


def first_hit_rank(hits, gold: list[dict]) -> int | None:
    """1-based rank of the first retrieved chunk that hits any gold item, per EVAL.md's rule."""
    for rank, hit in enumerate(hits, start=1):
        for g in gold:
            if hit.doc_name != g["doc"]:
                continue
            if "page" in g and hit.chunk.page_start is not None and \
                    hit.chunk.page_start <= int(g["page"]) <= hit.chunk.page_end:
                return rank
            if g.get("text") and g["text"] in hit.chunk.text:
                return rank
    return None


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def forget_cached_questions(embedder, texts: list[str]) -> int:
    """Drop the vectors of `texts` from the embedding cache, so answers are timed as for a new question
    (the retrieval pass above has already embedded every question). 0 when the embedder keeps no cache."""
    forget = getattr(embedder, "forget", None)
    return forget(texts) if forget else 0


def ask_all(assistant, questions: list[dict], *, mqe: bool = False, hyde: bool = False,
            quiet: bool = False) -> list[dict]:
    """Ask each question once through `assistant.ask` (no history); one record per question."""
    from assistant.types import AskResult
    from rag import answer_metrics as M
    records = []
    for i, q in enumerate(questions):
        started = time.perf_counter()
        first_token, result, error = None, None, ""
        try:
            for item in assistant.ask(q["question"], mqe=mqe, hyde=hyde):
                if isinstance(item, AskResult):
                    result = item
                elif isinstance(item, str) and item and first_token is None:
                    first_token = time.perf_counter() - started
                # anything else (rag.types.SourcesEvent) is what the UI shows beside the answer: ignored
        except AssistantError as exc:
            error = str(exc)
        seconds = time.perf_counter() - started
        text = result.text if result is not None else ""
        citations = list(result.citations) if result is not None else []
        gold_ok = M.answerable(q)
        records.append({
            "id": q.get("id"), "question": q["question"], "gold_answer": q.get("answer"),
            "answerable": gold_ok, "answer": text,
            "refused": bool(getattr(result, "refused", False)),
            "route": getattr(result, "route", ""), "mode": getattr(result, "mode", ""),
            "llm": getattr(result, "llm", "none") or "none",
            "citations": [c.label for c in citations],
            "related": [c.label for c in getattr(result, "related", None) or []],
            "evidence": gold_ok and M.evidence_hit(text, q),
            **({"type": q.get("type"), "lang": q.get("lang"), "points": M.points_stated(text, q)}
               if q.get("points") else {}),
            "cited": gold_ok and M.cited_hit(citations, q),
            "chars": len(text), "seconds": round(seconds, 3),
            "first_token_s": round(first_token if first_token is not None else seconds, 3),
            **({"error": error} if error else {}),
        })
        if not quiet and (i + 1) % 25 == 0:
            print(f"{i + 1}/{len(questions)} answers", file=sys.stderr)
    return records


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m rag.eval", description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default="hybrid")
    parser.add_argument("--mqe", action="store_true", help="multi-query expansion (needs an LLM)")
    parser.add_argument("--hyde", action="store_true", help="hypothetical-document embedding (needs an LLM)")
    parser.add_argument("--rerank", metavar="MODEL", help="CrossEncoder model name or path")
    parser.add_argument("--embedding-model", help="override EMBEDDING_MODEL")
    parser.add_argument("--chunk-size", type=int)
    parser.add_argument("--chunk-overlap", type=int)
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--type", dest="kind", metavar="KIND",
                        help="only the questions of this type (compare, explain, …; learner sets)")
    parser.add_argument("--answers", action="store_true",
                        help="also ask every question through the assistant and add the answer metrics")
    parser.add_argument("--llm", choices=["auto", "none", "local", "openai"], default="auto",
                        help="with --answers: LLM_BACKEND for the answers (auto = the settings' default)")
    parser.add_argument("--answers-out", type=Path, metavar="FILE",
                        help="with --answers: write one JSON line per question (answer, citations, hits)")
    parser.add_argument("--embedding-cache", type=Path, metavar="FILE",
                        help="keep embedded chunks in this SQLite file between runs (default: none kept)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    docs = sorted(p for p in (args.dir / "docs").iterdir() if p.is_file())
    questions = [json.loads(line) for line in open(args.dir / "questions.jsonl", encoding="utf-8") if line.strip()]
    if args.kind:
        questions = [q for q in questions if q.get("type") == args.kind]
    if args.limit:
        questions = questions[:args.limit]

    with tempfile.TemporaryDirectory(prefix="rag-eval-") as tmp:
        overrides = {"data_dir": Path(tmp), "retrieval_mode": args.mode, "top_k": 10,
                     "reranker_model": args.rerank}
        if args.answers:
            # searches below ask for 10 hits themselves; the answers use the UI's top_k
            del overrides["top_k"]
            if args.llm != "auto":
                overrides["llm_backend"] = args.llm
        elif not (args.mqe or args.hyde):
            overrides["llm_backend"] = "none"   # retrieval alone needs no model (and no 0.5 GB join)
        if args.embedding_cache:
            overrides["embedding_cache"] = args.embedding_cache.resolve()
        for key in ("embedding_model", "chunk_size", "chunk_overlap"):
            if getattr(args, key) is not None:
                overrides[key] = getattr(args, key)
        settings = Settings(**overrides)
        assistant = None
        if args.answers:
            from assistant import PDFLearningAssistant
            assistant = PDFLearningAssistant("eval", settings)
            tool = assistant.rag
            add = assistant.load_document          # as the UI loads a file
        else:
            from rag.tool import RAGTool
            tool = RAGTool("eval", settings)
            add = tool.add_document

        started = time.perf_counter()
        chunks = 0
        for path in docs:
            try:
                result = add(path)
                chunks += result.chunks
            except AssistantError as exc:
                print(f"skipped {path.name}: {exc}", file=sys.stderr)
        ingest_s = time.perf_counter() - started

        ranks, latencies = [], []
        for i, q in enumerate(questions):
            t = time.perf_counter()
            hits = tool.search(q["question"], top_k=10, mqe=args.mqe, hyde=args.hyde, rerank=bool(args.rerank))
            latencies.append((time.perf_counter() - t) * 1000)
            ranks.append(first_hit_rank(hits, q["gold"]))
            if not args.quiet and (i + 1) % 200 == 0:
                print(f"{i + 1}/{len(questions)} questions", file=sys.stderr)

        records = []
        if assistant is not None:
            forget_cached_questions(tool.embedder, [q["question"] for q in questions])
            records = ask_all(assistant, questions, mqe=args.mqe, hyde=args.hyde, quiet=args.quiet)

    n = len(questions) or 1
    result = {
        "set": args.dir.resolve().name, "n": len(questions),
        "hit@1": round(sum(1 for r in ranks if r and r <= 1) / n, 4),
        "hit@5": round(sum(1 for r in ranks if r and r <= 5) / n, 4),
        "hit@10": round(sum(1 for r in ranks if r and r <= 10) / n, 4),
        "mrr@10": round(statistics.fmean([(1 / r if r and r <= 10 else 0.0) for r in ranks]) if ranks else 0.0, 4),
        "ingest_s": round(ingest_s, 2), "chunks": chunks,
        "query_p50_ms": round(percentile(latencies, 0.5), 1), "query_p95_ms": round(percentile(latencies, 0.95), 1),
        "mode": args.mode, "mqe": args.mqe, "hyde": args.hyde, "rerank": args.rerank,
        "embedding_model": settings.embedding_model,
        "multilingual_embedding_model": settings.multilingual_embedding_model, "chunk_size": settings.chunk_size,
        "chunk_overlap": settings.chunk_overlap,
    }
    if args.answers:
        from rag.answer_metrics import summarize
        result.update(summarize(records))
        result["llm_backend"] = settings.llm_backend
        if args.answers_out:
            args.answers_out.parent.mkdir(parents=True, exist_ok=True)
            with open(args.answers_out, "w", encoding="utf-8") as out:
                for record in records:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()

"""Retrieval evaluation on a folder with docs/ and questions.jsonl (format in shared EVAL.md).

    python -m rag.eval DIR [--mode hybrid|dense|bm25] [--mqe] [--hyde] [--rerank MODEL] [--limit N]

Ingests every file of DIR/docs into ONE fresh knowledge base in a temporary data folder, searches each
question, and prints as its LAST line one JSON object with hit@1/5/10, mrr@10, timings and the options.
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
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    docs = sorted(p for p in (args.dir / "docs").iterdir() if p.is_file())
    questions = [json.loads(line) for line in open(args.dir / "questions.jsonl", encoding="utf-8") if line.strip()]
    if args.limit:
        questions = questions[:args.limit]

    with tempfile.TemporaryDirectory(prefix="rag-eval-") as tmp:
        overrides = {"data_dir": Path(tmp), "retrieval_mode": args.mode, "top_k": 10,
                     "reranker_model": args.rerank}
        for key in ("embedding_model", "chunk_size", "chunk_overlap"):
            if getattr(args, key) is not None:
                overrides[key] = getattr(args, key)
        settings = Settings(**overrides)
        from rag.tool import RAGTool
        tool = RAGTool("eval", settings)

        started = time.perf_counter()
        chunks = 0
        for path in docs:
            try:
                result = tool.add_document(path)
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
        "embedding_model": settings.embedding_model, "chunk_size": settings.chunk_size,
        "chunk_overlap": settings.chunk_overlap,
    }
    print(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()

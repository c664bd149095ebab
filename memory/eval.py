"""Memory retrieval evaluation: `python -m memory.eval DIR` (format in ../shared/EVAL.md).

DIR holds `memories.jsonl` (each added for its user with its own timestamp, its `id` kept as
metadata) and `questions.jsonl` (each searched for its user only). Everything is written to a fresh
temporary data folder, removed afterwards. The LAST line printed is one JSON object:
{"set", "n", "hit@1", "hit@5", "hit@10", "mrr@10", "recall@10", "add_per_s", "search_p50_ms", ...options}
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def first_hit_rank(found: list[str], gold: set[str]) -> int | None:
    for rank, mid in enumerate(found, start=1):
        if mid in gold:
            return rank
    return None


def run(directory: Path, *, recency_reference: str = "now", retrieval_mode: str = "hybrid", fusion: str | None = None,
        embedding_cache: Path | None = None, max_questions: int | None = None, verbose: bool = True,
        details: Path | None = None) -> dict:
    from core.settings import Settings
    from memory.manager import MemoryManager

    memories = load_jsonl(directory / "memories.jsonl")
    questions = load_jsonl(directory / "questions.jsonl")
    if max_questions:
        questions = questions[:max_questions]
    tmp = Path(tempfile.mkdtemp(prefix="memory-eval-"))
    preloaded = bool(embedding_cache and embedding_cache.is_file())
    settings = Settings(_env_file=None, data_dir=tmp)
    try:
        if embedding_cache and embedding_cache.is_file():
            shutil.copy(embedding_cache, tmp / "embedding_cache.sqlite")
        managers: dict[str, MemoryManager] = {}

        def manager(user: str) -> MemoryManager:
            if user not in managers:
                managers[user] = MemoryManager(settings, user, recency_reference=recency_reference,
                                               retrieval_mode=retrieval_mode, fusion=fusion)
            return managers[user]

        by_user: dict[str, list[dict]] = defaultdict(list)
        for m in memories:
            by_user[m["user"]].append(m)
        manager(next(iter(by_user))).episodic.embedder  # load the model outside the timed part
        t0 = time.perf_counter()
        for user, rows in by_user.items():
            records = [{"content": m["content"], "memory_type": m.get("memory_type", "episodic"),
                        "timestamp": m.get("timestamp"), "session_id": m.get("session"),
                        "importance": m.get("importance", 0.5),
                        "metadata": {"id": m["id"], **({"session": m["session"]} if m.get("session") else {})}}
                       for m in rows]
            for i in range(0, len(records), 512):
                manager(user).add_many(records[i:i + 512])
        add_s = time.perf_counter() - t0

        hit = {1: 0, 5: 0, 10: 0}
        mrr = recall = 0.0
        latencies = []
        per_cat: dict = defaultdict(lambda: [0, 0])
        detail_rows = []
        for q in questions:
            gold = set(q["gold"])
            t = time.perf_counter()
            results = manager(q["user"]).search(q["question"], limit=10)
            latencies.append((time.perf_counter() - t) * 1000)
            found = [r.metadata.get("id") for r in results]
            rank = first_hit_rank(found, gold)
            for k in hit:
                hit[k] += int(rank is not None and rank <= k)
            mrr += 1.0 / rank if rank else 0.0
            recall += len(gold & set(found[:10])) / len(gold) if gold else 0.0
            detail_rows.append({"id": q.get("id"), "user": q["user"], "question": q["question"],
                                "category": q.get("category"), "gold": sorted(gold), "rank": rank, "found": found})
            cat = per_cat[q.get("category", "-")]
            cat[0] += 1
            cat[1] += int(rank is not None)
        if embedding_cache and not embedding_cache.is_file():
            from core.embeddings import get_embedder
            get_embedder(settings)._conn.commit()
            shutil.copy(tmp / "embedding_cache.sqlite", embedding_cache)
        if details:
            with details.open("w", encoding="utf-8") as f:
                f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in detail_rows)
        n = len(questions) or 1
        if verbose:
            for cat, (total, hits) in sorted(per_cat.items(), key=lambda kv: str(kv[0])):
                print(f"category {cat}: n={total} hit@10={hits / total:.3f}", file=sys.stderr)
        return {"set": directory.name, "n": len(questions),
                "hit@1": round(hit[1] / n, 4), "hit@5": round(hit[5] / n, 4), "hit@10": round(hit[10] / n, 4),
                "mrr@10": round(mrr / n, 4), "recall@10": round(recall / n, 4),
                "add_per_s": round(len(memories) / add_s, 1) if add_s else None,
                "search_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
                "search_p95_ms": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1) if latencies else None,
                "retrieval_mode": retrieval_mode, "fusion": fusion or "convex", "recency_reference": recency_reference,
                "embedding_cache_preloaded": preloaded}
    finally:
        from memory.manager import close_memory_stores
        close_memory_stores(settings)
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m memory.eval", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="folder with memories.jsonl and questions.jsonl")
    parser.add_argument("--recency-reference", choices=["now", "newest"], default="now",
                        help="measure memory age from the clock (default) or the user's newest memory")
    parser.add_argument("--mode", choices=["hybrid", "dense"], default="hybrid",
                        help="episodic relevance: dense + BM25 (default), or dense only")
    parser.add_argument("--fusion", choices=["convex", "rrf"], default=None,
                        help="hybrid fusion: 0.7·cosine + 0.3·BM25 (default) or reciprocal rank fusion")
    parser.add_argument("--embedding-cache", type=Path, default=None,
                        help="reuse this embedding cache file (created on first use) for faster reruns; "
                             "add_per_s is then not the embedding-bound figure")
    parser.add_argument("--max-questions", type=int, default=None)
    parser.add_argument("--details", type=Path, default=None, help="write each question's rank and hits here (JSONL)")
    args = parser.parse_args(argv)
    for name in ("memories.jsonl", "questions.jsonl"):
        if not (args.directory / name).is_file():
            parser.error(f"{args.directory / name} is missing; convert the data with ../shared/eval/convert.py")
    result = run(args.directory, recency_reference=args.recency_reference, retrieval_mode=args.mode, fusion=args.fusion,
                 embedding_cache=args.embedding_cache, max_questions=args.max_questions, details=args.details)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

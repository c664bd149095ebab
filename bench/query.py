"""Query benchmark: retrieval p50/p95 (no LLM) with N chunks in one user's knowledge base (default 50,000).

Chunk texts are real sentences (Think Python's, reshuffled) so BM25 postings look like a real book's;
vectors are random unit vectors — a dense search costs the same whatever the numbers are, and embedding
50k chunks would take most of an hour on 2 cores. The query itself IS embedded by the real model.

    python bench/query.py [--chunks 50000] [--queries 100] [--mode hybrid]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.settings import Settings  # noqa: E402
from rag.types import Chunk  # noqa: E402
from rag.store import DocumentRecord  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
QUERIES = ["What is a function?", "How do I iterate over a dictionary?", "What does the return statement do?",
           "Explain recursion with an example", "How are strings immutable?", "What is a tuple used for?",
           "How do classes and objects relate?", "What is inheritance?", "How do I read a file?",
           "What is a list comprehension?"]


def sentences() -> list[str]:
    from rag.convert import convert_file
    text = convert_file(SHARED / "docs" / "pdfs_en" / "thinkpython2.pdf").markdown
    return [s.strip() for s in text.replace("\n", " ").split(". ") if len(s.strip()) > 20]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "bm25"])
    args = ap.parse_args()
    rng = random.Random(7)
    pool = sentences()
    with tempfile.TemporaryDirectory(prefix="bench-query-") as tmp:
        from rag.tool import RAGTool
        tool = RAGTool("bench", Settings(_env_file=None, data_dir=Path(tmp)))
        dim = tool.embedder.dim
        tool.vectors.ensure_collection(tool.collection, dim)
        t = time.perf_counter()
        per_doc = 1000
        for d in range(0, args.chunks, per_doc):
            doc_id = f"doc{d // per_doc:04d}"
            chunks = []
            for i in range(min(per_doc, args.chunks - d)):
                text = " ".join(rng.sample(pool, 6))
                chunks.append(Chunk(f"{doc_id}:{i}", doc_id, i, text, ["Bench", f"Section {i % 20}"], i // 3 + 1,
                                    i // 3 + 1, 0, len(text), len(text.split())))
            vectors = np.random.default_rng(d).standard_normal((len(chunks), dim)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            tool.vectors.upsert(tool.collection, [c.chunk_id for c in chunks], vectors,
                                [{"doc_id": doc_id} for _ in chunks])
            tool.store.add_document("bench", DocumentRecord(doc_id, f"{doc_id}.pdf", doc_id, None, "pdf",
                                                            per_doc // 3, len(chunks), 0, [], time.time()),
                                    chunks)
        build_s = time.perf_counter() - t
        tool.search(QUERIES[0], mode=args.mode)            # warm caches
        latencies = []
        for i in range(args.queries):
            q = QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {rng.choice(pool)[:40]}")
            t = time.perf_counter()
            tool.search(q, mode=args.mode, top_k=10)
            latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    print(json.dumps({"chunks": args.chunks, "mode": args.mode, "queries": args.queries, "build_s": round(build_s, 1),
                      "p50_ms": round(latencies[len(latencies) // 2], 1),
                      "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1], 1)}))


if __name__ == "__main__":
    main()

"""Memory benchmark: add throughput and search latency for one user among several.

    python bench/memory.py --sizes 10000,100000 --users 10 --others 1000 --queries 200

The measured user grows to each size in turn (adds are timed, in `add_many` batches); the other
users get `--others` memories each, so every search runs next to other users' data. Searches are
the default hybrid episodic search (dense + BM25). Texts are synthetic study notes from a fixed
seed (no data set needed): common words plus three words from a Zipf-distributed made-up vocabulary.
"Specific" queries name a topic and a word of one of the user's notes (end to end, with the query
embedded by the model, and again with the embedding cached); "generic" queries use only common words
that are in a third of all notes, the worst case for keyword search. The embedding bound is the embedding model's own throughput on the same
kind of text: adds cannot beat it and should not be much slower. Prints one JSON line per size.
Everything is written to a temporary data folder (or --data-dir), never the user's.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOPICS = ("recursion", "binary trees", "hash tables", "gradient descent", "linear algebra", "eigenvalues",
          "probability", "Bayes rule", "sorting algorithms", "dynamic programming", "graph search",
          "neural networks", "backpropagation", "regularisation", "SQL joins", "transactions", "TCP",
          "compilers", "parsing", "type systems", "photosynthesis", "cell biology", "thermodynamics",
          "the French revolution", "supply and demand", "game theory", "number theory", "calculus")
VERBS = ("read about", "practised", "reviewed", "took notes on", "struggled with", "explained",
         "summarised", "asked a question about", "watched a lecture on", "solved exercises on")
PLACES = ("in the library", "at home", "on the train", "with Maria", "in the study group", "before the exam",
          "after class", "late at night", "during lunch", "with the tutor")
DETAILS = ("page {p} of the textbook", "chapter {c}", "exercise {c}.{p}", "the worked example",
           "a tricky proof", "the summary table", "an old exam question", "the lecture slides")


_SYLLABLES = ("ka", "lo", "mi", "ren", "tu", "sa", "vel", "dor", "pi", "qua", "zen", "bri", "mon", "tal", "ex",
              "ul", "gor", "fen", "ri", "sto")


def vocabulary(size: int = 20000, seed: int = 7) -> list[str]:
    """Made-up words standing in for the names, places and terms that make real notes specific."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCAB = vocabulary()
_ZIPF = [1.0 / (r + 1) ** 1.07 for r in range(len(VOCAB))]


def synthetic_notes(n: int, seed: int) -> list[tuple[str, list[str]]]:
    """(text, its specific words): a study note built from common words plus three words drawn from a
    Zipf-distributed vocabulary, as real notes mix common words with rarer names and terms."""
    rng = random.Random(seed)
    specific = rng.choices(VOCAB, weights=_ZIPF, k=3 * n)
    out = []
    for i in range(n):
        topic, other = rng.sample(TOPICS, 2)
        detail = rng.choice(DETAILS).format(p=rng.randint(1, 400), c=rng.randint(1, 30))
        words = specific[3 * i:3 * i + 3]
        out.append((f"I {rng.choice(VERBS)} {topic} {rng.choice(PLACES)}, using {detail} about {words[0]} and "
                    f"{words[1]}; it connects to {other} and {words[2]}.", words))
    return out


def synthetic_texts(n: int, seed: int) -> list[str]:
    return [t for t, _ in synthetic_notes(n, seed)]


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1)))]


def reuse_embeddings(pool_size: int) -> None:
    """Benchmark only: memories past the first `pool_size` get a pooled vector plus small noise."""
    import numpy as np
    from memory.vector_memory import VectorBackedMemory

    real = VectorBackedMemory.embed_documents
    pool: list = []
    rng = np.random.default_rng(0)

    def embed_documents(self, texts):
        if len(pool) < pool_size:
            vecs = real(self, texts)
            pool.extend(vecs)
            return vecs
        picks = np.stack([pool[i] for i in rng.integers(0, len(pool), len(texts))])
        noisy = picks + rng.normal(0, 0.02, picks.shape).astype(np.float32)
        return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)

    VectorBackedMemory.embed_documents = embed_documents


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="memories of the measured user, ascending")
    parser.add_argument("--users", type=int, default=10, help="users in all (the measured one included)")
    parser.add_argument("--others", type=int, default=1000, help="memories of each other user")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1000, help="memories per add_many call")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary folder, removed after")
    parser.add_argument("--reuse-embeddings", type=int, default=0, metavar="N",
                        help="embed only the first N distinct texts and give later memories one of those vectors "
                             "(plus noise): measures the stores at sizes the CPU cannot embed in time. "
                             "add_per_s then excludes the model and is reported as store_add_per_s")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch intra-op threads (torch.set_num_threads); on a busy 2-core machine one "
                             "thread embeds a single query in ~10 ms where two threads took ~1 s")
    args = parser.parse_args(argv)
    if args.torch_threads:
        import torch
        torch.set_num_threads(args.torch_threads)
    sizes = sorted(int(s) for s in args.sizes.split(","))

    from core.embeddings import get_embedder
    from core.settings import Settings
    from memory.manager import MemoryManager

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="memory-bench-"))
    settings = Settings(_env_file=None, data_dir=data_dir)
    try:
        embedder = get_embedder(settings)
        probe = synthetic_texts(500, seed=999)
        t = time.perf_counter()
        embedder.inner.embed(probe)  # the raw model, not the cache
        embed_per_s = len(probe) / (time.perf_counter() - t)

        if args.reuse_embeddings:
            reuse_embeddings(args.reuse_embeddings)

        for u in range(1, args.users):
            other = MemoryManager(settings, f"bench-user-{u}")
            texts = synthetic_texts(args.others, seed=u)
            for i in range(0, len(texts), args.batch):
                other.add_many([{"content": x} for x in texts[i:i + args.batch]], "episodic")

        target = MemoryManager(settings, "bench-user-0")
        notes = synthetic_notes(sizes[-1], seed=0)
        texts = [t for t, _ in notes]
        rng = random.Random(42)
        added = 0
        for size in sizes:
            t = time.perf_counter()
            while added < size:
                chunk = texts[added:min(size, added + args.batch)]
                target.add_many([{"content": x, "importance": rng.random()} for x in chunk], "episodic")
                added += len(chunk)
            add_s = time.perf_counter() - t
            new = size - (sizes[sizes.index(size) - 1] if sizes.index(size) else 0)
            # Specific queries name a topic and one of the specific words of a note the user has;
            # generic ones only common words (the worst case for keyword search: every word is everywhere).
            picks = [notes[rng.randrange(size)] for _ in range(args.queries)]
            queries = [f"{rng.choice(TOPICS)} {rng.choice(words)}" for _, words in picks]
            generic = [f"{rng.choice(VERBS)} {rng.choice(TOPICS)} {rng.choice(PLACES)}" for _ in range(args.queries)]
            target.search(queries[0], memory_type="episodic")  # warm-up
            latencies = []   # end to end: the query is embedded by the model, then searched
            for q in queries:
                t = time.perf_counter()
                target.search(q, memory_type="episodic", limit=10)
                latencies.append((time.perf_counter() - t) * 1000)
            stores = []      # the same queries again: their embeddings come from the cache
            for q in queries:
                t = time.perf_counter()
                target.search(q, memory_type="episodic", limit=10)
                stores.append((time.perf_counter() - t) * 1000)
            for q in generic:
                embedder.embed_query(q)
            generic_ms = []
            for q in generic:
                t = time.perf_counter()
                target.search(q, memory_type="episodic", limit=10)
                generic_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            for q in queries[:20]:
                target.search(q, memory_type="episodic", limit=10, min_importance=0.5)
            filtered_ms = (time.perf_counter() - t) * 1000 / 20
            rate_key = "store_add_per_s" if args.reuse_embeddings else "add_per_s"
            print(json.dumps({
                "memories_of_user": size, "users": args.users, "memories_total": size + (args.users - 1) * args.others,
                rate_key: round(new / add_s, 1), "embedding_bound_per_s": round(embed_per_s, 1),
                "embeddings_reused_beyond": args.reuse_embeddings or None,
                "search_p50_ms": round(statistics.median(latencies), 1),
                "search_p95_ms": round(percentile(latencies, 0.95), 1),
                "search_without_embedding_p50_ms": round(statistics.median(stores), 1),
                "search_without_embedding_p95_ms": round(percentile(stores, 0.95), 1),
                "generic_search_without_embedding_p50_ms": round(statistics.median(generic_ms), 1),
                "generic_search_without_embedding_p95_ms": round(percentile(generic_ms, 0.95), 1),
                "filtered_search_mean_ms": round(filtered_ms, 1), "queries": len(queries),
                "load_average": round(os.getloadavg()[0], 1), "cpus": os.cpu_count(),
                "torch_threads": args.torch_threads}), flush=True)
    finally:
        from memory.manager import close_memory_stores
        close_memory_stores(settings)
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()

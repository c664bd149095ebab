"""Time the graph stores: a 1,000-row MERGE batch and 2-hop reads, embedded SQLite vs Neo4j over Bolt.

    python bench/graph.py                  # both: SQLite in a temp folder, Bolt via ArcadeDB (tests/bolt_server.py)
    python bench/graph.py --backend sqlite
    NEO4J_URI=bolt://... NEO4J_PASSWORD=... python bench/graph.py --backend neo4j   # a real Neo4j

Graph for the reads: 500 memories over 2,000 entities, each memory mentioning 4 entities and
recording 3 relations (random, seeded), so a 2-hop walk reaches a few dozen entities.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.graph import Entity, Relation  # noqa: E402
from memory.graph.base import GraphStore  # noqa: E402


def timed(fn, repeat: int = 1) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.2f} ms  (min {min(values) * 1000:.2f}, max {max(values) * 1000:.2f}, n={len(values)})"


def run(name: str, store: GraphStore) -> None:
    user = "bench"
    print(f"\n== {name}: {store!r}")
    entities = [Entity(f"batch concept {i}", f"Batch concept {i}", "CONCEPT", {"i": i}) for i in range(1000)]
    relations = [Relation(f"batch concept {i}", f"batch concept {i + 1}", "NEXT") for i in range(999)]
    hub = [Relation("batch concept 0", f"batch concept {i}", "HAS") for i in range(1, 1000)]
    # Each timing runs 3 times on a fresh user, so the first (cold: JIT, caches) shows next to warm ones.
    for label, rels in (("1,000 entities, new        ", []), ("1,000 entities + 999 chain ", relations),
                        ("1,000 entities + 999 hub   ", hub)):
        users = iter(f"{user}-{label.split()[-1]}-{i}" for i in range(3))
        print(f"  {label}: {ms(timed(lambda: store.add_memory(next(users), 'b0', entities, rels), 3))}")
    users = iter(f"{user}-chain-{i}" for i in range(3))
    print(f"  same batch again (re-MERGE): {ms(timed(lambda: store.add_memory(next(users), 'b0', entities, relations), 3))}")
    users = iter(f"{user}-chain-{i}" for i in range(3))
    print(f"  remove_memory (1,000 orphans): {ms(timed(lambda: store.remove_memory(next(users), 'b0'), 3))}")
    for prefix in ("new", "chain", "hub"):
        for i in range(3):
            store.clear_user(f"{user}-{prefix}-{i}")
    store.clear_user(user)

    rng = random.Random(7)
    keys = [f"entity {i}" for i in range(2000)]
    start = time.perf_counter()
    for m in range(500):
        chosen = rng.sample(keys, 4)
        store.add_memory(user, f"m{m}", [Entity(k, k.title()) for k in chosen],
                         [Relation(chosen[0], chosen[i], "RELATED_TO") for i in (1, 2, 3)])
    print(f"  500 memories one by one     : {(time.perf_counter() - start):.2f} s  {store.stats(user)}")
    queries = [[k] for k in rng.sample(keys, 100)]
    sizes = [len(store.neighbours(user, q, depth=2, limit=1000)) for q in queries]
    it = iter(queries * 3)
    print(f"  neighbours depth 2          : {ms(timed(lambda: store.neighbours(user, next(it), depth=2), 200))}"
          f"  ~{statistics.mean(sizes):.0f} entities reached")
    it = iter(queries * 3)
    print(f"  neighbours depth 1          : {ms(timed(lambda: store.neighbours(user, next(it), depth=1), 200))}")
    it = iter(queries * 3)
    print(f"  memories_for depth 2        : {ms(timed(lambda: store.memories_for(user, next(it), depth=2), 200))}")
    print(f"  view (200 nodes)            : {ms(timed(lambda: store.view(user), 10))}")
    print(f"  stats                       : {ms(timed(lambda: store.stats(user), 10))}")
    store.clear_user(user)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "bolt", "neo4j", "all"], default="all")
    args = parser.parse_args()
    if args.backend in ("sqlite", "all"):
        from memory.graph.sqlite_store import SQLiteGraphStore
        with tempfile.TemporaryDirectory() as folder, SQLiteGraphStore(Path(folder) / "graph.sqlite3") as store:
            run("SQLite (embedded)", store)
    if args.backend in ("bolt", "all"):
        from memory.graph.neo4j_store import Neo4jGraphStore
        from tests.bolt_server import bolt_server
        with bolt_server() as server, contextlib.closing(Neo4jGraphStore(
                server.uri, server.username, server.password, server.database)) as store:
            run("Neo4j driver -> ArcadeDB Bolt (local)", store)
    if args.backend == "neo4j":
        from memory.graph.neo4j_store import Neo4jGraphStore
        with Neo4jGraphStore(os.environ["NEO4J_URI"], os.environ.get("NEO4J_USERNAME", "neo4j"),
                             os.environ.get("NEO4J_PASSWORD"), os.environ.get("NEO4J_DATABASE")) as store:
            run("Neo4j", store)


if __name__ == "__main__":
    main()

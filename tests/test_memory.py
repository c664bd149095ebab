"""MemoryManager and MemoryTool against the real stores: SQLite (WAL), the Qdrant local client, the
embedded graph store, the packaged embedding model and spaCy.

One data folder serves the module (the embedding model loads once); each test uses its own user ids,
which is also what isolation means: users never see each other, even in one folder.
"""
from __future__ import annotations

import itertools
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from core.errors import InvalidRequest, StoreUnavailable
from core.settings import Settings
from core.vectors import collection_name, get_vector_store
from memory.manager import MemoryManager, close_memory_stores
from memory.scoring import episodic_score, semantic_score
from memory.semantic import get_graph_store
from memory.tool import ACTIONS, MemoryTool
from memory.types import MemoryNotFound, MemoryType

_ids = itertools.count()


@pytest.fixture(scope="module")
def mem_settings(tmp_path_factory) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("memory") / "data")


@pytest.fixture
def user(request) -> str:
    return f"{request.node.name}-{next(_ids)}"


@pytest.fixture
def mm(mem_settings, user) -> MemoryManager:
    return MemoryManager(mem_settings, user)


def restart(settings: Settings) -> None:
    """What a process restart does to the stores: every client closed, working memory gone."""
    close_memory_stores(settings)


# -- add / get / search --------------------------------------------------------------------------

def test_add_get_and_fields(mm):
    item = mm.add("Read chapter 3 on recursion", "episodic", 0.7, metadata={"doc": "think.pdf", "page": 31},
                  timestamp="2024-03-01T10:00:00", session_id="s1")
    got = mm.get(item.id)
    assert got.content == "Read chapter 3 on recursion"
    assert got.memory_type is MemoryType.EPISODIC and got.importance == 0.7
    assert got.metadata == {"doc": "think.pdf", "page": 31}
    assert got.timestamp == datetime(2024, 3, 1, 10, tzinfo=timezone.utc)
    assert got.session_id == "s1" and got.user_id == mm.user_id


def test_every_type_is_searchable_and_scored_by_its_formula(mm):
    mm.add("I am reading about binary search trees right now", "working", 0.6)
    ep = mm.add("Studied binary search trees in the data structures course", "episodic", 0.5)
    sem = mm.add("A binary search tree keeps smaller keys in the left subtree", "semantic", 0.9)
    per = mm.add("Diagram of a binary search tree with seven nodes", "perceptual", 0.4, modality="image",
                 file_path="figures/bst.png")
    hits = mm.search("binary search tree", limit=10)
    assert {h.memory_type for h in hits} == set(MemoryType)
    by_id = {h.id: h for h in hits}
    e = by_id[ep.id].score_parts
    assert by_id[ep.id].score == pytest.approx(episodic_score(e["relevance"], e["recency"], 0.5))
    assert e["recency"] == pytest.approx(1.0, abs=0.01)  # added just now
    s = by_id[sem.id].score_parts
    assert by_id[sem.id].score == pytest.approx(semantic_score(s["vector"], s["graph"], 0.9))
    assert s["graph"] == 1.0  # the query names an entity of the memory
    assert by_id[per.id].metadata["modality"] == "image"
    assert by_id[per.id].metadata["source_path"] == "figures/bst.png"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_filters_type_importance_time_and_limit(mm):
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i in range(6):
        mm.add(f"Practised Python list comprehensions, exercise {i}", "episodic", importance=i / 10,
               timestamp=base + timedelta(days=i))
    mm.add("Python list comprehensions build lists concisely", "semantic", 0.5)
    only_ep = mm.search("python list comprehensions", memory_type="episodic", limit=10)
    assert len(only_ep) == 6 and all(h.memory_type is MemoryType.EPISODIC for h in only_ep)
    both = mm.search("python list comprehensions", memory_types=["episodic", "semantic"], limit=3)
    assert len(both) == 3
    important = mm.search("python list comprehensions", memory_type="episodic", min_importance=0.35)
    assert sorted(h.importance for h in important) == [0.4, 0.5]
    window = mm.search("python list comprehensions", memory_type="episodic",
                       since=base + timedelta(days=1), until=(base + timedelta(days=2)).isoformat())
    assert sorted(h.content[-1] for h in window) == ["1", "2"]


def test_hybrid_search_finds_exact_keywords(mm):
    mm.add("Melanie: I signed up for a pottery class last week.", "episodic", session_id="s1",
           timestamp="2023-05-08T10:00:00")
    mm.add("Caroline: The weather was lovely at the beach.", "episodic", session_id="s1",
           timestamp="2023-05-08T10:01:00")
    hits = mm.search("pottery", memory_type="episodic", limit=2)
    assert "pottery" in hits[0].content
    assert hits[0].score_parts["keyword"] == 1.0


def test_episodic_timeline_and_sessions(mm):
    mm.add("second", "episodic", timestamp="2024-01-02T00:00:00", session_id="a")
    mm.add("first", "episodic", timestamp="2024-01-01T00:00:00", session_id="a")
    mm.add("third", "episodic", timestamp="2024-01-03T00:00:00", session_id="b")
    assert [m.content for m in mm.timeline()] == ["first", "second", "third"]
    assert [m.content for m in mm.timeline(session_id="a")] == ["first", "second"]
    sessions = mm.sessions()
    assert [s["session_id"] for s in sessions] == ["b", "a"] and sessions[1]["count"] == 2


def test_add_many_batches_and_rejects_whole_batch_on_bad_record(mm):
    items = mm.add_many([{"content": f"note {i} about sorting algorithms", "importance": 0.5} for i in range(20)])
    assert len(items) == 20 and mm.counts()["episodic"] == 20
    with pytest.raises(InvalidRequest, match="Memory 2 of the batch"):
        mm.add_many([{"content": "fine"}, {"content": "  "}])
    assert mm.counts()["episodic"] == 20


# -- update / remove -----------------------------------------------------------------------------

def test_update_content_reembeds_and_reextracts(mm):
    item = mm.add("Photosynthesis happens in chloroplasts", "semantic", 0.5)
    mm.update(item.id, content="Mitochondria produce ATP for the cell", importance=0.8, metadata={"src": "bio"})
    got = mm.get(item.id)
    assert got.content.startswith("Mitochondria") and got.importance == 0.8 and got.metadata["src"] == "bio"
    assert mm.search("mitochondria ATP", memory_type="semantic")[0].id == item.id
    graph = get_graph_store(mm.settings)
    assert graph.memories_for(mm.user_id, ["chloroplast"]) == {}
    assert item.id in graph.memories_for(mm.user_id, ["mitochondria"])


def test_update_working_memory(mm):
    item = mm.add("thinking about heaps", "working", 0.3)
    mm.update(item.id, importance=0.9)
    assert mm.get(item.id).importance == 0.9


def test_remove_deletes_from_every_store(mm):
    sem = mm.add("Dijkstra's algorithm finds shortest paths in weighted graphs", "semantic", 0.6)
    keep = mm.add("Edsger Dijkstra wrote about structured programming", "semantic", 0.6)
    ep = mm.add("Watched a lecture on shortest paths", "episodic", 0.5)
    settings = mm.settings
    vectors = get_vector_store(settings)
    graph = get_graph_store(settings)
    before = graph.stats(mm.user_id)
    assert vectors.count(collection_name("memory_semantic", mm.user_id)) == 2

    mm.remove(sem.id)
    mm.remove(ep.id)
    assert mm.get(sem.id) is None and mm.get(ep.id) is None
    assert vectors.count(collection_name("memory_semantic", mm.user_id)) == 1
    assert vectors.count(collection_name("memory_episodic", mm.user_id)) == 0
    assert sem.id not in graph.memories_for(mm.user_id, ["shortest path", "weighted graph"])
    after = graph.stats(mm.user_id)
    assert after["entities"] < before["entities"] and after["memory_links"] < before["memory_links"]
    assert keep.id in graph.memories_for(mm.user_id, ["edsger dijkstra"])
    conn = sqlite3.connect(settings.data_dir / "memory" / "memories.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM memories WHERE id IN (?, ?)", (sem.id, ep.id)).fetchone()[0] == 0
    assert mm.search("shortest paths weighted graphs", memory_types=["episodic"]) == []
    with pytest.raises(MemoryNotFound):
        mm.remove(sem.id)


# -- forget / consolidate ------------------------------------------------------------------------

def test_forget_importance_based(mm):
    low = mm.add("a trivial aside", "episodic", 0.05)
    mm.add("a key insight", "episodic", 0.9)
    wlow = mm.add("passing thought", "working", 0.05)
    result = mm.forget("importance_based", threshold=0.1)
    assert set(result.removed_ids) == {low.id, wlow.id}
    assert mm.counts()["episodic"] == 1 and mm.get(wlow.id) is None


def test_forget_dry_run_removes_nothing(mm):
    low = mm.add("a trivial aside", "semantic", 0.05)
    result = mm.forget("importance_based", threshold=0.1, dry_run=True)
    assert result.dry_run and result.removed_ids == [low.id] and mm.get(low.id) is not None


def test_list_newest_first_with_working_memory(mm):
    mm.add("older episode", "episodic", timestamp="2024-01-01T00:00:00")
    mm.add("newer note", "semantic", timestamp="2024-02-01T00:00:00")
    mm.add("right now", "working")
    assert [m.content for m in mm.list()] == ["right now", "newer note", "older episode"]
    assert [m.content for m in mm.list(["episodic", "semantic"], since="2024-01-15")] == ["newer note"]
    assert len(mm.list(limit=2)) == 2


def test_forget_time_based(mm):
    old = mm.add("what I read last year", "episodic", 0.9, timestamp=datetime.now(timezone.utc) - timedelta(days=400))
    new = mm.add("what I read today", "episodic", 0.1)
    result = mm.forget("time_based", max_age_days=30)
    assert result.removed_ids == [old.id] and mm.get(new.id) is not None


def test_forget_capacity_based_keeps_most_important(mm):
    items = [mm.add(f"fact number {i}", "semantic", importance=i / 10) for i in range(5)]
    result = mm.forget("capacity_based", capacity=2, memory_types=["semantic"])
    assert set(result.removed_ids) == {i.id for i in items[:3]}
    assert {m.content for m in mm.search("fact number", memory_type="semantic")} == {"fact number 3", "fact number 4"}


def test_consolidate_promotes_with_provenance(mm):
    w_hi = mm.add("Big-O describes how running time grows with input size", "working", 0.9)
    w_lo = mm.add("maybe get coffee", "working", 0.2)
    e_hi = mm.add("Learned that hash tables give O(1) average lookups", "episodic", 0.85)
    result = mm.consolidate()
    pairs = {(p.source_id, p.source_type, p.target_type) for p in result.promotions}
    assert (w_hi.id, MemoryType.WORKING, MemoryType.EPISODIC) in pairs
    assert (e_hi.id, MemoryType.EPISODIC, MemoryType.SEMANTIC) in pairs
    promoted_ep = next(p.new_id for p in result.promotions if p.source_id == w_hi.id)
    ep = mm.get(promoted_ep)
    assert ep.memory_type is MemoryType.EPISODIC and ep.metadata["consolidated_from"] == w_hi.id
    assert ep.metadata["consolidated_from_type"] == "working"
    assert mm.get(w_hi.id) is None and mm.get(w_lo.id) is not None       # moved; the low one stays
    sem = mm.get(next(p.new_id for p in result.promotions if p.source_id == e_hi.id))
    assert sem.memory_type is MemoryType.SEMANTIC and sem.metadata["consolidated_from"] == e_hi.id
    assert mm.get(e_hi.id).metadata["consolidated_to"] == sem.id          # the episode stays, marked
    # The working item promoted to an episode (0.9 ≥ 0.8) also went on to semantic, once.
    assert (promoted_ep, MemoryType.EPISODIC, MemoryType.SEMANTIC) in pairs
    assert mm.consolidate().promoted == 0


# -- summary / stats / clear_all -----------------------------------------------------------------

def test_summary_and_stats(mm):
    mm.add("Transformers use self-attention", "semantic", 0.9)
    mm.add("Read the attention paper", "episodic", 0.6)
    mm.add("current focus: positional encodings", "working", 0.5)
    stats = mm.stats()
    assert stats.counts == {"working": 1, "episodic": 1, "semantic": 1, "perceptual": 0}
    assert stats.total == 3 and stats.vectors["semantic"] == 1 and stats.graph["entities"] >= 1
    summary = mm.summary()
    assert summary.counts == stats.counts and summary.important[0].importance == 0.9
    assert "3 memories" in summary.text and summary.top_entities


def test_clear_all_removes_everything_of_one_user_only(mem_settings, user):
    a, b = MemoryManager(mem_settings, user + "-a"), MemoryManager(mem_settings, user + "-b")
    for m in (a, b):
        m.add("Graph theory: a tree is a connected acyclic graph", "semantic", 0.5)
        m.add("Revised trees and graphs", "episodic", 0.5)
        m.add("Photo of the whiteboard", "perceptual", 0.5, modality="image")
        m.add("thinking about trees", "working", 0.5)
    result = a.clear_all()
    assert result.removed == {"working": 1, "episodic": 1, "semantic": 1, "perceptual": 1}
    assert a.stats().total == 0 and a.stats().graph["entities"] == 0
    assert a.search("trees graphs", limit=10) == []
    vectors = get_vector_store(mem_settings)
    assert vectors.count(collection_name("memory_semantic", a.user_id)) == 0
    assert b.stats().total == 4 and len(b.search("trees graphs", limit=10)) == 4


# -- isolation -----------------------------------------------------------------------------------

def test_user_a_cannot_read_change_or_delete_b_through_any_action(mem_settings, user):
    a, b = MemoryManager(mem_settings, user + "-a"), MemoryManager(mem_settings, user + "-b")
    secret = {t: b.add(f"B's secret about quantum entanglement ({t})", t, 0.9) for t in
              ("working", "episodic", "semantic", "perceptual")}
    a.add("A's note on sorting", "episodic", 0.5)
    for t, item in secret.items():
        assert a.get(item.id) is None
        with pytest.raises(MemoryNotFound):
            a.update(item.id, content="hijacked")
        with pytest.raises(MemoryNotFound):
            a.remove(item.id)
    assert a.search("quantum entanglement secret", limit=10)[0].content == "A's note on sorting"
    assert all("B's" not in h.content for h in a.search("quantum entanglement secret", limit=10))
    assert a.forget("importance_based", threshold=1.0).removed == 1       # only A's own note
    assert a.forget("capacity_based", capacity=0).removed == 0
    a.add("A's important note", "episodic", 0.95)
    assert {p.source_id for p in a.consolidate().promotions}.isdisjoint({i.id for i in secret.values()})
    assert "quantum" not in a.summary().text and a.stats().total == 2
    a.clear_all()
    # B is intact in every store.
    for item in secret.values():
        got = b.get(item.id)
        assert got is not None and got.content.startswith("B's secret")
    assert b.stats().graph["entities"] >= 1
    assert len(b.search("quantum entanglement", limit=10)) == 4

    tool_a = MemoryTool(user_id=a.user_id, settings=mem_settings)
    for action, kwargs in [("get", {"memory_id": secret["episodic"].id}),
                           ("update", {"memory_id": secret["semantic"].id, "content": "x"}),
                           ("remove", {"memory_id": secret["perceptual"].id})]:
        res = tool_a.execute(action, **kwargs)
        assert not res.ok and "no memory" in res.message.lower()
    assert b.get(secret["perceptual"].id) is not None


# -- restart -------------------------------------------------------------------------------------

def test_restart_finds_everything_but_working_memory(mem_settings, user):
    mm = MemoryManager(mem_settings, user)
    ep = mm.add("Visited the library to read about compilers", "episodic", 0.6, session_id="s9")
    sem = mm.add("A compiler translates source code to machine code", "semantic", 0.7)
    per = mm.add("Scan of the dragon book cover", "perceptual", 0.5, modality="image")
    wm = mm.add("just a passing thought about compilers", "working", 0.5)
    restart(mem_settings)

    again = MemoryManager(mem_settings, user)
    assert again.get(ep.id).content == ep.content and again.get(sem.id) and again.get(per.id)
    assert again.get(wm.id) is None  # working memory lives in process, by design
    found = {h.id for h in again.search("compiler", limit=10)}
    assert {ep.id, sem.id, per.id} <= found
    assert again.search("compiler", memory_type="semantic")[0].score_parts["graph"] == 1.0
    assert again.stats().vectors == {"episodic": 1, "semantic": 1, "perceptual": 1}
    assert again.sessions()[0]["session_id"] == "s9"


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda m: m.add("", "episodic"), "content is empty"),
    (lambda m: m.add("   ", "working"), "content is empty"),
    (lambda m: m.add("x", "episodic", importance=1.5), "between 0 and 1"),
    (lambda m: m.add("x", "episodic", importance=-0.1), "between 0 and 1"),
    (lambda m: m.add("x", "episodic", importance="high"), "number from 0 to 1"),
    (lambda m: m.add("x", "dream"), "Unknown memory type 'dream'"),
    (lambda m: m.add("x", "episodic", metadata=["not", "a", "dict"]), "Metadata must be a dictionary"),
    (lambda m: m.add("x", "episodic", timestamp="yesterday-ish"), "Cannot read the time"),
    (lambda m: m.add("x", "episodic", modality="image"), "Only perceptual memories"),
    (lambda m: m.search(""), "query is empty"),
    (lambda m: m.search("x", limit=0), "limit"),
    (lambda m: m.search("x", memory_type="dream"), "Unknown memory type"),
    (lambda m: m.search("x", since="2024-02-01", until="2024-01-01"), "time range is empty"),
    (lambda m: m.forget("randomly"), "Unknown forget strategy"),
    (lambda m: m.forget("time_based", max_age_days=-1), "max_age_days"),
    (lambda m: m.update("nope", content="x"), "no memory 'nope'"),
    (lambda m: m.remove("nope"), "no memory 'nope'"),
])
def test_bad_input_gets_one_clear_sentence(mm, call, message):
    with pytest.raises(InvalidRequest) as err:
        call(mm)
    assert message.lower() in str(err.value).lower()
    assert str(err.value).endswith(".") and "\n" not in str(err.value)


def test_manager_needs_a_user(mem_settings):
    with pytest.raises(InvalidRequest, match="user id"):
        MemoryManager(mem_settings, "  ")


# -- the tool ------------------------------------------------------------------------------------

def test_tool_dispatches_every_action(mem_settings, user):
    tool = MemoryTool(user_id=user, settings=mem_settings)
    added = tool.execute("add", content="Quicksort partitions around a pivot", memory_type="semantic",
                         importance=0.85)
    assert added.ok and added.data.memory_type is MemoryType.SEMANTIC
    mid = added.data.id
    assert tool.execute("add", content="Mergesort is stable", memory_type="episodic", importance=0.9).ok
    found = tool.execute("search", query="quicksort pivot", limit=3)
    assert found.ok and found.data[0].id == mid and "Quicksort" in str(found)
    assert tool.execute("get", memory_id=mid).data.id == mid
    assert tool.execute("update", memory_id=mid, importance=0.95).data.importance == 0.95
    assert "2 memories" in tool.execute("stats").message
    assert tool.execute("summary").ok
    assert tool.execute("consolidate").data.promoted == 1
    assert tool.execute("forget", strategy="importance_based", threshold=0.5).ok
    assert tool.execute("remove", memory_id=mid).ok
    cleared = tool.execute("clear_all")
    assert cleared.ok and cleared.data.total == 2
    assert set(ACTIONS) == {"add", "search", "get", "summary", "stats", "update", "remove", "forget",
                            "consolidate", "clear_all"}


def test_tool_errors_are_clear_and_never_success(mem_settings, user):
    tool = MemoryTool(user_id=user, settings=mem_settings)
    for action, kwargs, text in [("fly", {}, "Unknown memory action 'fly'"),
                                 ("add", {"content": ""}, "content is empty"),
                                 ("add", {"content": "x", "importance": 3}, "between 0 and 1"),
                                 ("add", {"content": "x", "memory_type": "dream"}, "Unknown memory type"),
                                 ("search", {"query": "x", "colour": "red"}, "Wrong arguments")]:
        res = tool.execute(action, **kwargs)
        assert not res.ok and text.lower() in res.message.lower(), res.message


# -- perceptual ----------------------------------------------------------------------------------

def test_perceptual_per_modality_and_file_description(mm, tmp_path):
    img = tmp_path / "loss_curve_epoch10.png"
    img.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 100)
    from_file = mm.add(None, "perceptual", 0.5, file_path=str(img))
    assert from_file.metadata["modality"] == "image" and "loss_curve_epoch10.png" in from_file.content
    audio = mm.add("Recording of the lecture on eigenvalues", "perceptual", 0.5, modality="audio")
    assert mm.search("loss curve", memory_type="perceptual")[0].id == from_file.id
    only_audio = mm.search("lecture eigenvalues loss curve", memory_type="perceptual", modality="audio")
    assert [h.id for h in only_audio] == [audio.id]
    vectors = get_vector_store(mm.settings)
    assert vectors.count(collection_name("memory_perceptual_image", mm.user_id)) == 1
    assert vectors.count(collection_name("memory_perceptual_audio", mm.user_id)) == 1


# -- semantic graph search -----------------------------------------------------------------------

def test_graph_search_reaches_memories_vectors_miss(mm):
    linked = mm.add("Ada Lovelace worked with Charles Babbage on the Analytical Engine", "semantic", 0.5)
    far = mm.add("The Analytical Engine used punched cards borrowed from the Jacquard loom", "semantic", 0.5)
    hits = {h.id: h for h in mm.search("Ada Lovelace", memory_type="semantic", limit=5)}
    assert hits[linked.id].score_parts["graph"] == 1.0
    # `far` never mentions Ada Lovelace: it is found through the shared concept, 1 hop away.
    assert far.id in hits and 0 < hits[far.id].score_parts["graph"] < 1.0


def test_chinese_semantic_memory(mm):
    item = mm.add("张三在北京大学学习机器学习", "semantic", 0.6)
    hits = mm.search("北京大学", memory_type="semantic")
    assert hits[0].id == item.id and hits[0].score_parts["graph"] == 1.0
    assert mm.search("北京大学", memory_type="semantic")[0].content == "张三在北京大学学习机器学习"


# -- a configured graph server that is down ------------------------------------------------------

def test_graph_server_down_gives_clear_message_and_nothing_else_breaks(mem_settings, user):
    down = mem_settings.model_copy(update={"neo4j_uri": "bolt://127.0.0.1:9", "neo4j_password": "x"})
    mm = MemoryManager(down, user)
    ep = mm.add("Episodes do not need the graph", "episodic", 0.5)
    with pytest.raises(StoreUnavailable) as err:
        mm.add("Semantic memories do", "semantic", 0.5)
    assert "\n" not in str(err.value)
    assert mm.counts()["semantic"] == 0           # nothing half-written
    assert mm.search("episodes graph", limit=5)[0].id == ep.id


# -- the in-process dense index (Qdrant local mode) ----------------------------------------------

def test_dense_index_matches_qdrant_and_follows_adds_and_removes(mm):
    items = mm.add_many([{"content": f"Lecture {i}: " + topic} for i, topic in enumerate(
        ["sorting with heaps", "graph colouring", "Bayesian inference", "compiler optimisation",
         "cell membranes", "the Roman republic", "supply curves", "eigenvectors of matrices"] * 3)])
    index = mm.episodic.dense_index
    assert index is not None and len(index) == len(items)
    query = mm.episodic.embedder.embed_query("linear algebra eigenvalues")
    ours = index.search(query, 10)
    theirs = mm.episodic.vectors.search(collection_name("memory_episodic", mm.user_id), query, 10)
    assert [i for i, _ in ours] == [h.id for h in theirs]
    assert [s for _, s in ours] == pytest.approx([h.score for h in theirs], abs=1e-4)
    mm.remove(ours[0][0])
    assert ours[0][0] not in [i for i, _ in index.search(query, 10)] and len(index) == len(items) - 1
    new = mm.add("Eigenvalues and eigenvectors of linear maps", "episodic")
    assert index.search(query, 1)[0][0] == new.id
    mm.update(new.id, content="A recipe for tomato soup")
    assert new.id not in [i for i, _ in index.search(query, 3)]


def test_keyword_search_drops_words_that_are_everywhere_when_rarer_ones_exist(mm, monkeypatch):
    from memory import sqlite_store
    for i in range(6):
        mm.add(f"python exercise {i}", "episodic")
    target = mm.add("python decorators wrap functions", "episodic")
    everything = mm.docs.keyword_search(mm.user_id, "python decorators", limit=50)
    assert everything[0][0] == target.id and len(everything) == 7
    monkeypatch.setattr(sqlite_store, "COMMON_DF", 3)   # "python" is now common, "decorators" rare
    anchored = mm.docs.keyword_search(mm.user_id, "python decorators", limit=50)
    assert [i for i, _ in anchored] == [target.id]
    assert mm.docs.keyword_search(mm.user_id, "python", limit=50)[0][1] > 0   # alone it still searches


def test_filtered_dense_search_is_exact_among_the_allowed(mm):
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    items = mm.add_many([{"content": f"Week {i}: studied topic number {i}", "timestamp": (base + timedelta(weeks=i)).isoformat(),
                          "importance": (i % 5) / 5} for i in range(30)])
    index = mm.episodic.dense_index
    query = mm.episodic.embedder.embed_query("studied topic number 7")
    allowed = [it.id for it in items if it.importance >= 0.6]
    got = index.search_among(query, 5, allowed)
    sims = {i: s for i, s in index.cosines(query, allowed).items()}
    expected = sorted(sims, key=sims.get, reverse=True)[:5]
    assert [i for i, _ in got] == expected
    hits = mm.search("studied topic", memory_type="episodic", min_importance=0.6, limit=30)
    assert {h.id for h in hits} == set(allowed)


def test_a_note_is_recalled_by_the_one_code_in_it_among_many_similar_notes(mm):
    """A unique word barely moves a note's embedding; the keyword side of the search finds it."""
    codes = [f"qz{i:04x}{(i * 7919) % 65536:04x}" for i in range(60)]
    mm.add_many([{"content": f"Station {code}: the weather at the coastal station was mild and dry today."}
                 for code in codes], "semantic")
    missed = [code for code in codes
              if code not in mm.search(code, memory_types=["semantic"], limit=5)[0].content]
    assert missed == []

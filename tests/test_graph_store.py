"""One test suite, two graph backends: the embedded SQLite store and Neo4j over Bolt.

The Bolt backend runs against a real server: ArcadeDB with its Neo4j-compatible Bolt plugin,
started once per session from the `arcadedb-embedded` wheel (tests/bolt_server.py). If it cannot
start, the Bolt tests FAIL with the reason; set SKIP_BOLT_TESTS=1 to skip them deliberately.
"""
from __future__ import annotations

import os
import threading
import time
import uuid

import pytest

from memory.graph import (Entity, GraphNeighbour, GraphStoreUnavailable, Relation, create_graph_store,
                          normalise_key)
from memory.graph.neo4j_store import Neo4jGraphStore
from memory.graph.sqlite_store import SQLiteGraphStore
from tests.bolt_server import BoltServerError, bolt_server, free_port

SKIP_BOLT = os.environ.get("SKIP_BOLT_TESTS", "").strip().lower() in {"1", "true", "yes"}


# --- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def bolt():
    """A running Bolt server for the whole session, stopped and deleted at the end."""
    if SKIP_BOLT:
        pytest.skip("SKIP_BOLT_TESTS is set: the Neo4j/Bolt backend is not tested")
    server_cm = bolt_server()
    try:
        server = server_cm.__enter__()
    except BoltServerError as e:
        pytest.fail(f"Cannot start the ArcadeDB Bolt test server, so the Neo4j backend is untested "
                    f"(set SKIP_BOLT_TESTS=1 to skip deliberately): {e}", pytrace=False)
    try:
        yield server
    finally:
        server_cm.__exit__(None, None, None)


def _open_bolt(server) -> Neo4jGraphStore:
    return Neo4jGraphStore(server.uri, server.username, server.password, server.database)


@pytest.fixture(params=["sqlite", "bolt"])
def open_store(request, tmp_path):
    """A function opening a (new) store on this test's backing data: call it again to 'reopen'."""
    opened = []
    if request.param == "sqlite":
        path = tmp_path / "graph.sqlite3"
        factory = lambda: SQLiteGraphStore(path)  # noqa: E731
    else:
        server = request.getfixturevalue("bolt")
        factory = lambda: _open_bolt(server)  # noqa: E731
        with factory() as cleaner:              # every test starts from an empty database
            with cleaner._driver.session(database=server.database) as session:
                session.run("MATCH (n) DETACH DELETE n").consume()

    def open_():
        store = factory()
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store):
    return open_store()


@pytest.fixture
def user():
    return "user-" + uuid.uuid4().hex[:8]


def E(key: str, label: str = "CONCEPT", **properties) -> Entity:
    return Entity(key=normalise_key(key), name=key, label=label, properties=properties)


def R(source: str, target: str, type_: str = "RELATED_TO") -> Relation:
    return Relation(normalise_key(source), normalise_key(target), type_)


def keys_at(neighbours: list[GraphNeighbour]) -> dict[str, int]:
    return {n.key: n.distance for n in neighbours}


def build_chain(store, user):
    """m1: a-b, m2: b-c, m3: c-d, m4: e alone. A chain a - b - c - d, and e apart."""
    store.add_memory(user, "m1", [E("a"), E("b")], [R("a", "b")])
    store.add_memory(user, "m2", [E("b"), E("c")], [R("b", "c", "PART_OF")])
    store.add_memory(user, "m3", [E("c"), E("d")], [R("c", "d")])
    store.add_memory(user, "m4", [E("e")], [])


# --- add / merge -----------------------------------------------------------------------------------

def test_add_memory_is_idempotent(store, user):
    entities = [E("Transformer", "CONCEPT"), E("Attention")]
    relations = [R("Transformer", "Attention", "USES")]
    store.add_memory(user, "m1", entities, relations)
    first = store.stats(user)
    store.add_memory(user, "m1", entities, relations)
    store.add_memory(user, "m1", entities + entities, relations + relations)   # duplicates in one call
    assert store.stats(user) == first == {"entities": 2, "relations": 1, "memory_links": 2}


def test_merge_updates_name_label_and_merges_properties(store, user):
    store.add_memory(user, "m1", [Entity("paris", "paris", "CONCEPT", {"a": 1, "b": 1})], [])
    store.add_memory(user, "m2", [Entity("paris", "Paris", "GPE", {"b": 2, "c": [1, "x"]})], [])
    store.add_memory(user, "m3", [Entity("paris", "Paris", "GPE")], [])         # no properties: keep them
    (node,) = store.view(user).nodes
    assert node == {"key": "paris", "name": "Paris", "label": "GPE", "memories": 3}
    assert store.stats(user) == {"entities": 1, "relations": 0, "memory_links": 3}
    # the merged properties survive (read them back through a fresh add that merges more)
    store.add_memory(user, "m4", [Entity("paris", "Paris", "GPE", {"d": 4})], [])
    assert _properties(store, user, "paris") == {"a": 1, "b": 2, "c": [1, "x"], "d": 4}


def _properties(store, user, key) -> dict:
    import json
    if isinstance(store, SQLiteGraphStore):
        (props,) = store._conn.execute("SELECT properties FROM graph_entities WHERE user_id=? AND key=?",
                                       (user, key)).fetchone()
    else:
        with store._session() as s:
            props = s.run("MATCH (e:Entity {user_id:$u, key:$k}) RETURN e.properties AS p",
                          u=user, k=key).single()["p"]
    return json.loads(props)


def test_keys_are_normalised_and_unicode_is_kept(store, user):
    store.add_memory(user, "m1", [Entity("  Neural Network ", "Neural Network")],
                     [Relation("NEURAL NETWORK", "神经网络", "SAME_AS")])
    assert store.stats(user) == {"entities": 2, "relations": 1, "memory_links": 2}
    assert keys_at(store.neighbours(user, ["neural network "], depth=1)) == {"neural network": 0, "神经网络": 1}


def test_relation_ends_missing_from_entities_are_created_without_overwriting(store, user):
    store.add_memory(user, "m1", [Entity("bert", "BERT", "PRODUCT")], [])
    store.add_memory(user, "m2", [], [Relation("bert", "elmo", "COMPARED_WITH"), Relation("x", "x")])
    by_key = {n["key"]: n for n in store.view(user).nodes}
    assert by_key["bert"]["name"] == "BERT" and by_key["bert"]["label"] == "PRODUCT"
    assert by_key["elmo"]["label"] == "CONCEPT" and by_key["elmo"]["name"] == "elmo"
    assert "x" not in by_key                                                    # self-loop dropped
    assert store.stats(user) == {"entities": 2, "relations": 1, "memory_links": 3}
    store.remove_memory(user, "m2")                                              # elmo was m2's alone
    assert [n["key"] for n in store.view(user).nodes] == ["bert"]


def test_empty_input_and_bad_ids(store, user):
    store.add_memory(user, "m1", [], [])
    store.add_memory(user, "m1", [Entity("   ", "")], [])
    assert store.stats(user) == {"entities": 0, "relations": 0, "memory_links": 0}
    assert store.neighbours(user, []) == [] and store.memories_for(user, ["  "]) == {}
    assert store.neighbours(user, ["missing"]) == [] and store.memories_for(user, ["missing"]) == {}
    store.remove_memory(user, "never-added")
    with pytest.raises(ValueError):
        store.add_memory("", "m1", [E("a")], [])
    with pytest.raises(ValueError):
        store.add_memory(user, " ", [E("a")], [])
    with pytest.raises(ValueError):
        store.neighbours(None, ["a"])  # type: ignore[arg-type]


# --- reads ---------------------------------------------------------------------------------------

def test_neighbours_depth_one_and_two(store, user):
    build_chain(store, user)
    assert keys_at(store.neighbours(user, ["a"], depth=1)) == {"a": 0, "b": 1}
    assert keys_at(store.neighbours(user, ["A"], depth=2)) == {"a": 0, "b": 1, "c": 2}
    assert keys_at(store.neighbours(user, ["d"], depth=2)) == {"d": 0, "c": 1, "b": 2}     # both directions
    assert keys_at(store.neighbours(user, ["a"], depth=0)) == {"a": 0}
    assert keys_at(store.neighbours(user, ["a", "d"], depth=1)) == {"a": 0, "d": 0, "b": 1, "c": 1}
    assert keys_at(store.neighbours(user, ["e", "zzz"])) == {"e": 0}
    result = store.neighbours(user, ["b"], depth=2)
    assert [(n.key, n.distance) for n in result] == [("b", 0), ("a", 1), ("c", 1), ("d", 2)]  # nearest first
    assert result[0] == GraphNeighbour("b", "b", "CONCEPT", 0)
    assert [n.key for n in store.neighbours(user, ["b"], depth=2, limit=2)] == ["b", "a"]
    assert keys_at(store.neighbours(user, ["a"], depth=99)) == {"a": 0, "b": 1, "c": 2, "d": 3}  # clamped to 3


def test_memories_for_scores_decay_with_distance(store, user):
    build_chain(store, user)
    assert store.memories_for(user, ["a"], depth=2) == pytest.approx({"m1": 1.0, "m2": 0.5, "m3": 1 / 3})
    assert list(store.memories_for(user, ["a"], depth=2)) == ["m1", "m2", "m3"]            # best first
    assert store.memories_for(user, ["a"], depth=1) == pytest.approx({"m1": 1.0, "m2": 0.5})
    assert store.memories_for(user, ["a"], depth=0) == {"m1": 1.0}
    assert store.memories_for(user, ["c", "e"], depth=1) == pytest.approx(
        {"m2": 1.0, "m3": 1.0, "m4": 1.0, "m1": 0.5})
    assert store.memories_for(user, ["a"], depth=2, limit=2) == pytest.approx({"m1": 1.0, "m2": 0.5})
    assert all(0.0 <= s <= 1.0 for s in store.memories_for(user, ["b"]).values())


def test_view_and_stats(store, user):
    build_chain(store, user)
    store.add_memory(user, "m5", [E("a"), E("b")], [R("a", "b")])               # a second record of a-b
    assert store.stats(user) == {"entities": 5, "relations": 4, "memory_links": 9}
    view = store.view(user)
    assert view.nodes[0] == {"key": "b", "name": "b", "label": "CONCEPT", "memories": 3}
    assert [(n["key"], n["memories"]) for n in view.nodes] == [("b", 3), ("a", 2), ("c", 2), ("d", 1), ("e", 1)]
    assert view.edges == [
        {"source": "a", "target": "b", "type": "RELATED_TO", "weight": 2},
        {"source": "b", "target": "c", "type": "PART_OF", "weight": 1},
        {"source": "c", "target": "d", "type": "RELATED_TO", "weight": 1},
    ]
    small = store.view(user, limit=2)
    assert [n["key"] for n in small.nodes] == ["b", "a"]
    assert small.edges == [{"source": "a", "target": "b", "type": "RELATED_TO", "weight": 2}]
    assert store.view("nobody-" + user).nodes == []


# --- remove / clear ------------------------------------------------------------------------------

def test_remove_memory_deletes_orphans_and_keeps_shared_entities(store, user):
    build_chain(store, user)
    store.remove_memory(user, "m1")
    assert store.neighbours(user, ["a"]) == []                                  # a: only m1 mentioned it
    assert keys_at(store.neighbours(user, ["b"], depth=1)) == {"b": 0, "c": 1}  # b: m2 still does
    assert store.stats(user) == {"entities": 4, "relations": 2, "memory_links": 5}
    assert "m1" not in store.memories_for(user, ["b", "c", "d", "e"])
    store.remove_memory(user, "m1")                                             # twice: nothing happens
    store.remove_memory(user, "m2")
    assert keys_at(store.neighbours(user, ["c"], depth=2)) == {"c": 0, "d": 1}
    assert store.stats(user) == {"entities": 3, "relations": 1, "memory_links": 3}


def test_clear_user(store, user):
    build_chain(store, user)
    store.clear_user(user)
    assert store.stats(user) == {"entities": 0, "relations": 0, "memory_links": 0}
    assert store.view(user).nodes == [] and store.memories_for(user, ["a"]) == {}
    build_chain(store, user)                                                    # usable again
    assert store.stats(user)["entities"] == 5


# --- isolation -----------------------------------------------------------------------------------

def test_users_never_see_or_change_each_others_data(store, user):
    alice, bob = user + "-alice", user + "-bob"
    build_chain(store, alice)
    before = (store.stats(alice), store.view(alice), store.memories_for(alice, ["a"]))

    # bob sees nothing of alice, through every read
    assert store.stats(bob) == {"entities": 0, "relations": 0, "memory_links": 0}
    assert store.neighbours(bob, ["a", "b"]) == [] and store.memories_for(bob, ["a"]) == {}
    assert store.view(bob).nodes == [] and store.view(bob).edges == []

    # bob's writes with the same keys and memory ids stay his
    store.add_memory(bob, "m1", [E("a", "PERSON"), E("z")], [R("a", "z")])
    assert keys_at(store.neighbours(bob, ["a"], depth=2)) == {"a": 0, "z": 1}
    assert keys_at(store.neighbours(alice, ["a"], depth=2)) == {"a": 0, "b": 1, "c": 2}
    assert store.memories_for(bob, ["b", "c"]) == {}

    # bob's removals and clear never reach alice
    store.remove_memory(bob, "m1")
    store.remove_memory(bob, "m2")
    store.clear_user(bob)
    assert (store.stats(alice), store.view(alice), store.memories_for(alice, ["a"])) == before
    assert store.stats(bob) == {"entities": 0, "relations": 0, "memory_links": 0}


# --- durability, atomicity, threads ----------------------------------------------------------------

def test_data_survives_reopening(open_store, user):
    first = open_store()
    build_chain(first, user)
    first.close()
    first.close()                                                               # twice is fine
    second = open_store()                                                       # new file handle / new driver
    assert second.stats(user) == {"entities": 5, "relations": 3, "memory_links": 7}
    assert keys_at(second.neighbours(user, ["a"], depth=2)) == {"a": 0, "b": 1, "c": 2}


def test_add_memory_is_all_or_nothing(store, user, monkeypatch):
    store.add_memory(user, "m0", [E("kept")], [])

    def fail(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "_write_relations", fail)                        # after entities + mentions
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.add_memory(user, "m1", [E("a"), E("b"), E("kept", "ORG")], [R("a", "b")])
    assert store.stats(user) == {"entities": 1, "relations": 0, "memory_links": 1}
    assert store.view(user).nodes == [{"key": "kept", "name": "kept", "label": "CONCEPT", "memories": 1}]
    monkeypatch.undo()
    store.add_memory(user, "m1", [E("a"), E("b")], [R("a", "b")])               # and the store still works
    assert store.stats(user) == {"entities": 3, "relations": 1, "memory_links": 3}


def test_concurrent_writers_from_threads(store, user):
    errors = []

    def writer(t: int):
        try:
            for i in range(10):
                store.add_memory(user, f"t{t}-m{i}", [E("shared"), E(f"t{t}-e{i}")],
                                 [R("shared", f"t{t}-e{i}")])
                store.neighbours(user, ["shared"], depth=1)
        except Exception as e:           # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.stats(user) == {"entities": 41, "relations": 40, "memory_links": 80}
    assert len(store.neighbours(user, ["shared"], depth=1, limit=100)) == 41


def test_a_large_batch_is_one_quick_merge(store, user):
    entities = [E(f"concept {i}") for i in range(1000)]
    relations = [R(f"concept {i}", f"concept {i + 1}") for i in range(999)]
    started = time.perf_counter()
    store.add_memory(user, "big", entities, relations)
    elapsed = time.perf_counter() - started
    assert store.stats(user) == {"entities": 1000, "relations": 999, "memory_links": 1000}
    assert keys_at(store.neighbours(user, ["concept 500"], depth=2)) == {
        "concept 498": 2, "concept 499": 1, "concept 500": 0, "concept 501": 1, "concept 502": 2}
    assert elapsed < 10, f"1,000-entity batch took {elapsed:.1f} s"


# --- backend choice and failures (not parametrised) ------------------------------------------------

def test_neo4j_store_on_a_closed_port_fails_fast_with_one_sentence():
    uri = f"bolt://127.0.0.1:{free_port()}"                                      # nothing listens there
    started = time.perf_counter()
    with pytest.raises(GraphStoreUnavailable) as caught:
        Neo4jGraphStore(uri, "neo4j", "secret", connection_timeout=2)
    assert time.perf_counter() - started < 5
    message = str(caught.value)
    assert message.startswith(f"Cannot reach the Neo4j server at {uri}: ")
    assert message.endswith("Start it or unset NEO4J_URI to use the embedded graph.")
    assert "\n" not in message and "Traceback" not in message


def test_factory_raises_instead_of_falling_back_when_neo4j_is_down(tmp_path):
    with pytest.raises(GraphStoreUnavailable):
        create_graph_store(path=tmp_path / "g.sqlite3", neo4j_uri=f"bolt://127.0.0.1:{free_port()}",
                           neo4j_password="x")
    assert not (tmp_path / "g.sqlite3").exists()


def test_factory_picks_sqlite_without_a_uri(tmp_path):
    with create_graph_store(path=tmp_path / "graph.sqlite3", neo4j_uri="  ") as store:
        assert isinstance(store, SQLiteGraphStore)
    with create_graph_store(path=tmp_path) as store:                              # a folder works too
        assert store.path == tmp_path / "graph.sqlite3"


def test_factory_picks_neo4j_with_a_uri(bolt, tmp_path):
    with create_graph_store(path=tmp_path / "unused", neo4j_uri=bolt.uri, neo4j_username=bolt.username,
                            neo4j_password=bolt.password, neo4j_database=bolt.database) as store:
        assert isinstance(store, Neo4jGraphStore)
        assert store.stats("factory-user") == {"entities": 0, "relations": 0, "memory_links": 0}
    assert not (tmp_path / "unused").exists()


def test_neo4j_store_with_a_wrong_password_or_database_says_so(bolt):
    with pytest.raises(GraphStoreUnavailable, match="rejected the username or password"):
        Neo4jGraphStore(bolt.uri, bolt.username, "wrong-password")
    with pytest.raises(GraphStoreUnavailable, match="cannot open database no_such_db"):
        Neo4jGraphStore(bolt.uri, bolt.username, bolt.password, "no_such_db")


def test_neo4j_store_with_a_bad_uri_says_so():
    for uri in ("http://localhost:7474", "localhost:7687"):
        with pytest.raises(GraphStoreUnavailable, match="is not a Neo4j Bolt address"):
            Neo4jGraphStore(uri, "neo4j", "x")


def test_sqlite_store_in_an_unwritable_place_says_so(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(GraphStoreUnavailable, match="Cannot open the embedded graph database"):
        SQLiteGraphStore(blocker / "graph.sqlite3")


def test_neo4j_store_whose_server_goes_away_fails_fast(bolt):
    with bolt_server() as own:                      # a server of its own, to stop under the store
        store = _open_bolt(own)
        store.add_memory("u", "m1", [E("a")], [])
        assert store.stats("u")["entities"] == 1
    try:
        for call in (lambda: store.stats("u"), lambda: store.add_memory("u", "m2", [E("b")], []),
                     lambda: store.memories_for("u", ["a"])):
            started = time.perf_counter()
            with pytest.raises(GraphStoreUnavailable, match=f"Cannot reach the Neo4j server at {own.uri}"):
                call()
            assert time.perf_counter() - started < 5
    finally:
        store.close()

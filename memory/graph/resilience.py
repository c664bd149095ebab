"""How the graph seam rides out a graph server (Neo4j) that is down: a backoff for connecting, and an
outbox for the writes made while a server that was up has gone away.

Why an outbox and not a refusal: notes and semantic memories live in SQLite and Qdrant; the graph only
links their concepts. A learner whose note is refused because the graph server restarted loses their
words (or has to type them again); a note kept at once, whose concept links follow when the server is
back, costs them nothing. So while the server is unreachable, each graph write (`add_memory`,
`remove_memory`, `clear_user`) waits in an outbox (a SQLite file beside the memories, so it survives a
restart of the app) and is replayed in order once the server answers again. Every write is idempotent
(the GraphStore contract), so a write replayed twice is harmless. Reads fail at once with the server's
one-sentence error (semantic search then ranks by vectors alone, flagged `graph_unavailable`) instead
of waiting on the network each time.

Replays are tried with exponential backoff (1 s, 2 s, 4 s ... at most MAX_RETRY_S) by a background
thread, and before any graph call once the next try is due.

A server that never answered since the app started is another matter: that is most likely a wrong
NEO4J_URI or password (or a server not started yet), so `ConnectBackoff` reports it in one sentence at
once, and tries to connect again no more often than its backoff allows.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, TypeVar

from core.sqlite import GRAPH_OUTBOX, open_database

from .base import Entity, GraphNeighbour, GraphStore, GraphStoreUnavailable, GraphView, Relation

log = logging.getLogger(__name__)
T = TypeVar("T")

FIRST_RETRY_S = 1.0
MAX_RETRY_S = 30.0

_OUTBOX_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_outbox (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    target    TEXT NOT NULL,          -- the server the write is for (NEO4J_URI)
    user_id   TEXT NOT NULL,
    op        TEXT NOT NULL,          -- add_memory | remove_memory | clear_user
    args      TEXT NOT NULL,          -- JSON of the call's arguments
    queued_at REAL NOT NULL
);
"""


class Backoff:
    """Exponential backoff: the next try is due FIRST_RETRY_S after a failure, then twice as long each time."""

    def __init__(self, first: float = FIRST_RETRY_S, most: float = MAX_RETRY_S):
        self.first, self.most = first, most
        self.delay = 0.0
        self.due_at = 0.0

    def failed(self) -> float:
        self.delay = self.first if self.delay == 0 else min(self.delay * 2, self.most)
        self.due_at = time.monotonic() + self.delay
        return self.delay

    def succeeded(self) -> None:
        self.delay = 0.0
        self.due_at = 0.0

    @property
    def waiting(self) -> bool:
        """A failure happened and the next try is not due yet."""
        return self.delay > 0 and time.monotonic() < self.due_at

    def seconds_left(self) -> float:
        return max(0.0, self.due_at - time.monotonic())


class ConnectBackoff:
    """Opening a graph server that is down: the first failure is reported, and until the backoff says
    to try again the same sentence is given at once (no network wait: a search must not pay a
    connection timeout each time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[Backoff, str]] = {}

    def open(self, key: str, connect: Callable[[], T]) -> T:
        with self._lock:
            known = self._failures.get(key)
            if known and known[0].waiting:
                raise GraphStoreUnavailable(known[1], key="err_graph_unavailable")
        try:
            store = connect()
        except GraphStoreUnavailable as exc:
            with self._lock:
                backoff = known[0] if known else Backoff()
                delay = backoff.failed()
                self._failures[key] = (backoff, str(exc))
            log.warning("The graph server %s cannot be opened; next try in %.0f s: %s", key, delay, exc)
            raise
        with self._lock:
            self._failures.pop(key, None)
        return store


class Outbox:
    """Graph writes waiting for one server, oldest first, in a SQLite file."""

    def __init__(self, path: str | Path, target: str):
        self.target = target
        # Damage-aware (core.sqlite): writes the server has not had yet are never lost to a silently new file.
        self._conn = open_database(Path(path), _OUTBOX_SCHEMA, kind=GRAPH_OUTBOX, timeout=30.0, unavailable=(
            f"Cannot open the graph server's waiting writes at {path}; check that the data folder is writable."))
        self._lock = threading.Lock()

    def append(self, user_id: str, op: str, args: dict) -> None:
        with self._lock:
            self._conn.execute("INSERT INTO graph_outbox (target, user_id, op, args, queued_at) VALUES (?, ?, ?, ?, ?)",
                               (self.target, user_id, op, json.dumps(args, ensure_ascii=False), time.time()))

    def waiting(self) -> list[tuple[int, str, dict]]:
        with self._lock:
            rows = self._conn.execute("SELECT seq, op, args FROM graph_outbox WHERE target = ? ORDER BY seq",
                                      (self.target,)).fetchall()
        return [(seq, op, json.loads(args)) for seq, op, args in rows]

    def remove(self, seq: int) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM graph_outbox WHERE seq = ?", (seq,))

    def count(self, user_id: str | None = None) -> int:
        query, params = "SELECT count(*) FROM graph_outbox WHERE target = ?", [self.target]
        if user_id is not None:
            query += " AND user_id = ?"
            params.append(user_id)
        with self._lock:
            return self._conn.execute(query, params).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _encode(op: str, user_id: str, memory_id: str | None = None, entities=(), relations=()) -> dict:
    args: dict = {"user_id": user_id}
    if op != "clear_user":
        args["memory_id"] = memory_id
    if op == "add_memory":
        args["entities"] = [asdict(e) for e in entities]
        args["relations"] = [asdict(r) for r in relations]
    return args


def _decode(args: dict) -> dict:
    if "entities" in args:
        args = {**args, "entities": [Entity(**e) for e in args["entities"]],
                "relations": [Relation(**r) for r in args["relations"]]}
    return args


class OutboxGraphStore(GraphStore):
    """A graph server store whose writes wait in an outbox while the server is away (module docstring)."""

    def __init__(self, server: GraphStore, outbox_path: str | Path, target: str):
        self.server = server
        self.target = target
        self._outbox = Outbox(outbox_path, target)
        self._lock = threading.RLock()       # one replay at a time, and writes keep their order
        self._backoff = Backoff()
        self._down: str | None = None        # the server's sentence while it is unreachable
        self._closed = threading.Event()
        self._replayer: threading.Thread | None = None
        if self._outbox.count():             # writes left from an earlier run go first
            with self._lock:
                self._replay()
            self._start_replayer()

    # --- state --------------------------------------------------------------------------------------
    def _went_down(self, exc: GraphStoreUnavailable) -> None:
        delay = self._backoff.failed()
        if self._down is None:
            log.warning("The graph server went away; graph writes wait in the outbox (next try in %.0f s): %s",
                        delay, exc)
        self._down = str(exc)

    def _came_back(self) -> None:
        if self._down is not None:
            log.info("The graph server %s answers again", self.target)
        self._down = None
        self._backoff.succeeded()

    def _cooling_down(self) -> bool:
        return self._down is not None and self._backoff.waiting

    def pending_writes(self, user_id: str | None = None) -> int:
        return self._outbox.count(user_id)

    # --- replaying ----------------------------------------------------------------------------------
    def _replay(self) -> None:
        """Apply the waiting writes in order (under self._lock); stop at the first the server cannot take."""
        replayed = 0
        for seq, op, args in self._outbox.waiting():
            try:
                getattr(self.server, op)(**_decode(args))
            except GraphStoreUnavailable as exc:
                self._went_down(exc)
                return
            except Exception:  # noqa: BLE001 - a write the server refuses for good must not block the others
                log.exception("The graph server refused the waiting %s #%d for good; it is dropped", op, seq)
            self._outbox.remove(seq)
            replayed += 1
        if replayed:
            log.info("Replayed %d graph writes that waited for %s", replayed, self.target)
            self._came_back()

    def _start_replayer(self) -> None:
        with self._lock:
            if self._replayer is not None and self._replayer.is_alive():
                return
            self._replayer = threading.Thread(target=self._replay_until_empty, name="graph-outbox", daemon=True)
            self._replayer.start()

    def _replay_until_empty(self) -> None:
        while not self._closed.is_set():
            if self._closed.wait(self._backoff.seconds_left() + 0.05):
                return
            with self._lock:
                if not self._cooling_down():
                    self._replay()
                if not self._outbox.count():
                    self._replayer = None
                    return

    # --- writes -------------------------------------------------------------------------------------
    def _write(self, op: str, args: dict) -> None:
        with self._lock:
            if not self._cooling_down():
                self._replay()                       # earlier writes first
            if not self._cooling_down() and not self._outbox.count():
                try:
                    getattr(self.server, op)(**_decode(args))
                    self._came_back()
                    return
                except GraphStoreUnavailable as exc:
                    self._went_down(exc)
            self._outbox.append(args["user_id"], op, args)
        self._start_replayer()

    def add_memory(self, user_id: str, memory_id: str, entities: list[Entity], relations: list[Relation]) -> None:
        self._write("add_memory", _encode("add_memory", user_id, memory_id, entities, relations))

    def remove_memory(self, user_id: str, memory_id: str) -> None:
        self._write("remove_memory", _encode("remove_memory", user_id, memory_id))

    def clear_user(self, user_id: str) -> None:
        self._write("clear_user", _encode("clear_user", user_id))

    # --- reads --------------------------------------------------------------------------------------
    def _read(self, call: Callable[[], T]) -> T:
        with self._lock:
            if self._cooling_down():
                raise GraphStoreUnavailable(self._down, key="err_graph_unavailable")
            if self._outbox.count():
                self._replay()                       # the server may be back: bring it up to date first
                if self._cooling_down():
                    raise GraphStoreUnavailable(self._down, key="err_graph_unavailable")
        try:
            result = call()
        except GraphStoreUnavailable as exc:
            with self._lock:
                self._went_down(exc)
            raise
        with self._lock:
            self._came_back()
        return result

    def neighbours(self, user_id: str, keys: list[str], depth: int = 2, limit: int = 50) -> list[GraphNeighbour]:
        return self._read(lambda: self.server.neighbours(user_id, keys, depth, limit))

    def memories_for(self, user_id: str, keys: list[str], depth: int = 2, limit: int = 100) -> dict[str, float]:
        return self._read(lambda: self.server.memories_for(user_id, keys, depth, limit))

    def view(self, user_id: str, limit: int = 200) -> GraphView:
        return self._read(lambda: self.server.view(user_id, limit))

    def stats(self, user_id: str) -> dict:
        return self._read(lambda: self.server.stats(user_id))

    def close(self) -> None:
        self._closed.set()
        replayer = self._replayer
        if replayer is not None and replayer is not threading.current_thread():
            replayer.join(timeout=5)
        self.server.close()
        self._outbox.close()

    def __repr__(self) -> str:
        return f"OutboxGraphStore({self.server!r})"

"""The vector seam: Qdrant in local (embedded, on-disk) mode by default, a Qdrant server by QDRANT_URL.

Local mode is not thread-safe and allows one client per folder, while Gradio calls handlers from
threads and retrieval and memory both need vectors. So each data folder gets ONE client per process,
and every call goes through one lock. Collections are per user and purpose ("rag_alice"), so searches
need no payload filter (local mode's filtered search is slow).

Local mode also allows ONE process per folder (the app or the command line, not both): a second one is
refused at once, in one sentence, before it reads anything (`FOLDER_IN_USE`).
"""
from __future__ import annotations

import contextlib
import logging
import re
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from core.errors import EmbeddingMismatch, StoreUnavailable
from core.registry import ProcessRegistry
from core.settings import Settings

log = logging.getLogger(__name__)

FOLDER_IN_USE = ("The data folder {data_dir} is in use by another process (the app or the command line); "
                 "stop that process first, or set QDRANT_URL to a Qdrant server so both can share it.")
LOCK_FILE = "process.lock"   # beside local Qdrant's own files; held while this process has the folder open


@dataclass
class VectorHit:
    id: str
    score: float
    payload: dict


def collection_name(purpose: str, user_id: str) -> str:
    """A safe collection name; distinct users never share one."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", user_id)
    digest = uuid.uuid5(uuid.NAMESPACE_URL, user_id).hex[:8]  # keeps 'a.b' and 'a_b' apart
    return f"{purpose}_{safe[:40]}_{digest}"


def point_id(key: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))


class VectorStore:
    """Named collections of (id, vector, payload). Ids are our own strings; Qdrant gets UUIDs."""

    def __init__(self, client, *, local: bool, folder_lock=None):
        from qdrant_client import models
        self._models = models
        self._client = client
        self.local = local
        self._folder_lock = folder_lock   # the open lock file of a local folder; closing it lets another process in
        # Local Qdrant is not thread-safe: every call goes through one lock. A server client is (HTTP), so
        # there only collection changes are serialised and searches and writes of many users run at once.
        self._lock = threading.RLock()
        self._io = self._lock if local else contextlib.nullcontext()
        self._known: set[str] = set()
        self._fast_writes: set[str] = set()   # local collections already switched to WAL commits
        self._models_of: dict[str, str] = {}   # collection -> embedding model that wrote it

    def _before_write(self, name: str) -> None:
        """Local Qdrant syncs the disk for every point; switch each collection to WAL commits once."""
        if self.local and name not in self._fast_writes and relax_local_durability(self, name):
            self._fast_writes.add(name)

    # -- collections --------------------------------------------------------------------------
    def ensure_collection(self, name: str, dim: int, model_id: str | None = None) -> None:
        """Create the collection if needed. With `model_id`, the collection records the model that
        wrote it, and a different model (or dimension) is refused: vectors of two models never mix."""
        if name in self._known:
            if model_id:
                self.check_model(name, model_id, dim)
            return
        with self._lock:
            if not self._client.collection_exists(name):
                self._client.create_collection(
                    name, vectors_config=self._models.VectorParams(size=dim, distance=self._models.Distance.COSINE),
                    metadata={"embedding_model": model_id, "dim": dim} if model_id else None)
                if model_id:
                    self._models_of[name] = model_id
            self._known.add(name)
        if model_id:
            self.check_model(name, model_id, dim)

    def exists(self, name: str) -> bool:
        if name in self._known:
            return True
        with self._lock:
            return self._client.collection_exists(name)

    def recorded_model(self, name: str) -> str | None:
        """The embedding model recorded on a collection (None: not recorded, or no such collection)."""
        if name in self._models_of:
            return self._models_of[name]
        with self._lock:
            if not self._client.collection_exists(name):
                return None
            metadata = self._client.get_collection(name).config.metadata or {}
        model = metadata.get("embedding_model")
        if model:
            self._models_of[name] = model
        return model

    def check_model(self, name: str, model_id: str, dim: int) -> None:
        """Raise EmbeddingMismatch when the collection was written by another model. A collection from
        before models were recorded is adopted when its dimension fits (then recorded)."""
        recorded = self.recorded_model(name)
        if recorded == model_id:
            return
        if recorded is None:
            with self._lock:
                if not self._client.collection_exists(name):
                    return
                size = self._client.get_collection(name).config.params.vectors.size
                if size == dim:
                    self._client.update_collection(name, metadata={"embedding_model": model_id, "dim": dim})
                    self._models_of[name] = model_id
                    return
            recorded = f"a {size}-dimensional model"
        raise EmbeddingMismatch(recorded, model_id)

    def drop_collection(self, name: str) -> None:
        with self._lock:
            if self._client.collection_exists(name):
                self._client.delete_collection(name)
            self._known.discard(name)
            self._models_of.pop(name, None)

    def count(self, name: str, where: dict | None = None) -> int:
        with self._io:
            if not self._client.collection_exists(name):
                return 0
            return self._client.count(name, count_filter=self._filter(where) if where else None, exact=True).count

    def payload_values(self, name: str, field: str, page: int = 2048) -> set:
        """Every distinct value of one payload field in a collection (a full scan, for maintenance such as
        rag.reconcile). The lock is taken per page, so searches interleave."""
        values: set = set()
        offset = None
        while True:
            with self._io:
                if not self._client.collection_exists(name):
                    return values
                points, offset = self._client.scroll(name, limit=page, offset=offset, with_payload=[field],
                                                     with_vectors=False)
            values.update(p.payload.get(field) for p in points if p.payload)
            if offset is None:
                return values

    # -- points ---------------------------------------------------------------------------------
    def upsert(self, name: str, ids: list[str], vectors: np.ndarray, payloads: list[dict],
               batch_size: int = 512) -> None:
        models = self._models
        with self._io:
            self._before_write(name)
            for i in range(0, len(ids), batch_size):
                points = [models.PointStruct(id=point_id(k), vector=v.tolist(), payload={**p, "key": k})
                          for k, v, p in zip(ids[i:i + batch_size], vectors[i:i + batch_size],
                                             payloads[i:i + batch_size])]
                self._client.upsert(name, points=points, wait=True)

    def search(self, name: str, vector: np.ndarray, limit: int, where: dict | None = None) -> list[VectorHit]:
        with self._io:
            if name not in self._known and not self._client.collection_exists(name):
                return []
            response = self._client.query_points(
                name, query=vector.tolist(), limit=limit, with_payload=True,
                query_filter=self._filter(where) if where else None)
        return [VectorHit(p.payload.get("key", str(p.id)), float(p.score), p.payload) for p in response.points]

    def delete(self, name: str, *, ids: list[str] | None = None, where: dict | None = None) -> None:
        models = self._models
        with self._io:
            if not self._client.collection_exists(name):
                return
            self._before_write(name)
            if ids is not None:
                selector = models.PointIdsList(points=[point_id(k) for k in ids])
            elif where:
                selector = models.FilterSelector(filter=self._filter(where))
            else:
                raise ValueError("delete needs ids or where")
            self._client.delete(name, points_selector=selector, wait=True)

    def _filter(self, where: dict):
        models = self._models
        must = []
        for field, value in where.items():
            if isinstance(value, (list, tuple, set)):
                must.append(models.FieldCondition(key=field, match=models.MatchAny(any=list(value))))
            else:
                must.append(models.FieldCondition(key=field, match=models.MatchValue(value=value)))
        return models.Filter(must=must)

    def close(self) -> None:
        with self._lock:
            self._client.close()
            if self._folder_lock is not None:
                self._folder_lock.close()   # closing the file releases the lock


_stores: ProcessRegistry[VectorStore] = ProcessRegistry()


def _store_key(settings: Settings) -> str:
    return settings.qdrant_url or str(settings.data_dir.resolve() / "qdrant")


def get_vector_store(settings: Settings) -> VectorStore:
    """The process-wide store for these settings (one local client per folder, or a server client)."""
    return _stores.get(_store_key(settings), lambda: _open_vector_store(settings))


def _open_vector_store(settings: Settings) -> VectorStore:
    from qdrant_client import QdrantClient
    try:
        if settings.qdrant_url:
            client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key, timeout=10)
            client.get_collections()  # fail now, clearly, rather than at the first search
            return VectorStore(client, local=False)
        path = settings.data_dir / "qdrant"
        path.mkdir(parents=True, exist_ok=True)
        folder_lock = lock_folder(path, settings.data_dir)
        try:
            client = QdrantClient(path=str(path), force_disable_check_same_thread=True)
        except BaseException:
            folder_lock.close()
            raise
        return VectorStore(client, local=True, folder_lock=folder_lock)
    except StoreUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001
        log.exception("opening Qdrant failed")
        if settings.qdrant_url:
            raise StoreUnavailable(
                f"Cannot reach the Qdrant server at {settings.qdrant_url}; start it or unset "
                "QDRANT_URL to use the embedded store.", key="err_store_unreachable") from exc
        raise StoreUnavailable(
            f"Cannot open the vector store in {settings.data_dir / 'qdrant'}: another program "
            "(a second copy of the app or CLI?) may be using it; stop it and try again.",
            key="err_store_in_use") from exc


def lock_folder(path: Path, data_dir: Path) -> TextIO:
    """This process's exclusive hold on a local vector folder (an open file; closing it, or the process
    dying, releases it), or StoreUnavailable at once when another process holds it. Local Qdrant has a lock
    of its own, but takes it only after loading every collection, and its error names no way out."""
    import portalocker  # not at the top: it probes for writable folders on import
    handle = open(path / LOCK_FILE, "a+")
    try:
        portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.exceptions.LockException:
        handle.close()
        log.info("the vector folder %s is locked by another process", path)
        raise StoreUnavailable(FOLDER_IN_USE.format(data_dir=data_dir), key="err_store_in_use") from None
    return handle


def relax_local_durability(store: VectorStore, name: str) -> bool:
    """Make local-mode writes to collection `name` fast: Qdrant's local mode commits every point in
    its own SQLite transaction with a full disk sync (10-20 ms a point on this disk, so ~60 points/s).
    WAL with synchronous=NORMAL commits without waiting for the disk; a power cut may lose the last
    writes but never corrupts the file. Applies per open collection;
    returns False for a Qdrant server, a collection not created yet, or an unexpected qdrant-client
    layout (then nothing changes). VectorStore calls it before the first write to each collection."""
    if not store.local:
        return False
    with store._lock:
        try:
            connection = store._client._client.collections[name].storage.storage
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            return True
        except (AttributeError, KeyError, TypeError):
            log.debug("cannot tune local persistence of %s", name, exc_info=True)
            return False


def close_vector_store(settings: Settings) -> None:
    """Close the store of these settings only (e.g. an evaluation's temporary folder), if open."""
    _stores.close(_store_key(settings))


def close_vector_stores() -> None:
    _stores.close_all()


import atexit  # noqa: E402 - closing local clients before interpreter teardown avoids noisy errors
atexit.register(close_vector_stores)
